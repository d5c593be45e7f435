"""What to judge of an agent run (``respeval agent --judge MODEL``) and the cases to judge:
:class:`JudgeSettings` (metrics, thresholds, samples, rubrics), read from the options or, for
ADK's judged metrics (``final_response_match_v2``, ``rubric_based_*_v1``,
``hallucinations_v1``), from the EvalConfig's criteria (``threshold``,
``judge_model_options.num_samples``, ``rubrics``); and :func:`judge_cases`, each eval case's
actual conversation as a :class:`~respeval.agents.multiturn.JudgeCase`.

The judging itself is :func:`respeval.judge.methods.multiturn.judge_agent` (the judge layer
sits above this one): the judged metrics join ADK's deterministic ones in each case's
outcome, and a FAILED judged metric fails the case, as in ADK."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.agents.conversation import Conversation
from respeval.agents.loaders import AgentDataError, EvalSet, read_json
from respeval.agents.multiturn import ADK_JUDGED_METRICS, JUDGED_METRICS, ConversationRubric, JudgeCase

__all__ = ["JudgeSettings", "judge_cases", "judge_settings_from_config"]


@dataclass
class JudgeSettings:
    """What to judge and how: metrics in order, thresholds, samples per unit, extra rubrics."""

    metrics: tuple[str, ...] = ("final_response_match_v2", "task_success")
    thresholds: dict[str, float] = field(default_factory=dict)
    samples: int = 5
    rubrics: dict[str, list[ConversationRubric]] = field(default_factory=dict)
    segmenter: str = "judge"
    intermediate: bool = False

    def __post_init__(self) -> None:
        unknown = [m for m in self.metrics if m not in JUDGED_METRICS]
        if unknown:
            raise ValueError(f"unknown judge metric(s) {', '.join(unknown)}; available: {', '.join(JUDGED_METRICS)}")


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
        if name not in ADK_JUDGED_METRICS:
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
                rubrics[name] = [ConversationRubric.from_adk(r) for r in value.get("rubrics") or ()]
            except ValueError as exc:
                raise AgentDataError(f"{where}: criterion {name!r}: {exc}") from None
    if not metrics:
        return None
    return JudgeSettings(tuple(metrics), thresholds, samples or 5, rubrics)


def _rubrics(items: Sequence[Mapping[str, Any]], where: str) -> list[ConversationRubric]:
    try:
        return [ConversationRubric.from_adk(r) for r in items]
    except ValueError as exc:
        raise AgentDataError(f"{where}: {exc}") from None


def judge_cases(report: Any) -> tuple[list[JudgeCase], list[tuple[int, str]]]:
    """Every (run, eval case) of an ``AgentReport`` with something to judge, as a
    :class:`JudgeCase`, and where each came from: (run index, eval id)."""
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
