"""ADK 2.13's deterministic eval metrics over eval cases, with its thresholds and statuses.

* ``tool_trajectory_avg_score``: per invocation 1.0 or 0.0 under ``match_type`` EXACT /
  IN_ORDER / ANY_ORDER (``ignore_args`` compares names only); the case value is the mean
  over invocations, added left to right and divided once, as ADK does.
* ``response_match_score``: per invocation ROUGE-1 F of the actual final response against
  the expected one with ADK's tokenizer; case value likewise.

Actual and expected invocations are paired by position; different counts raise (ADK 2.8+
raises too), naming the case.  A case defined by a ``conversation_scenario`` has no expected
invocations, so these metrics leave it NOT_EVALUATED.  A metric PASSES when its value is at
least its threshold; a case passes when no metric failed and at least one passed
(``LocalEvalService``'s rule).  Without an EvalConfig, ADK's defaults apply:
``tool_trajectory_avg_score >= 1.0`` and ``response_match_score >= 0.8``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from respeval._renamed import renamed_value
from respeval.agents.loaders import AgentDataError, EvalCase, Invocation, read_json
from respeval.metrics.trajectory import TrajectoryFamily, normalize_match_type, rouge1_f

__all__ = [
    "DEFAULT_CRITERIA",
    "FAILED",
    "NOT_EVALUATED",
    "PASSED",
    "CaseOutcome",
    "Criterion",
    "MetricOutcome",
    "case_status",
    "evaluate_case",
    "load_eval_config",
    "metric_outcome",
    "response_match_scores",
    "tool_trajectory_scores",
    "trajectory_values",
]

PASSED, FAILED, NOT_EVALUATED = "PASSED", "FAILED", "NOT_EVALUATED"
TRAJECTORY = "tool_trajectory_avg_score"
RESPONSE = "response_match_score"
SUPPORTED = (TRAJECTORY, RESPONSE)
# why a case's metrics are NOT_EVALUATED
NO_EXPECTED_INVOCATIONS = "a conversation_scenario case has no expected invocations"
NO_ACTUAL_INVOCATIONS = "no actual invocations for this case"


@dataclass(frozen=True)
class Criterion:
    """One metric of an EvalConfig: a threshold, and for the trajectory metric its match type."""

    metric: str
    threshold: float
    match_type: str = "EXACT"
    ignore_args: bool = False

    def label(self) -> str:
        if self.metric != TRAJECTORY:
            return self.metric
        extra = ",ignore_args" if self.ignore_args else ""
        return f"{self.metric}[{self.match_type}{extra}]"


DEFAULT_CRITERIA = (Criterion(TRAJECTORY, 1.0), Criterion(RESPONSE, 0.8))


def _criterion(metric: str, value: Any, where: str) -> Criterion:
    if isinstance(value, bool) or not isinstance(value, (int, float, Mapping)):
        raise AgentDataError(f"{where}: criterion {metric!r} must be a threshold or an object with one")
    if isinstance(value, Mapping):
        if "threshold" not in value:
            raise AgentDataError(f"{where}: criterion {metric!r} has no threshold")
        threshold = value["threshold"]
        try:
            match_type = normalize_match_type(value.get("match_type", value.get("matchType", "EXACT")))
        except ValueError as exc:
            raise AgentDataError(f"{where}: criterion {metric!r}: {exc}") from None
        ignore_args = value.get("ignore_args", value.get("ignoreArgs", False))
        if not isinstance(ignore_args, bool):  # "false" (a JSON string) would be truthy
            raise AgentDataError(
                f"{where}: criterion {metric!r}: ignore_args must be true or false, got {ignore_args!r}"
            )
    else:
        threshold, match_type, ignore_args = value, "EXACT", False
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise AgentDataError(f"{where}: criterion {metric!r}: threshold must be a number")
    return Criterion(metric, float(threshold), match_type, ignore_args)


def load_eval_config(path: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[Criterion, ...]:
    """The criteria of an ADK EvalConfig (``test_config.json``) that respeval computes
    offline; the judge-based ones are listed in the error if they are the only ones."""
    where = "<config>" if isinstance(path, Mapping) else str(path)
    data = path if isinstance(path, Mapping) else read_json(path)
    if not isinstance(data, Mapping) or not isinstance(data.get("criteria"), Mapping):
        raise AgentDataError(f"{where}: an EvalConfig needs a 'criteria' object")
    out = []
    skipped = []
    for metric, value in data["criteria"].items():
        if metric in SUPPORTED:
            out.append(_criterion(metric, value, where))
        else:
            skipped.append(metric)
    if not out:
        raise AgentDataError(
            f"{where}: none of the criteria ({', '.join(skipped)}) is computed offline; respeval computes "
            f"{', '.join(SUPPORTED)} here (judge-based metrics: respeval.judge)"
        )
    return tuple(out)


def find_eval_config(eval_file: str | os.PathLike[str]) -> Path | None:
    """``test_config.json`` next to an eval file, where ADK's AgentEvaluator looks for it."""
    candidate = Path(eval_file).with_name("test_config.json")
    return candidate if candidate.is_file() else None


@dataclass
class MetricOutcome:
    criterion: Criterion
    score: float | None
    status: str
    per_invocation: list[float] = field(default_factory=list)
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.criterion.label(),
            "threshold": self.criterion.threshold,
            "score": self.score,
            "status": self.status,
            "per_invocation": self.per_invocation,
            "reason": self.reason,
        }


@dataclass
class CaseOutcome:
    eval_id: str
    status: str
    metrics: list[MetricOutcome]
    run: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "eval_id": self.eval_id,
            "run": self.run,
            "status": self.status,
            "metrics": [m.to_dict() for m in self.metrics],
        }


def _status(score: float | None, threshold: float) -> str:
    if score is None:
        return NOT_EVALUATED
    return PASSED if score >= threshold else FAILED


def _mean_in_order(values: Sequence[float]) -> float:
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def _check_lengths(actual: Sequence[Invocation], expected: Sequence[Invocation], eval_id: str) -> None:
    if len(actual) != len(expected):
        raise AgentDataError(
            f"eval case {eval_id!r}: {len(actual)} actual invocations but {len(expected)} expected; "
            "invocations are paired by position (ADK 2.8+ raises here too)"
        )


def tool_trajectory_scores(
    actual: Sequence[Invocation],
    expected: Sequence[Invocation],
    *,
    match_type: str = "EXACT",
    ignore_args: bool = False,
    eval_id: str = "?",
    implementation: str | None = None,
) -> list[float]:
    """ADK's per-invocation ``tool_trajectory_avg_score`` values (1.0 or 0.0)."""
    _check_lengths(actual, expected, eval_id)
    values, errors = trajectory_values(
        [inv.calls for inv in actual],
        [inv.calls for inv in expected],
        match_type=match_type,
        ignore_args=ignore_args,
        implementation=implementation,
    )
    if errors:
        row = min(errors)
        raise AgentDataError(f"eval case {eval_id!r}, invocation {row}: {errors[row]}")
    return values


def trajectory_values(
    actual: Any,
    expected: Any,
    *,
    match_type: str = "EXACT",
    ignore_args: bool = False,
    implementation: str | None = None,
) -> tuple[list[float], dict[int, str]]:
    """ADK's ``tool_trajectory_avg_score`` of each row (1.0 or 0.0) and the rows whose calls
    cannot be read, with why: rows of ``{"name", "args"}`` calls (lists of them, JSON text,
    or ``JsonSpans``), actual against expected, row by row."""
    family = TrajectoryFamily(
        [TRAJECTORY],
        match_type=match_type,
        ignore_args=ignore_args,
        name_key="name",
        args_key="args",
        args_required=False,
        implementation=implementation,
    )
    scores = family.score(family.prepare(expected), actual)
    return np.asarray(scores.columns[TRAJECTORY], dtype=np.float64).tolist(), scores.errors


def metric_outcome(criterion: Criterion, per_invocation: list[float]) -> MetricOutcome:
    """A metric scored over a case's invocations: the case value (their values added in
    order and divided once, as ADK does; None without invocations) and its status."""
    score = _mean_in_order(per_invocation) if per_invocation else None
    return MetricOutcome(criterion, score, _status(score, criterion.threshold), per_invocation)


def response_match_scores(
    actual: Sequence[Invocation], expected: Sequence[Invocation], *, eval_id: str = "?", variant: str = "adk"
) -> list[float]:
    """ADK's per-invocation ``response_match_score`` values (ROUGE-1 F, ADK's tokenizer)."""
    from respeval.metrics.trajectory import ResponseMatchFamily

    _check_lengths(actual, expected, eval_id)
    family = ResponseMatchFamily(variant=variant)
    return [rouge1_f(family.tokens(a.final_text), family.tokens(e.final_text)) for a, e in zip(actual, expected)]


def case_status(outcomes: Sequence[MetricOutcome]) -> str:
    """ADK's case status: FAILED if a metric failed, else PASSED if one passed, else NOT_EVALUATED."""
    status = NOT_EVALUATED
    for m in outcomes:
        if m.status == FAILED:
            return FAILED
        if m.status == PASSED:
            status = PASSED
    return status


def evaluate_case(
    actual: Sequence[Invocation] | None,
    expected: EvalCase,
    criteria: Sequence[Criterion] = DEFAULT_CRITERIA,
    *,
    on_error: str = "fail",
    implementation: str | None = None,
    run: int = 0,
) -> CaseOutcome:
    """Score one eval case's actual invocations against its expected ones.

    ``on_error="record"``: a case whose invocations cannot be scored (count mismatch,
    malformed calls) gets NOT_EVALUATED metrics with the reason, instead of raising.
    """
    on_error = renamed_value("evaluate_case", "on_error", on_error, {"raise": "fail"})
    outcomes = []
    for crit in criteria:
        if expected.invocations is None:
            outcomes.append(MetricOutcome(crit, None, NOT_EVALUATED, reason=NO_EXPECTED_INVOCATIONS))
            continue
        if actual is None:
            outcomes.append(MetricOutcome(crit, None, NOT_EVALUATED, reason=NO_ACTUAL_INVOCATIONS))
            continue
        try:
            if crit.metric == TRAJECTORY:
                per = tool_trajectory_scores(
                    actual,
                    expected.invocations,
                    match_type=crit.match_type,
                    ignore_args=crit.ignore_args,
                    eval_id=expected.eval_id,
                    implementation=implementation,
                )
            elif crit.metric == RESPONSE:
                per = response_match_scores(actual, expected.invocations, eval_id=expected.eval_id)
            else:
                raise AgentDataError(f"metric {crit.metric!r} is not computed offline")
        except AgentDataError as exc:
            if on_error != "record":
                raise
            outcomes.append(MetricOutcome(crit, None, NOT_EVALUATED, reason=str(exc)))
            continue
        outcomes.append(metric_outcome(crit, per))
    return CaseOutcome(expected.eval_id, case_status(outcomes), outcomes, run)
