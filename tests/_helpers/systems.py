"""Systems under test as Python functions (``python:_helpers.systems:NAME``), speaking the
agent contract of :mod:`respeval.systems.base`: a request dict in, a string or a reply out."""

from __future__ import annotations

import asyncio
import re
import socket
from typing import Any

CALLS: list[dict[str, Any]] = []
_FENCED = re.compile(r"\[(\w+) [0-9a-f]+\]\n(.*?)\n\[/\1 [0-9a-f]+\]", re.S)


def value_of(prompt: str) -> str:
    """The first fenced value of a prompt (the prompt itself when none is fenced)."""
    found = _FENCED.search(prompt)
    return found.group(2) if found else prompt


def echo(request: dict[str, Any]) -> dict[str, Any]:
    """Echoes the prompt's value, with usage; raises for a value containing 'boom'."""
    CALLS.append(request)
    value = value_of(request["prompt"])
    if "boom" in value:
        raise ValueError(f"cannot answer {value!r}")
    return {"response": f"echo: {value}", "usage": {"tokens_in": 10, "tokens_out": 3}, "finish_reason": "stop"}


async def shout(request: dict[str, Any]) -> str:
    """An async system: the value in capitals."""
    await asyncio.sleep(0)
    return value_of(request["prompt"]).upper()


def caller(request: dict[str, Any]) -> dict[str, Any]:
    """Calls the first tool it is given, with the prompt's value as its argument."""
    tools = request.get("tools") or []
    if not tools:
        return {"response": "no tools"}
    return {"response": "", "tool_calls": [{"name": tools[0]["name"], "arguments": {"q": value_of(request["prompt"])}}]}


def contract_breaker(request: dict[str, Any]) -> Any:
    """Answers an object without a response (a broken contract) or a number."""
    value = value_of(request["prompt"])
    return 42 if value == "number" else {"text": value}


def says_error(request: dict[str, Any]) -> dict[str, Any]:
    return {"error": f"the backend refused {value_of(request['prompt'])!r}"}


def networked(request: dict[str, Any]) -> str:
    """Opens a socket: refused inside the sandbox without the network."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.close()
    return "had the network"


def plain(request: dict[str, Any]) -> str:
    """For isolation: the value reversed."""
    return value_of(request["prompt"])[::-1]


_SCENARIO_LINE = re.compile(r"^- (.+)$", re.M)
_FENCED_VALUE = re.compile(r"\n?\[(\w+) [0-9a-f]+\]\n(.*?)\n\[/\1 [0-9a-f]+\]\n?", re.S)
_STOP = re.compile(r"reply with exactly (.+?) and nothing else")


def scripted_user(messages: list[dict[str, Any]]) -> str:
    """A user simulator: asks the scenario's ``- `` lines one at a time (counting its own,
    ``assistant``, messages), then the stop phrase; ``[[simulator-empty]]`` in the
    scenario: an empty reply at the second turn."""
    system = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    asked = sum(1 for m in messages if m.get("role") == "assistant")
    if "[[simulator-empty]]" in system and asked == 1:
        return ""
    lines = _SCENARIO_LINE.findall(_FENCED_VALUE.sub(lambda m: m.group(2), system))  # template values unfenced
    stop = _STOP.search(system)
    return lines[asked] if asked < len(lines) else (stop.group(1) if stop else "###STOP###")


def user(request: dict[str, Any]) -> dict[str, Any]:
    """:func:`scripted_user` as a ``python:`` system."""
    return {"response": scripted_user(request["messages"]), "usage": {"tokens_in": 5, "tokens_out": 2}}


def simulation_responder(body: Any) -> str:
    """The local server as the user simulator (model ``user-sim``) and as the systems
    under test (any other model: :func:`_helpers.judge_server.system_responder`)."""
    from _helpers.judge_server import system_responder

    if body.get("model") == "user-sim":
        return scripted_user(body.get("messages") or [])
    return system_responder(body)


def tool_agent(request: dict[str, Any]) -> dict[str, Any]:
    """An agent that looks the question up (a tool call), then answers with the last
    message's value; ``explode`` in it: an error."""
    question = value_of(request["prompt"])
    if "explode" in question:
        return {"error": "the agent crashed"}
    return {
        "response": f"found: {question}",
        "tool_calls": [{"name": "lookup", "arguments": {"q": question}}],
        "usage": {"tokens_in": 10, "tokens_out": 4},
    }
