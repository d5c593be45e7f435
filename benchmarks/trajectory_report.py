"""The trajectory numbers in benchmarks/README.md: 1M tau-bench-shaped rows, one thread.

    python benchmarks/trajectory_report.py            # 1,048,576 rows, ~5 minutes
    python benchmarks/trajectory_report.py --rows 131072   # quicker, indicative

Rounds of 32,768 rows stream through the trajectory family (prepare + score: interning the
Python call dicts and the native kernels; the Vertex six and ADK's per-invocation score in
one pass), as ``respeval score`` feeds it chunk by chunk.  Each round also times, on the
round's first 2,048 rows, the pure-Python twin (same family, same outputs) and ADK 2.13's
``TrajectoryEvaluator`` (EXACT; its Invocation objects built beforehand, outside the
timing), interleaved so all three share the machine's load; every value is checked equal.
Ratios are per round (median and range).  Peak RSS is read after the first round and at the
end: with chunked input it stays flat in the row count.
"""

from __future__ import annotations

import argparse
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trajectory_workload  # noqa: E402
from bench_trajectory import METRICS, adk_inputs, adk_scores, family_scores  # noqa: E402


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1 << 20)
    parser.add_argument("--chunk", type=int, default=1 << 15)
    parser.add_argument("--sample", type=int, default=2048, help="rows per round for the twin and ADK")
    args = parser.parse_args()
    try:
        import google.adk

        adk_version = google.adk.__version__
    except ImportError:
        adk_version = None
    tmpl = trajectory_workload.templates()
    native_rate, twin_rate, adk_rate, vs_twin, vs_adk = [], [], [], [], []
    rss_first = None
    total_rows = total_calls = 0
    native_seconds = 0.0
    for start in range(0, args.rows, args.chunk):
        preds, refs = trajectory_workload.rows(start, min(args.chunk, args.rows - start), tmpl)
        n = len(preds)
        total_rows += n
        total_calls += sum(map(len, preds)) + sum(map(len, refs))
        t0 = time.perf_counter()
        native = family_scores(preds, refs, "native")
        dt = time.perf_counter() - t0
        native_seconds += dt
        native_rate.append(n / dt)
        sp, sr = preds[: args.sample], refs[: args.sample]
        t0 = time.perf_counter()
        twin = family_scores(sp, sr, "python")
        twin_rate.append(len(sp) / (time.perf_counter() - t0))
        for k in METRICS:
            assert twin[k].tolist() == native[k][: len(sp)].tolist(), k
        vs_twin.append(native_rate[-1] / twin_rate[-1])
        if adk_version:
            actual, expected = adk_inputs(sp, sr)
            t0 = time.perf_counter()
            adk = adk_scores(actual, expected)
            adk_rate.append(len(sp) / (time.perf_counter() - t0))
            assert adk == native["tool_trajectory_avg_score"][: len(sp)].tolist()
            vs_adk.append(native_rate[-1] / adk_rate[-1])
        if rss_first is None:
            rss_first = rss_mb()
        adk_note = f", native/ADK {vs_adk[-1]:.1f}x" if vs_adk else ""
        print(
            f"  {total_rows:>9,} rows  native {native_rate[-1]:>9,.0f} rows/s, native/twin {vs_twin[-1]:.1f}x{adk_note}, "
            f"peak RSS {rss_mb():,.0f} MB",
            file=sys.stderr,
            flush=True,
        )
        del preds, refs, native, sp, sr  # the next chunk replaces this one: memory stays flat

    def spread(xs):
        return f"{statistics.median(xs):,.0f} ({min(xs):,.0f}-{max(xs):,.0f})"

    print(f"machine: {platform.machine()} {platform.python_implementation()} {platform.python_version()}, one thread")
    print(f"rows: {total_rows:,} tau-bench-shaped ({total_calls / total_rows:.1f} calls per row, both sides)")
    print(f"native: {total_rows / native_seconds:,.0f} rows/s overall; per round {spread(native_rate)}")
    print(f"twin:   per round {spread(twin_rate)} rows/s; native/twin {spread(vs_twin)}x")
    if adk_version:
        print(
            f"ADK {adk_version} TrajectoryEvaluator: per round {spread(adk_rate)} rows/s; native/ADK {spread(vs_adk)}x"
        )
    print(f"peak RSS: {rss_first:,.0f} MB after the first {args.chunk:,} rows, {rss_mb():,.0f} MB after {total_rows:,}")


if __name__ == "__main__":
    main()
