"""respeval.mlflow against a real MLflow tracking store (a local file store in tmp_path)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import respeval

mlflow = pytest.importorskip("mlflow", reason="mlflow is not installed: pip install 'respeval[mlflow]'")

import respeval.mlflow  # noqa: E402  (after the skip: the adapter needs mlflow)

N = 400


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A local file store; MLflow 3 keeps it behind MLFLOW_ALLOW_FILE_STORE."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_ENABLE_ASYNC_LOGGING", "false")
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    yield mlflow.MlflowClient()
    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(previous)


@pytest.fixture(scope="module")
def pairs(wmt):
    reference, systems = wmt
    return systems["C-3MA.4959"][:N], reference[:N]


def _artifact(client, run_id: str, path: str, tmp_path):
    return client.download_artifacts(run_id, path, str(tmp_path / "download"))


def test_log_run_of_a_metric_result_logs_corpus_values_signature_and_rows(store, pairs, tmp_path):
    import pyarrow.parquet as pq

    hyps, refs = pairs
    result = respeval.bleu(hyps, refs)
    run_id = respeval.mlflow.log_run(result)
    run = store.get_run(run_id)
    assert run.info.status == "FINISHED"  # a run of its own, ended
    assert run.data.metrics == {"bleu": result.score}
    assert run.data.params == {"signature": result.signature}
    rows = pq.read_table(_artifact(store, run_id, "respeval/rows.parquet", tmp_path))
    assert rows.equals(result.to_arrow())
    summary = json.loads(Path(_artifact(store, run_id, "respeval/summary.json", tmp_path)).read_text(encoding="utf-8"))
    assert summary["rows"] == N and summary["corpus"] == {"bleu": result.score}


def test_log_run_of_a_bulk_summary_logs_systems_intervals_table_and_report(store, wmt, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    reference, systems = wmt
    names = ["C-3MA.4959", "FBK.4870"]
    table = pa.table(
        {
            "system": [n for n in names for _ in range(N)],
            "response": [h for n in names for h in systems[n][:N]],
            "reference": reference[:N] * 2,
        }
    )
    rows, summary = respeval.score_table(table, metrics=["rougeL", "bleu"], system_field="system", bootstrap=200)
    results_file = tmp_path / "rows.parquet"
    pq.write_table(rows, results_file)
    report = tmp_path / "report.html"
    report.write_text("<html><body>respeval report</body></html>", encoding="utf-8")
    with mlflow.start_run() as active:
        run_id = respeval.mlflow.log_run(summary, report=report, tables=[results_file])
        assert run_id == active.info.run_id  # logged into the active run
    metrics = store.get_run(run_id).data.metrics
    for row in summary.table:
        for name, value in row.values.items():
            assert metrics[f"{row.system}/{name}"] == value
            low, high = row.intervals[name]
            assert (metrics[f"{row.system}/{name}_low"], metrics[f"{row.system}/{name}_high"]) == (low, high)
    assert metrics[f"{names[0]}/bleu"] == respeval.bleu(systems[names[0]][:N], reference[:N]).score
    assert metrics["rows_total"] == 2 * N
    params = store.get_run(run_id).data.params
    assert params["signature.bleu"] == summary.signatures["bleu"] and params["bootstrap"] == "200"
    listed = {a.path for a in store.list_artifacts(run_id, "respeval")}
    assert listed == {"respeval/summary.json", "respeval/rows.parquet", "respeval/report.html"}


def test_log_run_of_a_judge_result_logs_pass_rate_and_cost(store):
    from respeval import judge

    records = [
        {"id": i, "prompt": "q", "reference": "Paris", "response": "Paris" if i % 4 else "Lyon"} for i in range(8)
    ]

    def verdict(request):
        passed = not any("Lyon" in m.content for m in request.messages)  # only the wrong responses say Lyon
        return json.dumps({"score": 1.0 if passed else 0.0, "pass": passed, "reasoning": "checked"})

    result = judge.run(records, judge.FakeModel(verdict))
    run_id = respeval.mlflow.log_run(result)
    metrics = store.get_run(run_id).data.metrics
    s = result.summary
    assert metrics["judge/pass_rate"] == s.pass_rate and metrics["judge/coverage"] == s.coverage
    assert metrics["judge/calls"] == s.calls and metrics["judge/cost"] == s.cost
    assert store.get_run(run_id).data.params["judge.model"] == s.model


def test_log_run_rejects_what_it_cannot_log(store):
    with pytest.raises(TypeError, match="cannot log a int"):
        respeval.mlflow.log_run(3)
    with pytest.raises(FileNotFoundError, match="missing.html"):
        respeval.mlflow.log_run({"scores": []}, report="missing.html")


def test_extra_metrics_in_mlflow_evaluate_give_sentence_and_corpus_values(store, pairs):
    pytest.importorskip("matplotlib", reason="mlflow.evaluate's default evaluator imports matplotlib")
    import pandas as pd

    hyps, refs = pairs
    df = pd.DataFrame({"response": hyps, "reference": refs})
    with mlflow.start_run():
        res = mlflow.models.evaluate(
            data=df,
            predictions="response",
            targets="reference",
            extra_metrics=[respeval.mlflow.metric("bleu"), respeval.mlflow.metric("rougeL", stemmer=True)],
            evaluators="default",
        )
    bleu = respeval.bleu(hyps, refs)
    rouge = respeval.rouge(hyps, refs, ("rougeL",), stemmer=True)
    assert res.metrics["bleu/corpus"] == bleu.score
    assert res.metrics["bleu/mean"] == pytest.approx(float(np.mean(bleu.sentence)), abs=1e-12)
    assert res.metrics["rougeL/corpus"] == rouge.corpus_scores()["rougeL_f"]
    # MLflow stores the per-row table as JSON with 10 significant digits
    table = res.tables["eval_results_table"]
    np.testing.assert_allclose(table["bleu/score"].to_numpy(), bleu.sentence, rtol=1e-9, atol=0)
    np.testing.assert_allclose(table["rougeL/score"].to_numpy(), rouge["rougeL_f"], rtol=1e-9, atol=0)


def test_genai_scorer_scores_each_row_like_respeval(store, pairs):
    hyps, refs = pairs
    n = 20
    data = [
        {"inputs": {"question": f"q{i}"}, "outputs": hyps[i], "expectations": {"expected_response": refs[i]}}
        for i in range(n)
    ]
    res = mlflow.genai.evaluate(data=data, scorers=[respeval.mlflow.scorer("rougeL"), respeval.mlflow.scorer("chrf")])
    rouge = respeval.rouge(hyps[:n], refs[:n], ("rougeL",))["rougeL_f"]
    chrf = respeval.chrf(hyps[:n], refs[:n]).sentence
    assert res.metrics["rougeL/mean"] == pytest.approx(float(np.mean(rouge)), abs=1e-12)
    assert res.metrics["chrf/mean"] == pytest.approx(float(np.mean(chrf)), abs=1e-12)


def test_unknown_metric_or_option_fails_before_mlflow_runs():
    with pytest.raises(ValueError, match="unknown metric"):
        respeval.mlflow.metric("bertscore")
    with pytest.raises(TypeError):
        respeval.mlflow.scorer("bleu", tokenise="13a")
