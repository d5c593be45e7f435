"""Chat messages in the one shape every case holds, from the shapes traces record them in.

A case message is an OpenAI-style chat message, as :meth:`respeval.judge.methods.multiturn.
Conversation.from_messages` reads it::

    {"role": "system" | "user" | "assistant" | "tool", "content": str,
     "tool_calls": [{"id": str | None, "name": str, "arguments": ...}],   # assistant, when it called tools
     "tool_call_id": str, "name": str}                                    # tool results

Content is text: text parts are joined with newlines; parts that are not text (images,
files, reasoning) are left out; a structured tool result is written as JSON text.  Roles are
lowercased, and the synonyms ``model``/``ai`` (assistant), ``human`` (user), ``function``
(tool) and ``developer`` (system) are mapped; any other role is kept as written.

Tool-call arguments are decoded when they are JSON text of an object (models send them as
text); anything else (an object already, None, text that is not a JSON object) is kept as
it came.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "decode_arguments",
    "from_event",
    "from_openai",
    "from_parts",
    "json_value",
    "normalize_role",
    "text_of",
    "tool_call",
]

_ROLES = {"model": "assistant", "ai": "assistant", "bot": "assistant", "human": "user", "function": "tool"}
_ROLES["developer"] = "system"


def normalize_role(role: Any, default: str) -> str:
    if not isinstance(role, str) or not role:
        return default
    lowered = role.lower()
    return _ROLES.get(lowered, lowered)


def json_value(value: Any) -> Any:
    """A value recorded as JSON text (attributes that hold structures MAY be strings), decoded;
    a string that is not JSON is returned unchanged."""
    if isinstance(value, str):
        s = value.lstrip()
        if s[:1] in ("[", "{"):
            try:
                return json.loads(value)
            except ValueError:
                return value
    return value


def decode_arguments(value: Any) -> Any:
    """Tool-call arguments: JSON text of an object decoded, ``""`` as None, else unchanged."""
    if isinstance(value, str):
        if not value.strip():
            return None
        decoded = json_value(value)
        return decoded if isinstance(decoded, dict) else value
    return value


def tool_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any] | None:
    if not isinstance(name, str) or not name:
        return None
    return {
        "id": call_id if isinstance(call_id, str) and call_id else None,
        "name": name,
        "arguments": decode_arguments(arguments),
    }


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def text_of(content: Any) -> str:
    """Text of a content value: a string, a list of parts (``{"type": "text", "text"|"content":
    ...}`` or strings), or a structure (written as JSON)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping):
                kind = part.get("type")
                text = (
                    part.get("text", part.get("content"))
                    if kind in (None, "text", "input_text", "output_text")
                    else None
                )
                if isinstance(text, str):
                    texts.append(text)
        return "\n".join(t for t in texts if t)
    if isinstance(content, Mapping):
        if isinstance(content.get("text"), str):
            return content["text"]
        return _dumps(content)
    return str(content)


def _result_text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else _dumps(value)


def from_parts(message: Mapping[str, Any], default_role: str) -> list[dict[str, Any]]:
    """A semantic-conventions ``ChatMessage`` / ``OutputMessage`` (``{role, parts: [...]}``)
    as case messages: text and tool calls in one message, each tool-call response as a tool
    message of its own."""
    role = normalize_role(message.get("role"), default_role)
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for part in message.get("parts") or ():
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text":
            text = part.get("content", part.get("text"))
            if isinstance(text, str):
                texts.append(text)
        elif kind == "tool_call":
            call = tool_call(part.get("id"), part.get("name"), part.get("arguments"))
            if call is not None:
                calls.append(call)
        elif kind == "tool_call_response":
            # "response" in the JSON schema; "result" in the attribute's examples
            value = part.get("response", part.get("result"))
            result = {"role": "tool", "content": _result_text(value)}
            if isinstance(part.get("id"), str):
                result["tool_call_id"] = part["id"].strip()
            results.append(result)
    out: list[dict[str, Any]] = []
    if texts or calls or not results:  # a message of tool results only is those results
        msg: dict[str, Any] = {"role": role, "content": "\n".join(texts)}
        if calls:
            msg["tool_calls"] = calls
        if isinstance(message.get("name"), str) and message["name"]:
            msg["name"] = message["name"]
        out.append(msg)
    out.extend(results)
    return out


def _openai_calls(items: Any) -> list[dict[str, Any]]:
    calls = []
    for item in items or ():
        if not isinstance(item, Mapping):
            continue
        fn: Mapping[str, Any] = item["function"] if isinstance(item.get("function"), Mapping) else item
        call = tool_call(item.get("id"), fn.get("name"), fn.get("arguments", fn.get("args")))
        if call is not None:
            calls.append(call)
    return calls


def from_openai(message: Mapping[str, Any], default_role: str = "user") -> dict[str, Any]:
    """An OpenAI chat message (``{role, content, tool_calls, tool_call_id, name}``; the old
    ``function_call`` too) as a case message."""
    role = normalize_role(message.get("role"), default_role)
    out: dict[str, Any] = {"role": role, "content": text_of(message.get("content"))}
    calls = _openai_calls(message.get("tool_calls"))
    fc = message.get("function_call")
    if isinstance(fc, Mapping):
        call = tool_call(None, fc.get("name"), fc.get("arguments"))
        if call is not None:
            calls.append(call)
    if calls:
        out["tool_calls"] = calls
    if isinstance(message.get("tool_call_id"), str):
        out["tool_call_id"] = message["tool_call_id"]
    if isinstance(message.get("name"), str) and message["name"]:
        out["name"] = message["name"]
    return out


_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def from_event(name: str, fields: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """A semantic-conventions 1.28-1.36 message event (``gen_ai.user.message``, ...,
    ``gen_ai.choice``) as ``("input" | "output", case message)``; ``fields`` is the event's
    body (a log record) or its attributes (a span event)."""
    if name == "gen_ai.choice":
        message = fields.get("message")
        message = json_value(message) if isinstance(message, str) else message
        message = message if isinstance(message, Mapping) else {}
        out: dict[str, Any] = {
            "role": normalize_role(message.get("role"), "assistant"),
            "content": text_of(message.get("content")),
        }
        calls = _openai_calls(json_value(fields.get("tool_calls", message.get("tool_calls"))))
        if calls:
            out["tool_calls"] = calls
        return "output", out
    role = _EVENT_ROLES.get(name)
    if role is None:
        return "input", None
    msg: dict[str, Any] = {"role": normalize_role(fields.get("role"), role), "content": text_of(fields.get("content"))}
    calls = _openai_calls(json_value(fields.get("tool_calls")))
    if calls:
        msg["tool_calls"] = calls
    if role == "tool" and isinstance(fields.get("id"), str):
        msg["tool_call_id"] = fields["id"]
    return "input", msg
