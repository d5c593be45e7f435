"""Does reading dicts from their tables (cext/pydict.h) still pay?  One build, interleaved:
``CallTable.intern`` of rows of dicts with the direct reading off (A, every entry through
``PyDict_Next``) and on (B).

    python benchmarks/ab_pydict.py                       # the installed core
    python benchmarks/ab_pydict.py build/_core.cpython-311-x86_64-linux-gnu.so --rounds 40

Each round interns one 32,768-row chunk of tau-bench-shaped rows of dicts (references,
then predictions, into a new table, as the trajectory family does; benchmarks/
trajectory_workload.py) each way, in a random order, timed by the thread's CPU time; the
ids are checked equal.  ``--repeat-rows``: the predictions interned a second time into the
same table, where every call is a memo hit (the fingerprint walk alone).  The direct
reading exists only where the interpreter's dict layout is known (CPython 3.11; see
cext/README.md); elsewhere both sides read through ``PyDict_Next`` and the script says so.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import trajectory_workload  # noqa: E402
from ab import interleave, load_core, report  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("core", nargs="?", help="a build's _core shared library (default: respeval._core)")
    parser.add_argument("--rows", type=int, default=1 << 15)
    parser.add_argument("--rounds", type=int, default=24)
    parser.add_argument("--repeat-rows", action="store_true", help="time a second intern of the predictions")
    args = parser.parse_args()
    if args.core:
        core = load_core(args.core, "x")
    else:
        from respeval import _core as core
    if not core._dict_direct_reading(True):
        print(f"the direct reading is not available on Python {sys.version.split()[0]}: both sides use PyDict_Next")
    preds, refs = trajectory_workload.rows(0, args.rows, form="dicts")

    def intern(direct: bool):
        core._dict_direct_reading(direct)
        table = core.CallTable()
        if args.repeat_rows:
            table.intern(refs)
            table.intern(preds)
            t0 = time.thread_time()
            got = table.intern(preds)
        else:
            t0 = time.thread_time()
            got = (table.intern(refs), table.intern(preds))
        return time.thread_time() - t0, got

    if intern(False)[1] != intern(True)[1]:
        raise SystemExit("the two readings disagree")
    per_row, ratios = interleave(lambda k: intern(k == "B")[0], args.rounds, args.rows)
    core._dict_direct_reading(True)
    what = "dicts, memo hits only" if args.repeat_rows else "dicts"
    report(per_row, {"A": "PyDict_Next", "B": "direct (pydict.h)"}, ratios, what)


if __name__ == "__main__":
    main()
