"""Trajectory metrics: respeval's native core against its pure-Python twin and against ADK's
own TrajectoryEvaluator, on tau-bench-shaped rows (benchmarks/trajectory_workload.py), one
thread.

    python -m pytest benchmarks/bench_trajectory.py                       # ~1 minute
    python -m pytest benchmarks/bench_trajectory.py --benchmark-disable   # smoke test

Each contender scores the same rows and the values are checked equal: the Vertex six plus
ADK's per-invocation score in one native pass (``trajectory``), the same through the twin,
and ``TrajectoryEvaluator`` (EXACT) on the same pairs as one-invocation ADK cases.
``python benchmarks/trajectory_report.py`` is the interleaved 1M-row measurement recorded in
benchmarks/README.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trajectory_workload  # noqa: E402
from respeval.metrics.trajectory import TrajectoryFamily  # noqa: E402

METRICS = (
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_any_order_match",
    "trajectory_precision",
    "trajectory_recall",
    "tool_trajectory_avg_score",
)


def family_scores(preds, refs, implementation):
    fam = TrajectoryFamily(METRICS, implementation=implementation, threads=1)
    return fam.score(fam.prepare(refs), preds).columns


def adk_inputs(preds, refs):
    from google.adk.evaluation.eval_case import IntermediateData, Invocation
    from google.genai import types

    def inv(calls):
        return Invocation(
            user_content=types.Content(parts=[types.Part(text="q")], role="user"),
            intermediate_data=IntermediateData(
                tool_uses=[types.FunctionCall(name=c["tool_name"], args=c["tool_input"]) for c in calls]
            ),
        )

    return [inv(p) for p in preds], [inv(r) for r in refs]


def adk_scores(actual, expected):
    from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

    metric = EvalMetric(metric_name="tool_trajectory_avg_score", criterion=ToolTrajectoryCriterion(threshold=1.0))
    result = TrajectoryEvaluator(eval_metric=metric).evaluate_invocations(actual, expected)
    return [p.score for p in result.per_invocation_results]


@pytest.fixture(scope="module")
def workload(request):
    smoke = request.config.getoption("--benchmark-disable", default=False)
    try:
        tmpl = trajectory_workload.templates()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    return {
        "native": trajectory_workload.rows(0, 2_000 if smoke else 100_000, tmpl),
        "small": trajectory_workload.rows(0, 200 if smoke else 5_000, tmpl),
    }


def test_native(benchmark, workload):
    preds, refs = workload["native"]
    cols = benchmark(family_scores, preds, refs, "native")
    twin = family_scores(preds[:2000], refs[:2000], "python")
    for k in METRICS:
        assert cols[k][:2000].tolist() == twin[k].tolist()


def test_twin(benchmark, workload):
    preds, refs = workload["small"]
    cols = benchmark(family_scores, preds, refs, "python")
    assert (
        cols["tool_trajectory_avg_score"].tolist()
        == family_scores(preds, refs, "native")["tool_trajectory_avg_score"].tolist()
    )


def test_adk(benchmark, workload):
    pytest.importorskip("google.adk", reason="google-adk is not installed")
    preds, refs = workload["small"]
    actual, expected = adk_inputs(preds, refs)
    scores = benchmark(adk_scores, actual, expected)
    assert scores == family_scores(preds, refs, "native")["tool_trajectory_avg_score"].tolist()
