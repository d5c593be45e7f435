"""Page faults of the trajectory family, chunk after chunk, in one process (benchmarks/README.md).

    python benchmarks/trajectory_faults.py
    MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=1073741824 python benchmarks/trajectory_faults.py

Three 32,768-row chunks of tau-bench-shaped JSON text (``trajectory_workload``) go through
``family_scores`` (as ``trajectory_report.py`` times it) in turn, ``--rounds`` times; the
median CPU time a row and the median minor page faults a call are printed, leaving out the
first rounds (the tables and arenas being built).  The second command has glibc keep freed
memory instead of returning it to the kernel, which then hands out fresh pages again.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trajectory_workload  # noqa: E402
from bench_trajectory import family_scores  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--chunk", type=int, default=1 << 15)
    args = parser.parse_args()
    tmpl = trajectory_workload.templates()
    data = [trajectory_workload.texts(k * args.chunk, args.chunk, tmpl) for k in range(3)]
    times, faults = [], []
    for r in range(args.rounds):
        preds, refs = data[r % 3]
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.process_time()
        out = family_scores(preds, refs, "native")
        times.append(time.process_time() - t0)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        del out
    skip = min(3, args.rounds - 1)
    print(
        f"{statistics.median(times[skip:]) / args.chunk * 1e6:.3f} us a row, "
        f"{statistics.median(faults[skip:]):.0f} minor page faults a {args.chunk:,}-row call"
    )


if __name__ == "__main__":
    main()
