"""The escalation gate: exact match, then a lexical metric, then an LLM judge.

Each cheap stage is two-sided: a row whose stage score reaches ``accept_at`` is
**accepted**, one below ``reject_below`` is **rejected**, and only the rows in between go
on to the next stage.  The judge sees only what neither cheap stage could settle.

Thresholds are set by hand (:class:`Thresholds`) or fitted on human-labelled rows
(:func:`calibrate`): per stage, in order, on the labelled rows that reach it, the widest
accept region whose precision (share of accepted rows labelled correct) is at least the
target, and likewise the widest reject region (share of rejected rows labelled wrong),
each backed by at least ``min_support`` labelled rows.  A side that cannot reach the
target is switched off (the stage passes those rows on), never forced.

The report (:class:`GateReport`) says per stage how many rows it settled and its precision
on the labelled rows, how many rows the judge saw, and the judge calls and cost saved
versus judging every row; settled per stage + judged (+ undecided, when no judge is
given) = total, always.  The pass rate is accepted / total: a row the judge could not
score is *not* counted as passing (a CI gate errs on the side of failing) and is listed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from respeval._run_summary import UNSCORED
from respeval._sync import run_sync
from respeval.judge.batch import BatchOptions
from respeval.judge.cache import JudgeCache
from respeval.judge.engine import EngineOptions
from respeval.judge.methods import JudgeMethod
from respeval.judge.methods.pointwise import Pointwise
from respeval.judge.models import JudgeModel
from respeval.judge.results import JudgeRunSummary
from respeval.judge.run import arun
from respeval.metrics.match import exact_match, squad
from respeval.metrics.rouge import rouge
from respeval.stats import wilson_interval

__all__ = [
    "ACCEPT",
    "LEXICAL_METRICS",
    "REJECT",
    "UNDECIDED",
    "UNSCORED",
    "GateConfig",
    "GateReport",
    "GateRow",
    "StageReport",
    "Thresholds",
    "arun_gate",
    "calibrate",
    "fit_thresholds",
    "run_gate",
    "stage_scores",
]

ACCEPT, REJECT, UNDECIDED = "accept", "reject", "undecided"  # and UNSCORED: the judge gave no verdict
OVER_LIMIT = "over the judge limit"
LEXICAL_METRICS = ("rouge1", "rouge2", "rougeL", "squad_f1")
NORMALIZATIONS = ("squad", "unicode", "none")
STAGES = ("exact", "lexical")


@dataclass(frozen=True)
class Thresholds:
    """Accept when ``score >= accept_at``; reject when ``score < reject_below``; None turns
    that side off."""

    accept_at: float | None = None
    reject_below: float | None = None

    def __post_init__(self) -> None:
        if self.accept_at is not None and self.reject_below is not None and self.reject_below > self.accept_at:
            raise ValueError(f"reject_below ({self.reject_below:g}) must not exceed accept_at ({self.accept_at:g})")

    def decide(self, score: float) -> str | None:
        if self.accept_at is not None and score >= self.accept_at:
            return ACCEPT
        if self.reject_below is not None and score < self.reject_below:
            return REJECT
        return None

    def describe(self) -> str:
        parts = [
            f"accept >= {self.accept_at:.6g}" if self.accept_at is not None else "no accept",
            f"reject < {self.reject_below:.6g}" if self.reject_below is not None else "no reject",
        ]
        return ", ".join(parts)


@dataclass(frozen=True)
class GateConfig:
    """The cheap stages: exact match under ``normalize`` (SQuAD's normalization by default;
    ``unicode``; ``none`` = raw equality) and ``lexical_metric`` (ROUGE-1 F by default),
    each with its thresholds.  Exact match accepts its matches and rejects nothing unless
    told to; the lexical stage settles nothing unless given thresholds or calibrated."""

    exact: Thresholds = Thresholds(accept_at=1.0)
    lexical: Thresholds = Thresholds()
    normalize: str = "squad"
    lexical_metric: str = "rouge1"

    def __post_init__(self) -> None:
        if self.normalize not in NORMALIZATIONS:
            raise ValueError(f"normalize must be one of {', '.join(NORMALIZATIONS)}, got {self.normalize!r}")
        if self.lexical_metric not in LEXICAL_METRICS:
            raise ValueError(f"lexical metric must be one of {', '.join(LEXICAL_METRICS)}, got {self.lexical_metric!r}")

    def thresholds(self, stage: str) -> Thresholds:
        return self.exact if stage == "exact" else self.lexical


# --------------------------------------------------------------------------- stage scores


def _references(record: Mapping[str, Any], row: int) -> list[str]:
    ref = record.get("reference")
    refs = [ref] if isinstance(ref, str) else ref
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise ValueError(f"row {row}: field 'reference': expected a string or a list of strings")
    return refs or [""]  # no gold answer (SQuAD v2's unanswerable questions): the empty answer


def _responses(records: Sequence[Mapping[str, Any]]) -> list[str]:
    out = []
    for row, record in enumerate(records):
        response = record.get("response")
        if not isinstance(response, str):
            raise ValueError(f"row {row}: field 'response': expected a string, got {type(response).__name__}")
        out.append(response)
    return out


def stage_scores(records: Sequence[Mapping[str, Any]], config: GateConfig) -> dict[str, np.ndarray]:
    """Per row, the exact-match score (0/1, best over the references) and the lexical score
    (best over the references)."""
    preds = _responses(records)
    refs = [_references(r, i) for i, r in enumerate(records)]
    exact = exact_match(preds, refs, normalize=config.normalize)["exact_match"] if preds else np.zeros(0)
    if config.lexical_metric == "squad_f1":
        lexical = np.asarray(squad(preds, refs, version="v2")["squad_f1"], dtype=float)
    else:
        lexical = np.asarray(
            rouge(preds, refs, types=[config.lexical_metric])[f"{config.lexical_metric}_f"], dtype=float
        )
    return {"exact": exact, "lexical": lexical}


# --------------------------------------------------------------------------- calibration


def _fit_accept(scores: np.ndarray, labels: np.ndarray, target: float, min_support: int) -> float | None:
    """The lowest t with precision(score >= t) >= target on at least min_support rows."""
    order = np.argsort(-scores, kind="stable")
    s, good = scores[order], labels[order].astype(np.int64)
    hits = np.cumsum(good)
    best = None
    for end in np.flatnonzero(np.r_[s[1:] != s[:-1], True]):  # last index of each score value
        n = end + 1
        if n >= min_support and hits[end] >= target * n:
            best = float(s[end])
    return best


def _fit_reject(scores: np.ndarray, labels: np.ndarray, target: float, min_support: int) -> float | None:
    """The highest t with share-wrong(score < t) >= target on at least min_support rows."""
    order = np.argsort(scores, kind="stable")
    s, bad = scores[order], (~labels[order]).astype(np.int64)
    misses = np.cumsum(bad)
    best = None
    ends = np.flatnonzero(np.r_[s[1:] != s[:-1], True])
    for k, end in enumerate(ends):
        n = end + 1
        if n >= min_support and misses[end] >= target * n:
            # rejecting every row up to this value: the threshold is the next value up
            best = float(s[ends[k + 1]]) if k + 1 < len(ends) else math.nextafter(float(s[end]), math.inf)
    return best


def fit_thresholds(
    scores: np.ndarray, labels: np.ndarray, *, target_precision: float, min_support: int = 20, reject: bool = True
) -> Thresholds:
    """Thresholds for one stage from labelled rows (``labels``: True = the response is
    correct), each side reaching ``target_precision`` on at least ``min_support`` rows or
    switched off."""
    if not 0 < target_precision <= 1:
        raise ValueError(f"target precision must be in (0, 1], got {target_precision}")
    scores = np.asarray(scores, dtype=float)
    labels = np.asarray(labels, dtype=bool)
    accept = _fit_accept(scores, labels, target_precision, min_support) if len(scores) else None
    reject_below = _fit_reject(scores, labels, target_precision, min_support) if (reject and len(scores)) else None
    if accept is not None and reject_below is not None and reject_below > accept:
        reject_below = accept
    return Thresholds(accept, reject_below)


def calibrate(
    records: Sequence[Mapping[str, Any]],
    labels: Mapping[Any, bool],
    *,
    target_precision: float,
    base: GateConfig | None = None,
    min_support: int = 20,
    scores: Mapping[str, np.ndarray] | None = None,
) -> GateConfig:
    """Fit both cheap stages, in order, on the rows whose ``id`` has a human label (True =
    correct): the lexical stage is fitted on the labelled rows exact match did not settle."""
    base = base or GateConfig()
    scores = scores if scores is not None else stage_scores(records, base)
    ids = [r.get("id", i) for i, r in enumerate(records)]
    labelled = np.array([i in labels for i in ids], dtype=bool)
    if not labelled.any():
        raise ValueError("calibration: no labelled row matches an input id")
    truth = np.array([bool(labels.get(i, False)) for i in ids], dtype=bool)
    fitted: dict[str, Thresholds] = {}
    remaining = labelled.copy()
    for stage in STAGES:
        fitted[stage] = fit_thresholds(
            scores[stage][remaining], truth[remaining], target_precision=target_precision, min_support=min_support
        )
        decided = np.array([fitted[stage].decide(x) is not None for x in scores[stage]], dtype=bool)
        remaining &= ~decided
    return GateConfig(
        exact=fitted["exact"], lexical=fitted["lexical"], normalize=base.normalize, lexical_metric=base.lexical_metric
    )


# --------------------------------------------------------------------------- the run


@dataclass
class GateRow:
    """One row's fate: ``decision`` (accept, reject, unscored: the judge could not score
    it, undecided: no judge was given) and the ``stage`` that settled it."""

    row: int
    id: Any
    decision: str
    stage: str
    exact: float
    lexical: float
    judge_score: float | None = None
    reason: str | None = None
    label: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "row": self.row,
            "decision": self.decision,
            "stage": self.stage,
            "exact": self.exact,
            "lexical": self.lexical,
            "judge_score": self.judge_score,
            "reason": self.reason,
            "label": self.label,
        }


@dataclass
class StageReport:
    """What one stage settled, and its precision on the labelled rows it settled."""

    name: str
    thresholds: str
    reached: int = 0
    accepted: int = 0
    rejected: int = 0
    unscored: int = 0
    labelled: int = 0
    labelled_correct: int = 0

    @property
    def settled(self) -> int:
        return self.accepted + self.rejected

    @property
    def precision(self) -> float | None:
        return self.labelled_correct / self.labelled if self.labelled else None

    def to_json(self) -> dict[str, Any]:
        return {
            "stage": self.name,
            "thresholds": self.thresholds,
            "reached": self.reached,
            "settled": self.settled,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "unscored": self.unscored,
            "labelled_settled": self.labelled,
            "precision_on_labelled": self.precision,
        }


@dataclass
class GateReport:
    rows: list[GateRow]
    stages: list[StageReport]
    config: GateConfig
    judge_summary: JudgeRunSummary | None = None
    confidence: float = 0.95
    judge_skipped: bool = False
    over_limit: int = 0  # rows the cheap stages left that judge_limit kept from the judge

    @property
    def total(self) -> int:
        return len(self.rows)

    @property
    def accepted(self) -> int:
        return sum(r.decision == ACCEPT for r in self.rows)

    @property
    def judged(self) -> int:
        return next((s.reached for s in self.stages if s.name == "judge"), 0)

    @property
    def pass_rate(self) -> float | None:
        return self.accepted / self.total if self.total else None

    def savings(self) -> dict[str, Any]:
        """Judge calls and cost saved versus judging every row (one call per row; the cost
        of a saved call is estimated as the mean cost of the rows judged)."""
        saved = self.total - self.judged
        cost_per_row = None
        summary = self.judge_summary
        if summary is not None and self.judged and summary.cost > 0:
            cost_per_row = summary.cost / self.judged
        return {
            "rows_not_judged": saved,
            "calls_saved": saved,
            "judge_calls": summary.calls if summary is not None else 0,
            "judge_cost_usd": summary.cost if summary is not None else 0.0,
            "cost_saved_usd_estimate": None if cost_per_row is None else saved * cost_per_row,
            "fraction_saved": saved / self.total if self.total else None,
        }

    def to_json(self) -> dict[str, Any]:
        rate = self.pass_rate
        interval = wilson_interval(self.accepted, self.total, self.confidence) if self.total else None
        counts = {d: sum(r.decision == d for r in self.rows) for d in (ACCEPT, REJECT, UNSCORED, UNDECIDED)}
        return {
            "rows": self.total,
            "decisions": counts,
            "pass_rate": rate,
            "pass_rate_ci": None
            if interval is None
            else {"low": interval[0], "high": interval[1], "confidence": self.confidence},
            "stages": [s.to_json() for s in self.stages],
            "judged": self.judged,
            "over_judge_limit": self.over_limit,
            "lexical_metric": self.config.lexical_metric,
            "normalize": self.config.normalize,
            "judge": self.judge_summary.to_json() if self.judge_summary is not None else None,
            "savings": self.savings(),
        }

    def format(self) -> str:
        data = self.to_json()
        lines = [
            f"{self.total} rows: {data['decisions'][ACCEPT]} accepted, {data['decisions'][REJECT]} rejected, "
            f"{data['decisions'][UNSCORED]} unscored by the judge, {data['decisions'][UNDECIDED]} undecided"
        ]
        lines.append(
            f"{'stage':<9} {'reached':>8} {'settled':>8} {'accept':>7} {'reject':>7} {'labelled':>9} "
            f"{'precision':>9}  thresholds"
        )
        for s in self.stages:
            prec = f"{s.precision:.4f}" if s.precision is not None else "-"
            lines.append(
                f"{s.name:<9} {s.reached:>8} {s.settled:>8} {s.accepted:>7} {s.rejected:>7} "
                f"{s.labelled:>9} {prec:>9}  {s.thresholds}"
            )
        settled = sum(s.settled for s in self.stages if s.name != "judge")
        over = f" + {self.over_limit} over the judge limit" if self.over_limit else ""
        lines.append(
            f"check     {settled} settled by cheap stages + {self.judged} sent to the judge"
            f"{' (skipped: no --model)' if self.judge_skipped else ''}{over} = "
            f"{settled + self.judged + self.over_limit} of {self.total} rows"
        )
        if rate := self.pass_rate:
            low, high = data["pass_rate_ci"]["low"], data["pass_rate_ci"]["high"]
            lines.append(
                f"pass rate {rate:.4f}  [{low:.4f}, {high:.4f}] {int(round(self.confidence * 100))}% CI "
                f"(Wilson); unscored and undecided rows count as not passed"
            )
        elif self.total:
            lines.append("pass rate 0.0000")
        sav = data["savings"]
        cost = (
            f", ~${sav['cost_saved_usd_estimate']:.4f} saved (at the judged rows' mean cost)"
            if sav["cost_saved_usd_estimate"] is not None
            else ""
        )
        lines.append(
            f"saved     {sav['calls_saved']} judge calls of {self.total} "
            f"({(sav['fraction_saved'] or 0):.1%}){cost}; judge spent {sav['judge_calls']} calls, "
            f"${sav['judge_cost_usd']:.4f}"
        )
        if self.judge_summary is not None and self.judge_summary.batch is not None:
            lines.append(self.judge_summary.batch.format())
        return "\n".join(lines)


def _judge_record(record: Mapping[str, Any], row: int) -> dict[str, Any]:
    refs = list(dict.fromkeys(_references(record, row)))
    reference = refs[0] if len(refs) == 1 else " OR ".join(refs)
    out = {"id": record.get("id", row), "response": record["response"], "reference": reference}
    if isinstance(record.get("prompt"), str):
        out["prompt"] = record["prompt"]
    return out


def _precision_update(stage: StageReport, row: GateRow) -> None:
    if row.label is None or row.decision not in (ACCEPT, REJECT):
        return
    stage.labelled += 1
    stage.labelled_correct += (row.decision == ACCEPT) == row.label


async def arun_gate(
    records: Sequence[Mapping[str, Any]],
    config: GateConfig,
    *,
    model: JudgeModel | None = None,
    method: JudgeMethod | None = None,
    cache: JudgeCache | None = None,
    options: EngineOptions | None = None,
    labels: Mapping[Any, bool] | None = None,
    scores: Mapping[str, np.ndarray] | None = None,
    batch: bool | BatchOptions = False,
    judge_limit: int | None = None,
) -> GateReport:
    """Run the gate over ``records`` (``response``, ``reference`` = a string or a list,
    optional ``prompt`` and ``id``).  Without ``model`` the rows left after the cheap
    stages are reported ``undecided``.  ``labels`` (id -> correct) only feed the
    per-stage precision.  ``batch`` (True or a :class:`respeval.judge.batch.BatchOptions`)
    judges through provider batches; ``cache`` is then required (a path or a BatchCache).
    ``judge_limit`` N sends at most the first N rows (in input order) the cheap stages left
    to the judge; the others are ``unscored`` with the reason ``over the judge limit``, so
    which rows a budget leaves out does not depend on the order calls finish in."""
    records = list(records)
    labels = labels or {}
    scores = scores if scores is not None else stage_scores(records, config)
    rows = [
        GateRow(
            row=i,
            id=r.get("id", i),
            decision=UNDECIDED,
            stage="",
            exact=float(scores["exact"][i]),
            lexical=float(scores["lexical"][i]),
            label=labels.get(r.get("id", i)),
        )
        for i, r in enumerate(records)
    ]
    stages = []
    pending = list(range(len(rows)))
    for name in STAGES:
        thresholds = config.thresholds(name)
        report = StageReport(name, thresholds.describe(), reached=len(pending))
        left = []
        for i in pending:
            decision = thresholds.decide(float(scores[name][i]))
            if decision is None:
                left.append(i)
                continue
            rows[i].decision, rows[i].stage = decision, name
            report.accepted += decision == ACCEPT
            report.rejected += decision == REJECT
            _precision_update(report, rows[i])
        stages.append(report)
        pending = left
    over: list[int] = []
    if model is not None and judge_limit is not None and len(pending) > judge_limit:
        pending, over = pending[: max(judge_limit, 0)], pending[max(judge_limit, 0) :]
    judge_report = StageReport("judge", "judge verdict", reached=len(pending) if model is not None else 0)
    for i in over:
        rows[i].stage, rows[i].decision, rows[i].reason = "judge", UNSCORED, OVER_LIMIT
        judge_report.unscored += 1
    summary = None
    if model is not None and pending:
        summary = await _judge(
            records, pending, rows, model, method or Pointwise(), cache, options, judge_report, batch
        )
    stages.append(judge_report)
    return GateReport(
        rows=rows,
        stages=stages,
        config=config,
        judge_summary=summary,
        confidence=(options or EngineOptions()).confidence,
        judge_skipped=model is None and bool(pending),
        over_limit=len(over),
    )


async def _judge(
    records: Sequence[Mapping[str, Any]],
    pending: list[int],
    rows: list[GateRow],
    model: JudgeModel,
    method: JudgeMethod,
    cache: JudgeCache | None,
    options: EngineOptions | None,
    report: StageReport,
    batch: bool | BatchOptions = False,
) -> JudgeRunSummary:
    judge_records = [_judge_record(records[i], i) for i in pending]
    result = await arun(judge_records, model, method=method, cache=cache, options=options, batch=batch)
    finished = set()
    for judged in result.rows:
        row = rows[pending[judged.row]]
        finished.add(judged.row)
        row.stage = "judge"
        if judged.scored and judged.verdict is not None:
            row.decision = ACCEPT if judged.verdict.get("pass") else REJECT
            score = judged.verdict.get("score")
            row.judge_score = float(score) if isinstance(score, (int, float)) else None
            report.accepted += row.decision == ACCEPT
            report.rejected += row.decision == REJECT
            _precision_update(report, row)
        else:
            row.decision, row.reason = UNSCORED, judged.unscored_reason
            report.unscored += 1
    for k, i in enumerate(pending):
        if k not in finished:
            rows[i].stage, rows[i].decision = "judge", UNSCORED
            rows[i].reason = f"not run: {result.summary.stop_reason}"
            report.unscored += 1
    return result.summary


def run_gate(records: Sequence[Mapping[str, Any]], config: GateConfig, **kwargs: Any) -> GateReport:
    """The synchronous :func:`arun_gate` (inside a running event loop too: see
    :func:`respeval._sync.run_sync`)."""
    return run_sync(arun_gate(records, config, **kwargs))
