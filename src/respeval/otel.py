"""OpenTelemetry ``gen_ai.evaluation.result`` events for judged rows
(implementation: ``respeval/_adapters/otel.py``).

::

    import respeval.otel
    from respeval import judge
    result = judge.run(rows, model, on_row=respeval.otel.JudgeEvents(model="openai:gpt-4o-mini"))
    respeval.otel.emit_judged(result)          # or after the run

Needs ``pip install 'respeval[otel]'``.
"""

from respeval._adapters.otel import (
    ERROR_TYPE,
    EVENT_NAME,
    EXPLANATION,
    JUDGE_MODEL,
    NAME,
    RESPONSE_ID,
    SCORE_LABEL,
    SCORE_VALUE,
    JudgeEvents,
    emit_evaluation,
    emit_judged,
    error_kind,
    evaluation_attributes,
    verdict_label,
)

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
