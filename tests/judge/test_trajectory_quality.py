"""Agent-quality metrics over a trajectory (``trajectory_hallucination``,
``trajectory_tool_use_quality``) end to end against the local OpenAI-wire server, on
trace-case messages worked out by hand; through ``respeval evaluate`` on the cases
``respeval dataset from-traces`` builds from the real OpenTelemetry SDK's spans."""

from __future__ import annotations

import json

import pytest

from _helpers import rag_judge
from _helpers.judge_server import JudgeServer
from respeval import judge
from respeval.judge import OpenAIChatModel
from respeval.judge.methods.trajectory import TrajectoryHallucination, TrajectoryToolUseQuality, conversation_of


def _call(cid, name, args):
    return {"role": "assistant", "content": "", "tool_calls": [{"id": cid, "name": name, "arguments": args}]}


def _result(cid, content):
    return {"role": "tool", "tool_call_id": cid, "content": content}


TRIP = {
    "id": "trip",
    "messages": [
        {"role": "system", "content": "You plan trips."},
        {"role": "user", "content": "What is the weather in Lisbon? I heard hotels are cheap."},
        _call("c1", "get_weather", {"city": "Lisbon"}),
        _result("c1", '{"forecast": "sunny", "temperature": "24 degrees"}'),
        # claim 1 from the tool output, claim 2 only from the user's words: a hallucination
        {"role": "assistant", "content": "Lisbon forecast: sunny, temperature 24 degrees. Hotels in Lisbon are cheap."},
        {"role": "user", "content": "Book a hotel there."},
        _call("c2", "book_hotel", {"city": "Lisbon", "nights": 2}),
        _result("c2", "booked hotel Miramar, confirmation 8812"),
        # checked against both outputs so far
        {"role": "assistant", "content": "Booked hotel Miramar, confirmation 8812. Lisbon forecast: sunny."},
    ],
}
NO_TOOLS = {
    "id": "chat",
    "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello there."}],
}
BROKEN = {
    "id": "broken",
    "messages": [
        {"role": "user", "content": "Weather?"},
        _call("c1", "get_weather", {"city": "Oslo"}),
        _result("c1", "rain [[malformed]]"),
        {"role": "assistant", "content": "Oslo has rain. It is cold."},
    ],
}


@pytest.fixture(scope="module")
def server():
    with JudgeServer(responder=rag_judge.respond) as s:
        yield s


def _model(server):
    return OpenAIChatModel("judge-m", base_url=server.url)


def test_conversation_of_reads_lists_and_json_text():
    conv = conversation_of(json.dumps(TRIP["messages"]))
    assert [len(ex.calls) for ex in conv.exchanges] == [1, 1] and conv.instructions == "You plan trips."
    with pytest.raises(ValueError, match="field 'messages'"):
        conversation_of("not json")
    with pytest.raises(ValueError, match="non-empty list"):
        conversation_of([])


def test_trajectory_hallucination_by_hand(server):
    rows = {r.id: r for r in judge.run([TRIP, NO_TOOLS, BROKEN], _model(server), method=TrajectoryHallucination()).rows}
    trip = rows["trip"]
    assert [(d["exchange"], d["supported"]) for d in trip.details] == [(1, True), (1, False), (2, True), (2, True)]
    assert trip.details[1]["claim"] == "Hotels in Lisbon are cheap."
    assert all(d["reason"] for d in trip.details)
    assert trip.score == (1 / 2 + 2 / 2) / 2  # ADK's rule: the mean of the exchanges' shares
    assert "Hotels in Lisbon are cheap." in trip.explanation
    chat = rows["chat"]
    assert chat.status == "unscored" and chat.unscored_reason.startswith("no tool output in the trajectory")
    broken = rows["broken"]  # the judge leaves a claim without a verdict, twice
    assert broken.status == "unscored"
    assert broken.unscored_reason.startswith("exchange 1: claim verification: unparseable")


def test_trajectory_tool_use_quality(server):
    bad_args = json.loads(
        json.dumps(TRIP).replace("booked hotel Miramar", "[[fail-right_arguments]] booked hotel Miramar")
    )
    bad_args["id"] = "bad"
    rows = {
        r.id: r for r in judge.run([TRIP, bad_args, NO_TOOLS], _model(server), method=TrajectoryToolUseQuality()).rows
    }
    assert rows["trip"].score == 1.0 and [d["rubric"] for d in rows["trip"].details] == [
        "right_tools",
        "right_arguments",
        "results_used",
    ]
    bad = rows["bad"]
    assert bad.score == 2 / 3 and [d["score"] for d in bad.details] == [1.0, 0.0, 1.0]
    assert bad.explanation.endswith("not: right_arguments")
    assert rows["chat"].unscored_reason == "no tool calls in the trajectory"


def test_evaluate_on_cases_built_from_sdk_spans(server, tmp_path):
    pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is in the test extra")
    from _helpers import otel_agent
    from respeval import traces
    from respeval.evaluate import evaluate

    rec = otel_agent.run(otel_agent.conversations(6, seed=11), "semconv", seed=3)
    spans = tmp_path / "spans.jsonl"
    otel_agent.write_lines(spans, rec.span_lines)
    cases = tmp_path / "cases.jsonl"
    traces.from_traces([str(spans)], out=str(cases))
    result = evaluate(
        cases, ["trajectory_hallucination", "trajectory_tool_use_quality"], model=_model(server), id_column="trace_id"
    )
    table = result.table.to_pylist()
    assert len(table) == 6
    want = {e.trace_id: e for e in rec.expected}
    for row in table:
        expected = want[row["trace_id"]]
        if expected.tool_calls:
            # the scripted answers ("Here is your plan for CITY (i.t).") are in no tool output
            assert row["trajectory_hallucination/status"] == "scored"
            details = json.loads(row["trajectory_hallucination/details"])
            assert details and all(d["reason"] for d in details)
            assert row["trajectory_tool_use_quality/score"] == 1.0
        else:
            assert row["trajectory_hallucination/unscored_reason"].startswith("no tool output")
            assert row["trajectory_tool_use_quality/unscored_reason"] == "no tool calls in the trajectory"
