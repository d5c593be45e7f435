"""Where the trajectory family's time goes: reading + interning the calls, and the kernels,
native against the pure-Python twin on the same JSON text rows (benchmarks/README.md).

    python benchmarks/trajectory_breakdown.py        # 32,768 rows native, 2,048 twin, 3 rounds

CPU time, one process, rounds interleaved; medians of the rounds.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trajectory_workload  # noqa: E402
from respeval import _core  # noqa: E402
from respeval._core_py import trajectory as twin  # noqa: E402


def intern(mod, preds, refs):
    table = mod.CallTable()
    return table.intern(refs), table.intern(preds)


def kernels(mod, ref, pred, n):
    arrays = [np.frombuffer(x, t) for x, t in zip(pred[:3] + ref[:3], ("i4", "i4", "i8") * 2)]
    out = np.zeros((n, len(mod.TRAJECTORY_STATS)), np.int64)
    pm, rm = np.zeros(len(arrays[0]), np.uint8), np.zeros(len(arrays[3]), np.uint8)
    mod.trajectory_pair_stats(*arrays, out, pm, rm, 1)


def _repeated_calls(rows: list[str]) -> float:
    """Share of the calls whose exact JSON text appeared earlier in the rows (references
    first, as the family interns them)."""
    import json

    seen: set[str] = set()
    total = repeats = 0
    for row in rows:
        for call in json.loads(row):
            text = json.dumps(call)  # the workload writes calls with json.dumps' defaults
            total += 1
            repeats += text in seen
            seen.add(text)
    return repeats / max(total, 1)


def main(rows: int = 32768, sample: int = 2048, rounds: int = 3) -> None:
    preds, refs = trajectory_workload.texts(0, rows)
    gc.collect()
    gc.disable()
    rates: dict[str, tuple[list[float], list[float]]] = {"intern": ([], []), "kernels": ([], [])}
    for _ in range(rounds):
        for side, (mod, n) in enumerate(((_core, rows), (twin, sample))):
            t = time.process_time()
            ref, pred = intern(mod, preds[:n], refs[:n])
            rates["intern"][side].append(n / (time.process_time() - t))
            t = time.process_time()
            kernels(mod, ref, pred, n)
            rates["kernels"][side].append(n / (time.process_time() - t))
    repeated = _repeated_calls(refs + preds)
    print(f"call texts already seen in the chunk (what the native call memo answers): {repeated:.0%}")
    for step, (native, python) in rates.items():
        ratio = np.median([a / b for a, b in zip(native, python)])
        print(f"{step}: native {np.median(native):,.0f} rows/s, twin {np.median(python):,.0f} rows/s, {ratio:.0f}x")


if __name__ == "__main__":
    main()
