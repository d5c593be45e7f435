"""Every synchronous ``run_*`` entry point works inside a running event loop (a notebook's,
an async app's): ``asyncio.run`` there raises, so each goes through ``respeval._sync.run_sync``."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

from respeval import judge
from respeval._sync import run_sync
from respeval.agents.conversation import Conversation, Exchange
from respeval.agents.multiturn import JudgeCase
from respeval.gate import GateConfig, Thresholds, run_gate
from respeval.judge import EngineOptions, FakeModel
from respeval.judge.batch import run_batched
from respeval.judge.methods.multiturn import run_multiturn
from respeval.judge.methods.pairwise import run_pairwise
from respeval.judge.methods.rubrics import Rubric, run_adaptive, run_rubric

OPTIONS = EngineOptions(concurrency=2, max_retries=0)
ROWS = [{"id": "a", "prompt": "Capital of France?", "reference": "Paris", "response": "Paris."}]
PAIRS = [{"id": "p", "prompt": "Say hi.", "baseline_model_response": "hi", "response": "hello"}]
CRITERIA = [{"id": "correct", "description": "Names the right capital.", "importance": "HIGH"}]


def _verdicts(request: judge.JudgeRequest) -> str:
    system = request.messages[0].content
    if "You write grading rubrics" in system:
        return json.dumps({"criteria": CRITERIA})
    if "per-criterion" in system or "each criterion of a rubric" in system:
        return json.dumps({"verdicts": [{"id": "correct", "reasoning": "r", "pass": True}]})
    if "compare two outputs" in system:
        return json.dumps({"reasoning": "r", "winner": "b"})
    if "final answer against an expected answer" in system:
        return json.dumps({"reasoning": "r", "verdict": "valid"})
    return json.dumps({"reasoning": "r", "score": 1.0, "pass": True})


def _case() -> JudgeCase:
    return JudgeCase("c1", Conversation((Exchange("Capital of France?", (), "Paris."),)), ["Paris."])


ENTRY_POINTS: dict[str, Callable[[], Any]] = {
    "judge.run": lambda: judge.run(ROWS, FakeModel(_verdicts), options=OPTIONS).summary.scored,
    "run_pairwise": lambda: len(run_pairwise(PAIRS, FakeModel(_verdicts), options=OPTIONS).scored),
    "run_rubric": lambda: sum(
        r.scored for r in run_rubric(ROWS, FakeModel(_verdicts), Rubric(CRITERIA), options=OPTIONS).rows
    ),
    "run_adaptive": lambda: sum(r.scored for r in run_adaptive(ROWS, FakeModel(_verdicts), options=OPTIONS).rows),
    "run_multiturn": lambda: sum(
        m.value == 1.0
        for c in run_multiturn(
            [_case()], FakeModel(_verdicts), metrics=["final_response_match_v2"], samples=1, options=OPTIONS
        ).cases
        for m in c.metrics
    ),
    "run_gate": lambda: (
        run_gate(  # not an exact match, no lexical thresholds: the judge decides
            [{**ROWS[0], "response": "It is Paris."}],
            GateConfig(lexical=Thresholds(None, None)),
            model=FakeModel(_verdicts),
            options=OPTIONS,
        ).accepted
    ),
}


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_sync_entry_point_inside_a_running_loop(name):
    call = ENTRY_POINTS[name]
    expected = call()  # outside any loop: plain asyncio.run

    async def notebook_cell() -> Any:
        return call()  # a running loop in this thread: asyncio.run would refuse

    assert expected == 1
    assert asyncio.run(notebook_cell()) == expected


def test_run_batched_inside_a_running_loop_reaches_the_batch_checks():
    async def notebook_cell() -> None:
        run_batched(lambda m, c, o: None, FakeModel(), cache="unused.sqlite")  # type: ignore[arg-type,return-value]

    with pytest.raises(ValueError, match="has no batch API"):
        asyncio.run(notebook_cell())


def test_run_sync_uses_a_helper_thread_only_inside_a_loop():
    async def where() -> str:
        return threading.current_thread().name

    assert run_sync(where()) == threading.current_thread().name

    async def cell() -> str:
        return run_sync(where(), thread_name="respeval-test")

    assert asyncio.run(cell()).startswith("respeval-test")


def test_run_sync_raises_the_coroutines_error():
    async def boom() -> None:
        raise KeyError("inside")

    async def cell() -> None:
        run_sync(boom())

    with pytest.raises(KeyError, match="inside"):
        asyncio.run(cell())


class _CountsReprs:
    reprs = 0

    def __repr__(self) -> str:
        type(self).reprs += 1
        return "<_CountsReprs>"


def test_run_sync_never_formats_the_result():
    """asyncio.run formats its main task (result included) when it reads back its SIGINT
    handler; a judge run's result is every row, so run_sync keeps it out of that task."""

    async def result() -> _CountsReprs:
        return _CountsReprs()

    got = run_sync(result())
    assert isinstance(got, _CountsReprs) and _CountsReprs.reprs == 0
    with pytest.raises(KeyError, match="inside"):  # and an error still reaches the caller
        run_sync(_raises(KeyError("inside")))


async def _raises(exc: BaseException) -> None:
    raise exc
