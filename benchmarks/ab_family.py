"""The trajectory family's per-row work after interning, A against B, interleaved in one process.

    cp build/_core.*.so /tmp/before.so      # then change cext/, rebuild, and:
    python benchmarks/ab_family.py kernel /tmp/before.so build/_core.cpython-311-x86_64-linux-gnu.so
    python benchmarks/ab_family.py score                 # TrajectoryFamily._score: HEAD~1 against the tree
    python benchmarks/ab_family.py score --rev main      # ... a named revision against the tree
    python benchmarks/ab_family.py score --canned        # ... the numpy work alone

``kernel``: two builds of the native core.  One 32,768-row chunk of tau-bench-shaped rows
(benchmarks/trajectory_workload.py) is interned once, as the trajectory family interns it
(references, then predictions, into one table); each round then runs
``trajectory_pair_stats`` on it (with the matched flags, one thread, as
``TrajectoryFamily._score`` calls it) with each build, in a random order, ``--repeat``
times per build, timed by the thread's CPU time.  Both builds' outputs are checked equal.

``score``: ``TrajectoryFamily._score`` of the module at ``--rev`` (read with ``git show``)
against the working tree's, with the family of ``benchmarks/bench_trajectory.py`` (the
Vertex five and ADK's score) and the built core.  Each round, each side interns the chunk
afresh (untimed: a new table, references then predictions, as the family does per chunk)
and then its ``_score`` is timed, kernel included, ``--repeat`` times.  ``--canned``
instead reuses one interned chunk and replaces the kernel by a copy of its output, to time
only the numpy work after it.  The page faults of the timed calls are printed: the per-row
arrays are MBs, and an allocator that hands them out as fresh pages makes them cost more
than the work (an early version of this script kept two results alive, and the old
``_score`` then took ~1,500 faults and 2.5x the time a call).  Both outputs are checked
identical (dtypes, values, NaN placement, column order).

The ratio B/A (new/old) is taken per round, so the host's fast and slow phases, which move
both sides alike within a round, cancel; its median and quartiles are printed.
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import trajectory_workload  # noqa: E402
from ab import interleave, load_core, report  # noqa: E402
from bench_trajectory import METRICS  # noqa: E402


def interned(core, rows: int):
    """(pred, ref) as (calls, names, offsets) int arrays, interned as the family interns them."""
    preds, refs = trajectory_workload.rows(0, rows, form="dicts")
    table = core.CallTable()
    sides = []
    for side in (refs, preds):
        calls, names, offsets, _ = table.intern(side)
        sides.append((np.frombuffer(calls, np.int32), np.frombuffer(names, np.int32), np.frombuffer(offsets, np.int64)))
    ref, pred = sides
    return pred, ref


def kernel(args) -> None:
    builds = {"A": load_core(args.a, "a"), "B": load_core(args.b, "b")}
    pred, ref = interned(builds["A"], args.rows)
    rows = len(pred[2]) - 1
    nstats = len(builds["A"].TRAJECTORY_STATS)
    outs = {
        k: (np.zeros((rows, nstats), np.int64), np.zeros(len(pred[0]), np.uint8), np.zeros(len(ref[0]), np.uint8))
        for k in builds
    }

    def run(k):
        out, pm, rm = outs[k]
        builds[k].trajectory_pair_stats(*pred, *ref, out, pm, rm, 1)

    for k in builds:
        run(k)
    for a, b in zip(outs["A"], outs["B"]):
        if not np.array_equal(a, b):
            raise SystemExit("the two builds disagree on trajectory_pair_stats")

    def time_one(k: str) -> float:
        t0 = time.thread_time()
        for _ in range(args.repeat):
            run(k)
        return (time.thread_time() - t0) / args.repeat

    per_row, ratios = interleave(time_one, args.rounds, rows)
    report(per_row, {"A": args.a, "B": args.b}, ratios, f"trajectory_pair_stats, {rows} rows", digits=4)


def module_at(rev: str):
    """respeval.metrics.trajectory as it was at ``rev``, loaded from a file beside the tree's."""
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=HERE, capture_output=True, text=True, check=True)
    text = subprocess.run(
        ["git", "show", f"{rev}:src/respeval/metrics/trajectory.py"],
        cwd=root.stdout.strip(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "trajectory_old.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("respeval_ab_old_trajectory", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class _Canned:
    """The kernels, with trajectory_pair_stats replaced by a copy of its output."""

    def __init__(self, kernels, stats, pm, rm):
        self._kernels, self._stats, self._pm, self._rm = kernels, stats, pm, rm
        self.TRAJECTORY_STATS = kernels.TRAJECTORY_STATS

    def trajectory_pair_stats(self, pc, pn, po, rc, rn, ro, out, pm, rm, threads=None):
        np.copyto(out, self._stats)
        np.copyto(pm, self._pm)
        np.copyto(rm, self._rm)

    def __getattr__(self, name):
        return getattr(self._kernels, name)


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def score(args) -> None:
    import respeval.metrics.trajectory as new

    old = module_at(args.rev)
    preds, refs = trajectory_workload.rows(0, args.rows, form="dicts")
    mods = {"A": old, "B": new}
    fams = {k: m.TrajectoryFamily(METRICS, implementation="native", threads=1) for k, m in mods.items()}

    def interned(k):
        """A chunk as the family holds it before _score: a new table, references then predictions."""
        prepared = fams[k].prepare(refs)
        pred = mods[k]._intern(prepared.table, mods[k]._column(preds, "predicted"), fams[k], "predicted_trajectory")
        return prepared.kernels, prepared.table, pred, prepared.ref

    canned = None
    if args.canned:
        kernels, table, pred, ref = interned("B")
        stats = np.zeros((pred.rows, len(kernels.TRAJECTORY_STATS)), np.int64)
        pm = np.zeros(len(pred.calls), np.uint8)
        rm = np.zeros(len(ref.calls), np.uint8)
        kernels.trajectory_pair_stats(
            pred.calls, pred.names, pred.offsets, ref.calls, ref.names, ref.offsets, stats, pm, rm, 1
        )
        canned = (_Canned(kernels, stats, pm, rm), table, pred, ref)

    def run(k, chunk):
        return fams[k]._score(*chunk).chunk

    chunk = canned or interned("B")
    a, b = run("A", chunk), run("B", chunk)
    if list(a.columns) != list(b.columns) or not all(same(a.columns[c], b.columns[c]) for c in a.columns):
        raise SystemExit("old and new _score disagree on the columns")
    if not same(a.stats, b.stats) or a.errors != b.errors:
        raise SystemExit("old and new _score disagree on the stats or the errors")
    del a, b, chunk
    faults: dict[str, list[float]] = {k: [] for k in fams}
    rows = args.rows

    def time_one(k: str) -> float:
        chunk = canned or interned(k)
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.thread_time()
        for _ in range(args.repeat):
            run(k, chunk)
        took = (time.thread_time() - t0) / args.repeat
        faults[k].append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / args.repeat)
        return took

    per_row, ratios = interleave(time_one, args.rounds, rows)
    for k in fams:
        print(f"{k}: median {statistics.median(faults[k]):.0f} page faults a call")
    what = "TrajectoryFamily._score" + (" after the kernel (canned)" if args.canned else ", kernel included")
    report(per_row, {"A": f"{args.rev}'s _score", "B": "the tree's _score"}, ratios, f"{what}, {rows} rows", digits=4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    k = sub.add_parser("kernel", help="trajectory_pair_stats of two builds of the core")
    k.add_argument("a", help="the first build's _core shared library")
    k.add_argument("b", help="the second build's")
    s = sub.add_parser("score", help="TrajectoryFamily._score at a revision against the tree's")
    s.add_argument("--rev", default="HEAD~1", help="the revision of the old _score (default HEAD~1)")
    s.add_argument(
        "--canned",
        action="store_true",
        help="one interned chunk for every call, the kernel replaced by a copy of its output",
    )
    for p in (k, s):
        p.add_argument("--rows", type=int, default=1 << 15)
        p.add_argument("--rounds", type=int, default=16)
        p.add_argument("--repeat", type=int, default=5, help="calls per build per round")
    args = parser.parse_args()
    kernel(args) if args.what == "kernel" else score(args)


if __name__ == "__main__":
    main()
