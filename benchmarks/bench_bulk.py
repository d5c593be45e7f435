"""Bulk scoring: the streaming pipeline (what ``respeval score`` runs) against the
in-memory library calls on the same rows, in one process.

    python -m pytest benchmarks/bench_bulk.py                       # ~1 minute
    python -m pytest benchmarks/bench_bulk.py --benchmark-disable   # smoke test, seconds

Workload: rouge1+rouge2+rougeL with 1,000 bootstrap resamples on the 100,000 short real
pairs (2,000 in the smoke test), all threads.
  score_files   Parquet in, chunked, results written to Parquet: the CLI's job
  score_table   the same job on the Arrow table already in memory
  rouge         ``respeval.rouge`` on lists already in memory, then ``.bootstrap(1000)``
Each checks that its corpus values equal ``rouge(...).mean()`` exactly and its intervals
equal ``.bootstrap()``'s low/high: the three are the same computation, streamed or not.
End-to-end CLI runs, 1M-5M rows and peak memory are ``python benchmarks/bulk_report.py``.
"""

from __future__ import annotations

import pytest

from respeval.bulk import score_files, score_table
from respeval.metrics.rouge import rouge

TYPES = ("rouge1", "rouge2", "rougeL")
BOOTSTRAP = 1000


@pytest.fixture(scope="module")
def table(short):
    import pyarrow as pa

    preds, refs = short
    return pa.table({"id": [f"r{i}" for i in range(len(preds))], "response": list(preds), "reference": list(refs)})


@pytest.fixture(scope="module")
def parquet(table, tmp_path_factory):
    import pyarrow.parquet as pq

    path = tmp_path_factory.mktemp("bulk") / "pairs.parquet"
    pq.write_table(table, path, row_group_size=50_000)
    return path


@pytest.fixture(scope="module")
def want(short):
    res = rouge(list(short[0]), list(short[1]), TYPES)
    return res.mean(), res.bootstrap(BOOTSTRAP, ci=0.95)


def _check(summary_row, want) -> None:
    mean, boot = want
    for t in TYPES:
        assert summary_row.values[f"{t}_f"] == mean[t].fmeasure
        assert summary_row.intervals[f"{t}_f"] == (boot[t].low.fmeasure, boot[t].high.fmeasure)


def test_score_files(benchmark, record, parquet, tmp_path, want):
    out = tmp_path / "rows.parquet"
    summary = benchmark.pedantic(
        lambda: score_files(str(parquet), metrics=TYPES, id_field="id", out=str(out), bootstrap=BOOTSTRAP),
        rounds=3,
        warmup_rounds=1,
    )
    record("bulk rouge1+2+L, bootstrap", "score_files", "parquet->parquet", summary.rows_scored)
    _check(summary.table[0], want)


def test_score_table(benchmark, record, table, want):
    _, summary = benchmark.pedantic(
        lambda: score_table(table, metrics=TYPES, id_field="id", bootstrap=BOOTSTRAP), rounds=3, warmup_rounds=1
    )
    record("bulk rouge1+2+L, bootstrap", "score_table", "arrow, memory", summary.rows_scored)
    _check(summary.table[0], want)


def test_rouge_then_bootstrap(benchmark, record, short, want):
    preds, refs = list(short[0]), list(short[1])

    def run():
        res = rouge(preds, refs, TYPES)
        return res.mean(), res.bootstrap(BOOTSTRAP, ci=0.95)

    got = benchmark.pedantic(run, rounds=3, warmup_rounds=1)
    record("bulk rouge1+2+L, bootstrap", "rouge+bootstrap", "lists, memory", len(preds))
    assert got == want
