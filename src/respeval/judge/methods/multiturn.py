"""Multi-turn judging: whole agent conversations (turns with roles, tool calls and tool
results) as judge input, scored with ADK's sampling, voting and averaging rules and
respeval's own prompts.

The pieces live where they belong: the conversation model in
:mod:`respeval.agents.conversation` (:class:`~respeval.agents.conversation.Conversation`),
the metrics and their rules in :mod:`respeval.agents.multiturn` (names, rubrics,
:class:`~respeval.agents.multiturn.JudgeCase`, the vote), the per-request judge methods and
their prompts in :mod:`respeval.judge.methods.conversations`.  This module runs them:
:class:`MultiTurnRun` (the ``multi-turn`` method of :func:`respeval.judge.run`),
:func:`arun_multiturn`, and :func:`judge_agent`, which adds the judged metrics to an agent
report (``respeval agent --judge MODEL``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval._sync import run_sync
from respeval.agents.adk import FAILED, NOT_EVALUATED, PASSED, Criterion, MetricOutcome, case_status
from respeval.agents.conversation import Conversation, Step
from respeval.agents.multiturn import (
    CONVERSATION_RUBRICS,
    FINAL_RESPONSE_MATCH,
    HALLUCINATIONS,
    JUDGED_METRICS,
    RUBRIC_TYPES,
    CaseResult,
    ConversationRubric,
    JudgeCase,
    JudgedMetric,
    majority,
    mean_of,
    rubrics_for,
    split_sentences,
    status_of,
    support_fraction,
)
from respeval.judge.cache import JudgeCache
from respeval.judge.engine import EngineOptions, budget_left
from respeval.judge.methods.conversations import (
    ConversationRubricItem,
    ConversationRubrics,
    FinalResponseMatch,
    SentenceSegmenter,
    SentenceSupport,
    SupportItem,
)
from respeval.judge.methods.sampling import SampledRow, arun_sampled
from respeval.judge.models.base import JudgeModel
from respeval.judge.results import BatchSettled, Spend
from respeval.stats.exact import mean_of as exact_mean_of

__all__ = ["MultiTurnReport", "MultiTurnRun", "arun_multiturn", "judge_agent", "run_multiturn"]

SEGMENTERS = ("judge", "rule")


@dataclass
class MultiTurnReport(BatchSettled):
    """Every case's judged metrics, what the judge calls cost, and whether the run stopped."""

    cases: list[CaseResult]
    spend: Spend
    model: str
    samples: int
    stop_reason: str | None = None
    stop_kind: str | None = None
    batch: Any = None
    """What batch mode did (a :class:`respeval.judge.batch.BatchReport`), or None."""

    @property
    def rows(self) -> list[CaseResult]:
        """The cases (:class:`~respeval.judge.results.JudgeReport`'s rows)."""
        return self.cases

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "samples": self.samples,
            "prompts": "respeval's own (ADK's sampling, voting and averaging rules; values differ from ADK's)",
            "cases": [c.to_dict() for c in self.cases],
            "means": self.means(),
            "stop_reason": self.stop_reason,
            **self.spend.to_json(),
            **({"batch": self.batch.to_json()} if self.batch is not None else {}),
        }

    to_json = to_dict

    def means(self) -> dict[str, float]:
        """Per metric, the mean of the case values that exist."""
        out: dict[str, list[float]] = {}
        for c in self.cases:
            for m in c.metrics:
                if m.value is not None:
                    out.setdefault(m.metric, []).append(m.value)
        return {k: exact_mean_of(v) or 0.0 for k, v in out.items()}

    def format(self) -> str:
        lines = [f"judge {self.model}, {self.samples} sample(s) per unit (respeval's prompts, ADK's rules)"]
        for c in self.cases:
            cells = [f"{m.metric}={'n/a' if m.value is None else f'{m.value:.4f}'} ({m.status})" for m in c.metrics]
            lines.append(f"  {c.case_id}  " + "  ".join(cells))
            for m in c.metrics:
                why = sorted({r for r in m.reasons if r})
                if m.status == NOT_EVALUATED and why:
                    lines.append(f"      {m.metric}: {'; '.join(why)[:300]}")
        lines.append(self.spend.format())
        if self.stop_reason:
            lines.append(f"STOPPED     {self.stop_reason}")
        if self.batch is not None:
            lines.append(self.batch.format())
        return "\n".join(lines)


# --------------------------------------------------------------------------- samples and votes


def _failed_sample(row: Any) -> str | None:
    """Why a sample failed outright (transport, retries, a stopped run), or None when it
    answered (an unreadable answer does not vote but does not fail the unit)."""
    if row.scored:
        return None
    reason = row.unscored_reason or "unscored"
    return None if reason.startswith("unparseable") else reason


def _unit_votes(row: SampledRow, k: int, vote: Callable[[Any], Any]) -> tuple[list[Any] | None, str | None]:
    """The samples' votes of one unit, or (None, reason) when a sample failed or is missing."""
    if row.status == "not_run" or len(row.samples) < k:
        return None, row.unscored_reason or "not run"
    votes = []
    for s in row.samples:
        failed = _failed_sample(s)
        if failed is not None:
            return None, f"a sample failed: {failed}"
        votes.append(vote(s.verdict) if s.scored and s.verdict is not None else None)
    return votes, None


def _unjudged(metric: str, cases: Sequence[JudgeCase]) -> dict[str, JudgedMetric]:
    return {c.case_id: JudgedMetric(metric, 0.5, None, NOT_EVALUATED) for c in cases}


@dataclass
class _HallucinationStep:
    case_id: str
    unit: int
    text: str
    before: tuple[Step, ...]


@dataclass
class _Judging:
    """One multi-turn run: the model, the cache and the engine options every metric's
    calls share, what they spent, and the first stop."""

    model: JudgeModel
    cache: JudgeCache | None
    options: EngineOptions | None
    samples: int
    temperature: float | None
    rubrics: Mapping[str, Sequence[ConversationRubric]]
    segmenter: str
    intermediate: bool
    spend: Spend = field(default_factory=Spend)
    stop_reason: str | None = None
    stop_kind: str | None = None

    async def sampled(self, records: list[dict[str, Any]], method: Any, k: int) -> list[SampledRow]:
        """``k`` samples of every record (aggregated by the caller's rule, not the engine's)."""
        if not records:
            return []
        result = await arun_sampled(
            records,
            self.model,
            method,
            samples=k,
            aggregate="mean",
            cache=self.cache,
            options=budget_left(self.options, self.spend),  # every metric's calls share one budget
        )
        self.spend.merge(result.spend)
        if self.stop_reason is None and result.stop_reason:
            self.stop_reason, self.stop_kind = result.stop_reason, result.stop_kind
        return result.rows

    async def metric(self, metric: str, cases: Sequence[JudgeCase]) -> dict[str, JudgedMetric]:
        """``metric`` for every case (value, per-unit scores, reasons; not yet its status)."""
        if metric == FINAL_RESPONSE_MATCH:
            return await self.final_response_match(cases)
        if metric == HALLUCINATIONS:
            return await self.hallucinations(cases)
        return await self.rubric_metric(metric, cases)

    async def final_response_match(self, cases: Sequence[JudgeCase]) -> dict[str, JudgedMetric]:
        records, where = [], []
        out = _unjudged(FINAL_RESPONSE_MATCH, cases)
        for case in cases:
            exchanges = case.conversation.exchanges
            m = out[case.case_id]
            if case.expected_responses is None:
                m.reasons = ["no expected responses (final_response_match_v2 needs the expected invocations)"]
                continue
            if len(case.expected_responses) != len(exchanges):
                m.reasons = [
                    f"{len(exchanges)} actual exchanges but {len(case.expected_responses)} expected; "
                    "they are paired by position"
                ]
                continue
            m.per_unit = [None] * len(exchanges)
            m.reasons = [None] * len(exchanges)
            m.votes = [[] for _ in exchanges]
            for i, (ex, expected) in enumerate(zip(exchanges, case.expected_responses)):
                records.append(
                    {"id": f"{case.case_id}/{i}", "user": ex.user, "response": ex.response, "expected": expected}
                )
                where.append((case.case_id, i))
        k = self.samples
        rows = await self.sampled(records, FinalResponseMatch(temperature=self.temperature), k)
        for row, (case_id, i) in zip(rows, where):
            m = out[case_id]
            votes, failed = _unit_votes(row, k, lambda v: v.get("value"))
            if votes is None:
                m.reasons[i] = failed
                continue
            m.votes[i] = votes
            m.per_unit[i] = majority(votes)
            if m.per_unit[i] is None:
                m.reasons[i] = "no sample gave a readable verdict"
        for m in out.values():
            scored = [v for v in m.per_unit if v is not None]
            m.value = sum(v == 1.0 for v in scored) / len(scored) if scored else None
        return out

    async def rubric_metric(self, metric: str, cases: Sequence[JudgeCase]) -> dict[str, JudgedMetric]:
        records, where = [], []
        out = _unjudged(metric, cases)
        unit_rubrics: dict[str, list[list[ConversationRubric]]] = {}
        whole = metric in CONVERSATION_RUBRICS  # one unit, the conversation; else one per exchange
        for case in cases:
            m = out[case.case_id]
            n = len(case.conversation.exchanges)
            if n == 0:
                m.reasons = ["the conversation has no exchanges"]
                continue
            per_unit = rubrics_for(metric, case, self.rubrics)
            unit_rubrics[case.case_id] = per_unit
            if not any(per_unit):
                m.reasons = [f"rubrics are required: none of type {RUBRIC_TYPES.get(metric, '?')} in the eval set"]
                continue
            m.per_unit = [None] * len(per_unit)
            m.reasons = [None] * len(per_unit)
            m.votes = [[] for _ in per_unit]
            for i, rubric_list in enumerate(per_unit):
                if not rubric_list:
                    m.reasons[i] = "no rubrics for this exchange"
                    continue
                item = ConversationRubricItem(
                    case.conversation, tuple(rubric_list), n if whole else i + 1, "conversation" if whole else metric
                )
                records.append({"id": f"{case.case_id}/{i}", "item": item})
                where.append((case.case_id, i))
        k = self.samples
        rows = await self.sampled(records, ConversationRubrics(temperature=self.temperature), k)
        pooled: dict[str, list[float]] = {c: [] for c in out}
        rubric_values: dict[str, dict[str, list[float]]] = {c: {} for c in out}
        for row, (case_id, i) in zip(rows, where):
            m = out[case_id]
            votes, failed = _unit_votes(row, k, lambda v: v.get("rubric_scores"))
            if votes is None:
                m.reasons[i] = failed
                continue
            m.votes[i] = votes
            scores = {}
            for rubric in unit_rubrics[case_id][i]:
                scores[rubric.id] = majority([v.get(rubric.id) if isinstance(v, Mapping) else None for v in votes])
            known = [v for v in scores.values() if v is not None]
            m.per_unit[i] = mean_of(known)
            if m.per_unit[i] is None:
                m.reasons[i] = "no sample gave a readable verdict"
            pooled[case_id].extend(known)
            for rid, v in scores.items():
                if v is not None:
                    rubric_values[case_id].setdefault(rid, []).append(v)
        for case_id, m in out.items():
            m.value = mean_of(pooled[case_id])  # micro-average over every (unit, rubric) score
            m.per_rubric = {rid: mean_of(vs) for rid, vs in rubric_values[case_id].items()}
        return out

    async def hallucinations(self, cases: Sequence[JudgeCase]) -> dict[str, JudgedMetric]:
        out = _unjudged(HALLUCINATIONS, cases)
        steps: list[_HallucinationStep] = []
        by_case: dict[str, Conversation] = {}
        for case in cases:
            by_case[case.case_id] = case.conversation
            exchanges = case.conversation.exchanges
            m = out[case.case_id]
            m.per_unit = [None] * len(exchanges)
            m.reasons = ["nothing to check (no text from the agent)"] * len(exchanges)
            m.votes = [[] for _ in exchanges]
            for i, ex in enumerate(exchanges):
                if self.intermediate:
                    for j, s in enumerate(ex.steps):
                        if s.kind == "text" and s.text.strip():
                            steps.append(_HallucinationStep(case.case_id, i, s.text, ex.steps[:j]))
                if ex.response.strip():
                    steps.append(_HallucinationStep(case.case_id, i, ex.response, ex.steps))
        sentences, failures = await self.segment(steps)
        records, where = [], []
        step_scores: dict[tuple[str, int], list[float | None]] = {}
        step_failures: dict[tuple[str, int], list[str]] = {}
        for k, step in enumerate(steps):
            key = (step.case_id, step.unit)
            found = sentences[k]
            if found is None:
                step_failures.setdefault(key, []).append(f"segmentation failed: {failures[k]}")
                continue
            if not found:
                step_scores.setdefault(key, []).append(None)
                continue
            item = SupportItem(by_case[step.case_id], step.unit + 1, step.before, found)
            records.append({"id": f"{step.case_id}/{step.unit}/{k}", "item": item})
            where.append(k)
        rows = await self.sampled(records, SentenceSupport(), 1)
        for row, k in zip(rows, where):
            key = (steps[k].case_id, steps[k].unit)
            if row.scored and row.verdict is not None:
                step_scores.setdefault(key, []).append(support_fraction(row.verdict["labels"]))
                out[key[0]].votes[key[1]].append(row.verdict["labels"])
            else:
                step_failures.setdefault(key, []).append(row.unscored_reason or "unscored")
        for (case_id, unit), fails in step_failures.items():
            out[case_id].reasons[unit] = "; ".join(fails)
        for (case_id, unit), scores in step_scores.items():
            m = out[case_id]
            m.per_unit[unit] = mean_of(scores)
            if m.per_unit[unit] is not None:
                m.reasons[unit] = None
            elif (case_id, unit) not in step_failures:
                m.reasons[unit] = "no sentence was labelled"
        for m in out.values():
            m.value = mean_of(m.per_unit)
        return out

    async def segment(
        self, steps: Sequence[_HallucinationStep]
    ) -> tuple[list[tuple[str, ...] | None], list[str | None]]:
        """Each step's sentences (None where segmentation failed) and why it failed."""
        if self.segmenter == "rule":
            return [split_sentences(s.text) for s in steps], [None] * len(steps)
        rows = await self.sampled([{"id": k, "text": s.text} for k, s in enumerate(steps)], SentenceSegmenter(), 1)
        sentences: list[tuple[str, ...] | None] = []
        failures: list[str | None] = []
        for row in rows:
            sentences.append(tuple(row.verdict["sentences"]) if row.scored and row.verdict else None)
            failures.append(None if row.scored else (row.unscored_reason or "unscored"))
        return sentences, failures


# --------------------------------------------------------------------------- runs


async def arun_multiturn(
    cases: Sequence[JudgeCase],
    model: JudgeModel,
    *,
    metrics: Sequence[str] = ("final_response_match_v2", "task_success"),
    samples: int = 5,
    thresholds: Mapping[str, float] | None = None,
    rubrics: Mapping[str, Sequence[ConversationRubric]] | None = None,
    segmenter: str = "judge",
    intermediate: bool = False,
    temperature: float | None = None,
    cache: JudgeCache | None = None,
    options: EngineOptions | None = None,
) -> MultiTurnReport:
    """Judge every case on ``metrics`` (see :mod:`respeval.agents.multiturn` for the
    metrics and their rules).

    ``samples``: judge calls per unit (ADK's ``num_samples``, default 5; hallucinations
    always use one).  ``thresholds``: per metric (default 0.5; ADK's configs set their own).
    ``rubrics``: extra rubrics per metric name.  ``intermediate``: also check the agent's
    intermediate texts for hallucinations.  ``temperature``: sent with every call (default:
    0 with one sample, the provider's default with several, so that samples can differ).
    """
    unknown = [m for m in metrics if m not in JUDGED_METRICS]
    if unknown:
        raise ValueError(f"unknown judge metric(s) {', '.join(unknown)}; available: {', '.join(JUDGED_METRICS)}")
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    if segmenter not in SEGMENTERS:
        raise ValueError(f"segmenter must be 'judge' or 'rule', not {segmenter!r}")
    thresholds = dict(thresholds or {})
    run = _Judging(
        model,
        cache,
        options,
        samples,
        temperature if temperature is not None else (0.0 if samples == 1 else None),
        dict(rubrics or {}),
        segmenter,
        intermediate,
    )
    results: dict[str, list[JudgedMetric]] = {c.case_id: [] for c in cases}
    async with model:  # one connection pool for every metric's calls
        for metric in metrics:
            threshold = thresholds.get(metric, 0.5)
            for case_id, m in (await run.metric(metric, cases)).items():
                m.metric, m.threshold, m.status = metric, threshold, status_of(m.value, threshold)
                results[case_id].append(m)
    return MultiTurnReport(
        [CaseResult(c.case_id, results[c.case_id]) for c in cases],
        run.spend,
        model.model_id,
        samples,
        run.stop_reason,
        run.stop_kind,
    )


def run_multiturn(cases: Sequence[JudgeCase], model: JudgeModel, **kwargs: Any) -> MultiTurnReport:
    """The synchronous :func:`arun_multiturn` (inside a running event loop too)."""
    return run_sync(arun_multiturn(cases, model, **kwargs))


class MultiTurnRun:
    """Judged agent metrics over :class:`~respeval.agents.multiturn.JudgeCase` records (the
    keywords are :func:`arun_multiturn`'s): the ``multi-turn`` method of
    :func:`respeval.judge.run`.  ``on_row`` sees each case once the run ends; ``fields``
    does not apply."""

    name = "multi-turn"

    def __init__(
        self,
        *,
        metrics: Sequence[str] = ("final_response_match_v2", "task_success"),
        samples: int = 5,
        thresholds: Mapping[str, float] | None = None,
        rubrics: Mapping[str, Sequence[ConversationRubric]] | None = None,
        segmenter: str = "judge",
        intermediate: bool = False,
        temperature: float | None = None,
    ) -> None:
        unknown = [m for m in metrics if m not in JUDGED_METRICS]
        if unknown:
            raise ValueError(f"unknown judge metric(s) {', '.join(unknown)}; available: {', '.join(JUDGED_METRICS)}")
        self.metrics, self.samples, self.thresholds = tuple(metrics), samples, dict(thresholds or {})
        self.rubrics, self.segmenter, self.intermediate = dict(rubrics or {}), segmenter, intermediate
        self.temperature = temperature

    async def arun(
        self,
        records: Sequence[JudgeCase],
        model: JudgeModel,
        *,
        cache: JudgeCache | None = None,
        options: EngineOptions | None = None,
        fields: Mapping[str, str] | None = None,
        on_row: Callable[[CaseResult], None] | None = None,
    ) -> MultiTurnReport:
        report = await arun_multiturn(
            records,
            model,
            metrics=self.metrics,
            samples=self.samples,
            thresholds=self.thresholds,
            rubrics=self.rubrics,
            segmenter=self.segmenter,
            intermediate=self.intermediate,
            temperature=self.temperature,
            cache=cache,
            options=options,
        )
        if on_row is not None:
            for case in report.cases:
                on_row(case)
        return report


# --------------------------------------------------------------------------- agent reports


async def judge_agent(report: Any, model: JudgeModel, settings: Any, **engine: Any) -> MultiTurnReport:
    """Judge every (run, case) of an :class:`~respeval.agents.AgentReport` on
    ``settings`` (a :class:`~respeval.agents.judging.JudgeSettings`) and add the judged
    metrics to its case outcomes (statuses recomputed, a FAILED judged metric fails the
    case, as in ADK); the judge's own report is kept as ``report.judge``.  ``engine``:
    ``cache`` and ``options`` for :func:`arun_multiturn`."""
    from respeval.agents.judging import judge_cases

    cases, where = judge_cases(report)
    judged = await arun_multiturn(
        cases,
        model,
        metrics=settings.metrics,
        samples=settings.samples,
        thresholds=settings.thresholds,
        rubrics=settings.rubrics,
        segmenter=settings.segmenter,
        intermediate=settings.intermediate,
        **engine,
    )
    by_key = {key: result for key, result in zip(where, judged.cases)}
    for run, outcomes in enumerate(report.runs):
        for outcome in outcomes:
            result = by_key.get((run, outcome.eval_id))
            if result is None:
                continue
            for m in result.metrics:
                reasons = sorted({r for r in m.reasons if r})
                outcome.metrics.append(
                    MetricOutcome(
                        Criterion(m.metric, m.threshold),
                        m.value,
                        m.status,
                        [v for v in m.per_unit if v is not None],
                        "; ".join(reasons)[:500] if reasons and m.status not in (PASSED, FAILED) else None,
                    )
                )
            outcome.status = case_status(outcome.metrics)
    report.judge = judged
    return judged
