"""respeval.otel: gen_ai.evaluation.result events, checked with the OpenTelemetry SDK's in-memory exporter."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is not installed: pip install 'respeval[otel]'")

from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402

import respeval.otel  # noqa: E402
from respeval import judge  # noqa: E402


@pytest.fixture
def exported():
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def _records(exporter):
    return [getattr(r, "log_record", r) for r in exporter.get_finished_logs()]


def _verdict(request):
    wrong = any("Lyon" in m.content for m in request.messages)
    if any("garbled" in m.content for m in request.messages):
        return "I cannot decide."
    return json.dumps(
        {"reasoning": "wrong city" if wrong else "same city", "score": 0.0 if wrong else 1.0, "pass": not wrong}
    )


ROWS = [
    {"id": "a", "prompt": "Capital of France?", "reference": "Paris", "response": "Paris."},
    {"id": "b", "prompt": "Capital of France?", "reference": "Paris", "response": "Lyon."},
    {"id": "c", "prompt": "Capital of France?", "reference": "Paris", "response": "garbled"},
]


def test_judged_rows_become_evaluation_events_with_the_semconv_attributes(exported):
    provider, exporter = exported
    events = respeval.otel.JudgeEvents(
        model="fake:judge", response_ids={"a": "resp-a", "b": "resp-b"}, logger_provider=provider
    )
    result = judge.run(ROWS, judge.FakeModel(_verdict), on_row=events, reask=False)
    records = sorted(_records(exporter), key=lambda r: r.attributes.get("gen_ai.response.id", "~"))
    assert events.emitted == 3 and len(records) == 3
    assert {r.event_name for r in records} == {"gen_ai.evaluation.result"}
    a, b, c = (dict(r.attributes) for r in records)
    assert a == {
        "gen_ai.evaluation.name": "respeval.judge",
        "gen_ai.evaluation.score.value": 1.0,
        "gen_ai.evaluation.score.label": "pass",
        "gen_ai.evaluation.explanation": "same city",
        "gen_ai.response.id": "resp-a",
        "respeval.judge.model": "fake:judge",
    }
    assert (b["gen_ai.evaluation.score.value"], b["gen_ai.evaluation.score.label"]) == (0.0, "fail")
    assert b["gen_ai.evaluation.explanation"] == "wrong city"
    # an unscored row: no score or label, an error.type, and the reason as the explanation
    by_id = {row.id: row for row in result.rows}
    assert by_id["c"].status == "unscored"
    assert "gen_ai.evaluation.score.value" not in c and "gen_ai.evaluation.score.label" not in c
    assert c["error.type"] == respeval.otel.error_kind(by_id["c"].unscored_reason) == "unparseable"
    assert c["gen_ai.evaluation.explanation"] == by_id["c"].unscored_reason


def test_events_are_parented_to_the_evaluated_operations_span(exported):
    from opentelemetry import trace

    provider, exporter = exported
    tracer = TracerProvider().get_tracer("app")
    with tracer.start_as_current_span("chat gpt-4o") as span:
        respeval.otel.emit_evaluation("relevance", score=0.5, label="partial", logger_provider=provider)
    contexts = {}
    with tracer.start_as_current_span("chat other") as other:
        contexts["a"] = trace.set_span_in_context(other)
    result = judge.run(ROWS[:1], judge.FakeModel(_verdict))
    respeval.otel.emit_judged(result, contexts=contexts, logger_provider=provider, explanations=False)
    first, second = _records(exporter)
    assert (first.trace_id, first.span_id) == (span.get_span_context().trace_id, span.get_span_context().span_id)
    assert (second.trace_id, second.span_id) == (other.get_span_context().trace_id, other.get_span_context().span_id)
    assert dict(first.attributes) == {
        "gen_ai.evaluation.name": "relevance",
        "gen_ai.evaluation.score.value": 0.5,
        "gen_ai.evaluation.score.label": "partial",
    }
    assert "gen_ai.evaluation.explanation" not in second.attributes
    assert second.attributes["respeval.judge.model"] == result.summary.model


def test_name_is_required_and_kinds_stay_low_cardinality():
    with pytest.raises(ValueError, match="gen_ai.evaluation.name is required"):
        respeval.otel.evaluation_attributes("")
    assert respeval.otel.error_kind("invalid input: row 3 has no response") == "invalid_input"
    assert respeval.otel.error_kind("HTTP 500 from https://example: boom") == "unscored"
    assert respeval.otel.error_kind(None) == "unscored"
    assert respeval.otel.verdict_label({"winner": "A"}) == "A"
    assert respeval.otel.verdict_label({"score": 1}) is None
