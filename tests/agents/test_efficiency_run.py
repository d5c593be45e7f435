"""respeval.efficiency: cases from traces (the real OpenTelemetry SDK), rows and ADK sessions;
the run summary (exact totals, seeded intervals, percentiles against the standard library's);
``respeval efficiency``."""

from __future__ import annotations

import json
import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from respeval import efficiency as eff
from respeval.cli.app import main
from respeval.judge.prices import model_price
from respeval.stats import percentiles


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=2, max_size=60))
def test_percentiles_are_the_inclusive_quantiles(values):
    cuts = statistics.quantiles(values, n=100, method="inclusive")  # cuts[k-1] is the k-th percentile
    got = percentiles(values, (1, 50, 90, 95, 99))
    for q in (1, 50, 90, 95, 99):
        assert got[f"p{q}"] == pytest.approx(cuts[q - 1], rel=1e-12, abs=1e-9)


def test_percentiles_edges():
    assert percentiles([3.0], (50, 99)) == {"p50": 3.0, "p99": 3.0}
    assert all(math.isnan(v) for v in percentiles([], (50,)).values())
    assert percentiles([1.0, float("nan"), 3.0], (50,)) == {"p50": 2.0}
    with pytest.raises(ValueError, match="between 0 and 100"):
        percentiles([1.0], (101,))


def test_trace_cases_from_the_sdk(tmp_path):
    pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is in the test extra")
    from _helpers import otel_agent

    rec = otel_agent.run(otel_agent.conversations(20, seed=5), "semconv", seed=2)
    spans = tmp_path / "spans.jsonl"
    otel_agent.write_lines(spans, rec.span_lines)
    assert eff.detect_kind(spans) == "traces"
    report = eff.efficiency([spans])
    by_id = {c.case_id: c for c in report.cases}
    assert set(by_id) == {e.trace_id for e in rec.expected}
    for want in rec.expected:
        case = by_id[want.trace_id]
        assert (case.tokens_in, case.tokens_out) == (want.input_tokens, want.output_tokens)
        assert case.tokens_total == want.input_tokens + want.output_tokens
        assert case.model_calls == want.model_calls and case.inference_call_count == float(want.model_calls)
        assert case.tool_calls == len(want.tool_calls) and case.tool_call_count == float(len(want.tool_calls))
        price = model_price(want.model, want.model).interactive
        assert case.cost_usd == pytest.approx(price.cost(want.input_tokens, want.output_tokens), rel=1e-12)
        assert case.latency_s is not None and case.latency_s > 0
    q = report.quantities
    assert q["tokens_in"].total == sum(e.input_tokens for e in rec.expected)
    assert q["model_calls"].total == sum(e.model_calls for e in rec.expected)
    assert q["tool_calls"].cases == 20
    latencies = [c.latency_s for c in report.cases]
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    assert q["latency_s"].percentiles["p95"] == pytest.approx(cuts[94], rel=1e-12)
    assert q["latency_s"].max == max(latencies)
    mean = q["tokens_in"].mean
    assert mean.low <= mean.mid <= mean.high and mean.mid == pytest.approx(
        statistics.fmean(c.tokens_in for c in report.cases)
    )
    again = eff.efficiency([spans])
    assert again.quantities["tokens_in"].mean == mean  # seeded
    other = eff.efficiency([spans], seed=7).quantities["tokens_in"].mean
    assert (other.low, other.high) != (mean.low, mean.high)


def test_rows_of_run_outputs(tmp_path):
    rows = [
        {"id": "a", "tokens_in": 100, "tokens_out": 20, "attempts": 1, "cost": 0.5, "latency": 1.5, "tool_calls": [{"name": "x"}]},
        {"id": "b", "input_tokens": 50, "output_tokens": None, "model_calls": 3, "latency_s": 0.5, "tool_calls": 4},
        {"id": "c", "model": "gpt-4o-mini", "prompt_tokens": 1_000_000, "completion_tokens": 1_000_000},
    ]  # fmt: skip
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert eff.detect_kind(path) == "rows"
    report = eff.efficiency([path])
    a, b, c = report.cases
    assert (a.case_id, a.tokens_in, a.tokens_out, a.tokens_total, a.tool_calls, a.cost_usd, a.latency_s) == (
        "a", 100, 20, 120, 1, 0.5, 1.5,
    )  # fmt: skip
    assert a.model_calls is None  # nothing said how many calls: n/a, not 0
    assert (b.tokens_in, b.tokens_out, b.tokens_total, b.model_calls, b.tool_calls) == (50, None, 50, 3, 4)
    assert b.cost_usd is None
    assert c.cost_usd == pytest.approx(0.15 + 0.60)  # priced from the built-in table
    q = report.quantities
    assert (q["tokens_out"].cases, q["tokens_out"].total) == (2, 1_000_020)
    assert (q["cost_usd"].cases, q["model_calls"].cases) == (2, 1)
    assert report.adk["tool_call_count"] == 2.5  # (1 + 4) / 2 cases that recorded it
    # a CSV of the same with the calls as JSON text, and a renamed field
    csv_path = tmp_path / "run.csv"
    csv_path.write_text('id,n_in,tool_calls\nx,7,"[{""name"": ""a""}, {""name"": ""b""}]"\n')
    (x,) = eff.efficiency([csv_path], fields={"tokens_in": "n_in"}).cases
    assert (x.tokens_in, x.tool_calls) == (7, 2)


def test_a_bad_row_names_the_file_row_and_field(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text('{"tokens_in": 5}\n{"tokens_in": "many"}\n')
    with pytest.raises(ValueError, match=r"run\.jsonl: row 1: field 'tokens_in': 'many' is not a count"):
        eff.efficiency([path])
    path.write_text('{"latency_s": -1}\n')
    with pytest.raises(ValueError, match=r"row 0: field 'latency_s'"):
        eff.efficiency([path])
    with pytest.raises(ValueError, match="unknown efficiency field"):
        eff.efficiency([path], fields={"tokens": "x"})


def _session(model: str) -> dict:
    return {
        "id": "s-1",
        "app_name": "app",
        "user_id": "u",
        "state": {},
        "events": [
            {"invocation_id": "i1", "author": "user", "content": {"parts": [{"text": "Rain?"}]}},
            {"invocation_id": "i1", "author": "agent", "model_version": model,
             "usage_metadata": {"prompt_token_count": 1000, "candidates_token_count": 100, "thoughts_token_count": 50},
             "content": {"parts": [{"function_call": {"name": "forecast", "args": {}}}]}},
            {"invocation_id": "i1", "author": "agent", "content": {"parts": [{"function_response": {"name": "forecast", "response": {}}}]}},
            {"invocation_id": "i1", "author": "agent", "model_version": model,
             "usageMetadata": {"promptTokenCount": 2000, "candidatesTokenCount": 10},
             "content": {"parts": [{"text": "Yes."}]}},
        ],
    }  # fmt: skip


def test_adk_session_cost_and_totals(tmp_path):
    path = tmp_path / "a.session.json"
    path.write_text(json.dumps(_session("gpt-4o-mini")))
    (case,) = eff.efficiency([path]).cases
    assert (case.tool_calls, case.model_calls, case.tokens_in, case.tokens_out) == (1, 2, 3000, 160)
    assert case.cost_usd == pytest.approx((3000 * 0.15 + 160 * 0.60) / 1e6, rel=1e-12)
    path.write_text(json.dumps(_session("a-model-nobody-prices")))
    (case,) = eff.efficiency([path]).cases
    assert case.cost_usd is None and case.tokens_in == 3000  # unknown price: unknown cost, never 0
    (case,) = eff.efficiency([path], prices={"a-model-nobody-prices": model_price("x", "x", override=_price())}).cases
    assert case.cost_usd == pytest.approx((3000 * 1.0 + 160 * 2.0) / 1e6)


def _price():
    from respeval.judge.prices import ModelPrice

    return ModelPrice.of(1.0, 2.0)


def test_the_command(tmp_path, capsys):
    path = tmp_path / "a.session.json"
    path.write_text(json.dumps(_session("gpt-4o-mini")))
    out = tmp_path / "cases.csv"
    assert main(["efficiency", str(path), "--json", "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cases"] == 1 and report["quantities"]["tokens_in"]["total"] == 3000
    assert report["per_case"][0]["inference_call_count"] == 2.0
    assert report["adk"]["token_usage"] == 3160
    lines = out.read_text().splitlines()
    assert lines[0].startswith("case_id,source,tool_calls,model_calls,tokens_in") and len(lines) == 2
    assert main(["efficiency", str(path)]) == 0
    text = capsys.readouterr().out
    assert "tokens_in" in text and "p95" in text and "inference_call_count=2" in text
    assert main(["efficiency", str(tmp_path / "missing.jsonl")]) == 1
    assert "no such file" in capsys.readouterr().err
