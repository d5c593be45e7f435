"""respeval in MLflow: log a run, and respeval's metrics inside MLflow's own evaluation.

* ``log_run(summary)`` logs what a respeval run produced to the active MLflow run (or
  ``run_id``): corpus values (and their bootstrap intervals) as metrics, signatures and
  settings as params, and the summary JSON, the per-row table and the HTML report as
  artifacts under ``respeval/``.  ``summary`` may be a bulk ``respeval.RunSummary``
  (``score_files``/``score_table``), a judge ``RunResult``, a library result such as
  ``respeval.rouge(...)`` (its rows become ``respeval/rows.parquet``), or a JSON-ready dict.
* ``metric("rougeL")`` is an ``mlflow.evaluate`` / ``mlflow.models.evaluate`` extra metric:
  per-row scores and, as aggregates, their mean and the corpus value (sums of statistics:
  corpus BLEU is not a mean of sentence BLEU).
* ``scorer("rougeL")`` is an ``mlflow.genai.evaluate`` scorer: ``outputs`` against
  ``expectations["expected_response"]``, one value per row.

Any name of ``respeval.REGISTRY`` works (``respeval metrics`` lists them) for text metrics;
``options`` are that family's options (e.g. ``metric("bleu", tokenizer="intl")``).
Needs ``pip install 'respeval[mlflow]'`` (``mlflow-skinny`` is enough; ``mlflow.evaluate``'s
default evaluator also imports matplotlib).
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from respeval._adapters import require
from respeval._adapters.scoring import build_family, score_rows
from respeval.metrics import MetricResult

ARTIFACT_DIR = "respeval"
_UNSAFE = re.compile(r"[^0-9A-Za-z_\-. :/]")


def _mlflow() -> Any:
    return require("mlflow", "mlflow", purpose="respeval.mlflow")


def metric_key(*parts: Any) -> str:
    """An MLflow metric name from parts (characters MLflow rejects become ``_``)."""
    return "/".join(_UNSAFE.sub("_", str(p)) for p in parts if p not in (None, ""))


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(float(value))


# --------------------------------------------------------------------------- what a summary holds


def _bulk_summary(summary: Any) -> tuple[dict[str, float], dict[str, Any], dict[str, Any], list[str]]:
    """``respeval.RunSummary``: per system (and group) corpus values and intervals."""
    metrics: dict[str, float] = {}
    single = len(summary.table) == 1 and summary.table[0].group is None
    for row in summary.table:
        prefix = () if single else (row.system, row.group)
        for name, value in row.values.items():
            if _finite(value):
                metrics[metric_key(*prefix, name)] = float(value)
            low_high = row.intervals.get(name)
            if low_high is not None:
                metrics[metric_key(*prefix, f"{name}_low")] = float(low_high[0])
                metrics[metric_key(*prefix, f"{name}_high")] = float(low_high[1])
        if not single:
            metrics[metric_key(*prefix, "rows")] = float(row.rows)
    for name in ("rows_total", "rows_scored", "rows_failed", "seconds"):
        metrics[name] = float(getattr(summary, name))
    params: dict[str, Any] = {f"signature.{k}": v for k, v in summary.signatures.items()}
    params.update(confidence=summary.confidence, bootstrap=summary.bootstrap, seed=summary.seed)
    tables = [p for p in (summary.output, summary.errors_output) if p and Path(p).is_file()]
    return metrics, params, summary.to_json(), tables


def _judge_result(result: Any) -> tuple[dict[str, float], dict[str, Any], dict[str, Any]]:
    """A judge ``RunResult``: pass rate, coverage, mean score, calls, tokens and cost."""
    s = result.summary
    metrics: dict[str, float] = {}
    names = ("pass_rate", "coverage", "mean_score", "total", "scored", "unscored", "passed", "calls")
    for name in (*names, "cache_hits", "retries", "tokens_in", "tokens_out", "cost", "seconds"):
        value: Any = getattr(s, name, None)
        if _finite(value):
            metrics[f"judge/{name}"] = float(value)
    interval = getattr(s, "pass_interval", None)
    if interval is not None:
        metrics["judge/pass_rate_low"], metrics["judge/pass_rate_high"] = map(float, interval)
    params = {"judge.model": s.model, "judge.method": s.method, "judge.signature": s.signature}
    body = {k: v for k, v in vars(s).items() if not k.startswith("_")}
    body.update({k: metrics.get(f"judge/{k}") for k in ("pass_rate", "coverage", "mean_score")})
    return metrics, params, body


def _json_summary(summary: Mapping[str, Any]) -> dict[str, float]:
    """Metrics from a JSON summary: report-schema ``scores`` or ``RunSummary.to_json()``'s ``systems``."""
    metrics: dict[str, float] = {}
    for score in summary.get("scores", []) or []:
        name = score.get("metric")
        for field, suffix in (("mean", ""), ("low", "_low"), ("high", "_high")):
            if name and _finite(score.get(field)):
                metrics[metric_key(f"{name}{suffix}")] = float(score[field])
    systems = summary.get("systems", []) or []
    for row in systems:
        prefix = () if len(systems) == 1 else (row.get("system"), row.get("group"))
        for name, value in (row.get("values") or {}).items():
            if _finite(value):
                metrics[metric_key(*prefix, name)] = float(value)
    return metrics


def summary_contents(summary: Any) -> tuple[dict[str, float], dict[str, Any], dict[str, Any], list[str]]:
    """(metrics, params, JSON body, table files) that ``log_run`` logs for ``summary``."""
    if isinstance(summary, MetricResult):
        metrics = {k: float(v) for k, v in summary.corpus_scores().items() if _finite(v)}
        body = {"signature": summary.signature, "rows": len(summary), "corpus": metrics}
        return metrics, {"signature": summary.signature}, body, []
    if hasattr(summary, "table") and hasattr(summary, "signatures") and hasattr(summary, "to_json"):
        return _bulk_summary(summary)
    if hasattr(summary, "summary") and hasattr(summary.summary, "pass_rate"):
        metrics, params, body = _judge_result(summary)
        return metrics, params, body, []
    if isinstance(summary, Mapping):
        return _json_summary(summary), {}, dict(summary), []
    raise TypeError(
        f"log_run cannot log a {type(summary).__name__}: pass a respeval.RunSummary, a judge RunResult, "
        "a metric result (e.g. respeval.rouge(...)) or a JSON-ready dict"
    )


def _param_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 6000 else text[:5997] + "..."


def log_run(
    summary: Any,
    *,
    report: str | Path | None = None,
    tables: Sequence[str | Path] = (),
    run_id: str | None = None,
    step: int = 0,
) -> str:
    """Log a respeval run's summary to MLflow; returns the run id.

    Logs into ``run_id``, else the active run, else a new run that is ended before
    returning.  ``report`` is an HTML report to attach; ``tables`` are further result
    files (a bulk summary's results and errors files are attached on their own).
    """
    mlflow = _mlflow()
    if report is not None and not Path(report).is_file():
        raise FileNotFoundError(f"report {report} does not exist")
    contents = summary_contents(summary)
    if run_id is None and mlflow.active_run() is None:
        with mlflow.start_run() as run:
            _log(mlflow, run.info.run_id, summary, contents, report, tables, step)
        return str(run.info.run_id)
    target = run_id or mlflow.active_run().info.run_id
    _log(mlflow, target, summary, contents, report, tables, step)
    return str(target)


def _log(
    mlflow: Any,
    run_id: str,
    summary: Any,
    contents: tuple[dict[str, float], dict[str, Any], dict[str, Any], list[str]],
    report: str | Path | None,
    tables: Sequence[str | Path],
    step: int,
) -> None:
    metrics, params, body, files = contents
    client = mlflow.MlflowClient()
    now = _now_ms()
    entities = mlflow.entities
    client.log_batch(
        run_id,
        metrics=[entities.Metric(key=k, value=v, timestamp=now, step=step) for k, v in metrics.items()],
        params=[entities.Param(k, _param_value(v)) for k, v in params.items()],
    )
    client.log_dict(run_id, _jsonable(body), f"{ARTIFACT_DIR}/summary.json")
    if isinstance(summary, MetricResult):
        _log_rows(client, run_id, summary)
    for path in [*files, *tables, *([report] if report is not None else [])]:
        client.log_artifact(run_id, str(path), ARTIFACT_DIR)


def _now_ms() -> int:
    import time

    return int(time.time() * 1000)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v)))


def _log_rows(client: Any, run_id: str, result: MetricResult) -> None:
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.parquet"
        pq.write_table(result.to_arrow(), path)
        client.log_artifact(run_id, str(path), ARTIFACT_DIR)


# --------------------------------------------------------------------------- metrics inside MLflow


def metric(name: str = "rougeL", *, greater_is_better: bool | None = None, **options: Any) -> Any:
    """An MLflow ``EvaluationMetric`` computing respeval's ``name`` (for ``extra_metrics=``).

    Per-row scores, and aggregates ``mean`` (of the per-row scores) and ``corpus`` (the
    corpus value from summed statistics, e.g. corpus BLEU).
    """
    mlflow_metrics = require("mlflow.metrics", "mlflow", purpose="respeval.mlflow.metric")
    build_family(name, options)  # an unknown name or option fails here, not inside mlflow.evaluate

    def eval_fn(predictions: Any, targets: Any, metrics: Any = None) -> Any:
        if targets is None:
            raise ValueError(f"respeval {name} needs references: pass targets= to mlflow.evaluate")
        got = score_rows(name, list(predictions), list(targets), **options)
        aggregates = {k: got[k] for k in ("mean", "corpus") if got[k] is not None}
        return mlflow_metrics.MetricValue(scores=got["scores"], aggregate_results=aggregates)

    better = name != "ter" if greater_is_better is None else greater_is_better
    return mlflow_metrics.make_metric(eval_fn=eval_fn, greater_is_better=better, name=name)


def scorer(name: str = "rougeL", *, expectation: str = "expected_response", **options: Any) -> Any:
    """An ``mlflow.genai.evaluate`` scorer: respeval's ``name`` of ``outputs`` against
    ``expectations[expectation]`` (a str or a list of references), one value per row."""
    scorers = require("mlflow.genai.scorers", "mlflow", purpose="respeval.mlflow.scorer")
    build_family(name, options)

    def score(outputs: Any, expectations: Mapping[str, Any]) -> float | None:
        if not expectations or expectation not in expectations:
            raise ValueError(f"respeval {name} needs expectations[{expectation!r}] (the reference)")
        output = outputs.get("response", outputs) if isinstance(outputs, Mapping) else outputs
        got = score_rows(name, [output], [expectations[expectation]], **options)
        return got["scores"][0]

    return scorers.scorer(score, name=name)


__all__ = ["ARTIFACT_DIR", "log_run", "metric", "metric_key", "score_rows", "scorer", "summary_contents"]
