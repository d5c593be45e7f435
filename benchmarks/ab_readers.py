"""The readers' kernels of two builds of the native core, interleaved in one process: the
JSONL line checker (``jsonl_columns``, what the JSONL reader calls per block), the CSV line
splitter (``csv_columns``) and nested Arrow values written as JSON text
(``arrow_json_texts``).

    python benchmarks/ab_readers.py A.so B.so                     # every workload
    python benchmarks/ab_readers.py A.so B.so --what jsonl-traj --rounds 24

(across revisions whose Python modules differ, load both through one package tree:
benchmarks/ab_build.py).  Workloads, 32,768 lines each:

``jsonl-traj``    tau-bench-shaped rows (benchmarks/trajectory_workload.py) as JSONL lines
                  ``{"id", "predicted_trajectory", "reference_trajectory"}``, the two
                  trajectories raw fields (handed on as JSON text), the id a key
``jsonl-text``    WMT17 en-de pairs as ``{"response", "reference"}`` lines (German: UTF-8
                  checked in every string), both text fields
``csv-text``      the same pairs as CSV lines, the csv module's quoting
``arrow-json``    the reference trajectories as an Arrow list<struct> column, each value
                  written as its JSON text

Each round runs the workload with each build in a random order, timed by the thread's CPU
time; both builds' outputs are checked equal first.  The ratio B/A is taken per round (the
host's phases move both alike) and its median and quartiles printed (ab.py).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import trajectory_workload  # noqa: E402
from ab import interleave, load_core, report  # noqa: E402

WHAT = ("jsonl-traj", "jsonl-text", "csv-text", "arrow-json")


def workload(what: str, rows: int):
    """(the call on a core, its name)."""
    if what == "jsonl-traj":
        preds, refs = trajectory_workload.texts(0, rows)
        lines = [
            f'{{"id": {i}, "predicted_trajectory": {p}, "reference_trajectory": {r}}}'.encode()
            for i, (p, r) in enumerate(zip(preds, refs))
        ]
        keys, kinds = ["predicted_trajectory", "reference_trajectory", "id"], b"rrk"
        return lambda core: core.jsonl_columns(lines, keys, kinds)
    import corpus

    if not corpus.data_available():
        raise SystemExit(corpus.missing_message())
    preds, refs = corpus.short_pairs(rows)
    if what == "jsonl-text":
        lines = [json.dumps({"response": p, "reference": r}, ensure_ascii=False).encode() for p, r in zip(preds, refs)]
        return lambda core: core.jsonl_columns(lines, ["response", "reference"], b"tt")
    if what == "csv-text":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for p, r in zip(preds, refs):
            writer.writerow([p, r])
        lines = [line.encode() + b"\n" for line in out.getvalue().splitlines()]
        return lambda core: core.csv_columns(lines, 2, [0, 1])
    if what == "arrow-json":
        _, column = trajectory_workload.rows(0, rows, form="arrow-struct")
        return lambda core: core.arrow_json_texts(column)
    raise SystemExit(f"unknown workload {what!r}; choose from {', '.join(WHAT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="the first build's _core shared library")
    parser.add_argument("b", help="the second build's")
    parser.add_argument("--what", choices=WHAT, action="append", help="a workload (default: all)")
    parser.add_argument("--rows", type=int, default=1 << 15)
    parser.add_argument("--rounds", type=int, default=16)
    args = parser.parse_args()
    builds = {"A": load_core(args.a, "a"), "B": load_core(args.b, "b")}
    for what in args.what or WHAT:
        run = workload(what, args.rows)
        if run(builds["A"]) != run(builds["B"]):
            raise SystemExit(f"the two builds disagree on {what}")

        def time_one(k: str, run=run) -> float:
            t0 = time.thread_time()
            run(builds[k])
            return time.thread_time() - t0

        per_row, ratios = interleave(time_one, args.rounds, args.rows)
        report(per_row, {"A": args.a, "B": args.b}, ratios, what, digits=3)


if __name__ == "__main__":
    main()
