"""Two builds of the native core, interleaved in one process: ``CallTable.intern`` time.

    cp build/_core.*.so /tmp/before.so      # then change cext/, rebuild, and:
    python benchmarks/ab_intern.py /tmp/before.so build/_core.cpython-311-x86_64-linux-gnu.so
    python benchmarks/ab_intern.py A.so B.so --form json --rounds 16

Each round interns one 32,768-row chunk of tau-bench-shaped rows (references, then
predictions, into a new table, as the trajectory family does) with each build, in a
random order, timed by the thread's CPU time.  The ratio B/A is taken per round, so the
host's fast and slow phases, which move both builds alike within a round, cancel; its
median and quartiles are printed.  A change to the readers is judged by this, not by
comparing two runs of trajectory_report.py (see benchmarks/README.md, round six).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trajectory_workload  # noqa: E402


def load(path: str, tag: str):
    spec = importlib.util.spec_from_file_location(f"respeval_ab_{tag}._core", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="the first build's _core shared library")
    parser.add_argument("b", help="the second build's")
    parser.add_argument("--form", default="dicts", choices=trajectory_workload.FORMS)
    parser.add_argument("--rows", type=int, default=1 << 15)
    parser.add_argument("--rounds", type=int, default=16)
    args = parser.parse_args()
    builds = {"A": load(args.a, "a"), "B": load(args.b, "b")}
    preds, refs = trajectory_workload.rows(0, args.rows, form=args.form)
    rng = random.Random(1)
    per_row = {k: [] for k in builds}
    ratios = []
    for _ in range(args.rounds):
        order = list(builds)
        rng.shuffle(order)
        took = {}
        for k in order:
            table = builds[k].CallTable()
            t0 = time.thread_time()
            table.intern(refs)
            table.intern(preds)
            took[k] = time.thread_time() - t0
            del table
        for k, dt in took.items():
            per_row[k].append(dt / args.rows * 1e6)
        ratios.append(took["B"] / took["A"])
    for k, path in (("A", args.a), ("B", args.b)):
        print(f"{k} {path}: median {statistics.median(per_row[k]):.2f} us a row")
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    print(f"B/A time, per round: median {statistics.median(ratios):.3f} (quartiles {q1:.3f}-{q3:.3f}), {args.form}")


if __name__ == "__main__":
    main()
