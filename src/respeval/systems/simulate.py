"""Multi-turn runs: a simulated user converses with each system under test.

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

import asyncio
import contextlib
import dataclasses
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from respeval._sync import run_sync
from respeval.agents.multiturn import JudgeCase
from respeval.io import InputError
from respeval.io.files import guarded_outputs
from respeval.judge.cache import JudgeCache
from respeval.judge.engine import EngineOptions, budget_left
from respeval.judge.limits import Price
from respeval.judge.models.base import Capabilities, JudgeRequest, Message
from respeval.judge.results import RowResult, Spend
from respeval.judge.run import RunControl
from respeval.judge.run import arun as judge_arun
from respeval.systems.base import GENERATE_VERSION, Generate, System
from respeval.systems.runner import (
    RunResult,
    SystemSummary,
    _dumps,
    _fingerprint,
    _Folder,
    _Part,
    _price,
    _systems,
    _templates,
)
from respeval.systems.specs import load_system
from respeval.systems.templates import OUTPUT_FIELDS, Case, Template, build_cases, prompts_of

__all__ = [
    "CONVERSATION_FIELDS",
    "SIMULATE_VERSION",
    "STOP_PHRASE",
    "Turn",
    "aconverse",
    "converse",
    "judge_cases",
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
class _Dialogue:
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


def _add_cost(total: float | None, price: Price | None, tokens_in: int, tokens_out: int) -> float | None:
    if price is None:
        return total
    return (total or 0.0) + price.cost(tokens_in, tokens_out)


def _scenario_fields(case: Case, default_turns: int) -> tuple[str | None, str, int]:
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


def _is_stop(text: str, stop: str) -> bool:
    return stop in text


async def aconverse(
    data: Any,
    systems: Mapping[str, str | System] | Sequence[System],
    simulator: str | System,
    *,
    max_turns: int = 6,
    templates: Sequence[str | Template] | Mapping[str, str] | str | None = None,
    out: str | os.PathLike[str] | None = None,
    cache: JudgeCache | str | os.PathLike[str] | bool | None = None,
    resume: bool = False,
    id_field: str = "id",
    keep: Sequence[str] = (),
    fence: bool = True,
    options: EngineOptions | None = None,
    control: RunControl | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    **overrides: Any,
) -> RunResult:
    """The asynchronous :func:`converse` (same arguments)."""
    started = time.perf_counter()
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ValueError(f"max_turns must be a whole number, at least 1, got {max_turns!r}")
    opts = dataclasses.replace(options or EngineOptions(), **overrides)
    template_list = _templates(templates, fence)
    system_list = _systems(systems)
    sim = simulator if isinstance(simulator, System) else load_system("simulator", simulator)
    reserved = (*OUTPUT_FIELDS, *CONVERSATION_FIELDS) + (("scenario",) if template_list else ())
    cases, data_digest = build_cases(
        data, template_list, id_field=id_field, keep=(*keep, *SCENARIO_FIELDS), prompt_field="scenario",
        reserved=reserved,
    )  # fmt: skip
    n_templates = max(1, len(template_list))
    scenarios = [(case, p) for case in cases for p in prompts_of(case, template_list, "scenario")]
    fields = [_scenario_fields(case, max_turns) for case in cases]
    per_system = len(scenarios)
    out_path = os.fspath(out) if out is not None else None
    given_cache = cache if isinstance(cache, JudgeCache) else None
    cache_path: str | None
    if given_cache is not None:
        cache_path = given_cache.path
    elif cache is None or cache is True:
        cache_path = out_path + ".cache.sqlite" if out_path is not None else None
    elif cache is False:
        cache_path = None
    else:
        cache_path = os.fspath(cache)  # type: ignore[arg-type]
    inputs = [("--input", os.fspath(data))] if isinstance(data, (str, os.PathLike)) else []
    outputs = [("--out", out_path)] if out_path else []
    with guarded_outputs(inputs, outputs, unlocked=[("--cache", cache_path)]):
        folder = None
        if out_path is not None:
            Path(out_path).parent.mkdir(parents=True, exist_ok=True)
            fingerprint = _fingerprint(
                system_list,
                template_list,
                data_digest,
                {
                    "the id field": id_field,
                    "the fields kept": sorted(keep),
                    "fencing": fence,
                    "the simulator": sim.identity(),
                    "the turn limit": max_turns,
                    "the simulator's prompt": SIMULATE_VERSION,
                },
            )
            folder = _Folder(out_path, fingerprint, resume, len(system_list))
        starts = folder.done if folder is not None else [0] * len(system_list)
        parts = [
            _Part(folder.files[i] if folder is not None else None, per_system, min(starts[i], per_system))
            for i in range(len(system_list))
        ]
        shared = given_cache if given_cache is not None else (JudgeCache(cache_path) if cache_path else None)
        prices = [_price(s, opts, False, None) for s in system_list]
        sim_price = _price(sim, opts, False, None)
        spends = [Spend() for _ in system_list]
        sim_spend = Spend()
        stops: list[tuple[str | None, str | None]] = [(None, None)] * len(system_list)
        sim_stop: tuple[str | None, str | None] = (None, None)
        counts: list[dict[str, Any]] = [{"rows": 0, "errors": 0, "responses": 0, "tokens_in": 0, "tokens_out": 0, "cost": None}
                  for _ in system_list]  # fmt: skip
        live: list[_Dialogue] = []
        for s, system in enumerate(system_list):
            for k in range(parts[s].next, per_system):
                persona, stop, turns = fields[k // n_templates]
                d = _Dialogue(k, s, persona, scenarios[k][1].text, stop, turns)
                if system.system_instruction:
                    d.messages.append({"role": "system", "content": system.system_instruction})
                live.append(d)

        def emit(d: _Dialogue) -> None:
            case, prompt = scenarios[d.k]
            system = system_list[d.s]
            row = dict(case.record)
            row["id"] = case.id
            row["system"] = system.name
            if template_list and len(template_list) > 1:
                row["template"] = prompt.template
            if template_list:
                row["scenario"] = prompt.text
            replies = [m for m in d.messages if m["role"] == "assistant"]
            row.update(
                messages=d.messages,
                response=replies[-1]["content"] if replies else None,
                turns=d.turns,
                stop_reason=d.done,
                error=d.error,
                tokens_in=d.tokens_in,
                tokens_out=d.tokens_out,
                cost_usd=d.cost if prices[d.s] is not None else None,
                latency_s=d.latency,
                simulator_tokens_in=d.sim_tokens_in,
                simulator_tokens_out=d.sim_tokens_out,
                simulator_cost_usd=d.sim_cost if sim_price is not None else None,
            )
            tally = counts[d.s]
            tally["rows"] += 1
            tally["errors" if d.error else "responses"] += 1
            tally["tokens_in"] += d.tokens_in
            tally["tokens_out"] += d.tokens_out
            if row["cost_usd"] is not None:
                tally["cost"] = (tally["cost"] or 0.0) + row["cost_usd"]
            parts[d.s].add(d.k, _dumps(row))
            if on_row is not None:
                on_row(row)

        async def wave(model_system: System, dialogues: list[_Dialogue], version: str, spend: Spend) -> Any:
            if version == SIMULATE_VERSION:
                records = [{"id": f"{d.k}/{d.s}", "item": d.simulator_messages()} for d in dialogues]
            else:
                records = [{"id": f"{d.k}/{d.s}", "item": d.system_messages()} for d in dialogues]
            got: dict[int, RowResult] = {}

            def seen(row: RowResult) -> None:
                got[row.row] = row

            result = await judge_arun(
                records, model_system.model, method=Turn(model_system, version), cache=shared, on_row=seen,
                keep_rows=False, options=budget_left(opts, spend), control=control,
            )  # fmt: skip
            spend.add(result.summary)
            return result, got

        def failed(row: RowResult) -> str | None:
            if not row.scored or row.verdict is None:
                return row.unscored_reason or "no answer"
            return row.verdict["error"]

        try:
            async with contextlib.AsyncExitStack() as stack:
                for model in {id(m): m for m in [sim.model, *(s.model for s in system_list)]}.values():
                    await stack.enter_async_context(model)
                while live:
                    # the simulator writes each live conversation's next user message
                    result, got = await wave(sim, live, SIMULATE_VERSION, sim_spend)
                    if result.stop_kind is not None and sim_stop[0] is None:
                        sim_stop = (result.summary.stop_reason, result.stop_kind)
                    asked: list[_Dialogue] = []
                    for i, d in enumerate(live):
                        row = got.get(i)
                        if row is None:
                            continue  # not run: the run stopped
                        v = row.verdict or {}
                        d.sim_tokens_in += int(v.get("tokens_in") or 0)
                        d.sim_tokens_out += int(v.get("tokens_out") or 0)
                        d.sim_cost = _add_cost(d.sim_cost, sim_price, int(v.get("tokens_in") or 0),
                                               int(v.get("tokens_out") or 0))  # fmt: skip
                        why = failed(row)
                        if why is not None:
                            d.done, d.error = "error", f"turn {d.turns + 1}, the simulator: {why}"
                        elif _is_stop(str(v["response"]), d.stop):
                            d.done = "stopped"
                        else:
                            d.messages.append({"role": "user", "content": str(v["response"]).strip()})
                            asked.append(d)
                            continue
                        emit(d)
                    if sim_stop[0] is not None:
                        break
                    # each system answers its conversations' new messages, the systems at once
                    by_system = [[d for d in asked if d.s == s] for s in range(len(system_list))]
                    answers = await asyncio.gather(
                        *(wave(system_list[s], ds, GENERATE_VERSION, spends[s]) for s, ds in enumerate(by_system) if ds)
                    )
                    going: list[_Dialogue] = []
                    stopped_any = False
                    for (result, got), ds in zip(answers, [ds for ds in by_system if ds]):
                        if result.stop_kind is not None:
                            stopped_any = True
                            s = ds[0].s
                            if stops[s][0] is None:
                                stops[s] = (result.summary.stop_reason, result.stop_kind)
                        for i, d in enumerate(ds):
                            row = got.get(i)
                            if row is None:
                                continue
                            v = row.verdict or {}
                            t_in, t_out = int(v.get("tokens_in") or 0), int(v.get("tokens_out") or 0)
                            d.tokens_in += t_in
                            d.tokens_out += t_out
                            d.cost = _add_cost(d.cost, prices[d.s], t_in, t_out)
                            d.latency += float(v.get("latency_s") or 0.0)
                            why = failed(row)
                            if why is not None:
                                d.done, d.error = "error", f"turn {d.turns + 1}, the system: {why}"
                                emit(d)
                                continue
                            message: dict[str, Any] = {"role": "assistant", "content": v["response"] or ""}
                            if v.get("tool_calls"):
                                message["tool_calls"] = v["tool_calls"]
                            d.messages.append(message)
                            if d.turns >= d.max_turns:
                                d.done = "turn_limit"
                                emit(d)
                            else:
                                going.append(d)
                    if stopped_any:
                        break
                    live = going
        finally:
            for part in parts:
                part.close()
            if shared is not None and shared is not given_cache:
                shared.close()
        summaries: dict[str, SystemSummary] = {}
        complete = True
        for s, system in enumerate(system_list):
            reason, kind = stops[s] if stops[s][0] is not None else sim_stop
            if kind is None and not parts[s].done:
                kind, reason = "not_run", "rows left not run"
            complete = complete and kind is None
            tally = counts[s]
            summaries[system.name] = SystemSummary(
                name=system.name,
                model=system.model.model_id,
                rows=tally["rows"] + starts[s],
                total=per_system,
                responses=tally["responses"],
                errors=tally["errors"],
                resumed=starts[s],
                calls=spends[s].calls,
                cache_hits=spends[s].cache_hits,
                retries=spends[s].retries,
                tokens_in=tally["tokens_in"],
                tokens_out=tally["tokens_out"],
                cost_usd=tally["cost"],
                spent_tokens_in=spends[s].tokens_in,
                spent_tokens_out=spends[s].tokens_out,
                spent_usd=spends[s].cost,
                seconds=time.perf_counter() - started,
                stop_reason=reason,
                stop_kind=kind,
            )
        summaries_sim = SystemSummary(
            name="simulator",
            model=sim.model.model_id,
            calls=sim_spend.calls,
            cache_hits=sim_spend.cache_hits,
            retries=sim_spend.retries,
            spent_tokens_in=sim_spend.tokens_in,
            spent_tokens_out=sim_spend.tokens_out,
            spent_usd=sim_spend.cost,
        )
        order = list(range(len(system_list)))
        output = None
        rows = None
        if folder is not None:
            if complete:
                folder.join(order, per_system)
                output = out_path
            else:
                output = str(folder.dir)
        elif complete:
            rows = [json.loads(parts[s].lines[k]) for k in range(per_system) for s in order]  # type: ignore[index]
        result = RunResult(
            systems=summaries,
            templates=[t.name for t in template_list],
            cases=len(cases),
            output=output,
            complete=complete,
            seconds=time.perf_counter() - started,
            rows=rows,
        )
        result.simulator = summaries_sim  # type: ignore[attr-defined]
        return result


def converse(data: Any, systems: Any, simulator: Any, **kwargs: Any) -> RunResult:
    """Simulated conversations of every scenario with every system (see the module docstring).

    Args:
        data: the scenarios (a JSONL, CSV or Parquet file, or records).
        systems: as :func:`respeval.run`'s (``{"candidate": "openai:gpt-4o-mini"}``).
        simulator: the user simulator's spec (``openai:gpt-4o-mini``,
            ``python:respeval.systems.example:toy_user``) or a :class:`~respeval.systems.System`.
        max_turns: the turn limit (a row's ``max_turns`` overrides it).
        templates, out, cache, resume, id_field, keep, fence, options, control, on_row,
            overrides: as :func:`respeval.run`'s (the budget applies to each system, and to
            the simulator, apart).

    Returns a :class:`~respeval.systems.RunResult` (its ``simulator`` attribute: what the
    simulator's calls cost).

    Example::

        toy = "python:respeval.systems.example:toy_model"
        result = converse("scenarios.jsonl", {"candidate": toy}, "python:respeval.systems.example:toy_user",
                          max_turns=4, out="conversations.jsonl")
    """
    return run_sync(aconverse(data, systems, simulator, **kwargs), thread_name="respeval-converse")


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
