"""Library functions, the metric family protocol, the registry, and clear errors."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from respeval import agents
from respeval.agents.adk import Criterion, evaluate_case, load_eval_config
from respeval.agents.analysis import compare, pass_at_k, pass_hat_k, summarize_runs
from respeval.agents.arguments import ArgumentMatcher, Rules, align, casefold, numeric, unordered
from respeval.agents.loaders import AgentDataError, EvalCase, Invocation, load_eval_set
from respeval.metrics import REGISTRY, MetricOptions, RowValueError
from respeval.metrics.trajectory import TrajectoryFamily, normalize_match_type, trajectory

A = {"tool_name": "a", "tool_input": {"x": 1}}
B = {"tool_name": "b", "tool_input": {"y": "z"}}


def test_registry_names_and_family():
    for name in ("trajectory_exact_match", "trajectory_precision", "tool_trajectory_avg_score", "response_match_score"):
        assert name in REGISTRY
    assert REGISTRY["trajectory_recall"].inputs == "json"
    fams = REGISTRY.build_families(
        ["trajectory_recall", "trajectory_single_tool_use"],
        MetricOptions(params={"trajectory_single_tool_use": {"tool_name": "b"}}),
    )
    (fam,) = fams
    prepared = fam.prepare([[A, B], [A], "[]", None])
    chunk = fam.score(prepared, [[B], [A, A], [], []])
    assert chunk.columns["trajectory_recall"][:3].tolist() == [0.5, 1.0, 1.0]
    assert chunk.columns["trajectory_single_tool_use[b]"][:3].tolist() == [1.0, 0.0, 0.0]
    assert list(chunk.errors) == [3] and "reference_trajectory" in chunk.errors[3]
    assert np.isnan(chunk.columns["trajectory_recall"][3])
    assert chunk.stats[3].tolist() == [0.0] * chunk.stats.shape[1]
    corpus = fam.corpus(chunk.stats[:3].sum(axis=0), 3)
    assert corpus["trajectory_recall"] == pytest.approx(2.5 / 3)
    assert corpus["trajectory_recall_micro"] == pytest.approx(2 / 3)


def test_library_error_names_row_and_call():
    with pytest.raises(RowValueError, match=r"row 1: predicted_trajectory: call 0 \(a\): 'tool_input' is a list"):
        trajectory([[A], [{"tool_name": "a", "tool_input": [1]}]], [[A], [A]])
    res = trajectory([[A], "{bad"], [[A], [A]], on_error="record")
    assert res.errors == {1: res.errors[1]} and "not JSON" in res.errors[1]
    assert res.corpus_scores()["trajectory_recall"] == 1.0


def test_empty_conventions():
    res = trajectory([[], [A], []], [[], [], [A]])
    assert res["trajectory_exact_match"].tolist() == [1.0, 0.0, 0.0]
    assert res["trajectory_precision"].tolist() == [1.0, 0.0, 0.0]
    assert res["trajectory_recall"].tolist() == [1.0, 1.0, 0.0]
    nan = trajectory([[], [A], [A]], [[], [], [A]], empty="nan")
    assert sorted(nan.errors) == [0, 1] and "empty" in nan.errors[1]
    assert nan.corpus_scores()["trajectory_exact_match"] == 1.0


def test_arrow_columns_json_text_and_nested():
    preds = pa.array([json.dumps([A, B]), json.dumps([])])
    refs = pa.array([[{"tool_name": "a", "tool_input": {"x": 1, "w": None}}], []])  # struct: null fields dropped
    res = trajectory(preds, refs)
    assert res["trajectory_recall"].tolist() == [1.0, 1.0]
    assert res.to_arrow().num_rows == 2


def test_name_normalisation_and_ignore_lists():
    p = [[{"tool_name": "mcp__fs__read", "tool_input": {}}, {"tool_name": "think", "tool_input": {"t": "."}}]]
    r = [[{"tool_name": "read", "tool_input": {}}]]
    assert trajectory(p, r)["trajectory_exact_match"][0] == 0.0
    res = trajectory(p, r, strip_namespace=True, ignore_tools=["think"])
    assert res["trajectory_exact_match"][0] == 1.0
    assert "ignore=think" in res.signature


def test_own_metrics_values():
    p = [[A, A, B, {"tool_name": "c", "tool_input": {}}]]
    r = [[B, A]]
    res = trajectory(
        p,
        r,
        [
            "trajectory_f1",
            "trajectory_lcs_recall",
            "trajectory_lcs_precision",
            "trajectory_edit_similarity",
            "trajectory_redundant_rate",
            "trajectory_extra_calls",
        ],
    )
    assert res["trajectory_f1"][0] == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert res["trajectory_lcs_recall"][0] == 0.5 and res["trajectory_lcs_precision"][0] == 0.25
    assert res["trajectory_edit_similarity"][0] == pytest.approx(1 - 3 / 4)
    assert res["trajectory_redundant_rate"][0] == 0.25 and res["trajectory_extra_calls"][0] == 2.0
    conf = {t.tool: (t.tp, t.fp, t.fn) for t in res.tool_confusion()}
    assert conf == {"a": (1, 1, 0), "b": (1, 0, 0), "c": (0, 1, 0)}
    assert trajectory([[B]], [[A]]).substitutions() == {("a", "b"): 1}


def test_option_errors():
    with pytest.raises(ValueError, match="unknown match type 'FUZZY'"):
        trajectory([[A]], [[A]], ["tool_trajectory_avg_score"], match_type="FUZZY")
    assert normalize_match_type(" in-order ") == "IN_ORDER"
    with pytest.raises(ValueError, match="needs tool_name"):
        trajectory([[A]], [[A]], ["trajectory_single_tool_use"])
    with pytest.raises(TypeError, match="unknown option"):
        trajectory([[A]], [[A]], tool="a")
    with pytest.raises(ValueError, match="2 rows but references has 1"):
        trajectory([[A], [A]], [[A]])
    with pytest.raises(TypeError, match="not a single str"):
        trajectory("[]", [[A]])
    with pytest.raises(ValueError, match="unknown trajectory metric"):
        TrajectoryFamily(["trajectory_bogus"])


def test_wilson_and_bootstrap():
    res = trajectory([[A]] * 8 + [[]] * 2, [[A]] * 10, ["trajectory_exact_match", "trajectory_recall"])
    w = res.wilson()["trajectory_exact_match"]
    assert w.low < 0.8 == w.mid < w.high
    b = res.bootstrap(200, seed=3)
    assert b["trajectory_recall"].low <= 0.8 <= b["trajectory_recall"].high
    assert res.bootstrap(200, seed=3) == b


def _inv(calls, text=""):
    return Invocation("i", "q", text, [{"name": n, "args": a} for n, a in calls])


def test_case_errors_name_the_case_and_invocation():
    case = EvalCase("case-9", [_inv([("f", {"x": 1})]), _inv([])])
    with pytest.raises(AgentDataError, match="eval case 'case-9': 1 actual invocations but 2 expected"):
        evaluate_case([_inv([])], case)
    out = evaluate_case([_inv([])], case, on_error="record")
    assert out.status == "NOT_EVALUATED" and "1 actual invocations" in out.metrics[0].reason
    bad = [_inv([]), Invocation("i", "q", "", [{"name": "f", "args": [1]}])]
    with pytest.raises(AgentDataError, match="eval case 'case-9', invocation 1: .*args"):
        evaluate_case(bad, case, (Criterion("tool_trajectory_avg_score", 1.0),))


def test_case_status_rules():
    case = EvalCase("c", [_inv([("f", {})], "the answer is four")])
    crit = (Criterion("tool_trajectory_avg_score", 1.0), Criterion("response_match_score", 0.5))
    assert evaluate_case([_inv([("f", {})], "the answer is four")], case, crit).status == "PASSED"
    assert evaluate_case([_inv([("f", {})], "no")], case, crit).status == "FAILED"
    scenario = EvalCase("s", None, scenario={"starting_prompt": "hi", "conversation_plan": "x"})
    assert evaluate_case([_inv([])], scenario, crit).status == "NOT_EVALUATED"


def test_eval_config_and_loader_errors(tmp_path):
    cfg = load_eval_config({"criteria": {"tool_trajectory_avg_score": {"threshold": 0.5, "match_type": "any order"}}})
    assert cfg[0].match_type == "ANY_ORDER" and cfg[0].threshold == 0.5
    with pytest.raises(AgentDataError, match="unknown match type"):
        load_eval_config({"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": "SOMETIMES"}}})
    with pytest.raises(AgentDataError, match="none of the criteria"):
        load_eval_config({"criteria": {"safety_v1": 0.8}})
    # a JSON string "false" would be truthy: refused, naming the field (issue 28: siblings of 4)
    with pytest.raises(AgentDataError, match="ignore_args must be true or false, got 'false'"):
        load_eval_config({"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "ignore_args": "false"}}})
    f = tmp_path / "bad.evalset.json"
    f.write_text(
        json.dumps(
            {
                "eval_set_id": "s",
                "eval_cases": [
                    {
                        "eval_id": "c1",
                        "conversation": [
                            {
                                "user_content": {"parts": [{"text": "hi"}]},
                                "intermediate_data": {"tool_uses": [{"name": "f", "args": "x"}]},
                            }
                        ],
                    }
                ],
            }
        )
    )
    with pytest.raises(
        AgentDataError, match=r"bad.evalset.json, eval case 'c1', invocation 0: tool_uses\[0\] \(f\): args is a str"
    ):
        load_eval_set(f)
    f.write_text(json.dumps([{"query": "q", "expected_tool_use": [{"tool_name": "f"}]}]))
    with pytest.raises(AgentDataError, match="invocation 0: expected_tool_use.0. .f. has no tool_input"):
        load_eval_set(f)
    f.write_text("{not json")
    with pytest.raises(AgentDataError, match="not JSON"):
        load_eval_set(f)


def test_pass_at_k_and_comparison():
    assert pass_at_k(4, 1, 1) == 0.25 and pass_at_k(4, 1, 4) == 1.0 and pass_at_k(4, 0, 2) == 0.0
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    s = summarize_runs({"a": [True, True], "b": [True, False], "c": [False, False]})
    assert (
        s.pass_at[1] == pytest.approx(0.5)
        and s.pass_at[2] == pytest.approx(2 / 3)
        and s.pass_hat[2] == pytest.approx(1 / 3)
    )
    assert isinstance(s, agents.PassAtKSummary)
    with pytest.warns(DeprecationWarning, match="PassAtKSummary"):
        assert agents.RunSummary is agents.PassAtKSummary  # the old name, kept one release
    with pytest.raises(ValueError, match="same number of runs"):
        summarize_runs({"a": [True], "b": [True, False]})
    c = compare({"x": 0, "y": 0, "z": 1, "w": 0}, {"x": 1, "y": 1, "z": 1, "w": 1}, seed=1)
    assert c.difference == 0.75 and c.mcnemar == (0, 3, 0.25)
    assert compare([0.1, 0.2], [0.1, 0.2]).difference == 0.0
    with pytest.raises(ValueError, match="only one agent"):
        compare({"x": 1}, {"y": 1})


def test_argument_matchers_and_alignment():
    m = ArgumentMatcher({"price": numeric(rel=0.01), "city": casefold(), "tags": unordered()})
    s = m.score(
        {"price": 100.5, "city": "PARIS", "tags": ["b", "a"], "extra": 1},
        {"price": 100, "city": "paris", "tags": ["a", "b"], "n": 2},
    )
    assert s.score == 0.75 and s.missing == ("n",) and s.extra == ("extra",)
    r = [{"tool_name": "f", "tool_input": {"a": 1, "b": 2}}, {"tool_name": "g", "tool_input": {}}]
    p = [{"tool_name": "g", "tool_input": {}}, {"tool_name": "f", "tool_input": {"a": 1, "b": 3}}]
    any_order = align(p, r)
    assert any_order.recall == 0.75 and any_order.precision == 0.75
    in_order = align(p, r, order="in_order")
    assert in_order.recall == 0.5
    loose = align(p, r, rules=Rules({"f": ArgumentMatcher({"b": numeric(abs=1)})}))
    assert loose.f1 == 1.0
    assert align([], []).f1 == 1.0 and align([], r).recall == 0.0


def test_report_sections_escape_and_carry_the_numbers():
    from respeval.agents.evaluation import evaluate_agent
    from respeval.agents.example import example_paths
    from respeval.agents.report import agent_section, trajectory_section

    evil = {"tool_name": "<script>x</script>", "tool_input": {"q": "</td><img src=x>"}}
    res = trajectory([[evil], [A]], [[A], [A]], ["trajectory_recall"])
    sec = trajectory_section(res, ids=["x", "y"])
    assert "&lt;script&gt;x&lt;/script&gt;" in sec["html"] and "<script>" not in sec["html"]
    assert "<img" not in sec["html"]
    (worst,) = sec["data"]["worst"]
    assert worst["row"] == "x" and worst["value"] == 0.0
    assert worst["called"] == [{"tool": "<script>x</script>", "args": '{"q":"</td><img src=x>"}', "matched": False}]
    assert worst["expected"] == [
        {
            "tool": A["tool_name"],
            "args": json.dumps(A["tool_input"], separators=(",", ":"), sort_keys=True),
            "matched": False,
        }
    ]
    json.dumps(sec["data"], allow_nan=False)  # JSON-ready: it goes into a run summary
    expected, runs = example_paths()
    report = evaluate_agent(expected, runs)
    out = agent_section(report)
    assert "umbrella_today" in out["html"] and "pass^k" in out["html"]
    assert out["data"]["trajectory"]["rows"] == 8
    json.dumps(out["data"], allow_nan=False)


def test_micro_values_of_calls_that_are_all_empty_follow_the_empty_convention(impl):
    """No predicted or no reference call in the whole corpus: the micro values take the rows'
    convention on the pooled sums (google: an empty prediction is precise only against an
    empty reference, an empty reference is always recalled; nan: undefined), as the macro
    values do, not the 0.0 of a bare 0/0."""
    metrics = ["trajectory_precision", "trajectory_recall", "trajectory_f1"]

    def micro(pred, ref, empty):
        corpus = trajectory(pred, ref, metrics, empty=empty, implementation=impl).corpus_scores()
        return [corpus[f"{m}_micro"] for m in metrics], [corpus[m] for m in metrics]

    assert micro([[], []], [[], []], "google") == ([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    assert micro([[], []], [[A], [B]], "google") == ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert micro([[A], [B]], [[], []], "google") == ([0.0, 1.0, 0.0], [0.0, 1.0, 0.0])
    assert micro([[A], [A]], [[A], []], "google") == ([0.5, 1.0, pytest.approx(2 / 3)], [0.5, 1.0, 0.5])
    got, _ = micro([[], []], [[], []], "nan")
    assert all(np.isnan(v) for v in got)


def test_arguments_nested_too_deeply_name_the_path_in_brief(impl):
    deep: dict = {}
    inner = deep
    for _ in range(150):
        inner["k"] = {}
        inner = inner["k"]
    with pytest.raises(RowValueError) as info:
        trajectory([[{"tool_name": "a", "tool_input": deep}]], [[A]], implementation=impl)
    message = str(info.value)
    assert "row 0: predicted_trajectory: call 0 (a) tool_input.k.k" in message
    assert message.endswith(".k.k is nested more than 100 levels deep") and "…" in message
    assert len(message) < 160
