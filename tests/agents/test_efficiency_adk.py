"""respeval's efficiency values against google-adk 2.13's own informational evaluators
(``tool_call_count_v1``, ``inference_call_count_v1``, ``token_usage_v1``,
``invocation_duration_v1``) on the shared ADK sessions and eval files, and on generated
sessions and invocations carrying usage metadata, model versions and timings: identical
values required, per invocation and per case."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _helpers.paths import shared_data
from respeval.agents.efficiency import DURATION_FIELDS, TOKEN_FIELDS, case_efficiency
from respeval.agents.loaders import invocations_from_events, load_eval_set, load_session, parse_invocations

try:
    from google.adk.evaluation._efficiency_evaluators import (
        _InferenceCallCountV1Evaluator,
        _InvocationDurationV1Evaluator,
        _TokenUsageV1Evaluator,
        _ToolCallCountV1Evaluator,
    )
    from google.adk.evaluation.eval_case import Invocation as AdkInvocation
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator
    from google.adk.evaluation.local_eval_sets_manager import (
        convert_eval_set_to_pydantic_schema,
        load_eval_set_from_file,
    )
    from google.adk.sessions.session import Session as AdkSession
except ImportError as exc:  # pragma: no cover - depends on the environment
    pytest.skip(
        f"google-adk is not installed ({exc}); pip install 'respeval[test]' to run the ADK differential tests",
        allow_module_level=True,
    )


def _adk_values(invocations):
    """ADK's four evaluators: per invocation, and the case's overall values and breakdowns."""
    tools = _ToolCallCountV1Evaluator().evaluate_invocations(invocations)
    model = _InferenceCallCountV1Evaluator().evaluate_invocations(invocations)
    tokens = _TokenUsageV1Evaluator().evaluate_invocations(invocations)
    duration = _InvocationDurationV1Evaluator().evaluate_invocations(invocations)
    per = [
        {
            "tool_call_count": t.score,
            "inference_call_count": m.score,
            "token_usage": k.token_usage_details.model_dump(),
            "invocation_duration": d.duration_details.model_dump(),
            "tokens_score": k.score,
            "duration_score": d.score,
        }
        for t, m, k, d in zip(
            tools.per_invocation_results,
            model.per_invocation_results,
            tokens.per_invocation_results,
            duration.per_invocation_results,
        )
    ]
    overall = {
        "tool_call_count": tools.overall_score,
        "inference_call_count": model.overall_score,
        "tokens_score": tokens.overall_score,
        "duration_score": duration.overall_score,
        "token_usage": (
            tokens.overall_token_usage_details.model_dump() if tokens.overall_token_usage_details else None
        ),
        "invocation_duration": (
            duration.overall_duration_details.model_dump() if duration.overall_duration_details else None
        ),
    }
    return per, overall


def _same(value, want):
    """Equal, and of the same kind: a value is never None where ADK has a number, nor 0 where
    ADK has None."""
    if want is None:
        return value is None
    return value is not None and float(value) == float(want)


def _check(invocations, adk_invocations, where):
    case = case_efficiency("c", invocations)
    per, overall = _adk_values(adk_invocations)
    assert len(case.invocations) == len(per), where
    for k, (mine, want) in enumerate(zip(case.invocations, per)):
        at = f"{where}, invocation {k}"
        assert _same(mine.tool_call_count, want["tool_call_count"]), at
        assert _same(mine.inference_call_count, want["inference_call_count"]), at
        assert _same(mine.token_usage["total_tokens"], want["tokens_score"]), at
        assert _same(mine.invocation_duration["total_seconds"], want["duration_score"]), at
        for name in TOKEN_FIELDS:
            assert _same(mine.token_usage[name], want["token_usage"][name]), (at, name)
        for name in DURATION_FIELDS:
            assert _same(mine.invocation_duration[name], want["invocation_duration"][name]), (at, name)
    assert _same(case.tool_call_count, overall["tool_call_count"]), where
    assert _same(case.inference_call_count, overall["inference_call_count"]), where
    assert _same(case.token_usage["total_tokens"], overall["tokens_score"]), where
    assert _same(case.invocation_duration["total_seconds"], overall["duration_score"]), where
    if per:
        for name in TOKEN_FIELDS:
            assert _same(case.token_usage[name], overall["token_usage"][name]), (where, name)
        for name in DURATION_FIELDS:
            assert _same(case.invocation_duration[name], overall["invocation_duration"][name]), (where, name)
    return case


SESSIONS = [
    ("adk-samples", "customer-service", "eval", "sessions", "123.session.json"),
    ("adk-samples", "personalized-shopping", "tests", "example_interactions", "text_search_floral_dress.session.json"),
]


@pytest.mark.parametrize("parts", SESSIONS, ids=lambda p: p[1])
def test_shared_sessions_equal_adk(parts):
    path = shared_data("agents", "adk", *parts)
    data = json.loads(path.read_text(encoding="utf-8"))
    adk = EvaluationGenerator.convert_events_to_eval_invocations(AdkSession.model_validate(data).events)
    case = _check(load_session(path).invocations, adk, path.name)
    assert case.tool_calls and case.tool_calls > 0  # these sessions do call tools: the test can fail


def _eval_files():
    root = shared_data("agents", "adk")
    return sorted(p for p in root.rglob("*.json") if p.name.endswith((".test.json", ".evalset.json")))


def _adk_eval_set(path):
    try:
        return load_eval_set_from_file(str(path), "x")
    except KeyError:  # a legacy turn list: one case per file, as AgentEvaluator converts it
        data = json.loads(path.read_text(encoding="utf-8"))
        return convert_eval_set_to_pydantic_schema("x", [{"name": str(path), "data": data, "initial_session": {}}])


def test_shared_eval_files_equal_adk():
    files = _eval_files()
    assert len(files) >= 10
    checked = 0
    for path in files:
        mine = load_eval_set(path)
        theirs = _adk_eval_set(path)
        assert len(mine.cases) == len(theirs.eval_cases), path
        for case, adk_case in zip(mine.cases, theirs.eval_cases):
            if case.invocations is None:
                assert adk_case.conversation is None
                continue
            _check(case.invocations, adk_case.conversation, f"{path.name} {case.eval_id}")
            checked += 1
    assert checked >= 10


# --------------------------------------------------------------------------- generated

_count = st.none() | st.integers(0, 5000)


@st.composite
def _usage(draw):
    names = ["prompt_token_count", "tool_use_prompt_token_count", "candidates_token_count", "thoughts_token_count"]
    names.append("cached_content_token_count")
    camel = draw(st.booleans())
    out = {}
    for name in names:
        value = draw(_count)
        if value is None and draw(st.booleans()):
            continue  # absent rather than null
        key = name if not camel else name.split("_")[0] + "".join(p.title() for p in name.split("_")[1:])
        out[key] = value
    return out


@st.composite
def _event(draw, invocation_id, k):
    kind = draw(st.sampled_from(["call", "response", "text", "empty"]))
    parts = {
        "call": [{"function_call": {"name": draw(st.sampled_from(["search", "book"])), "args": {"q": k}}}],
        "response": [{"function_response": {"name": "search", "response": {"ok": True}}}],
        "text": [{"text": draw(st.sampled_from(["Done.", "Looking it up", "Here you go"]))}],
        "empty": [],
    }[kind]
    event = {
        "invocation_id": invocation_id,
        "author": "agent",
        "id": f"{invocation_id}-{k}",
        "timestamp": float(k),
        "content": {"role": "model", "parts": parts},
    }
    if draw(st.booleans()):
        event["usage_metadata"] = draw(_usage())
    if draw(st.integers(0, 3)) == 0:
        event["model_version"] = draw(st.sampled_from(["gemini-2.5-flash", ""]))
    return event


@st.composite
def _session_events(draw):
    events = []
    for i in range(draw(st.integers(1, 4))):
        inv = f"inv-{i}"
        events.append(
            {
                "invocation_id": inv,
                "author": "user",
                "id": f"{inv}-u",
                "timestamp": 0.0,
                "content": {"role": "user", "parts": [{"text": f"question {i}"}]},
            }
        )
        for k in range(draw(st.integers(0, 5))):
            events.append(draw(_event(inv, k)))
    return events


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_session_events())
def test_generated_sessions_equal_adk(events):
    session = {"id": "s", "app_name": "app", "user_id": "u", "state": {}, "events": events, "last_update_time": 0.0}
    adk = EvaluationGenerator.convert_events_to_eval_invocations(AdkSession.model_validate(session).events)
    _check(invocations_from_events(events), adk, "generated session")


_seconds = st.none() | st.floats(0, 30, allow_nan=False).map(lambda x: round(x, 4))


@st.composite
def _invocation(draw):
    inv = {"invocation_id": draw(st.sampled_from(["a", "b"])), "user_content": {"parts": [{"text": "hi"}]}}
    shape = draw(st.sampled_from(["events", "intermediate", "none"]))
    if shape == "events":
        inv["intermediate_data"] = {"invocation_events": [draw(_event("x", k)) for k in range(draw(st.integers(0, 4)))]}
        for e in inv["intermediate_data"]["invocation_events"]:
            for key in ("invocation_id", "id", "timestamp"):
                e.pop(key)
    elif shape == "intermediate":
        calls = [{"name": "search", "args": {"q": k}} for k in range(draw(st.integers(0, 3)))]
        inv["intermediate_data"] = {"tool_uses": calls, "tool_responses": [], "intermediate_responses": []}
    total = draw(_seconds)
    if total is not None:
        inv["duration"] = total
        inv["model_duration"] = draw(_seconds)
        inv["tool_duration"] = draw(_seconds)
    return inv


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_invocation(), max_size=4))
def test_generated_invocations_equal_adk(items):
    adk = [AdkInvocation.model_validate(item) for item in items]
    _check(parse_invocations(items), adk, "generated invocations")


def test_a_hand_worked_case():
    """Two turns: 3 calls then 1; model events 2 and 1; tokens (10+2, 5+1) then (7, 3+4)."""
    items = [
        {
            "user_content": {"parts": [{"text": "q1"}]},
            "intermediate_data": {
                "invocation_events": [
                    {
                        "author": "a",
                        "usage_metadata": {"prompt_token_count": 10, "candidates_token_count": 5},
                        "content": {"parts": [{"function_call": {"name": "f"}}, {"function_call": {"name": "g"}}]},
                    },
                    {
                        "author": "a",
                        "usage_metadata": {"tool_use_prompt_token_count": 2, "thoughts_token_count": 1},
                        "content": {"parts": [{"function_call": {"name": "h"}}]},
                    },
                ]
            },
            "duration": 2.0,
            "model_duration": 1.5,
            "tool_duration": 0.25,
        },
        {
            "user_content": {"parts": [{"text": "q2"}]},
            "intermediate_data": {
                "invocation_events": [
                    {
                        "author": "a",
                        "model_version": "m",
                        "usage_metadata": {"promptTokenCount": 7, "candidatesTokenCount": 3, "thoughtsTokenCount": 4},
                        "content": {"parts": [{"function_call": {"name": "f"}}]},
                    }
                ]
            },
        },
    ]
    case = case_efficiency("c", parse_invocations(items))
    assert [i.tool_call_count for i in case.invocations] == [3.0, 1.0] and case.tool_call_count == 2.0
    assert [i.inference_call_count for i in case.invocations] == [2.0, 1.0] and case.inference_call_count == 1.5
    assert [i.token_usage["total_tokens"] for i in case.invocations] == [18, 14]
    assert case.token_usage["input_tokens"] == (12 + 7) / 2 and case.token_usage["output_tokens"] == (6 + 7) / 2
    assert case.token_usage["tool_use_tokens"] == 2 / 2  # reported by one turn, averaged over both
    assert case.invocation_duration == {
        "total_seconds": 2.0,
        "model_seconds": 1.5,
        "tool_seconds": 0.25,
        "framework_seconds": 0.25,
    }
    assert (case.tool_calls, case.model_calls, case.tokens_in, case.tokens_out, case.tokens_total) == (4, 3, 19, 13, 32)
    assert case.latency_s is None  # the second turn was not timed
    _check(parse_invocations(items), [AdkInvocation.model_validate(i) for i in items], "hand-worked")
