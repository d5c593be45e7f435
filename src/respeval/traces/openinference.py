"""Spans that follow OpenInference's semantic conventions (Arize Phoenix;
``Arize-ai/openinference``, ``spec/semantic_conventions.md`` and ``spec/tool_calling.md``).

``openinference.span.kind`` says what a span is:

* ``LLM``: a model call.  Messages from the flattened ``llm.input_messages.N.message.*`` and
  ``llm.output_messages.N.message.*`` (``role``, ``content`` or ``contents.M.message_content.
  {type, text}``, ``tool_calls.M.tool_call.{id, function.name, function.arguments}``,
  ``tool_call_id``, ``name``); a completions call from ``llm.prompts.N.prompt.text`` /
  ``llm.choices.N.completion.text``; else ``input.value`` / ``output.value``.  Usage from
  ``llm.token_count.prompt`` / ``completion``, the model from ``llm.model_name`` (or
  ``llm.response.model_name`` / ``llm.request.model_name``), a recorded cost from
  ``llm.cost.total``, the tools offered from ``llm.tools.N.tool.json_schema``;
* ``TOOL``: a tool run: ``tool.name`` (else the span name), arguments from ``input.value``
  (JSON text of an object) or ``tool_call.function.arguments``, the call id from
  ``tool_call.id`` (or ``tool.id``), the result from ``output.value``;
* ``AGENT``, ``CHAIN``: an agent step with ``input.value`` / ``output.value``;
* anything else (``RETRIEVER``, ``EMBEDDING``, ``RERANKER``, ``GUARDRAIL``, ``EVALUATOR``,
  ``PROMPT``): not part of the conversation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from respeval.traces.genai import tool_definitions
from respeval.traces.messages import json_value, normalize_role, text_of, tool_call
from respeval.traces.otlp import Span
from respeval.traces.steps import AgentStep, ModelCall, ToolRun, integer, number, span_error, tool_run, unflatten

__all__ = ["interpret"]


def _message(item: Any, default_role: str) -> dict[str, Any] | None:
    if not isinstance(item, Mapping):
        return None
    m = item.get("message")
    if not isinstance(m, Mapping):
        return None
    content = m.get("content")
    if content is None and isinstance(m.get("contents"), list):
        content = [
            {"type": c["message_content"].get("type"), "text": c["message_content"].get("text")}
            for c in m["contents"]
            if isinstance(c, Mapping) and isinstance(c.get("message_content"), Mapping)
        ]
    msg: dict[str, Any] = {"role": normalize_role(m.get("role"), default_role), "content": text_of(content)}
    calls = []
    for c in m.get("tool_calls") or ():
        tc = c.get("tool_call") if isinstance(c, Mapping) else None
        if isinstance(tc, Mapping):
            fn: Mapping[str, Any] = tc["function"] if isinstance(tc.get("function"), Mapping) else {}
            call = tool_call(tc.get("id"), fn.get("name"), fn.get("arguments"))
            if call is not None:
                calls.append(call)
    if not calls and isinstance(m.get("function_call_name"), str):
        call = tool_call(None, m["function_call_name"], m.get("function_call_arguments_json"))
        if call is not None:
            calls.append(call)
    if calls:
        msg["tool_calls"] = calls
    if isinstance(m.get("tool_call_id"), str):
        msg["tool_call_id"] = m["tool_call_id"]
    if isinstance(m.get("name"), str) and m["name"]:
        msg["name"] = m["name"]
    return msg


def _messages(attrs: Mapping[str, Any], prefix: str, default_role: str) -> list[dict[str, Any]] | None:
    items = unflatten(attrs, prefix)
    if not isinstance(items, list):
        return None
    out = [m for m in (_message(i, default_role) for i in items) if m is not None]
    return out or None


def _texts(attrs: Mapping[str, Any], prefix: str, kind: str, default_role: str) -> list[dict[str, Any]] | None:
    items = unflatten(attrs, prefix)
    if not isinstance(items, list):
        return None
    texts = [i[kind].get("text") for i in items if isinstance(i, Mapping) and isinstance(i.get(kind), Mapping)]
    out = [{"role": default_role, "content": t} for t in texts if isinstance(t, str)]
    return out or None


def _value_messages(value: Any, default_role: str) -> list[dict[str, Any]] | None:
    """``input.value`` / ``output.value``: an OpenAI request or response as JSON, or text."""
    if value is None:
        return None
    decoded = json_value(value)
    if isinstance(decoded, Mapping):
        from respeval.traces.messages import from_openai

        if isinstance(decoded.get("messages"), list):
            return [from_openai(m, default_role) for m in decoded["messages"] if isinstance(m, Mapping)]
        choices = decoded.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
            message = choices[0].get("message")
            if isinstance(message, Mapping):
                return [from_openai(message, "assistant")]
    text = value if isinstance(value, str) else text_of(decoded)
    return [{"role": default_role, "content": text}] if text else None


def _model_call(span: Span) -> ModelCall:
    attrs = span.attributes
    inputs = _messages(attrs, "llm.input_messages", "user") or _texts(attrs, "llm.prompts", "prompt", "user")
    outputs = _messages(attrs, "llm.output_messages", "assistant") or _texts(
        attrs, "llm.choices", "completion", "assistant"
    )
    if inputs is None:
        inputs = _value_messages(attrs.get("input.value"), "user")
    if outputs is None:
        outputs = _value_messages(attrs.get("output.value"), "assistant")
    tools_flat = unflatten(attrs, "llm.tools")
    tools = tool_definitions(
        [t.get("tool", {}).get("json_schema") for t in tools_flat if isinstance(t, Mapping)]
        if isinstance(tools_flat, list)
        else None
    )
    model = attrs.get("llm.model_name") or attrs.get("llm.response.model_name") or attrs.get("llm.request.model_name")
    return ModelCall(
        span_id=span.span_id,
        start_ns=span.start_ns,
        end_ns=span.end_ns,
        model=model if isinstance(model, str) and model else None,
        inputs=inputs,
        outputs=outputs,
        tools=tools,
        input_tokens=integer(attrs.get("llm.token_count.prompt")),
        output_tokens=integer(attrs.get("llm.token_count.completion")),
        cost_usd=number(attrs.get("llm.cost.total")),
        error=span_error(span),
    )


def _tool_run(span: Span) -> ToolRun:
    attrs = span.attributes
    name = attrs.get("tool.name") or attrs.get("tool_call.function.name") or span.name
    if "input.value" in attrs:
        raw_args, has = attrs["input.value"], True
    else:
        raw_args, has = attrs.get("tool_call.function.arguments"), "tool_call.function.arguments" in attrs
    call_id = attrs.get("tool_call.id") or attrs.get("tool.id")
    return tool_run(span, call_id, str(name or "tool"), raw_args, has_arguments=has, result=attrs.get("output.value"))


def interpret(span: Span) -> ModelCall | ToolRun | AgentStep | None:
    """What an OpenInference span did (see the module docstring)."""
    kind = str(span.attributes.get("openinference.span.kind", "")).upper()
    if kind == "LLM":
        return _model_call(span)
    if kind == "TOOL":
        return _tool_run(span)
    if kind in ("AGENT", "CHAIN"):
        attrs = span.attributes
        inp, out = attrs.get("input.value"), attrs.get("output.value")
        return AgentStep(
            span.span_id,
            span.start_ns,
            span.end_ns,
            None,
            None if inp is None else (inp if isinstance(inp, str) else text_of(inp)),
            None if out is None else (out if isinstance(out, str) else text_of(out)),
        )
    return None
