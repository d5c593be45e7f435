"""Failure clustering on 100,000 failing rows: time, rows/s, and determinism.

Seeded synthetic judge rationales (50 failure kinds: 5 faults x 10 entities, each written in three
ways, with filler words and a number varying, so clusters are near, not exact, duplicates), then
in one process, interleaved rounds of

* ``respeval native``: :func:`respeval.clusters.cluster_failures` over all the rows;
* ``respeval twin``: the same with the pure-Python twin's signatures
  (``implementation="python"``) on ``--twin-rows`` rows (it is slow; its rows/s is what is
  compared).

Every round checks that the clusters equal the first round's (deterministic for the seed) and,
on the twin's rows, that the twin and the core give the same clusters.

    python benchmarks/clusters_report.py                     # 100,000 rows, 3 rounds
    python benchmarks/clusters_report.py --rows 100000 --rounds 5 --twin-rows 5000
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import report_json  # noqa: E402

KINDS = [
    ("the answer gives the wrong date for {e}", "the date stated for {e} is wrong", "wrong date: {e}"),
    ("the response misses the unit of {e}", "no unit is given for {e}", "unit missing for {e}"),
    ("the candidate contradicts the reference about {e}", "contradicts the reference on {e}", "reference says otherwise about {e}"),
    ("refused a harmless request about {e}", "the model refused to talk about {e}", "unneeded refusal ({e})"),
    ("the summary leaves out the main finding on {e}", "main finding about {e} is missing", "omits the key point on {e}"),
]  # fmt: skip
ENTITIES = [
    "paris",
    "oslo",
    "tokyo",
    "lima",
    "cairo",
    "the treaty",
    "the merger",
    "the trial",
    "the vaccine",
    "the bridge",
]
FILLER = ["clearly", "in the second paragraph", "again", "as before", "according to the context", "", "", ""]


def corpus(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    kinds = [(k, v) for k in range(len(KINDS)) for v in range(len(ENTITIES))]  # 50 failure kinds
    out = []
    for _ in range(n):
        kind, variant = rng.choice(kinds)
        text = rng.choice(KINDS[kind]).format(e=ENTITIES[(variant + kind) % len(ENTITIES)])
        out.append(f"{text} {rng.choice(FILLER)} #{rng.randrange(10**6)}".strip())
    return out


def host_cpu() -> str:
    model = report_json.cpu_model()
    return f"{model} ({os.cpu_count()} CPUs)" if model else platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--twin-rows", type=int, default=3_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from respeval import _backend
    from respeval.clusters import cluster_failures

    if not _backend.native_available():
        raise SystemExit("the native core is not built: pip install -e . first")
    texts = corpus(args.rows, args.seed)
    few = texts[: args.twin_rows]
    times: dict[str, list[float]] = {"native": [], "twin": []}
    reference = None
    for _ in range(args.rounds):
        start = time.perf_counter()
        got = cluster_failures(texts, implementation="native")
        times["native"].append(time.perf_counter() - start)
        if reference is None:
            reference = got
        assert np.array_equal(got.labels, reference.labels), "not deterministic"
        start = time.perf_counter()
        twin = cluster_failures(few, implementation="python")
        times["twin"].append(time.perf_counter() - start)
        assert np.array_equal(twin.labels, cluster_failures(few, implementation="native").labels), "twin != core"
    assert reference is not None
    print(f"host: {host_cpu()}, Python {platform.python_version()}")
    print(f"{args.rows:,} failing rows -> {len(reference.clusters):,} clusters "
          f"(largest {', '.join(str(c.size) for c in reference.clusters[:5])}); "
          f"{reference.candidates:,} candidate pairs compared, {reference.edges:,} links")  # fmt: skip
    print("| contender | rows | median | range | rows/s |")
    print("|---|---:|---:|---:|---:|")
    rate = {}
    for name, rows in (("native", args.rows), ("twin", args.twin_rows)):
        med = statistics.median(times[name])
        rate[name] = rows / med
        print(
            f"| respeval {name} | {rows:,} | {med:.2f} s | {min(times[name]):.2f}-{max(times[name]):.2f} s | {rate[name]:,.0f} |"
        )
    print(f"native / twin rows/s: {rate['native'] / rate['twin']:.1f}x; every round gave the same clusters")


if __name__ == "__main__":
    main()
