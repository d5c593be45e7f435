"""LLM-judged metrics of an agent run (``respeval agent --judge MODEL``): each eval case's
actual conversation goes to :mod:`respeval.judge.methods.multiturn`, and the judged metrics
join ADK's deterministic ones in the case's outcome (a FAILED judged metric fails the case,
as in ADK).  Thresholds, samples and rubrics come from the options or, for ADK's judged
metrics (``final_response_match_v2``, ``rubric_based_*_v1``, ``hallucinations_v1``), from
the EvalConfig's criteria (``threshold``, ``judge_model_options.num_samples``,
``rubrics``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.agents.adk import FAILED, PASSED, Criterion, MetricOutcome, case_status
from respeval.agents.loaders import AgentDataError, EvalSet, read_json
from respeval.judge.methods.multiturn import (
    ADK_METRICS,
    METRICS,
    Conversation,
    JudgeCase,
    MultiTurnReport,
    Rubric,
    arun_multiturn,
)

__all__ = ["JudgeSettings", "judge_agent", "judge_settings_from_config"]


@dataclass
class JudgeSettings:
    """What to judge and how: metrics in order, thresholds, samples per unit, extra rubrics."""

    metrics: tuple[str, ...] = ("final_response_match_v2", "task_success")
    thresholds: dict[str, float] = field(default_factory=dict)
    samples: int = 5
    rubrics: dict[str, list[Rubric]] = field(default_factory=dict)
    segmenter: str = "judge"
    intermediate: bool = False

    def __post_init__(self) -> None:
        unknown = [m for m in self.metrics if m not in METRICS]
        if unknown:
            raise ValueError(f"unknown judge metric(s) {', '.join(unknown)}; available: {', '.join(METRICS)}")


def judge_settings_from_config(path: str | os.PathLike[str] | Mapping[str, Any]) -> JudgeSettings | None:
    """The judged criteria of an ADK EvalConfig (None when it has none)."""
    where = "<config>" if isinstance(path, Mapping) else str(path)
    data = path if isinstance(path, Mapping) else read_json(path)
    criteria = data.get("criteria") if isinstance(data, Mapping) else None
    if not isinstance(criteria, Mapping):
        raise AgentDataError(f"{where}: an EvalConfig needs a 'criteria' object")
    metrics, thresholds, rubrics = [], {}, {}
    samples = None
    for name, value in criteria.items():
        if name not in ADK_METRICS:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, Mapping)):
            raise AgentDataError(f"{where}: criterion {name!r} must be a threshold or an object with one")
        threshold = value.get("threshold") if isinstance(value, Mapping) else value
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise AgentDataError(f"{where}: criterion {name!r} needs a numeric threshold")
        metrics.append(name)
        thresholds[name] = float(threshold)
        if isinstance(value, Mapping):
            options = value.get("judge_model_options", value.get("judgeModelOptions")) or {}
            n = options.get("num_samples", options.get("numSamples")) if isinstance(options, Mapping) else None
            if n is not None:
                if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                    raise AgentDataError(f"{where}: criterion {name!r}: num_samples must be a positive integer")
                samples = n if samples is None else max(samples, n)
            try:
                rubrics[name] = [Rubric.from_adk(r) for r in value.get("rubrics") or ()]
            except ValueError as exc:
                raise AgentDataError(f"{where}: criterion {name!r}: {exc}") from None
    if not metrics:
        return None
    return JudgeSettings(tuple(metrics), thresholds, samples or 5, rubrics)


def _rubrics(items: Sequence[Mapping[str, Any]], where: str) -> list[Rubric]:
    try:
        return [Rubric.from_adk(r) for r in items]
    except ValueError as exc:
        raise AgentDataError(f"{where}: {exc}") from None


def _cases(report: Any) -> tuple[list[JudgeCase], list[tuple[int, str]]]:
    expected: EvalSet = report.expected
    cases, where = [], []
    for run, actual in enumerate(report.actual_runs):
        for case in expected.cases:
            got = actual.get(case.eval_id)
            if got is None or case.error is not None:  # nothing to judge, or a golden recorded unreadable
                continue
            exp = case.invocations
            cases.append(
                JudgeCase(
                    f"run {run + 1} / {case.eval_id}",
                    Conversation.from_invocations(got),
                    [inv.final_text for inv in exp] if exp is not None else None,
                    _rubrics(case.rubrics, f"eval case {case.eval_id!r}"),
                    [_rubrics(inv.rubrics, f"eval case {case.eval_id!r}, invocation {i}") for i, inv in enumerate(exp)]
                    if exp is not None
                    else [],
                )
            )
            where.append((run, case.eval_id))
    return cases, where


async def judge_agent(report: Any, model: Any, settings: JudgeSettings, **engine: Any) -> MultiTurnReport:
    """Judge every (run, case) of an ``AgentReport`` and add the judged metrics to its case
    outcomes (statuses recomputed); the judge's own report is kept as ``report.judge``.
    ``engine``: ``cache`` and ``options`` for :func:`arun_multiturn`."""
    cases, where = _cases(report)
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
