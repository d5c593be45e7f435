"""The pairwise judge of a comparison: every case judged in both orders, and its outcome as a
number the paired statistics can use.

Each case goes to :func:`respeval.judge.methods.pairwise.arun_pairwise` (the baseline as
``A``, the candidate as ``B``, both orders, the engine's cache, retries and budget).  Its
**paired outcome** is

* ``+1`` the candidate won in both orders, ``-1`` the baseline did;
* ``0`` a tie, and also a pair whose two orders disagree (``inconsistent``: the judge
  followed the position, not the content) -- such pairs are listed, and weigh nothing;
* with ``samples > 1``, a consistent pair's outcome is its **vote margin**: (votes for the
  winner - votes for the loser) / samples, averaged over the two orders, so a 2-1 majority
  counts a third of a unanimous one.

Unscored pairs (an unparseable order, a stopped run) are left out of the statistics and
counted.  So a judge that cannot tell the two systems apart produces ties, inconsistent
pairs and wins in both directions alike, and cannot make a difference significant.

Sequential mode judges the cases in a seeded random order, ``block`` at a time, and feeds
the outcomes to :class:`respeval.stats.SequentialTest` until it decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from respeval.compare.inputs import Cases
from respeval.judge.cache import JudgeCache
from respeval.judge.engine import EngineOptions, budget_left
from respeval.judge.methods.pairwise import PairResult, Pairwise, arun_pairwise
from respeval.judge.methods.sampling import Spend
from respeval.judge.models.base import JudgeModel
from respeval.judge.results import SCORED
from respeval.stats import SequentialTest

__all__ = ["JudgedCase", "JudgeRun", "SequentialPlan", "arun_judge", "paired_outcome"]


@dataclass
class JudgedCase:
    """One case as the judge saw it: ``outcome`` (A baseline, B candidate, tie,
    inconsistent; None when unscored), the winner of each order, and ``value`` (the paired
    outcome of the module docstring; None when unscored)."""

    index: int
    id: str
    outcome: str | None
    value: float | None
    winners: dict[str, str | None]
    status: str
    reason: str | None = None
    reasoning: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "outcome": self.outcome, "value": self.value, "status": self.status}
        for orientation, winner in self.winners.items():
            out[f"winner_{orientation}"] = winner
        if self.reason:
            out["unscored_reason"] = self.reason
        return out


@dataclass(frozen=True)
class SequentialPlan:
    """``--until-decided``: the error rate of the sequential test, the smallest change worth
    detecting (net win rate), cases judged per step and the seed of the case order."""

    alpha: float
    margin: float
    block: int
    seed: int


@dataclass
class JudgeRun:
    """What the judge did: the cases judged (in the order judged), spend, stop reason and,
    in sequential mode, the test and how far it got."""

    model: str
    samples: int
    cases: list[JudgedCase]
    spend: Spend
    total_cases: int
    stop_reason: str | None = None
    stop_kind: str | None = None
    sequential: SequentialTest | None = None
    plan: SequentialPlan | None = None

    @property
    def scored(self) -> list[JudgedCase]:
        return [c for c in self.cases if c.value is not None]


def paired_outcome(pair: PairResult, samples: int) -> float | None:
    """The paired outcome of one pair (see the module docstring)."""
    if pair.status != SCORED or pair.outcome is None:
        return None
    if pair.outcome in ("tie", "inconsistent"):
        return 0.0
    sign = 1.0 if pair.outcome == "B" else -1.0
    if samples == 1:
        return sign
    margins = []
    for order in pair.orders.values():
        verdict = order.verdict or {}
        votes = verdict.get("votes") or {}
        asked = max(1, int(verdict.get("samples", 1)))
        margins.append((votes.get(repr("B"), 0) - votes.get(repr("A"), 0)) / asked)
    if not margins:
        return sign
    return float(np.clip(sum(margins) / len(margins), -1.0, 1.0))


def _case(index: int, pair: PairResult, cases: Cases, samples: int) -> JudgedCase:
    reasoning = {}
    for orientation, order in pair.orders.items():
        if order.verdict is not None and order.verdict.get("reasoning"):
            reasoning[orientation] = order.verdict["reasoning"]
    return JudgedCase(
        index=index,
        id=cases.ids[index],
        outcome=pair.outcome,
        value=paired_outcome(pair, samples),
        winners=dict(pair.winners),
        status=pair.status,
        reason=pair.unscored_reason,
        reasoning=reasoning,
    )


def _records(cases: Cases, indices: Sequence[int]) -> list[dict[str, Any]]:
    return [
        {
            "id": cases.ids[i],
            "prompt": cases.prompts[i],
            "baseline_model_response": cases.baseline[i],
            "response": cases.candidate[i],
        }
        for i in indices
    ]


async def arun_judge(
    cases: Cases,
    model: JudgeModel,
    *,
    samples: int = 1,
    method: Pairwise | None = None,
    cache: JudgeCache | None = None,
    options: EngineOptions | None = None,
    plan: SequentialPlan | None = None,
) -> JudgeRun:
    """Judge the cases in both orders: all of them, or (``plan``) until the sequential test
    decides."""
    method = method or Pairwise()
    n = len(cases)
    run = JudgeRun(model=model.model_id, samples=samples, cases=[], spend=Spend(), total_cases=n, plan=plan)

    async def judge(indices: Sequence[int]) -> list[JudgedCase]:
        report = await arun_pairwise(
            _records(cases, indices),
            model,
            samples=samples,
            method=method,
            cache=cache,
            options=budget_left(options, run.spend),  # the blocks of a sequential run share one budget
        )
        run.spend.add(report.spend)
        if report.stop_reason and run.stop_reason is None:
            run.stop_reason, run.stop_kind = report.stop_reason, report.stop_kind
        return [_case(indices[p.row], p, cases, samples) for p in report.pairs]

    if plan is None:
        run.cases = await judge(list(range(n)))
        return run
    test = SequentialTest(plan.alpha, plan.margin)
    run.sequential = test
    order = np.random.default_rng(plan.seed).permutation(n).tolist()
    for start in range(0, n, plan.block):
        judged = await judge(order[start : start + plan.block])
        for case in judged:
            run.cases.append(case)
            if case.value is not None and test.decision is None:
                test.update(case.value)
        if test.decision is not None or run.stop_reason:
            break
    return run
