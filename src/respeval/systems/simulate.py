"""Multi-turn runs: a simulated user converses with each system under test
(``respeval.run(data, systems, simulator=SPEC, max_turns=6)``, ``respeval run --simulator``;
the run itself is :mod:`respeval.systems.runner`'s, this module its parts).

The **user simulator** is a model (any system spec: ``openai:MODEL``, ``python:mod:fn``, ...)
given a persona, a scenario and a stop phrase; it writes the user's messages, the system
under test answers each one, until the simulator replies with the stop phrase (``stopped``),
the system has answered ``max_turns`` messages (``turn_limit``), or a call fails
(``error``).  Both are called through the judge's one engine, turn after turn, every answer
in the run's SQLite cache: a rerun replays every conversation exactly with no call repeated,
and a killed run resumes (``resume=True``) from the conversations it wrote.

**Scenarios** are rows of a JSONL/CSV/Parquet file (or records) with ``scenario`` (what the
user wants), optional ``persona`` (who they are), ``stop`` (default ``###STOP###``) and
``max_turns``; or, with templates, each template rendered from the row's variables is the
scenario (persona, stop and max_turns stay fields of the row).

**The simulator's request**: a system message (the role, the persona, the scenario, the stop
rule), then ``Write your first message to the assistant.`` as the first user message, then
the conversation with the roles swapped (its own messages as ``assistant``, the system's
replies as ``user``).  The system's request: its system instruction, then the conversation
(``user``/``assistant``) so far: the agent contract's ``messages``.  The opening message of
a scenario is the same request for every system, so the systems are asked the same first
question (one call, cached).

**The output** has one row per (case, template, system): the row's fields, ``id``,
``system``, ``template`` (when several), ``scenario`` (when rendered from a template),
``messages`` (the conversation: ``{"role", "content", "tool_calls"?}``, with the system's
instruction first as a ``system`` message), ``response`` (the system's last reply),
``turns``, ``stop_reason``, ``error``, the system's ``tokens_in``, ``tokens_out``,
``cost_usd`` and ``latency_s`` summed over its turns, and the simulator's
``simulator_tokens_in``, ``simulator_tokens_out``, ``simulator_cost_usd``.  ``messages`` is
what :meth:`respeval.agents.conversation.Conversation.from_messages` reads: the
``trajectory_*`` metrics of ``respeval evaluate`` read it as it is, and
:func:`judge_cases` turns the rows into multi-turn judging's cases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.agents.multiturn import JudgeCase
from respeval.io import InputError
from respeval.judge.limits import Price
from respeval.judge.models.base import Capabilities, JudgeRequest, Message
from respeval.systems.base import GENERATE_VERSION, Generate, System
from respeval.systems.templates import Case

__all__ = [
    "CONVERSATION_FIELDS",
    "SCENARIO_FIELDS",
    "SIMULATE_VERSION",
    "STOP_PHRASE",
    "Dialogue",
    "Turn",
    "add_cost",
    "is_stop",
    "judge_cases",
    "scenario_fields",
    "simulator_request",
]

STOP_PHRASE = "###STOP###"
"""The default stop phrase (tau-bench's)."""

SIMULATE_VERSION = "simulate-user/1"
"""The simulator's requests' ``template_version``: cached apart from the systems' answers."""

SCENARIO_FIELDS = ("persona", "stop", "max_turns")
CONVERSATION_FIELDS = (
    "messages",
    "turns",
    "stop_reason",
    "simulator_tokens_in",
    "simulator_tokens_out",
    "simulator_cost_usd",
)
"""The columns a multi-turn run adds besides the single-turn run's."""

KICKOFF = "Write your first message to the assistant."
_INSTRUCTION = """\
You are role-playing a user who talks to an AI assistant, to test it. Stay in character: \
write only the user's next message, in the first person, with no commentary and no quotes.
{persona}Your scenario (what you want):
{scenario}

When your goal is met, or the conversation cannot usefully go on, reply with exactly {stop} \
and nothing else."""


def simulator_request(persona: str | None, scenario: str, stop: str) -> str:
    """The simulator's system message (see the module docstring)."""
    who = f"Who you are:\n{persona}\n\n" if persona else ""
    return _INSTRUCTION.format(persona=who, scenario=scenario, stop=stop)


class Turn(Generate):
    """One turn of a conversation through the engine: the messages so far in (``item``), the
    reply out.  For a system under test, its instruction is sent first (a one-message
    conversation is the request :class:`Generate` makes, so single-turn answers are shared);
    for the simulator (``version=SIMULATE_VERSION``) the messages carry their own."""

    fields = ("item",)

    def __init__(self, system: System, version: str = GENERATE_VERSION) -> None:
        super().__init__(system)
        self.template_version = version

    def signature(self) -> str:
        return super().signature().replace(GENERATE_VERSION, self.template_version, 1)

    def item(self, record: Mapping[str, Any]) -> Any:
        return record["item"]

    def build(self, messages: tuple[Message, ...], capabilities: Capabilities) -> JudgeRequest:  # type: ignore[override]
        s = self.system
        if s.system_instruction and self.template_version == GENERATE_VERSION:
            messages = (Message("system", s.system_instruction), *messages)
        return JudgeRequest(
            messages=tuple(messages),
            temperature=s.temperature if capabilities.temperature else None,
            seed=s.seed if capabilities.seed else None,
            max_tokens=s.max_tokens,
            template_version=self.template_version,
            tools=s.tools if self.template_version == GENERATE_VERSION else (),
        )


@dataclass
class Dialogue:
    """One conversation in progress: (case, template) ``k`` with system ``s``."""

    k: int
    s: int
    persona: str | None
    scenario: str
    stop: str
    max_turns: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    done: str | None = None  # stopped / turn_limit / error
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    latency: float = 0.0
    sim_tokens_in: int = 0
    sim_tokens_out: int = 0
    sim_cost: float | None = None

    @property
    def turns(self) -> int:
        return sum(1 for m in self.messages if m["role"] == "assistant")

    def system_messages(self) -> tuple[Message, ...]:
        return tuple(Message(m["role"], m["content"]) for m in self.messages if m["role"] != "system")

    def simulator_messages(self) -> tuple[Message, ...]:
        out = [Message("system", simulator_request(self.persona, self.scenario, self.stop)), Message("user", KICKOFF)]
        for m in self.messages:
            if m["role"] == "user":
                out.append(Message("assistant", m["content"]))
            elif m["role"] == "assistant":
                text = m["content"]
                if not text and m.get("tool_calls"):
                    text = "(the assistant called " + ", ".join(c["name"] for c in m["tool_calls"]) + ")"
                out.append(Message("user", text))
        return tuple(out)


def add_cost(total: float | None, price: Price | None, tokens_in: int, tokens_out: int) -> float | None:
    if price is None:
        return total
    return (total or 0.0) + price.cost(tokens_in, tokens_out)


def scenario_fields(case: Case, default_turns: int) -> tuple[str | None, str, int]:
    at = f"{case.where} (row {case.row})"
    persona = case.record.get("persona")
    if persona is not None and not isinstance(persona, str):
        raise InputError(f"{at}: field 'persona': expected a string, got {type(persona).__name__}")
    stop = case.record.get("stop")
    if stop is None or stop == "":
        stop = STOP_PHRASE
    if not isinstance(stop, str) or not stop.strip():
        raise InputError(f"{at}: field 'stop': expected the stop phrase (a string), got {stop!r}")
    turns: Any = case.record.get("max_turns")
    if turns is None or turns == "":
        turns = default_turns
    elif isinstance(turns, str) and turns.strip().isdigit():
        turns = int(turns)
    if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
        raise InputError(f"{at}: field 'max_turns': expected a whole number, at least 1, got {turns!r}")
    return persona or None, stop.strip(), turns


def is_stop(text: str, stop: str) -> bool:
    return stop in text


def judge_cases(rows: Sequence[Mapping[str, Any]]) -> list[JudgeCase]:
    """Multi-turn judging's cases (:class:`respeval.agents.multiturn.JudgeCase`, for
    ``respeval.judge.run(cases, model, method="multi-turn")``) from a multi-turn run's rows:
    one per (id, system[, template]), named ``ID/SYSTEM[/TEMPLATE]``."""
    from respeval.agents.conversation import Conversation

    out = []
    for i, row in enumerate(rows):
        messages = row.get("messages")
        if not isinstance(messages, list):
            raise ValueError(f"row {i}: field 'messages': expected the conversation (a list of messages)")
        name = "/".join(str(row[k]) for k in ("id", "system", "template") if row.get(k) is not None)
        out.append(JudgeCase(name, Conversation.from_messages(messages)))
    return out
