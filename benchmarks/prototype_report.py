"""respeval against the limit prototype of ``../shared/perf/rougelimit.c`` on this machine.

    python benchmarks/prototype_report.py            # 5 interleaved rounds, ~1.5 minutes

The issue-14 targets were set from the prototype's ratios on another CPU (AMD Zen 4). This
script builds the prototype here (gcc, ``-O3 -march=native``; it needs AVX-512BW) and times
respeval, the prototype and rouge-score-rs (RAYON_NUM_THREADS=1) on the 100,000 short pairs,
one thread each, interleaved round by round, by CPU time (least of the rounds): how far
respeval is from what this hardware allows, whatever the peer's speed on it. The prototype's
scores are checked equal to respeval's first.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # before rouge_score_rs is imported

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402

PROTOTYPE = HERE.parent.parent / "shared" / "perf" / "rougelimit.c"
TYPES = ("rouge1", "rouge2", "rougeL")


def build(workdir: Path) -> object:
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    out = workdir / f"rougelimit{suffix}"
    cmd = [
        "gcc", "-O3", "-march=native", "-ffp-contract=off", "-shared", "-fPIC", "-pthread", "-w",
        f"-I{sysconfig.get_paths()['include']}", f"-I{HERE.parent / 'cext'}", str(PROTOTYPE), "-o", str(out),
    ]  # fmt: skip
    subprocess.run(cmd, check=True)
    sys.path.insert(0, str(workdir))
    return importlib.import_module("rougelimit")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if not PROTOTYPE.is_file() or not corpus.data_available():
        sys.exit(f"needs {PROTOTYPE} and the shared data ({corpus.missing_message()})")
    import numpy as np

    import respeval

    with tempfile.TemporaryDirectory() as tmp:
        proto = build(Path(tmp))
        preds, refs = (list(x) for x in corpus.short_pairs())
        ours = respeval.rouge(preds, refs, TYPES, threads=1)
        theirs = np.frombuffer(proto.score(preds, refs, False), np.float64).reshape(9, -1)
        want = np.array([ours[f"{t}_{x}"] for t in TYPES for x in "prf"])
        if not np.array_equal(theirs, want):
            sys.exit("the prototype's scores differ from respeval's: refusing to time it")
        contenders = {}
        for stem in (False, True):
            tag = "stemming" if stem else "no stemming"
            rs = corpus.runner("rouge-score-rs", TYPES, stem)
            contenders[("respeval", tag)] = lambda s=stem: respeval.rouge(preds, refs, TYPES, threads=1, stemmer=s)
            contenders[("prototype", tag)] = lambda s=stem: proto.score(preds, refs, s)
            contenders[("rouge-score-rs", tag)] = lambda f=rs: f(preds, refs)
        best = dict.fromkeys(contenders, float("inf"))
        for _ in range(args.rounds):
            for key, fn in contenders.items():
                t = time.process_time()
                fn()
                best[key] = min(best[key], time.process_time() - t)
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo"], capture_output=True, text=True)
    print(f"{cpu.stdout.strip()}; {args.rounds} interleaved rounds, least CPU time, 100,000 short pairs\n")
    print(
        "| | respeval (ms) | prototype (ms) | rouge-score-rs (ms) | respeval vs rs | prototype vs rs | respeval / prototype |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for tag in ("no stemming", "stemming"):
        r, p, s = (best[(lib, tag)] for lib in ("respeval", "prototype", "rouge-score-rs"))
        print(f"| {tag} | {r * 1e3:.1f} | {p * 1e3:.1f} | {s * 1e3:.1f} | {s / r:.2f}x | {s / p:.2f}x | {p / r:.2f} |")


if __name__ == "__main__":
    main()
