"""Custom metric speed: a batch function over 1M rows vs the same function row by row with pandas,
interleaved rounds in one process; and evaluate()'s judge path against the local test server.

    python benchmarks/evaluate_report.py [--rows 1000000] [--rounds 5] [--judge-rows 5000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import respeval  # noqa: E402
from respeval.evaluate import CustomMetric  # noqa: E402


def words_over_reference_batch(batch: pa.RecordBatch) -> np.ndarray:
    """Response length in characters over reference length (the same logic, vectorised)."""
    resp = pc.utf8_length(batch.column("response")).to_numpy(zero_copy_only=False).astype(float)
    ref = pc.utf8_length(batch.column("reference")).to_numpy(zero_copy_only=False).astype(float)
    return resp / np.maximum(ref, 1.0)


def words_over_reference_row(row: dict) -> float:
    return len(row["response"]) / max(len(row["reference"]), 1)


def table(n: int) -> pa.Table:
    rng = np.random.default_rng(0)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"])
    resp = [" ".join(words[rng.integers(0, 6, k)]) for k in rng.integers(3, 30, n)]
    ref = [" ".join(words[rng.integers(0, 6, k)]) for k in rng.integers(3, 30, n)]
    return pa.table({"response": resp, "reference": ref})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--judge-rows", type=int, default=5000)
    args = ap.parse_args()
    data = table(args.rows)
    frame = data.to_pandas()
    metric = CustomMetric("ratio", words_over_reference_batch, batch=True)
    batch_s, pandas_s = [], []
    for _ in range(args.rounds):
        t = time.perf_counter()
        result = respeval.evaluate(data, [metric], chunk_size=200_000, bootstrap=0)
        batch_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        expected = frame.apply(words_over_reference_row, axis=1)
        pandas_s.append(time.perf_counter() - t)
    got = result.table.column("ratio/score").to_numpy()
    assert np.allclose(got, expected.to_numpy()), "batch and row-by-row disagree"
    ratios = [p / b for p, b in zip(pandas_s, batch_s)]
    print(f"rows {args.rows:,}, rounds {args.rounds} (interleaved)")
    print(
        f"evaluate, batch CustomMetric: {args.rows / statistics.median(batch_s):,.0f} rows/s (median {statistics.median(batch_s):.3f} s)"
    )
    print(
        f"pandas DataFrame.apply(axis=1): {args.rows / statistics.median(pandas_s):,.0f} rows/s (median {statistics.median(pandas_s):.3f} s)"
    )
    print(f"ratio: median {statistics.median(ratios):.1f}x, min {min(ratios):.1f}x, max {max(ratios):.1f}x")

    from _helpers.judge_server import spawn_server

    rows = [{"id": i, "context": f"policy {i}", "response": f"answer {i}"} for i in range(args.judge_rows)]
    with spawn_server(responder="evaluate") as server:
        from respeval.judge import OpenAIChatModel

        model = OpenAIChatModel("judge", base_url=server.url)
        t = time.perf_counter()
        res = respeval.evaluate(rows, ["GROUNDING"], model=model, concurrency=64, bootstrap=0, chunk_size=5000)
        seconds = time.perf_counter() - t
        calls = server.stats()["requests"]
    print(
        f"judge path (GROUNDING, {args.judge_rows:,} rows, concurrency 64, local server in a subprocess): "
        f"{args.judge_rows / seconds:,.0f} rows/s, {calls} requests, coverage {res.summary_metrics['GROUNDING/coverage']:.3f}"
    )


if __name__ == "__main__":
    main()
