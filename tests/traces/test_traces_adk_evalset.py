"""Acceptance 2: the ADK eval set written from traces loads with google-adk's own loader (the
EvalSet schema itself, not its legacy conversion) and scores with its TrajectoryEvaluator:
the observed trajectory is the expected one, so replaying it scores 1 and a changed call
does not."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is in the test extra")
try:
    from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
    from google.adk.evaluation.eval_set import EvalSet
    from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator
except ImportError as exc:  # pragma: no cover - depends on the environment
    pytest.skip(f"google-adk is not installed ({exc}); pip install 'respeval[test]'", allow_module_level=True)

from _helpers import otel_agent
from respeval import traces
from respeval.agents.loaders import load_eval_set


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("adk")
    rec = otel_agent.run(otel_agent.conversations(15, seed=8), "semconv", seed=2)
    spans = root / "spans.jsonl"
    otel_agent.write_lines(spans, rec.span_lines)
    evalset = root / "review.evalset.json"
    out = root / "cases.jsonl"
    report = traces.from_traces([str(spans)], out=str(out), adk_evalset=str(evalset))
    return evalset, out, rec, report


def _metric(match_type="EXACT"):
    return EvalMetric(
        metric_name="tool_trajectory_avg_score",
        criterion=ToolTrajectoryCriterion(threshold=1.0, match_type=match_type),
    )


def test_loads_with_adks_loader(built):
    evalset, out, rec, report = built
    text = evalset.read_text()
    direct = EvalSet.model_validate_json(text)  # the schema itself: no legacy conversion
    loaded = load_eval_set_from_file(str(evalset), "review")
    assert loaded == direct
    assert len(direct.eval_cases) == len(rec.expected) == report.adk_cases
    assert {c.eval_id for c in direct.eval_cases} == {e.trace_id for e in rec.expected}


def test_expected_trajectory_is_the_observed_one(built):
    evalset, out, rec, _ = built
    direct = EvalSet.model_validate_json(evalset.read_text())
    wants = {e.trace_id: e for e in rec.expected}
    for case in direct.eval_cases:
        want = wants[case.eval_id]
        calls = [
            {"name": u.name, "arguments": u.args} for inv in case.conversation for u in inv.intermediate_data.tool_uses
        ]
        assert calls == want.tool_calls
        users = [inv.user_content.parts[0].text for inv in case.conversation]
        assert users == [m["content"] for m in want.messages if m["role"] == "user"]
        assert case.conversation[-1].final_response.parts[0].text == want.response


@pytest.mark.parametrize("match_type", ["EXACT", "IN_ORDER", "ANY_ORDER"])
def test_scores_with_adks_trajectory_evaluator(built, match_type):
    evalset, *_ = built
    direct = EvalSet.model_validate_json(evalset.read_text())
    evaluator = TrajectoryEvaluator(eval_metric=_metric(match_type))
    changed = 0
    for case in direct.eval_cases:
        expected = case.conversation
        same = evaluator.evaluate_invocations(expected, expected)
        assert same.overall_score == 1.0
        calls = [u for inv in expected for u in inv.intermediate_data.tool_uses]
        if calls:
            actual = [inv.model_copy(deep=True) for inv in expected]
            for inv in actual:
                for use in inv.intermediate_data.tool_uses:
                    use.args = {**(use.args or {}), "city": "Atlantis"}
            result = evaluator.evaluate_invocations(actual, expected)
            assert result.overall_score < 1.0
            changed += 1
    assert changed > 0


def test_respevals_own_reader_agrees(built):
    evalset, out, rec, _ = built
    mine = load_eval_set(evalset)
    rows = {json.loads(x)["trace_id"]: json.loads(x) for x in out.read_text().splitlines()}
    for case in mine.cases:
        calls = [{"name": c["name"], "arguments": c["args"]} for inv in case.invocations for c in inv.calls]
        assert calls == rows[case.eval_id]["tool_calls"]


def test_a_case_adk_cannot_hold_is_left_out_and_counted(tmp_path):
    line = {
        "trace_id": "t1",
        "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
        "response": {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[1, 2]"}}],
                    }
                }
            ]
        },
    }
    ok = dict(line, trace_id="t2")
    ok["response"] = {"choices": [{"message": {"role": "assistant", "content": "hello"}}]}
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps(ok) + "\n")
    evalset = tmp_path / "x.evalset.json"
    report = traces.from_traces([str(path)], adk_evalset=str(evalset))
    assert (report.adk_cases, report.adk_left_out) == (1, 1)
    assert report.unreadable_trajectories == 1
    assert [c.eval_id for c in EvalSet.model_validate_json(evalset.read_text()).eval_cases] == ["t2"]
