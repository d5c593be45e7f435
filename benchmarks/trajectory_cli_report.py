"""`respeval score` with the trajectory metrics, end to end, on tau-bench-shaped files in
every input format, against the in-memory library call on the same rows (benchmarks/README.md).

    python benchmarks/trajectory_cli_report.py                   # 1,048,576 rows
    python benchmarks/trajectory_cli_report.py --rows 131072     # quicker, indicative

The rows are ``trajectory_workload``'s (tau-bench airline trajectories, ids unique per
pass).  Each format is written once under --workdir: nested JSONL (trajectories as JSON
arrays, as tau-bench ships them), CSV (JSON text columns), Parquet with JSON text columns,
and nested Parquet (list<struct> columns).  Every run is a fresh interpreter, one thread,
the Vertex six and ADK's per-invocation score, per-row results to Parquet, bootstrap
intervals; its peak RSS is its own (VmHWM).  The library call scores the same rows held in
memory as JSON text (``TrajectoryFamily`` chunk by chunk, as the CLI does, with no file
reading, writing or intervals): the floor the CLI's reading, writing and bookkeeping add to.
The wall time includes the interpreter's start and imports (~0.5 s).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report_json  # noqa: E402
import trajectory_workload  # noqa: E402
from bench_trajectory import METRICS  # noqa: E402
from bulk_report import run_child  # noqa: E402

FORMATS = ("jsonl", "csv", "parquet-text", "parquet-nested")


def build(workdir: Path, rows: int, fmt: str) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    suffix = {"jsonl": "jsonl", "csv": "csv"}.get(fmt, "parquet")
    path = workdir / f"tau_{rows}_{fmt}.{suffix}"
    if path.exists():
        return path
    tmpl = trajectory_workload.templates()
    tmp = path.with_suffix(".partial")
    writer = None
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh) if fmt == "csv" else None
        if out is not None:
            out.writerow(["id", "predicted_trajectory", "reference_trajectory"])
        for start in range(0, rows, 65536):
            preds, refs = trajectory_workload.texts(start, min(65536, rows - start), tmpl)
            ids = range(start, start + len(preds))
            if fmt == "jsonl":
                fh.writelines(
                    f'{{"id": {i}, "predicted_trajectory": {p}, "reference_trajectory": {r}}}\n'
                    for i, p, r in zip(ids, preds, refs)
                )
            elif out is not None:
                out.writerows(zip(ids, preds, refs))
            else:
                if fmt == "parquet-nested":
                    preds = pa.array([json.loads(p) for p in preds])
                    refs = pa.array([json.loads(r) for r in refs])
                table = pa.table({"id": list(ids), "predicted_trajectory": preds, "reference_trajectory": refs})
                if writer is None:
                    writer = pq.ParquetWriter(str(tmp), table.schema)
                # nested columns: each chunk's struct type is the union of its own rows' keys
                writer.write_table(table.cast(writer.schema) if table.schema != writer.schema else table)
    if writer is not None:
        writer.close()
    tmp.rename(path)
    return path


def cli(path: Path, out: Path) -> dict:
    metrics = ",".join(METRICS)
    return run_child(f"""
        import json, time, sys
        t = time.perf_counter()
        from respeval.cli.app import main
        sys.stdout = open("/dev/null", "w")
        code = main(["score", "--pred", "{path}", "--pred-field", "predicted_trajectory",
                     "--ref-field", "reference_trajectory", "--id-field", "id", "--metrics", "{metrics}",
                     "--out", "{out}", "--threads", "1", "--quiet"])
        sys.stdout = sys.__stdout__
        assert code == 0, code
        print(json.dumps({{"seconds": time.perf_counter() - t}}))
    """)


def library(rows: int) -> dict:
    return run_child(f"""
        import json, sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
        import trajectory_workload
        from bench_trajectory import METRICS
        from respeval.metrics.trajectory import TrajectoryFamily
        tmpl = trajectory_workload.templates()
        chunks = [trajectory_workload.texts(s, min(65536, {rows} - s), tmpl) for s in range(0, {rows}, 65536)]
        warm = TrajectoryFamily(METRICS, threads=1)
        warm.score(warm.prepare(chunks[0][1][:100]), chunks[0][0][:100])  # first-call costs out of the timing
        t = time.perf_counter()
        for preds, refs in chunks:
            fam = TrajectoryFamily(METRICS, threads=1)
            fam.score(fam.prepare(refs), preds)
        print(json.dumps({{"seconds": time.perf_counter() - t}}))
    """)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1 << 20)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/respeval-trajectory-cli"))
    report_json.add_option(parser)
    args = parser.parse_args()
    load0 = os.getloadavg()
    args.workdir.mkdir(parents=True, exist_ok=True)
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    print(f"rows: {args.rows:,} tau-bench-shaped; one thread; wall time of a fresh interpreter each")
    print("| input | seconds | rows/s | peak RSS (MB) | vs library |")
    print("|---|---:|---:|---:|---:|")
    lib = library(args.rows)
    results: dict = {
        "rows": args.rows,
        "library": {
            "seconds": lib["seconds"],
            "rows_per_s": args.rows / lib["seconds"],
            "peak_rss_mb": lib["peak_rss_mb"],
        },
        "formats": {},
    }
    print(
        f"| library: `TrajectoryFamily` on JSON text in memory | {lib['seconds']:.2f} | "
        f"{args.rows / lib['seconds']:,.0f} | {lib['peak_rss_mb']:,.0f} | 1.00x |",
        flush=True,
    )
    for fmt in formats:
        t0 = time.perf_counter()
        path = build(args.workdir, args.rows, fmt)
        built = time.perf_counter() - t0
        r = cli(path, args.workdir / f"out_{fmt}.parquet")
        print(
            f"| `respeval score`, {fmt} ({path.stat().st_size / 2**20:,.0f} MB) | {r['seconds']:.2f} | "
            f"{args.rows / r['seconds']:,.0f} | {r['peak_rss_mb']:,.0f} | {r['seconds'] / lib['seconds']:.2f}x |",
            flush=True,
        )
        results["formats"][fmt] = {
            "file_mb": path.stat().st_size / 2**20,
            "seconds": r["seconds"],
            "rows_per_s": args.rows / r["seconds"],
            "peak_rss_mb": r["peak_rss_mb"],
            "over_library": r["seconds"] / lib["seconds"],
        }
        if built > 1:
            print(f"  (built {path.name} in {built:.0f} s)", file=sys.stderr)
    report_json.write(args.json, "trajectory_cli_report.py", results, load0)


if __name__ == "__main__":
    main()
