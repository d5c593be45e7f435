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
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trajectory_workload  # noqa: E402
from ab import interleave, load_core, report  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="the first build's _core shared library")
    parser.add_argument("b", help="the second build's")
    parser.add_argument("--form", default="dicts", choices=trajectory_workload.FORMS)
    parser.add_argument("--rows", type=int, default=1 << 15)
    parser.add_argument("--rounds", type=int, default=16)
    args = parser.parse_args()
    builds = {"A": load_core(args.a, "a"), "B": load_core(args.b, "b")}
    preds, refs = trajectory_workload.rows(0, args.rows, form=args.form)

    def time_one(k: str) -> float:
        table = builds[k].CallTable()
        t0 = time.thread_time()
        table.intern(refs)
        table.intern(preds)
        took = time.thread_time() - t0
        del table
        return took

    per_row, ratios = interleave(time_one, args.rounds, args.rows)
    report(per_row, {"A": args.a, "B": args.b}, ratios, args.form)


if __name__ == "__main__":
    main()
