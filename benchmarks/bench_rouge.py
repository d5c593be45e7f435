"""ROUGE speed: respeval vs rouge-score-rs vs rouge-score, on real pairs, in one process.

    python -m pytest benchmarks/bench_rouge.py                       # ~2 minutes
    python -m pytest benchmarks/ --benchmark-disable                 # smoke test, seconds

Workloads (see corpus.py): rouge1+rouge2+rougeL on 100,000 short real pairs (rouge-score on
5,000 of them, respeval's pure-Python reference on 2,000, spread evenly), and rougeLsum on
long documents (1,000+ tokens; rouge-score on 16 of them). Every benchmark also checks that
its scores equal respeval's per pair within 1e-12: a fast wrong answer is not a result.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import corpus

SHORT_TYPES = ("rouge1", "rouge2", "rougeL")
LONG_TYPES = ("rougeLsum",)
RESPEVAL_THREADS = sorted({1, 2, os.cpu_count() or 1})

STEM = [pytest.param(False, id="nostem"), pytest.param(True, id="stem")]


def _check_same(library: str, result, preds, refs, types, stem: bool) -> None:
    """The library's per-pair P/R/F equal respeval's (native, one thread) within 1e-12."""
    got = corpus.as_matrix(library, result, types)
    want = corpus.as_matrix("respeval", corpus.runner("respeval", types, stem, 1)(preds, refs), types)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def _bench(
    benchmark, record, workload, library, config, preds, refs, types, stem, threads=None, rounds=3, warmup_rounds=1
):
    fn = corpus.runner(library, types, stem, threads)
    result = benchmark.pedantic(fn, args=(preds, refs), rounds=rounds, warmup_rounds=warmup_rounds)
    record(workload, library, config, len(preds))
    _check_same(library, result, preds, refs, types, stem)


# --- rouge1 + rouge2 + rougeL, short pairs ------------------------------------------------


@pytest.mark.parametrize("stem", STEM)
@pytest.mark.parametrize("threads", RESPEVAL_THREADS, ids=[f"threads{t}" for t in RESPEVAL_THREADS])
def test_short_respeval(benchmark, record, short, stem, threads):
    benchmark.group = f"short-r1r2rL-{'stem' if stem else 'nostem'}"
    _bench(
        benchmark, record, benchmark.group, "respeval", f"threads={threads}", *short, SHORT_TYPES, stem, threads=threads
    )


@pytest.mark.parametrize("stem", STEM)
def test_short_rouge_score_rs(benchmark, record, short, stem):
    benchmark.group = f"short-r1r2rL-{'stem' if stem else 'nostem'}"
    _bench(
        benchmark,
        record,
        benchmark.group,
        "rouge-score-rs",
        f"threads={corpus.rayon_threads()}",
        *short,
        SHORT_TYPES,
        stem,
    )


@pytest.mark.parametrize("stem", STEM)
def test_short_rouge_score(benchmark, record, short, sizes, stem):
    benchmark.group = f"short-r1r2rL-{'stem' if stem else 'nostem'}"
    preds, refs = corpus.subset(short, sizes.rouge_score)
    _bench(
        benchmark,
        record,
        benchmark.group,
        "rouge-score",
        "threads=1",
        preds,
        refs,
        SHORT_TYPES,
        stem,
        rounds=2,
        warmup_rounds=0,
    )


@pytest.mark.parametrize("stem", STEM)
def test_short_respeval_python(benchmark, record, short, sizes, stem):
    benchmark.group = f"short-r1r2rL-{'stem' if stem else 'nostem'}"
    preds, refs = corpus.subset(short, sizes.python_ref)
    _bench(
        benchmark,
        record,
        benchmark.group,
        "respeval-python",
        "threads=1",
        preds,
        refs,
        SHORT_TYPES,
        stem,
        rounds=2,
        warmup_rounds=0,
    )


# --- rougeLsum, long documents --------------------------------------------------------------


@pytest.mark.parametrize("stem", STEM)
@pytest.mark.parametrize("threads", RESPEVAL_THREADS, ids=[f"threads{t}" for t in RESPEVAL_THREADS])
def test_long_respeval(benchmark, record, long_docs, stem, threads):
    benchmark.group = f"long-rLsum-{'stem' if stem else 'nostem'}"
    _bench(
        benchmark,
        record,
        benchmark.group,
        "respeval",
        f"threads={threads}",
        *long_docs,
        LONG_TYPES,
        stem,
        threads=threads,
    )


@pytest.mark.parametrize("stem", STEM)
def test_long_rouge_score_rs(benchmark, record, long_docs, stem):
    benchmark.group = f"long-rLsum-{'stem' if stem else 'nostem'}"
    _bench(
        benchmark,
        record,
        benchmark.group,
        "rouge-score-rs",
        f"threads={corpus.rayon_threads()}",
        *long_docs,
        LONG_TYPES,
        stem,
        rounds=2,
        warmup_rounds=0,
    )


@pytest.mark.parametrize("stem", STEM)
def test_long_rouge_score(benchmark, record, long_docs, sizes, stem):
    benchmark.group = f"long-rLsum-{'stem' if stem else 'nostem'}"
    preds, refs = corpus.subset(long_docs, sizes.long_rouge_score)
    _bench(
        benchmark,
        record,
        benchmark.group,
        "rouge-score",
        "threads=1",
        preds,
        refs,
        LONG_TYPES,
        stem,
        rounds=1,
        warmup_rounds=0,
    )
