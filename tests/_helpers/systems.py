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
