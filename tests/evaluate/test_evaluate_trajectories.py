"""Trajectory metrics through ``respeval.evaluate`` (and ``respeval evaluate``): a JSON family
takes nested values or their JSON text, the same numbers as ``trajectory()``, and names the
rows it cannot read; only a missing value is refused before it."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import respeval
from _helpers.paths import shared_data
from respeval.cli import main
from respeval.metrics.trajectory import trajectory

METRICS = ["trajectory_precision", "trajectory_recall", "tool_trajectory_avg_score"]


def _tau_rows(n: int) -> list[dict]:
    path = shared_data("agents", "tau_bench", "airline_trajectories.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[:n]]


def _by_row(result, metric):
    return [r[f"{metric}/score"] for r in result.table.to_pylist()]


@pytest.mark.parametrize("as_text", [False, True])
def test_nested_values_and_json_text_score_as_trajectory_scores_them(as_text):
    rows = _tau_rows(40)
    if as_text:
        rows = [{k: json.dumps(v) if k.endswith("_trajectory") else v for k, v in r.items()} for r in rows]
    result = respeval.evaluate(
        rows, METRICS, response_column="predicted_trajectory", reference_column="reference_trajectory", chunk_size=16
    )
    want = trajectory([r["predicted_trajectory"] for r in rows], [r["reference_trajectory"] for r in rows], METRICS)
    for metric in METRICS:
        assert _by_row(result, metric) == want[metric].tolist(), metric
        assert result.summary_metrics[f"{metric}/scored"] == 40


def test_unreadable_and_missing_trajectories_are_unscored_with_their_reason(tmp_path, capsys):
    rows = _tau_rows(3)
    rows[1]["predicted_trajectory"] = 5
    rows[2]["predicted_trajectory"] = [{"tool_name": "x", "tool_input": [1]}]
    rows.append({"id": "no-pred", "reference_trajectory": []})
    result = respeval.evaluate(
        rows, ["trajectory_precision"], response_column="predicted_trajectory", reference_column="reference_trajectory"
    )
    got = [
        (r["trajectory_precision/status"], r["trajectory_precision/unscored_reason"]) for r in result.table.to_pylist()
    ]
    assert got == [
        ("scored", None),
        ("unscored", "predicted_trajectory: trajectory is a int, expected a list of calls"),
        ("unscored", "predicted_trajectory: call 0 (x): 'tool_input' is a list, expected a JSON object"),
        ("unscored", "field 'predicted_trajectory': missing"),
    ]
    # the command line reads nested Parquet the same way
    path = tmp_path / "tau.parquet"
    good = _tau_rows(8)
    pq.write_table(pa.Table.from_pylist(good), path)
    out = tmp_path / "out.jsonl"
    args = ["evaluate", "--input", str(path), "--metric", "trajectory_recall", "--out", str(out)]
    assert main([*args, "--response-field", "predicted_trajectory", "--reference-field", "reference_trajectory"]) == 0
    scores = [json.loads(line)["trajectory_recall/score"] for line in out.read_text().splitlines()]
    want = trajectory([r["predicted_trajectory"] for r in good], [r["reference_trajectory"] for r in good])
    assert scores == pytest.approx(want["trajectory_recall"].tolist(), abs=0, rel=0)


def test_records_whose_columns_mix_types_are_scored_row_by_row():
    """A list of dicts whose column has no one Arrow type (a number among texts) was a bare
    ArrowInvalid from the whole dataset; now each metric names the rows it cannot read."""
    rows = [{"response": "a b", "reference": "a b"}, {"response": 5, "reference": "x"}, {"reference": "y"}]
    result = respeval.evaluate(rows, ["exact_match"])
    got = [(r["exact_match/score"], r["exact_match/unscored_reason"]) for r in result.table.to_pylist()]
    assert got == [
        (1.0, None),
        (None, "field 'response': not text (int)"),
        (None, "field 'response': missing"),
    ]
    again = respeval.evaluate(rows, ["exact_match"])
    assert again.table.equals(result.table)


def test_a_batch_metric_on_records_that_mix_types_names_the_column():
    from respeval.evaluate import CustomMetric

    rows = [{"response": "a b", "reference": "a b"}, {"response": 5, "reference": "x"}]
    batch = CustomMetric("n", lambda b: [1.0] * b.num_rows, batch=True)
    with pytest.raises(ValueError, match=r"rows 0-1: column 'response' mixes types .*batch=False"):
        respeval.evaluate(rows, [batch])
