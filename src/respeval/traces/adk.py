"""ADK session dumps (``*.session.json``) as cases, read by :func:`respeval.agents.loaders.
load_session` (the one reader of ADK sessions): one session is one trace.

The conversation is each invocation's user turn, intermediate texts, tool calls (as an
assistant message with ``tool_calls``) and their results (tool messages), and final
response; the trajectory is every invocation's calls in order.  Tokens and model calls are
ADK's (``token_usage_v1``, ``inference_call_count_v1``; :mod:`respeval.agents.efficiency`):
input = prompt + tool-use prompt tokens, output = candidates + thoughts tokens, summed over
the invocations' events with usage metadata, a model call being an event with usage
metadata or a model version; the model is
the last event's ``model_version``, the latency runs from the first event's timestamp to
the last's, and the error is the first event's ``error_code`` / ``error_message``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from respeval.agents.efficiency import case_efficiency
from respeval.agents.loaders import AgentDataError, Session, load_session
from respeval.traces.case import Case, iso_time
from respeval.traces.steps import number

__all__ = ["is_session", "session_case"]


def is_session(obj: Any) -> bool:
    return isinstance(obj, Mapping) and isinstance(obj.get("events"), list) and ("app_name" in obj or "appName" in obj)


def _get(obj: Mapping[str, Any], snake: str) -> Any:
    if snake in obj:
        return obj[snake]
    head, *rest = snake.split("_")
    return obj.get(head + "".join(p[:1].upper() + p[1:] for p in rest))


def _messages(session: Session) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    messages: list[dict[str, Any]] = []
    trajectory: list[dict[str, Any]] = []
    for inv in session.invocations:
        for turn in inv.to_conversation():
            role = turn["role"]
            if role == "tool_call":
                call = {"id": None, "name": turn["name"], "arguments": turn.get("args")}
                messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
                trajectory.append({"name": turn["name"], "arguments": turn.get("args")})
            elif role == "tool_result":
                content = turn.get("content")
                text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, sort_keys=True)
                messages.append({"role": "tool", "name": turn["name"], "content": text})
            else:
                messages.append({"role": role, "content": turn.get("content") or ""})
    return messages, trajectory


def session_case(path: str) -> Case:
    """The case of one ADK session dump (raises :class:`AgentDataError` naming the file)."""
    session = load_session(path)
    if not session.session_id:
        raise AgentDataError(f"{path}: the session has no id")
    messages, trajectory = _messages(session)
    usage = case_efficiency(session.session_id, session.invocations)
    times: list[float] = []
    model = None
    error = None
    for event in session.events:
        t = number(event.get("timestamp"))
        if t is not None:
            times.append(t)
        version = _get(event, "model_version")
        if isinstance(version, str) and version:
            model = version
        code, message = _get(event, "error_code"), _get(event, "error_message")
        if error is None and (code or message):
            error = ": ".join(str(x) for x in (code, message) if x)
    prompt = next((m["content"] for m in messages if m["role"] == "user"), "")
    response = next((m["content"] for m in reversed(messages) if m["role"] == "assistant" and m["content"]), "")
    start_ns = int(round(min(times) * 1e9)) if times else None
    return Case(
        trace_id=session.session_id,
        start_time=iso_time(start_ns),
        service=session.app_name or None,
        model=model,
        prompt=prompt,
        messages=messages,
        response=response,
        tool_calls=trajectory,
        input_tokens=usage.tokens_in,
        output_tokens=usage.tokens_out,
        model_calls=usage.model_calls,
        latency_s=(max(times) - min(times)) if times else None,
        error=error,
        models=(model,) if model else (),
        start_ns=start_ns,
    )
