"""Spans that follow the OpenTelemetry GenAI semantic conventions, in every version the
``opentelemetry-semantic-conventions`` package documents (its ``gen_ai_attributes`` names;
the conventions themselves now live in ``open-telemetry/semantic-conventions-genai``).

Which span is what (``gen_ai.operation.name``):

* ``chat``, ``generate_content``, ``text_completion``: a model call.  A span without an
  operation name (conventions before 1.27) is a model call when it has ``gen_ai.system``,
  ``gen_ai.provider.name``, ``gen_ai.request.model``, token usage or recorded messages;
* ``execute_tool``: a tool run (``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``);
* ``invoke_agent``, ``invoke_workflow``: an agent step (its messages and usage are used only
  when no model call below it recorded any);
* ``embeddings``, ``retrieval``, ``create_agent``: not part of the conversation.

Where the messages are, in the order they are looked for (the first that has the inputs,
and the first that has the outputs, win):

1. 1.37 and later: ``gen_ai.input.messages``, ``gen_ai.output.messages``,
   ``gen_ai.system_instructions`` (structured, or JSON text as the Python SDK must write
   them on spans), on the span or on a ``gen_ai.client.inference.operation.details`` event;
2. 1.28-1.36: the events ``gen_ai.system.message``, ``gen_ai.user.message``,
   ``gen_ai.assistant.message``, ``gen_ai.tool.message`` (inputs) and ``gen_ai.choice``
   (outputs), as log records with a body or as span events with the body's fields as
   attributes, in time order;
3. 1.27: ``gen_ai.prompt`` / ``gen_ai.completion`` (JSON text of OpenAI messages) on the
   events ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` or on the span;
4. the flattened form some instrumentations write (``gen_ai.prompt.0.role``,
   ``gen_ai.prompt.0.content``, ``gen_ai.completion.0.tool_calls.0.name``, ...).

Usage: ``gen_ai.usage.input_tokens`` / ``output_tokens`` (before 1.27: ``prompt_tokens`` /
``completion_tokens``); model: ``gen_ai.response.model``, else ``gen_ai.request.model``;
tools offered: ``gen_ai.tool.definitions`` (or the flattened ``llm.request.functions.N``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from respeval.traces.messages import from_event, from_openai, from_parts, json_value, text_of, tool_call
from respeval.traces.otlp import Span, SpanEvent
from respeval.traces.steps import AgentStep, ModelCall, ToolRun, integer, span_error, tool_run, unflatten

__all__ = ["interpret", "tool_definitions"]

MODEL_OPERATIONS = frozenset({"chat", "generate_content", "text_completion", "completion"})
AGENT_OPERATIONS = frozenset({"invoke_agent", "invoke_workflow"})
OTHER_OPERATIONS = frozenset({"embeddings", "retrieval", "create_agent"})
_MODEL_HINTS = (
    "gen_ai.system",
    "gen_ai.provider.name",
    "gen_ai.request.model",
    "gen_ai.response.model",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "gen_ai.input.messages",
    "gen_ai.prompt",
    "gen_ai.prompt.0.content",
    "gen_ai.prompt.0.role",
)
MESSAGE_EVENTS = frozenset(
    {"gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message", "gen_ai.choice"}
)
DETAILS_EVENT = "gen_ai.client.inference.operation.details"


def _fields(event: SpanEvent) -> Mapping[str, Any]:
    """An event's body fields: its body when it is a map, else its attributes."""
    body = event.body
    if isinstance(body, str):
        body = json_value(body)
    if isinstance(body, Mapping):
        return body
    if body is not None and "content" not in event.attributes:
        return {**event.attributes, "content": body}
    return event.attributes


def _parts_messages(value: Any, default_role: str) -> list[dict[str, Any]] | None:
    value = json_value(value)
    if not isinstance(value, list):
        return None
    out: list[dict[str, Any]] = []
    for item in value:
        if isinstance(item, Mapping):
            if "parts" in item:
                out.extend(from_parts(item, default_role))
            else:
                out.append(from_openai(item, default_role))
    return out


def _system_texts(value: Any) -> list[str]:
    value = json_value(value)
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list):
        texts = [text_of([p]) if isinstance(p, Mapping) else str(p) for p in value]
        return [t for t in texts if t]
    return []


def _openai_messages(value: Any, default_role: str) -> list[dict[str, Any]] | None:
    value = json_value(value)
    if isinstance(value, str):
        return [{"role": default_role, "content": value}] if value else None
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, list):
        return None
    return [
        from_openai(m, default_role) if isinstance(m, Mapping) else {"role": default_role, "content": text_of(m)}
        for m in value
    ]


def _flattened(attributes: Mapping[str, Any], prefix: str, default_role: str) -> list[dict[str, Any]] | None:
    items = unflatten(attributes, prefix)
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        msg = from_openai({k: v for k, v in item.items() if k != "tool_calls"}, default_role)
        calls = item.get("tool_calls")
        if isinstance(calls, list):
            found = [tool_call(c.get("id"), c.get("name"), c.get("arguments")) for c in calls if isinstance(c, Mapping)]
            found = [c for c in found if c is not None]
            if found:
                msg["tool_calls"] = found
        out.append(msg)
    return out


def _messages(
    span: Span, events: Sequence[SpanEvent]
) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]] | None, list[str]]:
    attrs = span.attributes
    inputs = _parts_messages(attrs.get("gen_ai.input.messages"), "user")
    outputs = _parts_messages(attrs.get("gen_ai.output.messages"), "assistant")
    system = _system_texts(attrs.get("gen_ai.system_instructions"))
    all_events = sorted([*span.events, *events], key=lambda e: e.time_ns)  # stable: ties keep their order
    for event in all_events:
        if event.name == DETAILS_EVENT:
            fields = _fields(event)
            if inputs is None:
                inputs = _parts_messages(fields.get("gen_ai.input.messages"), "user")
            if outputs is None:
                outputs = _parts_messages(fields.get("gen_ai.output.messages"), "assistant")
            if not system:
                system = _system_texts(fields.get("gen_ai.system_instructions"))
    if inputs is None or outputs is None:
        ev_in: list[dict[str, Any]] = []
        ev_out: list[tuple[int, dict[str, Any]]] = []
        for event in all_events:
            if event.name in MESSAGE_EVENTS:
                fields = _fields(event)
                side, msg = from_event(event.name, fields)
                if msg is None:
                    continue
                if side == "input":
                    ev_in.append(msg)
                else:
                    ev_out.append((integer(fields.get("index")) or 0, msg))
        if inputs is None and ev_in:
            inputs = ev_in
        if outputs is None and ev_out:
            outputs = [m for _, m in sorted(ev_out, key=lambda x: x[0])]
    if inputs is None or outputs is None:
        prompt, completion = attrs.get("gen_ai.prompt"), attrs.get("gen_ai.completion")
        for event in all_events:
            if event.name == "gen_ai.content.prompt" and prompt is None:
                prompt = event.attributes.get("gen_ai.prompt")
            elif event.name == "gen_ai.content.completion" and completion is None:
                completion = event.attributes.get("gen_ai.completion")
        if inputs is None and prompt is not None:
            inputs = _openai_messages(prompt, "user")
        if outputs is None and completion is not None:
            outputs = _openai_messages(completion, "assistant")
    if inputs is None:
        inputs = _flattened(attrs, "gen_ai.prompt", "user")
    if outputs is None:
        outputs = _flattened(attrs, "gen_ai.completion", "assistant")
    return inputs, outputs, system


def tool_definitions(value: Any) -> list[dict[str, Any]]:
    """Tool definitions (``{type, name, description, parameters}``, or OpenAI's ``{type:
    function, function: {...}}``) as ``{name, description, parameters}``."""
    value = json_value(value)
    if isinstance(value, Mapping):
        value = [value]
    out = []
    for item in value if isinstance(value, list) else ():
        item = json_value(item)
        if not isinstance(item, Mapping):
            continue
        fn: Mapping[str, Any] = item["function"] if isinstance(item.get("function"), Mapping) else item
        name = fn.get("name")
        if isinstance(name, str) and name:
            tool: dict[str, Any] = {"name": name}
            if isinstance(fn.get("description"), str):
                tool["description"] = fn["description"]
            params = json_value(fn.get("parameters", fn.get("input_schema")))
            if params is not None:
                tool["parameters"] = params
            out.append(tool)
    return out


def _model_call(span: Span, events: Sequence[SpanEvent]) -> ModelCall:
    attrs = span.attributes
    inputs, outputs, system = _messages(span, events)
    tools = tool_definitions(attrs.get("gen_ai.tool.definitions"))
    if not tools:
        tools = tool_definitions(unflatten(attrs, "llm.request.functions"))
    model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model")
    input_tokens = integer(attrs.get("gen_ai.usage.input_tokens"))
    if input_tokens is None:
        input_tokens = integer(attrs.get("gen_ai.usage.prompt_tokens"))
    output_tokens = integer(attrs.get("gen_ai.usage.output_tokens"))
    if output_tokens is None:
        output_tokens = integer(attrs.get("gen_ai.usage.completion_tokens"))
    return ModelCall(
        span_id=span.span_id,
        start_ns=span.start_ns,
        end_ns=span.end_ns,
        model=model if isinstance(model, str) and model else None,
        inputs=inputs,
        outputs=outputs,
        system=system,
        tools=tools,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        error=span_error(span),
    )


def _tool_run(span: Span) -> ToolRun:
    attrs = span.attributes
    name = attrs.get("gen_ai.tool.name")
    if not isinstance(name, str) or not name:
        name = span.name[len("execute_tool ") :] if span.name.startswith("execute_tool ") else span.name
    return tool_run(
        span,
        attrs.get("gen_ai.tool.call.id"),
        name or "tool",
        attrs.get("gen_ai.tool.call.arguments"),
        has_arguments="gen_ai.tool.call.arguments" in attrs,
        result=attrs.get("gen_ai.tool.call.result"),
    )


def interpret(span: Span, events: Sequence[SpanEvent] = ()) -> ModelCall | ToolRun | AgentStep | None:
    """What a GenAI span did (see the module docstring)."""
    attrs = span.attributes
    operation = attrs.get("gen_ai.operation.name")
    if operation is None:
        operation = attrs.get("llm.request.type")  # instrumentations before operation names
    if operation == "execute_tool" or (operation is None and "gen_ai.tool.name" in attrs):
        return _tool_run(span)
    if operation in AGENT_OPERATIONS:
        call = _model_call(span, events)
        recorded = call.inputs or call.outputs or call.input_tokens is not None or call.output_tokens is not None
        return AgentStep(span.span_id, span.start_ns, span.end_ns, call if recorded else None)
    if operation in OTHER_OPERATIONS:
        return None
    if (
        operation in MODEL_OPERATIONS
        or any(k in attrs for k in _MODEL_HINTS)
        or any(e.name in MESSAGE_EVENTS or e.name == DETAILS_EVENT for e in (*span.events, *events))
    ):
        return _model_call(span, events)
    return None
