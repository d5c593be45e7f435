"""What a system under test is, and how the judge's engine runs one.

A :class:`System` is a name (``baseline``), a model of the judge's model layer
(:class:`respeval.judge.JudgeModel`: a provider model, an agent endpoint, a Python callable,
an ADK agent; see :mod:`respeval.systems.specs`) and what every call to it carries: a system
instruction, temperature, max tokens, seed and tools.  There is no second engine: a system
is run by :class:`respeval.judge.engine.JudgeEngine` through :class:`Generate`, a judging
method whose "verdict" is the reply itself, so concurrency, retries by cause, rate limits,
the budget, the SQLite cache (what makes a killed run resumable without a call repeated),
secret scrubbing and provider batches are the judge's, unchanged.

**The agent contract** (an HTTP endpoint, a Python callable): each call gets one JSON
object, :func:`contract_request`::

    {"prompt": "...",                    # the user message
     "system_instruction": "..." | null,
     "messages": [{"role": "system" | "user", "content": "..."}],
     "temperature": 0.0 | null, "max_tokens": 256 | null, "seed": 7 | null,
     "tools": [{"name": "...", "description": "...", "parameters": {JSON schema}}]}

and answers with a string (the response) or an object, :func:`contract_reply`::

    {"response": "...",                  # required (may be "" when tool_calls are given)
     "tool_calls": [{"name": "...", "arguments": {...}}],         # optional
     "usage": {"tokens_in": 12, "tokens_out": 30},                # optional
     "finish_reason": "stop",                                     # optional
     "error": "why there is no response"}                         # optional: the row fails

``usage`` may also say ``input_tokens``/``output_tokens`` or ``prompt_tokens``/
``completion_tokens``.  A reply with ``error`` (or one that breaks the contract) fails its
row with that reason; the other rows run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.judge.errors import RequestFailedError
from respeval.judge.methods.prompts import digest
from respeval.judge.models.base import Capabilities, Completion, JudgeModel, JudgeRequest, Message, ToolCall, ToolSpec
from respeval.judge.parsing import Parsed, ParseFailure

__all__ = [
    "GENERATE_VERSION",
    "RESPONSE_FIELDS",
    "Generate",
    "System",
    "contract_reply",
    "contract_request",
    "load_tools",
]

GENERATE_VERSION = "generate/1"
"""The requests' ``template_version``: a system's answers are cached apart from any judge's."""

RESPONSE_FIELDS = ("response", "tool_calls", "finish_reason", "tokens_in", "tokens_out", "latency_s", "error")
"""What :class:`Generate` reads out of each answer (the run adds ``cost_usd``)."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


@dataclass
class System:
    """A system under test (see the module docstring).

    Attributes:
        name: its name in the output's ``system`` column (letters, digits, ``_.-``).
        model: the model that answers (any :class:`respeval.judge.JudgeModel`).
        spec: the spec it was built from (``openai:gpt-4o-mini``), for messages.
        kind: ``provider``, ``endpoint``, ``python``, ``isolated``, ``adk`` or ``fake``.
        system_instruction, temperature, max_tokens, seed, tools: sent with every call
            (where the model honours them: see its capabilities).
    """

    name: str
    model: JudgeModel
    spec: str = ""
    kind: str = "provider"
    system_instruction: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    tools: tuple[ToolSpec, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(f"system name {self.name!r}: use letters, digits, '_', '.' or '-' (start with a letter)")
        self.tools = tuple(self.tools)
        if self.tools and not self.model.capabilities.tools:
            raise ValueError(f"system {self.name!r}: {self.model.model_id} takes no tools")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"system {self.name!r}: max_tokens must be at least 1, got {self.max_tokens}")

    def settings(self) -> dict[str, Any]:
        """What the system sends besides the prompt (part of a run's resume fingerprint)."""
        return {
            "system_instruction": self.system_instruction,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "tools": [t.to_json() for t in self.tools],
        }

    def identity(self) -> dict[str, Any]:
        """The model's identity and the settings: what determines the answers."""
        return {"model": self.model.identity(), **self.settings()}


class Generate:
    """The judging method that runs a system: the record's ``prompt`` in (with the system's
    instruction and settings), the reply out, never re-asked and never unparseable."""

    name = "generate"
    template_version = GENERATE_VERSION
    fields = ("prompt",)
    verdict_fields = RESPONSE_FIELDS

    def __init__(self, system: System) -> None:
        self.system = system

    def signature(self) -> str:
        return f"{GENERATE_VERSION}|system:{self.system.name}|settings:{digest(self.system.settings())}"

    def item(self, record: Mapping[str, Any]) -> str:
        prompt = record.get("prompt")
        if not isinstance(prompt, str):
            raise ValueError(f"field 'prompt': expected a string, got {type(prompt).__name__}")
        return prompt

    def build(self, prompt: str, capabilities: Capabilities) -> JudgeRequest:
        s = self.system
        messages: tuple[Message, ...] = (Message("user", prompt),)
        if s.system_instruction:
            messages = (Message("system", s.system_instruction), *messages)
        return JudgeRequest(
            messages=messages,
            temperature=s.temperature if capabilities.temperature else None,
            seed=s.seed if capabilities.seed else None,
            max_tokens=s.max_tokens,
            template_version=GENERATE_VERSION,
            tools=s.tools,
        )

    def parse(self, prompt: str, completion: Completion) -> Parsed[Completion] | ParseFailure:
        return Parsed(completion, "reply")

    def reask(
        self, prompt: str, request: JudgeRequest, completion: Completion, failure: ParseFailure
    ) -> JudgeRequest:  # pragma: no cover - parse never fails
        return request

    def row_fields(self, completion: Completion) -> dict[str, Any]:
        calls = [c.to_json() for c in completion.tool_calls] if completion.tool_calls else None
        error = None
        if completion.refusal:
            error = f"refused: {completion.refusal}"
        elif not completion.text and not calls:
            error = f"empty response (finish_reason {completion.finish_reason or 'not given'})"
        return {
            "response": completion.text,
            "tool_calls": calls,
            "finish_reason": completion.finish_reason,
            "tokens_in": completion.tokens_in,
            "tokens_out": completion.tokens_out,
            "latency_s": completion.latency_s,
            "error": error,
            "pass": error is None,  # what the engine's summary counts: rows with a response
        }


# --------------------------------------------------------------------------- the agent contract


def contract_request(request: JudgeRequest) -> dict[str, Any]:
    """The JSON object an agent endpoint or a system function is called with (the module
    docstring): every field of it is in the request, so in the cache key."""
    system = "\n\n".join(m.content for m in request.messages if m.role == "system") or None
    users = [m.content for m in request.messages if m.role == "user"]
    return {
        "prompt": users[-1] if users else "",
        "system_instruction": system,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
        "tools": [t.to_json() for t in request.tools],
    }


def _count(usage: Mapping[str, Any], *names: str) -> int:
    for name in names:
        value = usage.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return 0


def contract_reply(reply: Any, where: str) -> Completion:
    """An agent's or a function's answer (the module docstring) as a Completion; an
    ``error`` or a broken contract raises :class:`~respeval.judge.errors.RequestFailedError`
    (the row fails with that reason, the run goes on)."""
    if isinstance(reply, str):
        return Completion(text=reply, finish_reason="stop")
    if not isinstance(reply, Mapping):
        raise RequestFailedError(
            f"{where} answered {type(reply).__name__}; expected a string or an object with 'response'"
        )
    error = reply.get("error")
    if error:
        raise RequestFailedError(f"{where} answered an error: {str(error)[:500]}")
    calls_raw = reply.get("tool_calls")
    calls: tuple[ToolCall, ...] | None = None
    if calls_raw is not None:
        if not isinstance(calls_raw, list):
            raise RequestFailedError(f"{where}: 'tool_calls' must be a list, got {type(calls_raw).__name__}")
        parsed = []
        for i, item in enumerate(calls_raw):
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
                raise RequestFailedError(f"{where}: tool_calls[{i}] needs a 'name' string")
            arguments = item.get("arguments", item.get("args"))
            call_id = item.get("id")
            parsed.append(ToolCall(item["name"], arguments, call_id if isinstance(call_id, str) else None))
        calls = tuple(parsed) or None
    response = reply.get("response")
    if response is None and calls:
        response = ""
    if not isinstance(response, str):
        shown = json.dumps(reply, default=str)[:200]
        raise RequestFailedError(f"{where} answered without a 'response' string: {shown}")
    usage = reply.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    finish = reply.get("finish_reason")
    return Completion(
        text=response,
        tokens_in=_count(usage, "tokens_in", "input_tokens", "prompt_tokens"),
        tokens_out=_count(usage, "tokens_out", "output_tokens", "completion_tokens"),
        finish_reason=finish if isinstance(finish, str) else ("tool_calls" if calls and not response else "stop"),
        tool_calls=calls,
    )


def load_tools(value: Any, where: str) -> tuple[ToolSpec, ...]:
    """Tool definitions from JSON data (a list of them, or ``{"tools": [...]}``), in either
    provider's shape or respeval's own (:class:`~respeval.judge.models.base.ToolSpec`)."""
    if isinstance(value, Mapping) and "tools" in value:
        value = value["tools"]
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise ValueError(f"{where}: expected a list of tool definitions")
    tools = tuple(ToolSpec.from_json(item, f"{where}[{i}]") for i, item in enumerate(value))
    names = [t.name for t in tools]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{where}: tool {dupes[0]!r} is defined twice")
    return tools
