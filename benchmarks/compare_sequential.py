"""``respeval compare``: false alarms, detections and judge calls of the fixed-sample and the
sequential (``--until-decided``) modes, on seeded simulated repeats (issue 30, acceptance 3).

Each repeat draws a response table (tests/_helpers/compare_sim.py): ``identical`` (the
candidate is the baseline system drawn again: every difference is noise) or ``regression``
(the same with the candidate worse on 8% of the cases), and compares it twice, judging every
case in both orders and ``--until-decided``, with exact_match, rouge1 and the simulated noisy
pairwise judge.  Printed: how often each mode decided what (the false-alarm rate beside its
bound alpha and the +-2 sigma band of 100 repeats), how often the two modes agree, and the
judge calls each made (total, and the per-repeat saving: median and quartiles).

    python benchmarks/compare_sequential.py                      # 100 repeats x 1,000 cases, ~4 min
    python benchmarks/compare_sequential.py --cases 400 --repeats 100
"""

from __future__ import annotations

import argparse
import collections
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import report_json  # noqa: E402
import respeval  # noqa: E402
from _helpers.compare_sim import noisy_judge, responses  # noqa: E402
from respeval.judge import EngineOptions, FakeModel  # noqa: E402


def _cpu() -> str:
    return report_json.cpu_model() or platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--margin", type=float, default=0.05)
    parser.add_argument("--tie", type=float, default=0.4, help="the judge's tie rate on equally good answers")
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"respeval {respeval.__version__}, Python {platform.python_version()}, {_cpu()}")
    print(
        f"{args.repeats} repeats x {args.cases} cases; metrics exact_match, rouge1 and the pairwise judge "
        f"(both orders); alpha {args.alpha}, margin {args.margin}, judge tie rate {args.tie}"
    )
    band = 2 * (args.repeats * args.alpha * (1 - args.alpha)) ** 0.5
    for scenario in ("identical", "regression"):
        decisions = {"fixed": collections.Counter(), "sequential": collections.Counter()}
        judge_decisions = {"fixed": collections.Counter(), "sequential": collections.Counter()}
        calls = {"fixed": 0, "sequential": 0}
        savings = []
        agree = 0
        for repeat in range(args.repeats):
            rows = responses(args.cases, scenario, repeat)
            options = dict(
                metrics=["exact_match", "rouge1"],
                ref_field="expected",
                alpha=args.alpha,
                margin=args.margin,
                bootstrap=200,
                seed=repeat,
                options=EngineOptions(concurrency=16),
            )
            results = {}
            for mode in ("fixed", "sequential"):
                model = FakeModel(noisy_judge(repeat, tie=args.tie))
                results[mode] = respeval.compare(rows, judge=model, until_decided=mode == "sequential", **options)
                decisions[mode][results[mode].decision] += 1
                judge_decisions[mode][results[mode].metric("judge").decision] += 1
                calls[mode] += model.calls
            agree += results["fixed"].decision == results["sequential"].decision
            full = results["fixed"].judge["spend"]["calls"]
            savings.append(1 - results["sequential"].judge["spend"]["calls"] / full)
        print(f"\n{scenario}:")
        for mode in ("fixed", "sequential"):
            print(f"  {mode:<10} overall {dict(decisions[mode])}; judge {dict(judge_decisions[mode])}")
        if scenario == "identical":
            for mode in ("fixed", "sequential"):
                alarms = args.repeats - decisions[mode]["no_change"]
                print(
                    f"  {mode:<10} false alarms {alarms}/{args.repeats} (bound alpha: {args.alpha * args.repeats:.0f}, "
                    f"+2 sigma: {args.alpha * args.repeats + band:.1f})"
                )
        q = statistics.quantiles(savings, n=4)
        print(f"  same overall decision in {agree}/{args.repeats} repeats")
        print(
            f"  judge calls: fixed {calls['fixed']:,}, sequential {calls['sequential']:,} "
            f"({1 - calls['sequential'] / calls['fixed']:.1%} fewer); per repeat saved median {statistics.median(savings):.1%} "
            f"[quartiles {q[0]:.1%}, {q[2]:.1%}]"
        )
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
