"""Agent conversations as data: a :class:`Conversation` is the :class:`Exchange` of each
invocation (a user turn and everything the agent did for it: intermediate texts, tool calls
and their results, the final response), plus the agent's instructions and tool declarations.

Build one with :meth:`Conversation.from_messages` (OpenAI-style chat messages, e.g.
tau-bench trajectories, or respeval's ``{"role": "user" | "assistant" | "tool_call" |
"tool_result"}`` turns) or :meth:`Conversation.from_invocations` (ADK eval sets and sessions
read by :mod:`respeval.agents.loaders`).  What a judge is asked about a conversation is
:mod:`respeval.judge.methods.multiturn`'s business; this module is only the model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Conversation", "Exchange", "Step"]


@dataclass(frozen=True)
class Step:
    """One thing the agent did inside an exchange: ``kind`` is ``"text"`` (an intermediate
    message, ``author`` optional), ``"call"`` (``name`` with ``args``) or ``"result"``
    (``name``'s response ``content``)."""

    kind: str
    text: str = ""
    name: str = ""
    args: Any = None
    content: Any = None
    author: str | None = None


@dataclass(frozen=True)
class Exchange:
    """One invocation: the user's turn, the agent's steps, its final response."""

    user: str
    steps: tuple[Step, ...] = ()
    response: str = ""

    @property
    def calls(self) -> list[Step]:
        return [s for s in self.steps if s.kind == "call"]

    @property
    def texts(self) -> list[str]:
        return [s.text for s in self.steps if s.kind == "text" and s.text]


@dataclass(frozen=True)
class Conversation:
    """A multi-turn conversation: exchanges in order, the agent's instructions and tools."""

    exchanges: tuple[Exchange, ...]
    instructions: str | None = None
    tools: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def from_messages(
        cls,
        messages: Sequence[Mapping[str, Any]],
        *,
        instructions: str | None = None,
        tools: Sequence[Mapping[str, Any]] = (),
    ) -> Conversation:
        """From chat messages: OpenAI-style (``system``/``user``/``assistant`` with
        ``tool_calls``/``tool``) or respeval's turns (``tool_call`` with ``name``/``args``,
        ``tool_result`` with ``name``/``content``).  Each user message starts an exchange;
        an assistant text followed by nothing else in its exchange is the final response;
        a system message becomes the instructions."""
        exchanges: list[Exchange] = []
        user: str | None = None
        steps: list[Step] = []
        system = instructions
        call_names: dict[str, str] = {}

        def close() -> None:
            if user is None and not steps:
                return
            texts = [i for i, s in enumerate(steps) if s.kind == "text"]
            response = ""
            body = list(steps)
            if texts and texts[-1] == len(steps) - 1:
                response = steps[-1].text
                body = steps[:-1]
            exchanges.append(Exchange(user or "", tuple(body), response))

        for i, m in enumerate(messages):
            if not isinstance(m, Mapping):
                raise ValueError(f"message {i}: expected an object with a 'role', got {type(m).__name__}")
            role = m.get("role")
            content = _text(m.get("content"))
            if role == "system":
                system = content if system is None else f"{system}\n{content}"
            elif role == "user":
                close()
                user, steps = content, []
            elif role in ("assistant", "model"):
                if content:
                    steps.append(Step("text", text=content, author=m.get("author")))
                for call in m.get("tool_calls") or ():
                    fn = call.get("function", call) if isinstance(call, Mapping) else {}
                    name = fn.get("name")
                    if not isinstance(name, str):
                        raise ValueError(f"message {i}: a tool call without a name")
                    args = fn.get("arguments", fn.get("args"))
                    if isinstance(args, str):
                        try:
                            args = json.loads(args)
                        except ValueError:
                            pass  # shown as written
                    if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                        call_names[call["id"]] = name
                    steps.append(Step("call", name=name, args=args))
            elif role == "tool_call":
                if not isinstance(m.get("name"), str):
                    raise ValueError(f"message {i}: a tool_call without a name")
                steps.append(Step("call", name=m["name"], args=m.get("args")))
            elif role in ("tool", "tool_result", "function"):
                name = m.get("name") or call_names.get(m.get("tool_call_id", ""), "tool")
                steps.append(Step("result", name=str(name), content=m.get("content")))
            else:
                raise ValueError(f"message {i}: unknown role {role!r}")
        close()
        return cls(tuple(exchanges), system, tuple(tools))

    @classmethod
    def from_invocations(
        cls, invocations: Sequence[Any], *, instructions: str | None = None, tools: Sequence[Mapping[str, Any]] = ()
    ) -> Conversation:
        """From ADK invocations read by :mod:`respeval.agents` (``Invocation.to_conversation``)."""
        exchanges = []
        for inv in invocations:
            turns = inv.to_conversation()
            exchanges.append(Conversation.from_messages(turns).exchanges[0] if turns else Exchange(""))
            # the final response is the invocation's own, even when the agent said nothing after its calls
            if exchanges[-1].response != inv.final_text:
                steps = exchanges[-1].steps
                if exchanges[-1].response:
                    steps = (*steps, Step("text", text=exchanges[-1].response))
                exchanges[-1] = Exchange(exchanges[-1].user, steps, inv.final_text)
        return cls(tuple(exchanges), instructions, tuple(tools))


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts
        return "\n".join(p.get("text", "") if isinstance(p, Mapping) else str(p) for p in value if p)
    return str(value)
