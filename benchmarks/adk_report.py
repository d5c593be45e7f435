"""ADK end to end: trajectory scores from eval-set files, respeval against ADK's own code (issue 34).

    python benchmarks/adk_report.py                       # 20,000 invocations, 7 rounds, ~2 minutes
    python benchmarks/adk_report.py --invocations 4000    # quicker, indicative
    python benchmarks/adk_report.py --breakdown           # where respeval's time goes, GC on and paused

The job a user of ADK's evaluation runs after the agent: an expected eval set (the golden
conversations) and an actual one (what the agent did, same case ids), both as ADK EvalSet
JSON files, to ``tool_trajectory_avg_score`` per invocation and per case.  The files are
written from the real tau-bench airline rows (../shared/data/agents/tau_bench, gpt-4o
trajectories against the task's actions; the shared ADK fixtures are a handful of cases, too
small to time): row ``i`` is tau row ``i % 120``, its reference trajectory the expected
invocation's ``intermediate_data.tool_uses``, its predicted trajectory the actual one's, the
tau prompt and response as user content and final response; user and reservation ids made
unique per pass over the 120 rows (``trajectory_workload``), ``--per-case`` invocations a
case.  Contenders, each timed from the two paths to the scores:

* ADK 2.13: ``load_eval_set_from_file`` on both files (pydantic), then per case
  ``TrajectoryEvaluator(EXACT).evaluate_invocations(actual, expected)``;
* respeval ``evaluate_agent(expected, [actual], [Criterion(tool_trajectory_avg_score, 1.0)],
  diagnostics=False)``: what ``respeval agent eval`` runs (loaders, every case, statuses);
* respeval, the batch path: ``load_eval_set`` on both, one ``tool_trajectory_scores`` call
  over every invocation of every case (the per-case means left to numpy);
* respeval ``tool_trajectory_scores_from_files(expected, actual)``: both files read by the
  core's eval-set reader (no Python object per invocation), the tool-use lists scored from
  the files' bytes by one trajectory-kernel call, outcomes per case as ``evaluate_agent``'s.

Every contender's per-invocation scores and per-case scores are checked equal to ADK's
(``==``) before timing.  Rounds interleave the contenders (A B C A B C ...), one thread
(``OMP_NUM_THREADS=1`` unless set: the trajectory kernels would otherwise start a team,
whose waiting counts as CPU time), a garbage collection before each; CPU time of the
process (wall time is printed too).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one thread, as ADK runs (before respeval loads OpenMP)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import report_json  # noqa: E402
import trajectory_workload  # noqa: E402
from mt_report import host_cpu  # noqa: E402

TARGET = 50.0


def _content(text: str, role: str) -> dict:
    return {"parts": [{"text": text}], "role": role}


def write_eval_sets(folder: Path, invocations: int, per_case: int) -> tuple[Path, Path]:
    tau = [json.loads(x) for x in trajectory_workload.TAU.read_text(encoding="utf-8").splitlines()]
    preds, refs = trajectory_workload.texts(0, invocations)
    sides: dict[str, list] = {"expected": [], "actual": []}
    for case_start in range(0, invocations, per_case):
        convs: dict[str, list] = {"expected": [], "actual": []}
        for i in range(case_start, min(case_start + per_case, invocations)):
            row = tau[i % len(tau)]
            for side, traj in (("expected", refs[i]), ("actual", preds[i])):
                convs[side].append(
                    {
                        "invocation_id": f"inv-{i}",
                        "user_content": _content(row["prompt"], "user"),
                        "final_response": _content(row["response"] or "", "model"),
                        "intermediate_data": {
                            "tool_uses": [{"name": c["tool_name"], "args": c["tool_input"]} for c in json.loads(traj)],
                            "tool_responses": [],
                            "intermediate_responses": [],
                        },
                        "creation_timestamp": 0.0,
                    }
                )
        for side in sides:
            sides[side].append(
                {
                    "eval_id": f"case-{case_start // per_case}",
                    "conversation": convs[side],
                    "session_input": {"app_name": "airline", "user_id": "user", "state": {}},
                    "creation_timestamp": 0.0,
                }
            )
    paths = []
    for side, cases in sides.items():
        path = folder / f"{side}.evalset.json"
        doc = {"eval_set_id": f"tau-airline-{side}", "name": side, "eval_cases": cases, "creation_timestamp": 0.0}
        path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


def adk_run(expected: Path, actual: Path) -> tuple[list[list[float]], list[float]]:
    from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
    from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

    exp = load_eval_set_from_file(str(expected), "expected")
    act = {c.eval_id: c for c in load_eval_set_from_file(str(actual), "actual").eval_cases}
    metric = EvalMetric(metric_name="tool_trajectory_avg_score", criterion=ToolTrajectoryCriterion(threshold=1.0))
    per_inv, per_case = [], []
    for case in exp.eval_cases:
        result = TrajectoryEvaluator(eval_metric=metric).evaluate_invocations(
            act[case.eval_id].conversation, case.conversation
        )
        per_inv.append([r.score for r in result.per_invocation_results])
        per_case.append(result.overall_score)
    return per_inv, per_case


def respeval_agent(expected: Path, actual: Path) -> tuple[list[list[float]], list[float]]:
    from respeval.agents.adk import Criterion
    from respeval.agents.evaluation import evaluate_agent

    report = evaluate_agent(expected, [actual], [Criterion("tool_trajectory_avg_score", 1.0)], diagnostics=False)
    outcomes = report.runs[0]
    return [o.metrics[0].per_invocation for o in outcomes], [o.metrics[0].score for o in outcomes]


def respeval_batch(expected: Path, actual: Path) -> tuple[list[list[float]], list[float]]:
    import numpy as np

    from respeval.agents.adk import tool_trajectory_scores
    from respeval.agents.loaders import load_eval_set

    exp = load_eval_set(expected)
    act = {c.eval_id: c.invocations for c in load_eval_set(actual).cases}
    a_all, e_all, bounds = [], [], [0]
    for case in exp.cases:
        a_all += act[case.eval_id]
        e_all += case.invocations
        bounds.append(len(e_all))
    scores = np.asarray(tool_trajectory_scores(a_all, e_all))
    per_inv = [scores[bounds[k] : bounds[k + 1]].tolist() for k in range(len(bounds) - 1)]
    # ADK's overall score: the invocations' scores summed in order, divided by their count
    per_case = [sum(x) / len(x) for x in per_inv]
    return per_inv, per_case


def respeval_files(expected: Path, actual: Path) -> tuple[list[list[float]], list[float]]:
    from respeval.agents.evaluation import tool_trajectory_scores_from_files

    outcomes = tool_trajectory_scores_from_files(expected, actual)
    return [o.metrics[0].per_invocation for o in outcomes], [o.metrics[0].score for o in outcomes]


def breakdown(invocations: int, per_case: int) -> None:
    """CPU seconds of the steps of the batch path and of the files path, with the cyclic GC
    on and paused."""
    from respeval.agents.adk import tool_trajectory_scores, trajectory_values
    from respeval.agents.loaders import load_eval_set, read_tool_uses

    with tempfile.TemporaryDirectory() as tmp:
        expected, actual = write_eval_sets(Path(tmp), invocations, per_case)
        texts = [expected.read_text(encoding="utf-8"), actual.read_text(encoding="utf-8")]
        exp, act = load_eval_set(expected), load_eval_set(actual)
        a_all = [i for c in act.cases for i in c.invocations]
        e_all = [i for c in exp.cases for i in c.invocations]
        e_uses, a_uses = read_tool_uses(expected), read_tool_uses(actual)
        steps = {
            "json.loads of the two files": lambda: [json.loads(t) for t in texts],
            "load_eval_set on both": lambda: [load_eval_set(expected), load_eval_set(actual)],
            "tool_trajectory_scores over every invocation": lambda: tool_trajectory_scores(a_all, e_all),
            "the whole batch path": lambda: respeval_batch(expected, actual),
            "read_tool_uses on both (the core's eval-set reader)": lambda: [
                read_tool_uses(p) for p in (expected, actual)
            ],
            "trajectory_values over every invocation, from the files' bytes": lambda: trajectory_values(
                a_uses.tool_uses, e_uses.tool_uses
            ),
            "the whole files path (tool_trajectory_scores_from_files)": lambda: respeval_files(expected, actual),
            "ADK, the whole job": lambda: adk_run(expected, actual),
        }
        print(f"{invocations:,} invocations; CPU s, least of 2 runs")
        print("| step | GC on | GC paused |")
        print("|---|---:|---:|")
        for name, fn in steps.items():
            row = []
            for paused in (False, True):
                best = float("inf")
                for _ in range(2):
                    gc.collect()
                    if paused:
                        gc.disable()
                    t = time.process_time()
                    try:
                        fn()
                    finally:
                        gc.enable()
                    best = min(best, time.process_time() - t)
                row.append(best)
            print(f"| {name} | {row[0]:.3f} | {row[1]:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--invocations", type=int, default=20_000)
    ap.add_argument("--per-case", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--breakdown", action="store_true", help="where respeval's time goes, GC on and paused")
    report_json.add_option(ap)
    args = ap.parse_args()
    import google.adk

    if args.breakdown:
        breakdown(args.invocations, args.per_case)
        return

    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        expected, actual = write_eval_sets(Path(tmp), args.invocations, args.per_case)
        mb = (expected.stat().st_size + actual.stat().st_size) / 1e6
        contenders = {
            "ADK load_eval_set_from_file + TrajectoryEvaluator": adk_run,
            "respeval evaluate_agent": respeval_agent,
            "respeval load_eval_set + tool_trajectory_scores": respeval_batch,
            "respeval tool_trajectory_scores_from_files": respeval_files,
        }
        want = adk_run(expected, actual)
        for name, fn in contenders.items():
            if fn(expected, actual) != want:
                sys.exit(f"{name}: scores differ from ADK's")
        cpu: dict[str, list[float]] = {k: [] for k in contenders}
        wall: dict[str, list[float]] = {k: [] for k in contenders}
        for _ in range(args.rounds):
            for name, fn in contenders.items():
                gc.collect()
                w, c = time.perf_counter(), time.process_time()
                fn(expected, actual)
                cpu[name].append(time.process_time() - c)
                wall[name].append(time.perf_counter() - w)
    load1 = os.getloadavg()
    n_cases = -(-args.invocations // args.per_case)
    print(f"Host: {host_cpu()}; google-adk {google.adk.__version__}, one thread.")
    print(
        f"Load average (1/5/15 min) before: {load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f}; "
        f"after: {load1[0]:.2f} / {load1[1]:.2f} / {load1[2]:.2f}"
    )
    print(
        f"{args.invocations:,} invocations in {n_cases:,} cases, two eval-set files of {mb:.1f} MB together; "
        f"{args.rounds} interleaved rounds; every score equal to ADK's\n"
    )
    adk = "ADK load_eval_set_from_file + TrajectoryEvaluator"
    print(
        "| contender | CPU s, best | wall s, best | invocations/s (CPU) | ADK / this, CPU per round: median [min, max] | target |"
    )
    print("|---|---:|---:|---:|---:|---|")
    results: dict = {
        "adk_version": google.adk.__version__,
        "invocations": args.invocations,
        "cases": n_cases,
        "files_mb": mb,
        "rounds": args.rounds,
        "contenders": {},
    }
    for name in contenders:
        per = sorted(a / b for a, b in zip(cpu[adk], cpu[name]))
        med = statistics.median(per)
        if name == adk:
            verdict = "-"
        else:
            verdict = f">= {TARGET:.0f}x: " + ("met" if med >= TARGET else f"**not met** ({TARGET / med:.2f}x short)")
        print(
            f"| {name} | {min(cpu[name]):.3f} | {min(wall[name]):.3f} | {args.invocations / min(cpu[name]):,.0f} | "
            f"{med:.1f}x [{per[0]:.1f}, {per[-1]:.1f}] | {verdict} |"
        )
        results["contenders"][name] = {
            "cpu_best_s": min(cpu[name]),
            "wall_best_s": min(wall[name]),
            "invocations_per_cpu_s": args.invocations / min(cpu[name]),
            "target": None if name == adk else TARGET,
            "met": None if name == adk else med >= TARGET,
            "adk_over_this_cpu": report_json.ratio(cpu[adk], cpu[name]),
            "adk_over_this_wall": report_json.ratio(wall[adk], wall[name]),
        }
    report_json.write(args.json, "adk_report.py", results, load0)


if __name__ == "__main__":
    main()
