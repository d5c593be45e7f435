"""respeval against google-adk's own evaluators (TrajectoryEvaluator, RougeEvaluator) on the
shared data and on generated trajectories: identical values required.  Skips, with a
message, when google-adk is not installed (it is in the ``test`` extra)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _helpers.paths import shared_data
from respeval.agents.adk import _mean_in_order, response_match_scores, tool_trajectory_scores
from respeval.agents.loaders import Invocation, parse_invocations

try:
    from google.adk.evaluation.eval_case import IntermediateData
    from google.adk.evaluation.eval_case import Invocation as AdkInvocation
    from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
    from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator
    from google.genai import types
except ImportError as exc:  # pragma: no cover - depends on the environment
    pytest.skip(
        f"google-adk is not installed ({exc}); pip install 'respeval[test]' to run the ADK differential tests",
        allow_module_level=True,
    )

# the native run is skipped with a reason when the core is not built, never left out unsaid
MODES = [(mt, ia) for mt in ("EXACT", "IN_ORDER", "ANY_ORDER") for ia in (False, True)]


def _adk(inv: Invocation) -> AdkInvocation:
    return AdkInvocation(
        user_content=types.Content(parts=[types.Part(text=inv.user_text)], role="user"),
        final_response=types.Content(parts=[types.Part(text=inv.final_text)], role="model"),
        intermediate_data=IntermediateData(
            tool_uses=[types.FunctionCall(name=c["name"], args=c["args"]) for c in inv.calls]
        ),
    )


def _adk_trajectory(actual, expected, match_type, ignore_args):
    metric = EvalMetric(
        metric_name="tool_trajectory_avg_score",
        criterion=ToolTrajectoryCriterion(threshold=1.0, match_type=match_type, ignore_args=ignore_args),
    )
    result = TrajectoryEvaluator(eval_metric=metric).evaluate_invocations(
        [_adk(i) for i in actual], [_adk(i) for i in expected]
    )
    return [p.score for p in result.per_invocation_results], result.overall_score


def _adk_rouge(actual, expected):
    result = RougeEvaluator(EvalMetric(metric_name="response_match_score", threshold=0.8)).evaluate_invocations(
        [_adk(i) for i in actual], [_adk(i) for i in expected]
    )
    return [p.score for p in result.per_invocation_results], result.overall_score


def _check(actual, expected, impl):
    for mt, ia in MODES:
        want_per, want_overall = _adk_trajectory(actual, expected, mt, ia)
        per = tool_trajectory_scores(actual, expected, match_type=mt, ignore_args=ia, implementation=impl)
        assert per == want_per, (mt, ia)
        assert (_mean_in_order(per) if per else None) == want_overall, (mt, ia)


def test_shared_pairs_against_adk(impl):
    for pair in json.loads(shared_data("agents", "adk", "adk_invocation_pairs.json").read_text()):
        actual = parse_invocations(pair["actual_invocations"])
        expected = parse_invocations(pair["expected_invocations"])
        _check(actual, expected, impl)
        want_per, want_overall = _adk_rouge(actual, expected)
        per = response_match_scores(actual, expected)
        assert per == want_per and _mean_in_order(per) == want_overall, pair["eval_id"]


def test_german_responses_against_adk():
    for line in shared_data("agents", "adk", "rouge_german_pairs.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        a = [Invocation("a", "q", r["response"])]
        e = [Invocation("e", "q", r["reference"])]
        assert response_match_scores(a, e) == _adk_rouge(a, e)[0], r["id"]


# --- generated trajectories: few names and values, so duplicates and near-misses are common

_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.0, 1.0, 2.5, -0.0]) | st.sampled_from("xyZ"),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=6,
)
_args = st.none() | st.dictionaries(st.sampled_from(["city", "days", "q", "unit"]), _values, max_size=3)
_call = st.fixed_dictionaries({"name": st.sampled_from(["search", "get", "Get", "transfer_to_agent"]), "args": _args})
_traj = st.lists(_call, max_size=6)


@st.composite
def _conversation(draw):
    n = draw(st.integers(1, 4))
    expected = [
        Invocation(f"e{i}", "q", draw(st.sampled_from(["", "ok", "the Weather is fine"])), draw(_traj))
        for i in range(n)
    ]
    actual = []
    for i, e in enumerate(expected):
        calls = draw(st.one_of(st.just(list(e.calls)), _traj, st.permutations(e.calls).map(list)))
        if calls and draw(st.booleans()):
            calls = calls + [draw(st.sampled_from(calls))]  # a repeated call
        actual.append(
            Invocation(f"a{i}", "q", draw(st.sampled_from(["", "ok", "The weather is fine.", "Wetter gut"])), calls)
        )
    return actual, expected


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)  # impl: a name, the same for every example
@given(conv=_conversation())
def test_generated_trajectories_against_adk(impl, conv):
    actual, expected = conv
    _check(actual, expected, impl)
    assert response_match_scores(actual, expected) == _adk_rouge(actual, expected)[0]


def test_length_mismatch_raises_like_adk():
    from respeval.agents.loaders import AgentDataError

    a = [Invocation("a", "q", "x")]
    with pytest.raises(ValueError):
        _adk_trajectory(a, [], "EXACT", False)
    with pytest.raises(AgentDataError, match="1 actual invocations but 0 expected"):
        tool_trajectory_scores(a, [], eval_id="case-7")


# --- the shared pairs as ADK itself reads them, and random names and values ------------------


def _adk_parsed(raw: list) -> list[AdkInvocation]:
    return [AdkInvocation.model_validate(inv) for inv in raw]


def test_shared_pairs_as_adk_parses_them(impl):
    """ADK's evaluators on the invocations as ADK's own model reads the pair file (not as
    respeval's loader hands them over), so a loader slip cannot hide on both sides."""
    pairs = json.loads(shared_data("agents", "adk", "adk_invocation_pairs.json").read_text())
    assert len(pairs) == 42
    for pair in pairs:
        adk_actual, adk_expected = _adk_parsed(pair["actual_invocations"]), _adk_parsed(pair["expected_invocations"])
        actual = parse_invocations(pair["actual_invocations"])
        expected = parse_invocations(pair["expected_invocations"])
        for mt, ia in MODES:
            metric = EvalMetric(
                metric_name="tool_trajectory_avg_score",
                criterion=ToolTrajectoryCriterion(threshold=1.0, match_type=mt, ignore_args=ia),
            )
            want = TrajectoryEvaluator(eval_metric=metric).evaluate_invocations(adk_actual, adk_expected)
            per = tool_trajectory_scores(actual, expected, match_type=mt, ignore_args=ia, implementation=impl)
            assert per == [p.score for p in want.per_invocation_results], (pair["eval_id"], mt, ia)
        rouge = RougeEvaluator(EvalMetric(metric_name="response_match_score", threshold=0.8))
        want = rouge.evaluate_invocations(adk_actual, adk_expected)
        assert response_match_scores(actual, expected) == [p.score for p in want.per_invocation_results]


_any_name = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, width=64)
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
)
_any_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_any_name, inner, max_size=3), max_leaves=8
)
_any_call = st.fixed_dictionaries(
    {
        "name": _any_name | st.sampled_from(["f", "g"]),
        "args": st.none() | st.dictionaries(_any_name | st.sampled_from(["k"]), _any_values, max_size=3),
    }
)


@st.composite
def _random_conversation(draw):
    n = draw(st.integers(1, 3))
    expected, actual = [], []
    for i in range(n):
        e = draw(st.lists(_any_call, max_size=5))
        a = draw(st.one_of(st.lists(_any_call, max_size=5), st.permutations(e).map(list), st.just(list(e))))
        if a and draw(st.booleans()):
            a = a + [draw(st.sampled_from(a))]  # a duplicate
        expected.append(Invocation(f"e{i}", "q", draw(st.text(max_size=30)), e))
        actual.append(Invocation(f"a{i}", "q", draw(st.text(max_size=30)), a))
    return actual, expected


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)  # impl: a name, the same for every example
@given(conv=_random_conversation())
def test_random_names_and_values_against_adk(impl, conv):
    """Any tool names (empty, non-ASCII), any argument keys, integers past 2**64, floats of
    every size (-0.0, 1e308, integral floats equal to integers), nested lists and objects."""
    actual, expected = conv
    _check(actual, expected, impl)
    assert response_match_scores(actual, expected) == _adk_rouge(actual, expected)[0]
