"""Bulk scoring benchmarks: the CLI end to end on Parquet corpora, the in-memory
library call on the same rows, 1 vs 2 threads, peak memory, and Dask.

    python benchmarks/bulk_report.py                # 100k, 1M and 2M rows, and Dask (~8 minutes)
    python benchmarks/bulk_report.py --sizes 100000 # quicker
    python benchmarks/bulk_report.py --sizes 5000000 --no-dask --cli-only  # memory at 5M rows
    python benchmarks/bulk_report.py --interleaved --formats jsonl csv parquet --repeats 3 --sizes 100000 1000000
        # issue 34: CLI vs library ratios, interleaved rounds, per format and thread count;
        # the peak RSS of the smaller sizes against the largest

``--interleaved`` runs, per round, every (format, threads) CLI run next to the library call
on the same rows and thread count (``respeval.rouge`` + ``.bootstrap(1000)`` on lists
already in memory), one after the other, so the pairs share whatever load the machine has;
it prints each ratio's median and range over the rounds (wall time, and CPU time, which a
shared machine disturbs less), ``--threads 2`` against ``--threads 1``, the peak RSS, the
host's CPU and the load average.

Every measurement runs in a fresh subprocess, so its peak RSS (VmHWM of the child's
own address space) is its own.  Corpora are built from ../shared/data (the 100,000 real
pairs of benchmarks/corpus.py, repeated with distinct ids) under --workdir.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import report_json  # noqa: E402


def build_format(workdir: Path, rows: int, fmt: str) -> Path:
    """The ``rows``-row corpus of :func:`build` as one file of ``fmt`` (jsonl, csv, parquet)."""
    (parquet,) = build(workdir, rows)
    if fmt == "parquet":
        return parquet
    path = parquet.parent / f"corpus.{fmt}"
    if path.exists():
        return path
    import csv

    import pyarrow.parquet as pq

    table = pq.read_table(parquet)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        for batch in table.to_batches(100_000):
            cols = [batch.column(n).to_pylist() for n in ("id", "response", "reference")]
            if fmt == "jsonl":
                fh.writelines(
                    json.dumps({"id": i, "response": p, "reference": r}, ensure_ascii=False) + "\n"
                    for i, p, r in zip(*cols)
                )
            else:
                w = csv.writer(fh, lineterminator="\n")
                if fh.tell() == 0:
                    w.writerow(["id", "response", "reference"])
                w.writerows(zip(*cols))
    tmp.rename(path)
    return path


def build(workdir: Path, rows: int, files: int = 1) -> list[Path]:
    """Parquet corpus of ``rows`` rows (id, response, reference), split into ``files`` files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from corpus import short_pairs

    name = f"corpus_{rows}_{files}"
    out_dir = workdir / name
    paths = [out_dir / f"part-{i:04d}.parquet" for i in range(files)]
    if all(p.exists() for p in paths):
        return paths
    out_dir.mkdir(parents=True, exist_ok=True)
    preds, refs = short_pairs()
    per_file = rows // files
    for i, path in enumerate(paths):
        lo, hi = i * per_file, (rows if i == files - 1 else (i + 1) * per_file)
        idx = [j % len(preds) for j in range(lo, hi)]
        pq.write_table(
            pa.table(
                {
                    "id": [f"r{j}" for j in range(lo, hi)],
                    "response": [preds[j] for j in idx],
                    "reference": [refs[j] for j in idx],
                }
            ),
            path,
            row_group_size=50_000,
        )
    return paths


# VmHWM, not ru_maxrss: Linux folds the parent's peak into the child's ru_maxrss at exec
# (subprocess uses vfork), so a parent that just built a 2M-row corpus in memory would
# show up as the child's peak.  VmHWM belongs to the child's own address space.
_RSS = """
import json as _json, resource as _resource, sys as _sys
try:
    with open("/proc/self/status") as _fh:
        _kb = next(int(_l.split()[1]) for _l in _fh if _l.startswith("VmHWM:"))
except (OSError, StopIteration):
    _kb = _resource.getrusage(_resource.RUSAGE_SELF).ru_maxrss
print(_json.dumps({"rss_kb": _kb}), file=_sys.__stdout__)
"""


def run_child(code: str) -> dict:
    """Run ``code`` in a fresh interpreter (it prints one JSON line), then the child's own
    peak RSS (VmHWM, printed by the child itself)."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code) + _RSS], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    lines = proc.stdout.strip().splitlines()
    result = json.loads(lines[-2])
    result["peak_rss_mb"] = round(json.loads(lines[-1])["rss_kb"] / 1024, 1)
    return result


def cli(path: Path, threads: int, out: Path) -> dict:
    """The CLI in a fresh interpreter; "seconds" includes importing the CLI (what a user
    waits for), "cpu" is the process's CPU time over the same span (every thread)."""
    return run_child(f"""
        import time, os
        t, c = time.perf_counter(), time.process_time()
        import json, sys
        from respeval.cli import main
        sys.stdout = open("/dev/null", "w")
        code = main(["score", "--pred", "{path}", "--out", "{out}", "--threads", "{threads}", "--quiet",
              "--bootstrap", "1000", "--id-field", "id"])
        sys.stdout = sys.__stdout__
        assert code == 0, f"respeval score exited with {{code}}"
        print(json.dumps({{"seconds": time.perf_counter() - t, "cpu": time.process_time() - c}}))
    """)


def library(path: Path, threads: int) -> dict:
    """``respeval.rouge`` + ``.bootstrap`` on the same thread count as the CLI; "seconds"
    starts after the file is read into Python lists, "with_reading" before (the CLI has to
    read its file too)."""
    return run_child(f"""
        import json, time
        import pyarrow.parquet as pq
        import respeval
        respeval.rouge(["a b"] * 100, ["a c"] * 100)
        read = time.perf_counter()
        t = pq.read_table("{path}")
        preds, refs = t.column("response").to_pylist(), t.column("reference").to_pylist()
        start, cpu = time.perf_counter(), time.process_time()
        res = respeval.rouge(preds, refs, ("rouge1", "rouge2", "rougeL"), threads={threads})
        res.bootstrap(n=1000, threads={threads})
        end = time.perf_counter()
        cpu = time.process_time() - cpu
        print(json.dumps({{"seconds": end - start, "with_reading": end - read, "cpu": cpu}}))
    """)


def table_call(path: Path, threads: int) -> dict:
    """``score_table`` on the Arrow table already in memory: the same job and summary as the CLI."""
    return run_child(f"""
        import json, time
        import pyarrow.parquet as pq
        from respeval.bulk import score_table
        t = pq.read_table("{path}")
        score_table(t.slice(0, 100), id_field="id", bootstrap=10)
        start = time.perf_counter()
        score_table(t, id_field="id", threads={threads}, bootstrap=1000)
        print(json.dumps({{"seconds": time.perf_counter() - start}}))
    """)


def dask_run(paths: list[Path], out: Path) -> dict:
    files = json.dumps([str(p) for p in paths])
    return run_child(f"""
        import json, time
        from distributed import Client
        from respeval.distributed.dask import local_cluster, score_parquet
        t0 = time.perf_counter()
        cluster = local_cluster(n_workers=2)
        client = Client(cluster)
        t1 = time.perf_counter()
        s = score_parquet({files}, "{out}", client=client, bootstrap=1000, id_field="id")
        t2 = time.perf_counter()
        client.close(); cluster.close()
        print(json.dumps({{"startup": t1 - t0, "seconds": t2 - t1, "rows": s.rows_scored}}))
    """)


def _host() -> str:
    model = report_json.cpu_model() or "unknown CPU"
    try:
        from respeval import _core

        simd = _core.simd_path()
    except Exception:  # the twin: no SIMD path
        simd = "-"
    return f"{os.cpu_count()} cores, {model} (SIMD path {simd}), python {sys.version.split()[0]}"


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def _spread(values: list[float]) -> str:
    import statistics

    return f"{statistics.median(values):.2f}x [{min(values):.2f}, {max(values):.2f}]"


def interleaved(args: argparse.Namespace) -> None:
    """Per round: for each format and thread count, the CLI then the library call (same
    rows, same thread count), so each ratio's two runs are neighbours in time."""
    rows = max(args.sizes)
    paths = {fmt: build_format(args.workdir, rows, fmt) for fmt in args.formats}
    load0 = os.getloadavg()
    print(f"machine: {_host()}; load average (1/5/15 min) before: {_load()}")
    print(f"rows: {rows:,}; rounds: {args.repeats}; library: respeval.rouge + .bootstrap(1000) on lists in memory")
    times: dict[tuple[str, int], list[float]] = {}
    cpus: dict[tuple[str, int], list[float]] = {}
    rss: dict[tuple[str, int], list[float]] = {}
    lib: dict[int, list[float]] = {}
    lib_cpu: dict[int, list[float]] = {}
    ratios: dict[tuple[str, int], list[float]] = {}
    cpu_ratios: dict[tuple[str, int], list[float]] = {}
    for r in range(args.repeats):
        for threads in args.threads:
            for fmt in args.formats:
                c = cli(paths[fmt], threads, args.workdir / f"out_{fmt}_{rows}.parquet")
                ref = library(paths["parquet"] if "parquet" in paths else build(args.workdir, rows)[0], threads)
                key = (fmt, threads)
                times.setdefault(key, []).append(c["seconds"])
                cpus.setdefault(key, []).append(c["cpu"])
                rss.setdefault(key, []).append(c["peak_rss_mb"])
                lib.setdefault(threads, []).append(ref["seconds"])
                lib_cpu.setdefault(threads, []).append(ref["cpu"])
                ratios.setdefault(key, []).append(c["seconds"] / ref["seconds"])
                cpu_ratios.setdefault(key, []).append(c["cpu"] / ref["cpu"])
                print(
                    f"round {r + 1}: {fmt} --threads {threads}: CLI {c['seconds']:.2f} s ({c['cpu']:.2f} CPU-s, "
                    f"{c['peak_rss_mb']} MB), library {ref['seconds']:.2f} s ({ref['cpu']:.2f} CPU-s): "
                    f"{c['seconds'] / ref['seconds']:.2f}x  (load {_load()})",
                    flush=True,
                )
    import statistics

    print()
    print(
        "| format | threads | CLI s | CLI CPU-s | library s | library CPU-s "
        "| CLI / library, wall: median [min, max] | the same, CPU time | CLI peak RSS MB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    results: dict = {"rows": rows, "rounds": args.repeats, "runs": [], "threads_1_over_2": {}, "peak_rss_by_size": []}
    for (fmt, threads), values in times.items():
        results["runs"].append(
            {
                "format": fmt,
                "threads": threads,
                "cli_s": statistics.median(values),
                "cli_cpu_s": statistics.median(cpus[fmt, threads]),
                "library_s": statistics.median(lib[threads]),
                "library_cpu_s": statistics.median(lib_cpu[threads]),
                "cli_over_library_wall": report_json.spread(ratios[fmt, threads]),
                "cli_over_library_cpu": report_json.spread(cpu_ratios[fmt, threads]),
                "cli_peak_rss_mb": max(rss[fmt, threads]),
            }
        )
        print(
            f"| {fmt} | {threads} | {statistics.median(values):.2f} | {statistics.median(cpus[fmt, threads]):.2f} | "
            f"{statistics.median(lib[threads]):.2f} | {statistics.median(lib_cpu[threads]):.2f} | "
            f"{_spread(ratios[fmt, threads])} | {_spread(cpu_ratios[fmt, threads])} | {max(rss[fmt, threads])} |"
        )
    print("(medians over the rounds; the library's over every round at that thread count)")
    if 1 in args.threads and 2 in args.threads:
        print()
        print("| format | `--threads 1` / `--threads 2`, same round: median [min, max] |")
        print("|---|---:|")
        for fmt in args.formats:
            print(f"| {fmt} | {_spread([a / b for a, b in zip(times[fmt, 1], times[fmt, 2])])} |")
            results["threads_1_over_2"][fmt] = report_json.ratio(times[fmt, 1], times[fmt, 2])
    smaller = sorted(set(args.sizes) - {rows})
    if smaller:
        print()
        print(
            f"| format | threads | peak RSS MB at {', '.join(f'{n:,}' for n in smaller)} rows | at {rows:,} | ratio |"
        )
        print("|---|---:|---:|---:|---:|")
        for fmt in args.formats:
            for threads in args.threads:
                peaks = []
                for n in smaller:
                    path = build_format(args.workdir, n, fmt)
                    peaks.append(cli(path, threads, args.workdir / f"out_{fmt}_{n}.parquet")["peak_rss_mb"])
                big = max(rss[fmt, threads])
                results["peak_rss_by_size"].append(
                    {"format": fmt, "threads": threads, "sizes": smaller, "peak_rss_mb": peaks, "at_rows_mb": big}
                )
                print(
                    f"| {fmt} | {threads} | {' / '.join(map(str, peaks))} | {big} | "
                    f"{' / '.join(f'{big / p:.2f}x' for p in peaks)} |"
                )
    print(f"load average (1/5/15 min) after: {_load()}")
    report_json.write(args.json, "bulk_report.py", {"mode": "interleaved", **results}, load0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 2_000_000])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/respeval-bulk-bench"))
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument(
        "--cli-only",
        action="store_true",
        help="skip the in-memory library calls (they hold the whole corpus: ~1.4 GB per million rows)",
    )
    ap.add_argument("--interleaved", action="store_true", help="CLI vs library ratios, interleaved (issue 34)")
    ap.add_argument("--formats", nargs="+", default=["parquet"], choices=["jsonl", "csv", "parquet"])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=3)
    report_json.add_option(ap)
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.interleaved:
        if args.sizes == ap.get_default("sizes"):
            args.sizes = [1_000_000]
        interleaved(args)
        return
    load0 = os.getloadavg()
    measured: list[dict] = []

    def record(rows: int, run: str, threads: int, seconds: float, peak_rss_mb: float) -> None:
        measured.append(
            {
                "rows": rows,
                "run": run,
                "threads": threads,
                "seconds": seconds,
                "rows_per_s": rows / seconds,
                "peak_rss_mb": peak_rss_mb,
            }
        )

    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")
    print("| rows | run | threads | seconds | rows/s | peak RSS (MB) |")
    print("|---:|---|---:|---:|---:|---:|")
    for rows in args.sizes:
        (path,) = build(args.workdir, rows)
        for threads in (1, 2):
            r = cli(path, threads, args.workdir / f"out_{rows}.parquet")
            record(rows, "cli", threads, r["seconds"], r["peak_rss_mb"])
            print(
                f"| {rows:,} | CLI `respeval score` (Parquet in, Parquet out, bootstrap) | {threads} | "
                f"{r['seconds']:.2f} | {rows / r['seconds']:,.0f} | {r['peak_rss_mb']} |",
                flush=True,
            )
            if args.cli_only:
                continue
            lib = library(path, threads)
            record(rows, "library", threads, lib["seconds"], lib["peak_rss_mb"])
            record(rows, "library, reading included", threads, lib["with_reading"], lib["peak_rss_mb"])
            print(
                f"| {rows:,} | library `respeval.rouge` in memory (+ bootstrap) | {threads} | "
                f"{lib['seconds']:.2f} | {rows / lib['seconds']:,.0f} | {lib['peak_rss_mb']} |",
                flush=True,
            )
            print(
                f"| {rows:,} | the same, reading the Parquet file into lists included | {threads} | "
                f"{lib['with_reading']:.2f} | {rows / lib['with_reading']:,.0f} | {lib['peak_rss_mb']} |",
                flush=True,
            )
            tab = table_call(path, threads)
            record(rows, "score_table", threads, tab["seconds"], tab["peak_rss_mb"])
            print(
                f"| {rows:,} | library `score_table` on the Arrow table in memory | {threads} | "
                f"{tab['seconds']:.2f} | {rows / tab['seconds']:,.0f} | {tab['peak_rss_mb']} |",
                flush=True,
            )
    if not args.no_dask:
        rows = max(args.sizes)
        paths = build(args.workdir, rows, files=20)
        r = dask_run(paths, args.workdir / "out_dask.parquet")
        record(rows, "dask, 2 workers", 2, r["seconds"], r["peak_rss_mb"])
        print(
            f"| {rows:,} | Dask, 2 workers x 1 thread, 20 files (cluster start {r['startup']:.1f}s not included) | 2 | "
            f"{r['seconds']:.2f} | {rows / r['seconds']:,.0f} | driver {r['peak_rss_mb']} |",
            flush=True,
        )
    report_json.write(args.json, "bulk_report.py", {"mode": "sizes", "runs": measured}, load0)


if __name__ == "__main__":
    main()
