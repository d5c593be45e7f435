"""Custom metric speed, and the judge path of ``respeval.evaluate``.

    python benchmarks/evaluate_report.py                       # 1M rows x 3 rounds + judge, ~10-20 min loaded
    python benchmarks/evaluate_report.py --rows 100000 --rounds 2 --judge-rows 2000   # ~1 min

1. **A batch custom function over 1M rows vs the same function row by row with pandas.**
   The function: response length over reference length (characters).  Interleaved rounds in
   one process, on the same Arrow table / DataFrame:
   ``respeval.evaluate(table, [CustomMetric(fn_batch, batch=True)])`` (the whole evaluation:
   chunks, the table with status columns, the summary), ``DataFrame.apply(fn_row, axis=1)``
   (pandas, row by row), and ``respeval.evaluate`` with the row function (in process, row by
   row, for reference).  Every value is checked equal across the three.
2. **The judge path**: ``respeval.evaluate(rows, ["GROUNDING"], model=...)`` against the local
   OpenAI-compatible server (tests/_helpers/judge_server.py) in a separate process, so it has a
   core of its own; concurrency 64, no cache.  Reported per round: rows/s (wall), this
   process's CPU per row, the server's CPU per row, and 1e6 / (CPU per row): the rate the path
   sustains on one core of its own (on a shared machine wall-clock rates fall with the load;
   CPU per row does not).

Why the first version of this script seemed to hang past 500 s: it built the 1M-row table with
a Python ``" ".join`` over NumPy string arrays per row (~110 s under load), then ran 5 rounds
of ``DataFrame.apply`` over 1M rows (~80-250 s each under load) without printing anything
until the end.  The table is now built from a pool of texts with one ``take``, the rounds
default to 3, and every round prints as it finishes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import report_json  # noqa: E402
import respeval  # noqa: E402
from respeval.evaluate import CustomMetric  # noqa: E402

WORDS = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])


def ratio_batch(batch: pa.RecordBatch) -> np.ndarray:
    """Response length over reference length, in characters (vectorised)."""
    resp = pc.utf8_length(batch.column("response")).to_numpy(zero_copy_only=False).astype(np.float64)
    ref = pc.utf8_length(batch.column("reference")).to_numpy(zero_copy_only=False).astype(np.float64)
    return resp / np.maximum(ref, 1.0)


def ratio_row(row: dict) -> float:
    """The same, for one row."""
    return len(row["response"]) / max(len(row["reference"]), 1)


def make_table(n: int, seed: int = 0, pool: int = 8192) -> pa.Table:
    """``n`` rows drawn from ``pool`` distinct texts per column (3-30 words each)."""
    rng = np.random.default_rng(seed)

    def texts() -> pa.Array:
        return pa.array([" ".join(WORDS[rng.integers(0, len(WORDS), k)]) for k in rng.integers(3, 31, pool)])

    responses, references = texts(), texts()
    return pa.table(
        {
            "response": responses.take(pa.array(rng.integers(0, pool, n))),
            "reference": references.take(pa.array(rng.integers(0, pool, n))),
        }
    )


def _spread(values: list[float]) -> str:
    return f"median {statistics.median(values):,.0f} (min {min(values):,.0f}, max {max(values):,.0f})"


def custom_function_rounds(rows: int, rounds: int, chunk_size: int) -> dict:
    import pandas as pd

    t = time.perf_counter()
    table = make_table(rows)
    frame = table.to_pandas()
    print(f"data: {rows:,} rows built in {time.perf_counter() - t:.1f} s", flush=True)
    batch_metric = CustomMetric("ratio", ratio_batch, batch=True)
    row_metric = CustomMetric("ratio", ratio_row)
    small = table.slice(0, 1000)  # imports and first-call costs stay out of the timed rounds
    respeval.evaluate(small, [batch_metric], bootstrap=0)
    respeval.evaluate(small, [row_metric], bootstrap=0)
    small.to_pandas().apply(ratio_row, axis=1)
    rates: dict[str, list[float]] = {"batch": [], "pandas": [], "row": []}
    ratios: list[float] = []
    for k in range(rounds):
        t = time.perf_counter()
        batch = respeval.evaluate(table, [batch_metric], chunk_size=chunk_size, bootstrap=0)
        batch_s = time.perf_counter() - t
        t = time.perf_counter()
        expected = frame.apply(ratio_row, axis=1)
        pandas_s = time.perf_counter() - t
        t = time.perf_counter()
        by_row = respeval.evaluate(table, [row_metric], chunk_size=chunk_size, bootstrap=0)
        row_s = time.perf_counter() - t
        got = batch.table.column("ratio/score").to_numpy()
        assert isinstance(expected, pd.Series) and np.array_equal(got, expected.to_numpy()), "batch != pandas"
        assert np.array_equal(got, by_row.table.column("ratio/score").to_numpy()), "batch != row by row"
        rates["batch"].append(rows / batch_s)
        rates["pandas"].append(rows / pandas_s)
        rates["row"].append(rows / row_s)
        ratios.append(pandas_s / batch_s)
        print(
            f"round {k + 1}/{rounds}: evaluate batch {batch_s:.2f} s, pandas apply {pandas_s:.1f} s, "
            f"evaluate row by row {row_s:.1f} s; batch/pandas {pandas_s / batch_s:.0f}x  "
            f"(load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    print(f"\n{rows:,} rows, {rounds} interleaved rounds, rows/s:")
    print(f"  respeval.evaluate, batch CustomMetric      {_spread(rates['batch'])}")
    print(f"  pandas DataFrame.apply(axis=1), row by row {_spread(rates['pandas'])}")
    print(f"  respeval.evaluate, row CustomMetric        {_spread(rates['row'])}")
    print(
        f"  batch / pandas per round: median {statistics.median(ratios):.0f}x ({min(ratios):.0f}x-{max(ratios):.0f}x)"
    )
    return {
        "rows": rows,
        "rows_per_s": {name: report_json.spread(values) for name, values in rates.items()},
        "batch_over_pandas": report_json.spread(ratios),
    }


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of another process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def judge_rounds(rows: int, rounds: int) -> dict:
    from _helpers.judge_server import spawn_server
    from respeval.judge import OpenAIChatModel

    print(f"\njudge path: GROUNDING over {rows:,} rows per round, concurrency 64, no cache", flush=True)
    with spawn_server(responder="evaluate") as server:
        warm = [{"id": -i - 1, "context": f"warm {i}", "response": f"warm {i}"} for i in range(200)]
        respeval.evaluate(warm, ["GROUNDING"], model=OpenAIChatModel("judge", base_url=server.url), bootstrap=0)
        results = []
        for k in range(rounds):
            # fresh texts each round: the server's answers differ, nothing is shared between rounds
            data = [{"id": i, "context": f"policy {k}-{i}", "response": f"answer {k}-{i}"} for i in range(rows)]
            model = OpenAIChatModel("judge", base_url=server.url)
            before = server.stats()["requests"]
            server_cpu = _cpu_seconds(server.proc.pid)
            cpu, t = time.process_time(), time.perf_counter()
            result = respeval.evaluate(data, ["GROUNDING"], model=model, concurrency=64, bootstrap=0, chunk_size=5000)
            wall, cpu = time.perf_counter() - t, time.process_time() - cpu
            server_cpu = _cpu_seconds(server.proc.pid) - server_cpu
            requests = server.stats()["requests"] - before
            coverage = result.summary_metrics["GROUNDING/coverage"]
            assert coverage == 1.0, coverage
            results.append((rows / wall, cpu / rows * 1e6, server_cpu / rows * 1e6))
            print(
                f"round {k + 1}/{rounds}: {rows / wall:,.0f} rows/s wall, {cpu / rows * 1e6:,.0f} us CPU per row here, "
                f"{server_cpu / rows * 1e6:,.0f} us in the server; {requests:,} requests, coverage {coverage:.3f} "
                f"(load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
    wall_rates = [r[0] for r in results]
    client = [r[1] for r in results]
    server_us = [r[2] for r in results]
    print(f"\njudge path, {rounds} rounds of {rows:,} rows:")
    print(f"  rows/s (wall)                   {_spread(wall_rates)}")
    print(
        f"  CPU per row, evaluate (us)      {_spread(client)}  -> {1e6 / statistics.median(client):,.0f} rows/s on one core"
    )
    print(f"  CPU per row, the server (us)    {_spread(server_us)}")
    return {
        "rows": rows,
        "rows_per_s": report_json.spread(wall_rates),
        "cpu_us_per_row": report_json.spread(client),
        "rows_per_cpu_s": 1e6 / statistics.median(client),
        "server_cpu_us_per_row": report_json.spread(server_us),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--chunk-size", type=int, default=200_000)
    ap.add_argument("--judge-rows", type=int, default=5000)
    ap.add_argument("--judge-rounds", type=int, default=3)
    ap.add_argument("--skip-custom", action="store_true")
    ap.add_argument("--skip-judge", action="store_true")
    report_json.add_option(ap)
    args = ap.parse_args()
    load0 = os.getloadavg()
    print(f"{os.cpu_count()} cores; load average {load0}", flush=True)
    results = {}
    if not args.skip_custom:
        results["custom"] = custom_function_rounds(args.rows, args.rounds, args.chunk_size)
    if not args.skip_judge:
        results["judge"] = judge_rounds(args.judge_rows, args.judge_rounds)
    report_json.write(args.json, "evaluate_report.py", results, load0)


if __name__ == "__main__":
    main()
