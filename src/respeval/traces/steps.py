"""What a span did, in the terms a case is built from: a model call, a tool run, an agent
step (an ``invoke_agent`` / OpenInference ``AGENT`` or ``CHAIN`` span, used when no model
call recorded the conversation), or nothing of interest.

The convention modules (:mod:`respeval.traces.genai`, :mod:`respeval.traces.openinference`)
build these; :func:`respeval.traces.case.interpret` picks the one a span follows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from respeval.traces.messages import json_value, tool_call
from respeval.traces.otlp import STATUS_ERROR, Span

__all__ = ["AgentStep", "ModelCall", "ToolRun", "integer", "span_error", "tool_run", "unflatten"]


@dataclass
class ModelCall:
    """One call to a model: its input and output messages (None when not recorded), the
    system instructions, the tools offered, the model and the tokens it reported."""

    span_id: str
    start_ns: int
    end_ns: int
    model: str | None = None
    inputs: list[dict[str, Any]] | None = None
    outputs: list[dict[str, Any]] | None = None
    system: list[str] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None  # recorded by the instrumentation (OpenInference llm.cost.total)
    error: str | None = None


@dataclass
class ToolRun:
    """One tool execution (a GenAI ``execute_tool`` span, an OpenInference ``TOOL`` span)."""

    span_id: str
    start_ns: int
    end_ns: int
    name: str
    call_id: str | None = None
    arguments: Any = None
    has_arguments: bool = False
    result: Any = None
    error: str | None = None


def tool_run(span: Span, call_id: Any, name: str, arguments: Any, *, has_arguments: bool, result: Any) -> ToolRun:
    """A tool span's run, whichever convention named its attributes: the call in its one
    canonical form (:func:`~respeval.traces.messages.tool_call`), the result as JSON."""
    call = tool_call(call_id, name, arguments)
    assert call is not None  # a name is always given
    return ToolRun(
        span_id=span.span_id,
        start_ns=span.start_ns,
        end_ns=span.end_ns,
        name=call["name"],
        call_id=call["id"],
        arguments=call["arguments"],
        has_arguments=has_arguments,
        result=json_value(result),
        error=span_error(span),
    )


@dataclass
class AgentStep:
    """An agent or chain span: what it was given and gave back, and any usage it reported."""

    span_id: str
    start_ns: int
    end_ns: int
    call: ModelCall | None = None  # messages and usage recorded on the agent span
    input_text: str | None = None
    output_text: str | None = None


def integer(value: Any) -> int | None:
    """A token count: an int, or a string or integral float holding one; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def unflatten(attributes: Mapping[str, Any], prefix: str) -> Any:
    """Flattened list attributes (``prefix.0.message.role``, ``prefix.0.message.tool_calls.1.
    tool_call.id``, ...) as the list they stand for: objects, and lists where every key of a
    level is an integer (in index order).  Only keys with an index right after the prefix
    count (``gen_ai.prompt.name``, a prompt template's name, is not part of
    ``gen_ai.prompt.0...``).  None when no key has the prefix and an index."""
    head = prefix + "."
    root: dict[str, Any] = {}
    found = False
    for key, value in attributes.items():
        if not key.startswith(head):
            continue
        parts = key[len(head) :].split(".")
        if not parts[0].isdigit():
            continue
        found = True
        node = root
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    return _lists(root) if found else None


def _lists(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    if node and all(k.isdigit() for k in node):
        return [_lists(node[k]) for k in sorted(node, key=int)]
    return {k: _lists(v) for k, v in node.items()}


def span_error(span: Span) -> str | None:
    """The span's error, when its status is ERROR or it has ``error.type``: the error's type
    (``error.type``, else the recorded exception's type) and message (the status message,
    else the exception's message), prefixed with the span's name."""
    attrs = span.attributes
    kind = attrs.get("error.type")
    if span.status_code != STATUS_ERROR and kind is None:
        return None
    message = span.status_message or None
    for event in span.events:
        if event.name == "exception":
            kind = kind or event.attributes.get("exception.type")
            message = message or event.attributes.get("exception.message")
    detail = ": ".join(str(x) for x in (kind, message) if x) or "error"
    return f"{span.name}: {detail}" if span.name else detail
