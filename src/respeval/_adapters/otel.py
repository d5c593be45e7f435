"""OpenTelemetry ``gen_ai.evaluation.result`` events for judged rows.

The OpenTelemetry GenAI semantic conventions (``open-telemetry/semantic-conventions-genai``,
``docs/gen-ai/gen-ai-events.md``, status: development) define the event
``gen_ai.evaluation.result`` with the attributes

=====================================  ===================  ==================================
``gen_ai.evaluation.name``             required             what was evaluated (the metric)
``gen_ai.evaluation.score.value``      if applicable        the numeric score
``gen_ai.evaluation.score.label``      if applicable        the categorical verdict
``gen_ai.evaluation.explanation``      recommended          the judge's reasoning
``gen_ai.response.id``                 when available       the evaluated completion's id
``error.type``                         if it failed         why the row has no verdict
=====================================  ===================  ==================================

and asks that the event be parented to the span of the GenAI operation it evaluates when
possible (else that ``gen_ai.response.id`` be set).  The conventions have no attribute for
the evaluator's own model, so the judge's model goes in ``respeval.judge.model`` (custom
attributes carry a namespace of their own).

Use ``JudgeEvents`` as the judge engine's ``on_row`` hook to emit while a run goes on::

    events = respeval.otel.JudgeEvents(model="openai:gpt-4o-mini")
    judge.run(rows, "openai:gpt-4o-mini", on_row=events)

or ``emit_judged(result)`` after a run.  Events go to the global ``LoggerProvider``
unless one is passed.  Needs ``pip install 'respeval[otel]'``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from respeval._adapters import require
from respeval._run_summary import SCORED

EVENT_NAME = "gen_ai.evaluation.result"
NAME = "gen_ai.evaluation.name"
SCORE_VALUE = "gen_ai.evaluation.score.value"
SCORE_LABEL = "gen_ai.evaluation.score.label"
EXPLANATION = "gen_ai.evaluation.explanation"
RESPONSE_ID = "gen_ai.response.id"
ERROR_TYPE = "error.type"
JUDGE_MODEL = "respeval.judge.model"
SCOPE = "respeval"


def _logs() -> Any:
    return require("opentelemetry._logs", "otel", purpose="respeval.otel")


def _logger(logger_provider: Any = None) -> Any:
    from respeval._version import __version__

    logs = _logs()
    provider = logger_provider if logger_provider is not None else logs.get_logger_provider()
    return provider.get_logger(SCOPE, __version__)


def evaluation_attributes(
    name: str,
    *,
    score: float | None = None,
    label: str | None = None,
    explanation: str | None = None,
    response_id: str | None = None,
    error_type: str | None = None,
    judge_model: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The event's attributes (absent values are left out, never sent as empty strings)."""
    if not name:
        raise ValueError("gen_ai.evaluation.name is required: name the evaluation (e.g. the metric)")
    attributes: dict[str, Any] = {NAME: name}
    optional = {
        SCORE_VALUE: None if score is None else float(score),
        SCORE_LABEL: label,
        EXPLANATION: explanation,
        RESPONSE_ID: response_id,
        ERROR_TYPE: error_type,
        JUDGE_MODEL: judge_model,
    }
    attributes.update({k: v for k, v in optional.items() if v is not None and v != ""})
    attributes.update(extra or {})
    return attributes


def emit_evaluation(
    name: str,
    *,
    score: float | None = None,
    label: str | None = None,
    explanation: str | None = None,
    response_id: str | None = None,
    error_type: str | None = None,
    judge_model: str | None = None,
    context: Any = None,
    logger_provider: Any = None,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """Emit one ``gen_ai.evaluation.result`` event.

    ``context`` (an OpenTelemetry ``Context``) parents the event to the evaluated
    operation's span; by default the current context (the active span, if any) does.
    """
    logs = _logs()
    attributes = evaluation_attributes(
        name,
        score=score,
        label=label,
        explanation=explanation,
        response_id=response_id,
        error_type=error_type,
        judge_model=judge_model,
        extra=extra,
    )
    severity = logs.SeverityNumber.WARN if error_type else logs.SeverityNumber.INFO
    record = logs.LogRecord(event_name=EVENT_NAME, attributes=attributes, context=context, severity_number=severity)
    _logger(logger_provider).emit(record)


# --------------------------------------------------------------------------- judged rows


def verdict_label(verdict: Mapping[str, Any]) -> str | None:
    """The categorical verdict: ``label``/``winner`` when the method gives one, else pass/fail."""
    for key in ("label", "winner", "verdict"):
        value = verdict.get(key)
        if isinstance(value, str) and value:
            return value
    passed = verdict.get("pass")
    if isinstance(passed, bool):
        return "pass" if passed else "fail"
    return None


def _score(verdict: Mapping[str, Any]) -> float | None:
    value = verdict.get("score")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _explanation(verdict: Mapping[str, Any]) -> str | None:
    for key in ("reasoning", "explanation", "rationale"):
        value = verdict.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def error_kind(reason: str | None) -> str:
    """A low-cardinality ``error.type`` from an unscored row's reason: its leading kind
    (``unparseable: ...`` -> ``unparseable``, ``invalid input: ...`` -> ``invalid_input``),
    else ``unscored``."""
    kind, colon, _ = (reason or "").partition(":")
    kind = kind.strip().lower().replace(" ", "_")
    return kind if colon and re.fullmatch(r"[a-z_]{1,40}", kind) else "unscored"


class JudgeEvents:
    """One ``gen_ai.evaluation.result`` event per judged row (a judge engine ``on_row`` hook).

    Args:
        model: the judge's model (``respeval.judge.model``).
        name: ``gen_ai.evaluation.name`` (default ``respeval.judge``; e.g. the rubric's name).
        contexts: row id -> OpenTelemetry ``Context`` of the evaluated operation's span
            (a mapping or a callable); rows without one use the current context.
        response_ids: row id -> ``gen_ai.response.id`` (a mapping or a callable).
        explanations: include the judge's reasoning (turn off when it may quote sensitive text).
        logger_provider: where events go (default: the global ``LoggerProvider``).

    ``emitted`` counts the events sent.
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        name: str = "respeval.judge",
        contexts: Mapping[Any, Any] | Callable[[Any], Any] | None = None,
        response_ids: Mapping[Any, str] | Callable[[Any], str | None] | None = None,
        explanations: bool = True,
        logger_provider: Any = None,
    ) -> None:
        _logs()  # a missing extra fails here, not on the first row of a long run
        self.model = model
        self.name = name
        self.contexts = contexts
        self.response_ids = response_ids
        self.explanations = explanations
        self.logger_provider = logger_provider
        self.emitted = 0

    @staticmethod
    def _lookup(source: Any, key: Any) -> Any:
        if source is None:
            return None
        if callable(source):
            return source(key)
        return source.get(key)

    def __call__(self, row: Any) -> None:
        verdict = row.verdict or {}
        scored = row.verdict is not None and row.status == SCORED
        explanation = _explanation(verdict) if scored else row.unscored_reason
        emit_evaluation(
            self.name,
            score=_score(verdict) if scored else None,
            label=verdict_label(verdict) if scored else None,
            explanation=explanation if self.explanations else None,
            response_id=self._lookup(self.response_ids, row.id),
            error_type=None if scored else error_kind(row.unscored_reason),
            judge_model=self.model,
            context=self._lookup(self.contexts, row.id),
            logger_provider=self.logger_provider,
        )
        self.emitted += 1


def emit_judged(result: Any, *, model: str | None = None, **options: Any) -> int:
    """Emit an event for every row of a finished judge run (a ``RunResult`` or its rows).

    ``model`` defaults to the run's judge model; ``options`` are ``JudgeEvents``'.
    Returns the number of events emitted.
    """
    rows: Iterable[Any] = getattr(result, "rows", result)
    summary = getattr(result, "summary", None)
    events = JudgeEvents(model=model or getattr(summary, "model", None), **options)
    for row in rows:
        events(row)
    return events.emitted


__all__ = [
    "ERROR_TYPE",
    "EVENT_NAME",
    "EXPLANATION",
    "JUDGE_MODEL",
    "NAME",
    "RESPONSE_ID",
    "SCORE_LABEL",
    "SCORE_VALUE",
    "JudgeEvents",
    "emit_evaluation",
    "emit_judged",
    "error_kind",
    "evaluation_attributes",
    "verdict_label",
]
