"""The OpenMP wait policy, interleaved: 1 against 2 threads, for the library under libgomp's
default and under ``OMP_WAIT_POLICY=PASSIVE``, and for the command line (which sets PASSIVE).

    python benchmarks/ab_openmp.py                  # 8 rounds
    python benchmarks/ab_openmp.py --rounds 12 --pairs 50000

libgomp reads the policy when the core loads, so every case runs in a fresh process.  Each
round runs the cases in a random order:

``lib``           ``respeval.rouge(preds, refs, ("rouge1", "rouge2", "rougeL"), threads=N)`` on
                  the short pairs of benchmarks/corpus.py, the environment as the caller left
                  it (no ``OMP_WAIT_POLICY``: libgomp spins ~300,000 times before it sleeps);
                  the call's wall time, the best of 3 (the corpus is loaded untimed)
``lib-passive``   the same with ``OMP_WAIT_POLICY=PASSIVE`` set by the caller
``cli``           ``respeval score --pred pairs.jsonl --metrics rouge1,rouge2,rougeL --threads N
                  --out x.parquet``, the whole process's wall time (start-up and I/O included)

each at ``--threads 1`` and ``2``.  The per-round ratio t(2 threads) / t(1 thread) of each
case is what is reported (median and quartiles: the host's load moves both runs of a round
alike); below 1 the second thread helps.  The host CPU and its load average are printed,
because on a machine whose second core is busy the answer is about the load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHILD = """
import json, sys, time
sys.path.insert(0, {here!r})
import corpus
preds, refs = corpus.short_pairs({pairs})
import respeval
best = min(
    (lambda t0: (respeval.rouge(preds, refs, ("rouge1", "rouge2", "rougeL"), threads={threads}), time.perf_counter() - t0)[1])(
        time.perf_counter()
    )
    for _ in range(3)
)
print(json.dumps(best))
"""

CASES = ("lib", "lib-passive", "cli")


def _env(case: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}
    if case == "lib-passive":
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    return env


def run_case(case: str, threads: int, pairs: int, work: Path) -> float:
    if case == "cli":
        out = work / f"out-{threads}-{time.monotonic_ns()}.parquet"
        args = [sys.executable, "-m", "respeval", "score", "--pred", str(work / "pairs.jsonl")]
        args += ["--metrics", "rouge1,rouge2,rougeL", "--threads", str(threads), "--quiet", "--out", str(out)]
        t0 = time.perf_counter()
        subprocess.run(args, env=_env(case), check=True, capture_output=True, timeout=1800)
        took = time.perf_counter() - t0
        out.unlink()
        return took
    code = CHILD.format(here=str(HERE), pairs=pairs, threads=threads)
    done = subprocess.run([sys.executable, "-c", code], env=_env(case), check=True, capture_output=True, text=True)
    return float(json.loads(done.stdout.splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    import corpus

    if not corpus.data_available():
        raise SystemExit(corpus.missing_message())
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        preds, refs = corpus.short_pairs(args.pairs)
        with open(work / "pairs.jsonl", "w", encoding="utf-8") as f:
            for p, r in zip(preds, refs):
                f.write(json.dumps({"response": p, "reference": r}) + "\n")
        times: dict[tuple[str, int], list[float]] = {(c, t): [] for c in CASES for t in (1, 2)}
        ratios: dict[str, list[float]] = {c: [] for c in CASES}
        loads = []
        for _ in range(args.rounds):
            order = list(times)
            rng.shuffle(order)
            took = {key: run_case(key[0], key[1], args.pairs, work) for key in order}
            for key, dt in took.items():
                times[key].append(dt)
            for c in CASES:
                ratios[c].append(took[(c, 2)] / took[(c, 1)])
            loads.append(os.getloadavg()[0])
    print(f"host: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; ", end="")
    print(f"load average during the rounds: median {statistics.median(loads):.2f} (max {max(loads):.2f})")
    print(f"{args.rounds} rounds, {args.pairs} pairs")
    for (c, t), values in times.items():
        print(f"{c:12s} threads={t}: median {statistics.median(values):.3f} s")
    for c in CASES:
        q1, _, q3 = statistics.quantiles(ratios[c], n=4)
        print(
            f"{c:12s} 2 threads / 1 thread, per round: median {statistics.median(ratios[c]):.3f} (quartiles {q1:.3f}-{q3:.3f})"
        )


if __name__ == "__main__":
    main()
