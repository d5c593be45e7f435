"""A/B of respeval.evaluate's file readers: the same files, two installs, interleaved.

    python benchmarks/ab_evaluate_readers.py PY_A PY_B [--rows N] [--rounds R]

PY_A and PY_B are the Python interpreters of two installs (e.g. a worktree of the earlier
revision with its own venv: ``git worktree add --detach ../base REV``, then
``python -m venv .venv && .venv/bin/pip install -e .`` there).

The rows (seeded, 12 words a side) are written as JSONL, CSV and Parquet.  Each round runs
each install once per format in a random order, each in a fresh process that first makes one
tiny call (so the imports a first call makes, lazy in later revisions, stay out of the timing)
and then times ``respeval.evaluate(path, ["rouge1", "exact_match"])`` by its CPU time.  The
ratio B/A is taken per round (the host's phases move both alike) and its median and range
printed per format.  Both sides' tables are checked to have the same rows and columns.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import statistics
import subprocess
import tempfile

CHILD = r"""
import json, sys, time
import respeval
path, out = sys.argv[1], sys.argv[2]
respeval.evaluate([{"response": "a b", "reference": "a c"}] * 3, ["rouge1", "exact_match"])
t0 = time.process_time()
result = respeval.evaluate(path, ["rouge1", "exact_match"])
cpu = time.process_time() - t0
table = result.table
scores = [c for c in table.column_names if "score" in c]
check = [table.num_rows, sorted(table.column_names), [table.column(c).to_pylist()[:200] for c in scores]]
json.dump({"cpu": cpu, "check": check}, open(out, "w"))
"""

WORDS = "the cat sat on a mat while dogs ran far over green hills and birds sang".split()


def write_inputs(folder: str, n: int, rng: random.Random) -> dict[str, str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        {"id": i, "response": " ".join(rng.choices(WORDS, k=12)), "reference": " ".join(rng.choices(WORDS, k=12))}
        for i in range(n)
    ]
    files = {fmt: os.path.join(folder, f"rows.{fmt}") for fmt in ("jsonl", "csv", "parquet")}
    with open(files["jsonl"], "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    with open(files["csv"], "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, ["id", "response", "reference"])
        writer.writeheader()
        writer.writerows(rows)
    pq.write_table(pa.Table.from_pylist(rows), files["parquet"])
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="the Python of install A (the baseline)")
    ap.add_argument("b", help="the Python of install B")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    rng = random.Random(7)
    folder = tempfile.mkdtemp(prefix="ab-evaluate-")
    files = write_inputs(folder, args.rows, rng)
    child = os.path.join(folder, "child.py")
    with open(child, "w", encoding="utf-8") as fh:
        fh.write(CHILD)
    ratios: dict[str, list[float]] = {fmt: [] for fmt in files}
    cpu: dict[tuple[str, str], list[float]] = {(fmt, side): [] for fmt in files for side in "ab"}
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    for k in range(args.rounds):
        for fmt, path in files.items():
            got = {}
            for side in rng.sample(["a", "b"], 2):
                out = os.path.join(folder, f"{side}.json")
                subprocess.run([args.a if side == "a" else args.b, child, path, out], check=True, env=env)
                with open(out, encoding="utf-8") as fh:
                    got[side] = json.load(fh)
            if got["a"]["check"] != got["b"]["check"]:
                raise SystemExit(f"{fmt}: the two installs' tables differ")
            for side in "ab":
                cpu[(fmt, side)].append(got[side]["cpu"])
            ratios[fmt].append(got["b"]["cpu"] / got["a"]["cpu"])
        shown = ", ".join(f"{fmt} {ratios[fmt][-1]:.3f}" for fmt in files)
        print(f"round {k + 1}: B/A {shown} (load {os.getloadavg()[0]:.2f})", flush=True)
    print(f"rows: {args.rows:,}; rounds: {args.rounds}; metrics rouge1 + exact_match; CPU s of the evaluate call")
    print("| format | A CPU s (median) | B CPU s (median) | B / A per round: median [min, max] |")
    print("|---|---:|---:|---:|")
    for fmt in files:
        r = ratios[fmt]
        a, b = statistics.median(cpu[(fmt, "a")]), statistics.median(cpu[(fmt, "b")])
        print(f"| {fmt} | {a:.3f} | {b:.3f} | {statistics.median(r):.3f} [{min(r):.3f}, {max(r):.3f}] |")


if __name__ == "__main__":
    main()
