"""respeval against the limit prototype of ``../shared/perf/rougelimit.c`` on this machine.

    python benchmarks/prototype_report.py            # 5 interleaved rounds, ~2 minutes

The issue-14 targets were set from the prototype's ratios on another CPU (AMD Zen 4). This
script builds the prototype here (gcc, ``-O3 -march=native``; it needs AVX-512BW) and times
respeval, the prototype and rouge-score-rs (RAYON_NUM_THREADS=1) on the 100,000 short pairs,
one thread each, and respeval and the prototype on rougeLsum over the 864 long documents,
interleaved round by round, by CPU time (the least of the rounds, and the per-round ratio's
median and range): how far respeval is from what this hardware allows, whatever the peer's
speed on it. The prototype's scores are checked equal to respeval's first. Issue 34's
targets: respeval >= 0.95 of the prototype's speed on short pairs, >= 1.0 on long documents.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
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
import report_json  # noqa: E402

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
    report_json.add_option(ap)
    args = ap.parse_args()
    if not PROTOTYPE.is_file() or not corpus.data_available():
        sys.exit(f"needs {PROTOTYPE} and the shared data ({corpus.missing_message()})")
    import numpy as np

    import respeval

    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        proto = build(Path(tmp))
        preds, refs = (list(x) for x in corpus.short_pairs())
        ours = respeval.rouge(preds, refs, TYPES, threads=1)
        theirs = np.frombuffer(proto.score(preds, refs, False), np.float64).reshape(9, -1)
        want = np.array([ours[f"{t}_{x}"] for t in TYPES for x in "prf"])
        if not np.array_equal(theirs, want):
            sys.exit("the prototype's scores differ from respeval's: refusing to time it")
        long_p, long_r = (list(x) for x in corpus.long_pairs())
        ours_l = respeval.rouge(long_p, long_r, ("rougeLsum",), threads=1)
        theirs_l = np.frombuffer(proto.score(long_p, long_r, False, True), np.float64).reshape(3, -1)
        if not np.array_equal(theirs_l, np.array([ours_l[f"rougeLsum_{x}"] for x in "prf"])):
            sys.exit("the prototype's rougeLsum scores differ from respeval's: refusing to time it")
        contenders = {}
        for stem in (False, True):
            tag = "stemming" if stem else "no stemming"
            rs = corpus.runner("rouge-score-rs", TYPES, stem)
            contenders[("respeval", tag)] = lambda s=stem: respeval.rouge(preds, refs, TYPES, threads=1, stemmer=s)
            contenders[("prototype", tag)] = lambda s=stem: proto.score(preds, refs, s)
            contenders[("rouge-score-rs", tag)] = lambda f=rs: f(preds, refs)
        for stem in (False, True):
            tag = "long, stemming" if stem else "long, no stemming"
            contenders[("respeval", tag)] = lambda s=stem: respeval.rouge(
                long_p, long_r, ("rougeLsum",), threads=1, stemmer=s
            )
            contenders[("prototype", tag)] = lambda s=stem: proto.score(long_p, long_r, s, True)
        cpu = {k: [] for k in contenders}
        for _ in range(args.rounds):
            for key, fn in contenders.items():
                t = time.process_time()
                fn()
                cpu[key].append(time.process_time() - t)
        best = {k: min(v) for k, v in cpu.items()}
    load = os.getloadavg()
    model = report_json.cpu_model()
    host = f"model name\t: {model}" if model else ""  # the line of /proc/cpuinfo, as this report always printed it
    print(
        f"{host}; {args.rounds} interleaved rounds, least CPU time and per-round ratios; "
        f"100,000 short pairs (rouge1+2+L), 864 long documents (rougeLsum); load average after "
        f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}\n"
    )
    print(
        "| | respeval (ms) | prototype (ms) | rouge-score-rs (ms) | respeval vs rs | prototype vs rs "
        "| respeval / prototype, best | per round: median [min, max] | target |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    results: dict = {"rounds": args.rounds, "workloads": {}}
    for tag in ("no stemming", "stemming", "long, no stemming", "long, stemming"):
        r, p = best[("respeval", tag)], best[("prototype", tag)]
        per = sorted(b / a for a, b in zip(cpu[("respeval", tag)], cpu[("prototype", tag)]))
        med = statistics.median(per)
        target = 1.0 if tag.startswith("long") else 0.95
        verdict = f">= {target}: " + ("met" if med >= target else f"**not met** ({med / target:.3f} of it)")
        found = results["workloads"][tag] = {
            "respeval_ms": r * 1e3,
            "prototype_ms": p * 1e3,
            "target": target,
            "met": med >= target,
            # respeval's speed over the prototype's: the prototype's CPU time over respeval's
            "respeval_over_prototype": report_json.ratio(cpu[("prototype", tag)], cpu[("respeval", tag)]),
        }
        if ("rouge-score-rs", tag) in best:
            s = best[("rouge-score-rs", tag)]
            rs_cols = f"{s * 1e3:.1f} | {s / r:.2f}x | {s / p:.2f}x"
            found["rouge_score_rs_ms"] = s * 1e3
            found["respeval_vs_rs"] = report_json.ratio(cpu[("rouge-score-rs", tag)], cpu[("respeval", tag)])
            found["prototype_vs_rs"] = report_json.ratio(cpu[("rouge-score-rs", tag)], cpu[("prototype", tag)])
        else:
            rs_cols = "- | - | -"
        print(
            f"| {tag} | {r * 1e3:.1f} | {p * 1e3:.1f} | {rs_cols} | {p / r:.3f} | "
            f"{med:.3f} [{per[0]:.3f}, {per[-1]:.3f}] | {verdict} |"
        )
    report_json.write(args.json, "prototype_report.py", results, load0)


if __name__ == "__main__":
    main()
