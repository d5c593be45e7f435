"""OpenAI chat-completions logs: one ``{"request": ..., "response": ...}`` object per line.

``request`` is the body sent to ``/v1/chat/completions`` (``model``, ``messages``, ``tools``);
``response`` is the completion (``id``, ``model``, ``created``, ``choices[].message``,
``usage.prompt_tokens`` / ``completion_tokens``), or a Batch-API style ``{"status_code",
"body": completion}``, or ``{"error": {...}}``.  Optional fields of the line:

* ``trace_id`` (or ``session_id``): lines with the same one are the calls of one trace (an
  agent's turns); without one, each line is its own trace, named by the completion's
  ``id``, else by a hash of the line's request and response;
* ``start_time`` / ``timestamp`` (ISO 8601 or Unix seconds; else the completion's
  ``created``), ``latency_s`` / ``latency_ms`` / ``duration_ms``;
* ``service``, ``route``, ``error``, ``feedback``.

A line's model call gives the case its messages (the request's, then the first choice),
tool calls (the ones the model requested), model, usage and latency, as a span would.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from respeval.traces.case import TraceParts
from respeval.traces.genai import tool_definitions
from respeval.traces.messages import from_openai, text_of
from respeval.traces.otlp import BadField
from respeval.traces.steps import ModelCall, integer, number

__all__ = ["chat_parts", "is_chat_log", "parse_time"]


def is_chat_log(obj: Any) -> bool:
    return isinstance(obj, Mapping) and "request" in obj and "response" in obj


def parse_time(value: Any, where: str) -> int | None:
    """Nanoseconds since the epoch from ISO 8601 text (UTC when it names no zone) or Unix
    seconds; None for None."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise BadField(where, f"expected a time, got {value!r}")
    if isinstance(value, (int, float)):
        return int(round(value * 1e9))
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(round(float(text) * 1e9))
        except ValueError:
            pass
        try:
            moment = _dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise BadField(where, f"not an ISO 8601 time or Unix seconds: {value!r}") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=_dt.timezone.utc)
        delta = moment - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        return (delta.days * 86400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000
    raise BadField(where, f"expected a time, got {type(value).__name__}")


def _error_text(value: Any) -> str | None:
    if value is None or value is False:
        return None
    if isinstance(value, Mapping):
        kind = value.get("type") or value.get("code")
        message = value.get("message")
        text = ": ".join(str(x) for x in (kind, message) if x)
        return text or json.dumps(value, sort_keys=True, default=str)
    return str(value)


def _trace_id(obj: Mapping[str, Any], completion: Mapping[str, Any]) -> str:
    for key in ("trace_id", "session_id"):
        value = obj.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return str(value)
    if isinstance(completion.get("id"), str) and completion["id"]:
        return completion["id"]
    text = json.dumps([obj.get("request"), obj.get("response")], sort_keys=True, ensure_ascii=False, default=str)
    return "chat-" + hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def chat_parts(obj: Mapping[str, Any]) -> TraceParts:
    """The parts of the trace one log line records (raises :class:`BadField`)."""
    request = obj.get("request")
    if not isinstance(request, Mapping):
        raise BadField("request", f"expected the request body (an object), got {type(request).__name__}")
    response = obj.get("response")
    if response is None:
        response = {}
    if not isinstance(response, Mapping):
        raise BadField("response", f"expected the completion (an object), got {type(response).__name__}")
    completion: Mapping[str, Any] = response
    status = response.get("status_code")
    if isinstance(response.get("body"), Mapping):
        completion = response["body"]
    messages = request.get("messages")
    if messages is not None and not isinstance(messages, list):
        raise BadField("request.messages", f"expected a list of messages, got {type(messages).__name__}")
    inputs = []
    for i, m in enumerate(messages or ()):
        if not isinstance(m, Mapping):
            raise BadField(f"request.messages[{i}]", f"expected a message object, got {type(m).__name__}")
        inputs.append(from_openai(m, "user"))
    choices = completion.get("choices")
    if choices is not None and not isinstance(choices, list):
        raise BadField("response.choices", f"expected a list, got {type(choices).__name__}")
    outputs = []
    for i, choice in enumerate(choices or ()):
        if not isinstance(choice, Mapping):
            raise BadField(f"response.choices[{i}]", f"expected an object, got {type(choice).__name__}")
        message = choice.get("message")
        if isinstance(message, Mapping):
            outputs.append((integer(choice.get("index")) or 0, from_openai(message, "assistant")))
        elif isinstance(choice.get("text"), str):  # the completions API
            outputs.append((integer(choice.get("index")) or 0, {"role": "assistant", "content": choice["text"]}))
    if isinstance(request.get("prompt"), (str, list)) and not inputs:
        inputs = [{"role": "user", "content": text_of(request["prompt"])}]
    usage: Mapping[str, Any] = completion["usage"] if isinstance(completion.get("usage"), Mapping) else {}
    start = parse_time(obj.get("start_time", obj.get("timestamp")), "start_time")
    if start is None and completion.get("created") is not None:
        start = parse_time(completion.get("created"), "response.created")
    latency = number(obj.get("latency_s", obj.get("duration_s")))
    if latency is None:
        ms = number(obj.get("latency_ms", obj.get("duration_ms")))
        latency = None if ms is None else ms / 1000
    end = None if start is None or latency is None else start + int(round(latency * 1e9))
    error = _error_text(obj.get("error")) or _error_text(response.get("error")) or _error_text(completion.get("error"))
    if error is None and isinstance(status, int) and status >= 400:
        error = f"HTTP {status}"
    model = completion.get("model") or request.get("model")
    call = ModelCall(
        span_id="",
        start_ns=start or 0,
        end_ns=end or start or 0,
        model=model if isinstance(model, str) and model else None,
        inputs=inputs or None,
        outputs=[m for _, m in sorted(outputs, key=lambda x: x[0])] or None,
        tools=tool_definitions(request.get("tools") or request.get("functions")),
        input_tokens=integer(usage.get("prompt_tokens", usage.get("input_tokens"))),
        output_tokens=integer(usage.get("completion_tokens", usage.get("output_tokens"))),
        error=error,
    )
    feedback = obj.get("feedback")
    parts = TraceParts(
        trace_id=_trace_id(obj, completion),
        calls=[call],
        start_ns=start,
        end_ns=end,
        service=str(obj["service"]) if obj.get("service") is not None else None,
        route=str(obj["route"]) if obj.get("route") is not None else None,
        errors=[error] if error else [],
        feedback={"feedback": feedback}
        if feedback is not None and not isinstance(feedback, Mapping)
        else dict(feedback or {}),
        latency_s=latency,
    )
    return parts
