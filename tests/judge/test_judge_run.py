"""``judge.run``: one entry point for every registered method, one report protocol, and the
batch-or-live switch in one place (live against the scripted fake, batch against the fake
provider batch APIs on 127.0.0.1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from _helpers import rag_judge
from _helpers.batch_api import BatchAPI
from _helpers.judge_server import JudgeServer, default_responder
from respeval import judge
from respeval.agents.conversation import Conversation, Exchange
from respeval.agents.multiturn import JudgeCase
from respeval.judge.batch import BatchOptions
from respeval.judge.embeddings import CallableEmbeddings
from respeval.judge.methods import METHODS, MethodOptions, build_method, get_method
from respeval.judge.results import Spend
from respeval.judge.run import EnginePass, JudgePlan, RunControl, resolve_method

SRC = Path(judge.__file__).parent
OPTIONS = judge.EngineOptions(concurrency=4, max_retries=0)
FAST = BatchOptions(poll_interval=0.01, poll_max=0.05, call_backoff=0.001)
CRITERIA = [{"id": "c1", "description": "Answers the question.", "importance": "HIGH"}]
ROWS = [
    {"id": f"r{i}", "prompt": f"Q{i}?", "reference": f"A{i}", "response": f"cand {i}", "baseline_model_response": "b"}
    for i in range(4)
]
RAG_ROWS = [
    {
        **row,
        "context": [f"cand {i} is the answer to Q{i}.", "unrelated text"],
        "response": f"The answer is cand {i} [1].",
    }
    for i, row in enumerate(ROWS)
]
TRAJECTORY_ROWS = [
    {
        "id": f"t{i}",
        "messages": [
            {"role": "user", "content": f"Weather in city{i}?"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "weather", "arguments": {"city": f"city{i}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"forecast": "sunny and warm"}'},
            {"role": "assistant", "content": "The forecast is sunny and warm."},
        ],
    }
    for i in range(3)
]  # fmt: skip
CASES = [JudgeCase(f"c{i}", Conversation((Exchange(f"Q{i}?", (), f"A{i}."),)), [f"A{i}."]) for i in range(2)]


def responder(body: dict) -> str:
    """Answers every method's requests (by their schema name or prompt)."""
    rag = rag_judge.respond_messages(body.get("messages") or [])
    if "not a RAG step" not in rag:
        return rag
    text = " ".join(str(m.get("content") or "") for m in body.get("messages") or []) + json.dumps(body)
    if "pairwise_verdict" in text:
        return json.dumps({"reasoning": "b is better", "winner": "b"})
    if "rubric_verdicts" in text:
        ids = sorted(set(re.findall(r'"id": "(c[0-9]+)"', text)) or {"c1"})
        return json.dumps({"verdicts": [{"id": i, "reasoning": "ok", "pass": True} for i in ids]})
    if "final_response_match" in text:
        return json.dumps({"reasoning": "same outcome", "verdict": "valid"})
    if "conversation_rubric_verdicts" in text:
        return json.dumps({"verdicts": [{"id": "goal_met", "reasoning": "ok", "verdict": "yes"}]})
    if '"name": "rubric"' in text:
        return json.dumps({"criteria": CRITERIA})
    return default_responder(body)


def fake() -> judge.FakeModel:
    return judge.FakeModel(lambda request: responder({"messages": [m.__dict__ for m in request.messages],
                                                      "schema": request.json_schema.name if request.json_schema else None}))  # fmt: skip


# each registered method, built as a library user builds it, and the records it judges
METHOD_CASES = {
    "pointwise": (lambda: get_method("pointwise"), ROWS),
    "pairwise": (lambda: get_method("pairwise", flip="both"), ROWS),
    "rubric": (lambda: get_method("rubric", criteria=CRITERIA), ROWS),
    "adaptive-rubric": (lambda: get_method("adaptive-rubric"), ROWS),
    "sampled": (lambda: get_method("sampled", samples=3), ROWS),
    "multi-turn": (lambda: get_method("multi-turn", metrics=["final_response_match_v2"], samples=1), CASES),
    "faithfulness": (lambda: get_method("faithfulness"), RAG_ROWS),
    "context_precision": (lambda: get_method("context_precision"), RAG_ROWS),
    "context_recall": (lambda: get_method("context_recall"), RAG_ROWS),
    "answer_relevance": (
        lambda: get_method("answer_relevance", embeddings=CallableEmbeddings(rag_judge.embed, version="1")),
        RAG_ROWS,
    ),
    "citation_check": (lambda: get_method("citation_check"), RAG_ROWS),
    "trajectory_hallucination": (lambda: get_method("trajectory_hallucination"), TRAJECTORY_ROWS),
    "trajectory_tool_use_quality": (lambda: get_method("trajectory_tool_use_quality"), TRAJECTORY_ROWS),
}


def test_every_method_is_registered():
    assert set(METHODS) == set(METHOD_CASES)
    for name in METHODS:
        method = METHOD_CASES[name][0]()
        assert method.name == name
        plan = resolve_method(method)
        assert isinstance(plan, JudgePlan)
        assert isinstance(plan, EnginePass) == (name == "pointwise")  # the one per-request method


@pytest.mark.parametrize("name", sorted(METHOD_CASES))
def test_every_method_returns_the_report_protocol(name):
    build, records = METHOD_CASES[name]
    seen = []
    report = judge.run(records, fake(), method=build(), options=OPTIONS, on_row=seen.append)
    assert len(report.rows) == len(records) == len(seen)
    assert isinstance(report.spend, Spend) and report.spend.calls > 0
    assert report.stop_reason is None and report.stop_kind is None and report.batch is None
    data = report.to_json()
    assert json.loads(json.dumps(data)) == data  # plain JSON
    assert data["calls"] == report.spend.calls
    text = report.format()
    assert isinstance(text, str) and str(report.spend.tokens_in) in text.replace(",", "")


def test_a_method_by_name_is_the_registry_s():
    pairs = judge.run(ROWS[:2], fake(), method="pairwise", options=OPTIONS)
    # the scripted judge always picks the second output shown: both orders asked, so caught
    assert [p.outcome for p in pairs.rows] == ["inconsistent"] * 2 and pairs.spend.calls == 4
    with pytest.raises(ValueError, match="unknown judge method 'nope'; available: adaptive-rubric, answer_relevance, "):
        judge.run(ROWS, fake(), method="nope")


def test_build_method_from_the_flat_options():
    assert build_method("pointwise", MethodOptions(threshold=0.7)).threshold == 0.7
    sampled = build_method("pointwise", MethodOptions(samples=3, aggregate="mean"))
    assert (sampled.name, sampled.samples, sampled.aggregate, sampled.method.name) == (
        "sampled",
        3,
        "mean",
        "pointwise",
    )
    assert build_method("pairwise", MethodOptions(flip="half", max_tokens=99)).method.max_tokens == 99
    with pytest.raises(ValueError, match="needs --rubric"):
        build_method("rubric", MethodOptions())
    with pytest.raises(ValueError, match="samples must be at least 1"):
        MethodOptions(samples=0)


@pytest.mark.parametrize("name", sorted(METHOD_CASES))
def test_batch_mode_for_every_method_answers_as_live(name, tmp_path):
    build, records = METHOD_CASES[name]
    api = BatchAPI(responder=responder)
    with JudgeServer(responder=responder, batch_api=api) as server:
        model = judge.OpenAIChatModel("gpt-4o-mini", base_url=server.url)
        live = judge.run(records, model, method=build(), cache=tmp_path / "live.sqlite", options=OPTIONS)
        interactive_calls = len(server.records)
        batched = judge.run(records, model, method=build(), cache=tmp_path / "b.sqlite", batch=FAST, options=OPTIONS)
        assert len(server.records) == interactive_calls  # the batch run made no interactive call
    assert api.submissions and batched.batch is not None and batched.batch.failed == 0
    assert batched.stop_kind is None
    live_rows, batch_rows = live.to_json(), batched.to_json()
    for key in (
        "calls",
        "tokens_in",
        "tokens_out",
        "cost_usd",
        "seconds",
        "rows_per_second",
        "cache_hits",
        "batch",
        "errors",
        "embeddings",
    ):
        live_rows.pop(key, None), batch_rows.pop(key, None)  # what was spent differs: live calls, batch jobs
    assert batch_rows == live_rows, name
    assert batched.spend.tokens_in == batched.batch.tokens_in + batched.batch.live_tokens_in
    assert batched.batch.format() in batched.format()


def test_batch_mode_needs_a_cache():
    with pytest.raises(ValueError, match="batch mode needs a cache"):
        judge.run(ROWS, fake(), method="pairwise", batch=True)


def test_run_control_interrupts_a_live_run():
    control = RunControl()
    assert control.interrupt() == 0 and control.in_flight == 0  # nothing attached yet
    seen = []

    def stop_after_first(row):
        seen.append(row)
        control.interrupt()

    result = judge.run(ROWS * 5, fake(), control=control, on_row=stop_after_first, concurrency=1)
    assert result.stop_kind == "interrupted" and result.summary.scored == len(seen) < len(ROWS) * 5


def _imports(path: Path) -> set[str]:
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_the_engine_does_not_know_batch_mode_or_the_methods():
    # The batch-or-live switch lives in run.py; the engine imported the batch package from
    # inside arun (engine <-> batch) and the method registry (engine <-> methods).
    engine = _imports(SRC / "engine.py")
    assert not {m for m in engine if m.startswith(("respeval.judge.batch", "respeval.judge.run"))}
    assert "respeval.judge.methods" not in engine  # the registry: only methods.base (the protocol)
    for path in (SRC / "batch").glob("*.py"):
        assert not {m for m in _imports(path) if m.startswith("respeval.judge.run")}, path
    # the registry loads the methods lazily: its own module imports only the protocol
    assert {m for m in _imports(SRC / "methods" / "__init__.py") if m.startswith("respeval")} == {
        "respeval.judge.methods.base"
    }


def test_gate_and_rubric_generation_judge_through_run():
    for path in (SRC.parent / "gate.py", SRC / "methods" / "rubrics.py"):
        text = path.read_text(encoding="utf-8")
        assert "JudgeEngine(" not in text and "arun_rows_batched" not in text, path
        assert "respeval.judge.run" in _imports(path), path
