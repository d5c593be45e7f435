"""The trajectory numbers in benchmarks/README.md: 1M tau-bench-shaped rows, one thread.

    python benchmarks/trajectory_report.py                  # 1,048,576 rows, all forms
    python benchmarks/trajectory_report.py --rows 131072    # quicker, indicative
    python benchmarks/trajectory_report.py --forms json     # one input form
    python benchmarks/trajectory_report.py --unique-ids     # no call text repeats across rows

Rounds of 32,768 rows stream through the trajectory family (``prepare`` + ``score``: reading
the calls, interning them, the kernels and the per-row columns; the Vertex six and ADK's
per-invocation score in one pass, one thread), as ``respeval score`` feeds it chunk by
chunk, once per input form (``trajectory_workload.FORMS``: JSON text, an Arrow string
column, Arrow structs, lists of dicts; each built before its timer).  Each round also times
the pure-Python twin on the round's first 2,048 rows in the same form, and ADK 2.13's
``TrajectoryEvaluator`` (EXACT; its Invocation objects built beforehand, outside the
timing) on them; all run interleaved in one process, so they share the machine's load, and
every value is checked equal.  Ratios are per round (median and range).  Times are CPU
time of this process (``time.process_time``), which a loaded machine disturbs less than
wall time; the load average is printed with the results.  Peak RSS is read after the first
round and at the end: with chunked input it stays flat in the row count.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report_json  # noqa: E402
import trajectory_workload  # noqa: E402
from bench_trajectory import METRICS, adk_inputs, adk_scores, family_scores  # noqa: E402


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn, *args):
    t0 = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1 << 20)
    parser.add_argument("--chunk", type=int, default=1 << 15)
    parser.add_argument("--sample", type=int, default=2048, help="rows per round for the twin and ADK")
    parser.add_argument("--forms", default=",".join(trajectory_workload.FORMS))
    parser.add_argument(
        "--unique-ids",
        action="store_true",
        help="ids unique per row, so no call text repeats across rows (the call memo's worst case)",
    )
    report_json.add_option(parser)
    args = parser.parse_args()
    forms = [f.strip() for f in args.forms.split(",") if f.strip()]
    try:
        import google.adk

        adk_version = google.adk.__version__
    except ImportError:
        adk_version = None
    tmpl = trajectory_workload.templates()
    native = {f: [] for f in forms}
    twin = {f: [] for f in forms}
    ratio = {f: [] for f in forms}
    native_seconds = dict.fromkeys(forms, 0.0)
    adk_rate, vs_adk, loads = [], [], [os.getloadavg()[0]]
    load0 = os.getloadavg()
    rss_first = None
    total_rows = total_calls = 0
    for start in range(0, args.rows, args.chunk):
        texts_p, texts_r = trajectory_workload.texts(start, min(args.chunk, args.rows - start), tmpl, args.unique_ids)
        n = len(texts_p)
        total_rows += n
        adk_want = {}
        for f in forms:
            preds, refs = (trajectory_workload.convert(x, f) for x in (texts_p, texts_r))
            got, dt = timed(family_scores, preds, refs, "native")
            native_seconds[f] += dt
            native[f].append(n / dt)
            sp, sr = (trajectory_workload.convert(x[: args.sample], f) for x in (texts_p, texts_r))
            want, dt = timed(family_scores, sp, sr, "python")
            twin[f].append(len(texts_p[: args.sample]) / dt)
            for k in METRICS:
                assert want[k].tolist() == got[k][: args.sample].tolist(), (f, k)
            ratio[f].append(native[f][-1] / twin[f][-1])
            adk_want[f] = got["tool_trajectory_avg_score"][: args.sample].tolist()
            del preds, refs, sp, sr
        dp, dr = (trajectory_workload.convert(x[: args.sample], "dicts") for x in (texts_p, texts_r))
        if start == 0:
            total_calls_per_row = (sum(map(len, dp)) + sum(map(len, dr))) / len(dp)
        if adk_version:
            actual, expected = adk_inputs(dp, dr)
            scores, dt = timed(adk_scores, actual, expected)
            adk_rate.append(len(dp) / dt)
            for f in forms:
                assert scores == adk_want[f], f"ADK disagrees with the {f} form"
            vs_adk.append(native[forms[0]][-1] / adk_rate[-1])
        if rss_first is None:
            rss_first = rss_mb()
        loads.append(os.getloadavg()[0])
        parts = ", ".join(f"{f} {native[f][-1]:,.0f}/s ({ratio[f][-1]:.0f}x twin)" for f in forms)
        print(
            f"  {total_rows:>9,} rows  {parts}, load {loads[-1]:.1f}, peak RSS {rss_mb():,.0f} MB",
            file=sys.stderr,
            flush=True,
        )
        del texts_p, texts_r, got, want, dp, dr
    total_calls = total_calls_per_row * total_rows

    def spread(xs, fmt=",.0f"):
        return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}-{max(xs):{fmt}})"

    print(
        f"machine: {platform.machine()} {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores, one thread; load average {min(loads):.1f}-{max(loads):.1f} during the run"
    )
    print(
        f"rows: {total_rows:,} tau-bench-shaped ({total_calls / total_rows:.1f} calls per row, both sides), "
        f"rounds of {args.chunk:,}; twin and ADK on {args.sample:,} rows per round; CPU time"
        + ("; ids unique per row" if args.unique_ids else "")
    )
    print("| input form | native rows/s (median of rounds, range) | twin rows/s | native/twin |")
    print("|---|---|---|---|")
    for f in forms:
        overall = total_rows / native_seconds[f]
        print(
            f"| {f} | {spread(native[f])} (overall {overall:,.0f}) | {spread(twin[f])} | {spread(ratio[f], '.1f')}x |"
        )
    if adk_version:
        print(
            f"ADK {adk_version} TrajectoryEvaluator (objects prebuilt): {spread(adk_rate)} rows/s; "
            f"native ({forms[0]}) / ADK {spread(vs_adk, '.1f')}x"
        )
    print(f"peak RSS: {rss_first:,.0f} MB after the first {args.chunk:,} rows, {rss_mb():,.0f} MB after {total_rows:,}")
    results = {
        "rows": total_rows,
        "chunk": args.chunk,
        "sample": args.sample,
        "unique_ids": args.unique_ids,
        "calls_per_row": total_calls / total_rows,
        "load_average_1min": [min(loads), max(loads)],
        "forms": {
            f: {
                "native_rows_per_s": report_json.spread(native[f]),
                "native_rows_per_s_overall": total_rows / native_seconds[f],
                "twin_rows_per_s": report_json.spread(twin[f]),
                "native_over_twin": report_json.spread(ratio[f]),
            }
            for f in forms
        },
        "adk": None
        if not adk_version
        else {
            "version": adk_version,
            "rows_per_s": report_json.spread(adk_rate),
            "form": forms[0],
            "native_over_adk": report_json.spread(vs_adk),
        },
        "peak_rss_mb": [rss_first, rss_mb()],
    }
    report_json.write(args.json, "trajectory_report.py", results, load0)


if __name__ == "__main__":
    main()
