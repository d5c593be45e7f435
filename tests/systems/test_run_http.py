"""``respeval.run`` against real HTTP servers on 127.0.0.1: OpenAI chat completions and
Anthropic Messages (with injected 429s, 5xx, timeouts, dropped connections and truncated
bodies), an agent endpoint speaking the JSON contract (garbage included), provider batches,
and the run's output compared with ``respeval.compare``."""

from __future__ import annotations

import json
from collections import Counter

import pytest

import respeval
from _helpers.batch_api import BatchAPI
from _helpers.corpora import read_jsonl
from _helpers.judge_server import FaultPlan, JudgeServer, system_responder
from respeval.judge import EngineOptions
from respeval.judge.batch import BatchOptions
from respeval.judge.models.base import ToolSpec
from respeval.systems import load_system, run

FAST = {"backoff_base": 0.001, "backoff_max": 0.005}
TOOLS = (ToolSpec("lookup", "find an answer", {"type": "object", "properties": {"q": {"type": "string"}}}),)


def questions(tmp_path, n):
    path = tmp_path / "vars.jsonl"
    rows = [{"id": f"q{i}", "question": f"what is {i}? [[answer={i}]]", "expected": str(i)} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def bodies(server):
    return [r.body for r in server.records if r.status == 200]


def test_openai_wire_with_faults_every_row_answered_once(tmp_path):
    n = 60
    plan = FaultPlan(rate=0.3, seed=5, kinds=("429", "429-retry-after", "500", "503", "drop", "malformed-body", "slow"),
                     retry_after=0.01, slow_seconds=0.6)  # fmt: skip
    with JudgeServer(plan, responder=system_responder) as server:
        systems = [
            load_system("baseline", "openai:bad-model", base_url=server.url, system_instruction="Answer briefly."),
            load_system("candidate", "openai:good-model", base_url=server.url, temperature=0.0, max_tokens=16, seed=3),
        ]
        out = tmp_path / "responses.jsonl"
        result = run(questions(tmp_path, n), systems, templates="Q: {question}", out=out,
                     options=EngineOptions(timeout=0.3, max_retries=8, concurrency=4, **FAST))  # fmt: skip
        answered = Counter((r.body["model"], json.dumps(r.body["messages"])) for r in server.records if r.status == 200)
        faults = Counter(r.fault for r in server.records)
    assert result.complete, result.stop_reason
    rows = read_jsonl(out)
    assert len(rows) == 2 * n and all(r["error"] is None for r in rows)
    assert {r["response"] for r in rows if r["system"] == "baseline"} == {"no idea"}
    assert [r["response"] for r in rows if r["system"] == "candidate"] == [str(i) for i in range(n)]
    assert sum(faults[k] for k in ("429", "500", "drop", "slow")) > 0 and result.systems["candidate"].retries > 0
    # a truncated body or a slow answer can be answered twice; a clean 200 never: no call repeated
    clean = Counter(
        (r.body["model"], json.dumps(r.body["messages"])) for r in server.records
        if r.status == 200 and r.fault is None
    )  # fmt: skip
    assert max(clean.values()) == 1 and len(answered) == 2 * n
    sent = [r.body for r in server.records if r.body and r.body["model"] == "good-model"][0]
    assert (sent["temperature"], sent["max_tokens"], sent["seed"]) == (0.0, 16, 3)
    first_bad = [r.body for r in server.records if r.body and r.body["model"] == "bad-model"][0]
    assert first_bad["messages"][0] == {"role": "system", "content": "Answer briefly."}
    assert rows[1]["tokens_in"] > 0 and rows[1]["finish_reason"] == "stop" and rows[1]["latency_s"] > 0


def test_run_then_compare_end_to_end(tmp_path):
    with JudgeServer(responder=system_responder) as server:
        out = tmp_path / "responses.jsonl"
        systems = [
            load_system(n, f"openai:{m}", base_url=server.url) for n, m in (("baseline", "bad"), ("candidate", "good"))
        ]
        result = respeval.run(questions(tmp_path, 40), systems, templates="Q: {question}", out=out)
    assert result.complete
    comparison = respeval.compare(out, baseline="baseline", candidate="candidate", metrics=["exact_match"],
                                  ref_field="expected")  # fmt: skip
    assert comparison.decision == "improved"
    assert comparison.metrics[0].baseline == 0.0 and comparison.metrics[0].candidate == 1.0


def test_tools_on_both_wire_formats_and_tool_calls_read_back(tmp_path):
    def calls(body):
        return [{"name": "lookup", "arguments": {"q": "x"}}] if body.get("tools") else None

    with JudgeServer(responder=lambda body: "", tool_caller=calls) as server:
        systems = [
            load_system("gpt", "openai:m", base_url=server.url, tools=TOOLS),
            load_system("claude", "anthropic:c", base_url=server.url.removesuffix("/v1"), tools=TOOLS,
                        system_instruction="Use the tool."),
        ]  # fmt: skip
        result = run(questions(tmp_path, 2), systems, templates="Q: {question}")
        sent = {r.body["model"]: r.body for r in server.records}
    openai_body, anthropic_body = sent["m"], sent["c"]
    assert openai_body["tools"] == [{"type": "function", "function": TOOLS[0].to_json()}]
    assert anthropic_body["tools"] == [
        {"name": "lookup", "description": "find an answer", "input_schema": dict(TOOLS[0].parameters)}
    ]
    assert anthropic_body["system"] == "Use the tool." and "tool_choice" not in anthropic_body
    for row in result.rows:
        assert row["tool_calls"][0]["name"] == "lookup" and row["tool_calls"][0]["arguments"] == {"q": "x"}
        assert row["finish_reason"] == "tool_calls" and row["error"] is None


def test_anthropic_messages_answers(tmp_path):
    with JudgeServer(FaultPlan(rate=0.2, seed=1, kinds=("429", "503")), responder=system_responder) as server:
        system = load_system("claude", "anthropic:good", base_url=server.url.removesuffix("/v1"), max_tokens=50)
        result = run(questions(tmp_path, 10), [system], templates="Q: {question}", options=EngineOptions(**FAST))
        sent = bodies(server)
    assert [r["response"] for r in result.rows] == [str(i) for i in range(10)]
    assert sent[0]["max_tokens"] == 50 and result.rows[0]["finish_reason"] == "stop"


def agent_answer(body):
    prompt = body["prompt"]
    if "[[answer=3]]" in prompt:
        return b"<html>oops, not json</html>"
    if "[[answer=4]]" in prompt:
        return {"text": "no response field"}
    if "[[answer=5]]" in prompt:
        return {"error": "backend down for this case"}
    return {
        "response": f"agent says {system_responder({'messages': [{'role': 'user', 'content': prompt}]})}",
        "tool_calls": [{"name": "search", "arguments": {"q": "x"}}],
        "usage": {"input_tokens": 7, "output_tokens": 2},
    }


def test_an_agent_endpoint_speaks_the_contract_and_every_bad_answer_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_TOKEN", "s3cret-agent-token")
    with JudgeServer(responder=system_responder, agent=agent_answer) as server:
        system = load_system("agent", f"{server.url}/agent", api_key_env="AGENT_TOKEN", system_instruction="Help.")
        result = run(questions(tmp_path, 6), [system], templates="Q: {question}",
                     options=EngineOptions(max_retries=2, **FAST))  # fmt: skip
        sent = [r for r in server.records if r.body]
    rows = {r["id"]: r for r in result.rows}
    assert result.complete
    assert rows["q0"]["response"] == "agent says 0" and rows["q0"]["tool_calls"] == [
        {"name": "search", "arguments": {"q": "x"}}
    ]
    assert (rows["q0"]["tokens_in"], rows["q0"]["tokens_out"]) == (7, 2)
    assert "not JSON" in rows["q3"]["error"] and "retries exhausted: 3 attempts" in rows["q3"]["error"]
    assert "answered without a 'response' string" in rows["q4"]["error"]
    assert "answered an error: backend down for this case" in rows["q5"]["error"]
    body = sent[0].body
    assert set(body) == {"prompt", "system_instruction", "messages", "temperature", "max_tokens", "seed", "tools"}
    assert body["system_instruction"] == "Help." and body["prompt"].startswith("Q: \n[QUESTION ")
    assert sent[0].headers["authorization"] == "Bearer s3cret-agent-token"
    assert "s3cret" not in json.dumps(result.to_json()) + json.dumps(result.rows)


def test_an_endpoint_that_answers_only_garbage_stops_the_run_naming_it(tmp_path):
    with JudgeServer(agent=lambda body: b"garbage") as server:
        result = run(questions(tmp_path, 5), [load_system("agent", f"{server.url}/agent")], templates="Q: {question}",
                     options=EngineOptions(max_retries=1, concurrency=1, **FAST))  # fmt: skip
    assert not result.complete and result.stop_kind == "error"
    assert "no call has succeeded yet" in result.stop_reason and "not JSON" in result.stop_reason


def test_a_refused_key_stops_that_system_and_the_other_runs(tmp_path):
    with JudgeServer(responder=system_responder, api_key="right-key") as server:
        systems = [load_system(n, f"openai:good-{n}", base_url=server.url) for n in ("a", "b")]
        result = run(questions(tmp_path, 4), systems, templates="Q: {question}", out=tmp_path / "o.jsonl",
                     cache=tmp_path / "c.sqlite")  # fmt: skip
    assert not result.complete and result.systems["a"].stop_kind == "error"
    assert "HTTP 401" in result.systems["a"].stop_reason


@pytest.mark.parametrize("provider", ("openai", "anthropic"))
def test_batch_mode_answers_every_row_from_provider_batches(tmp_path, provider):
    api = BatchAPI(responder=system_responder, seconds=0.05)
    with JudgeServer(batch_api=api, responder=system_responder) as server:
        url = server.url if provider == "openai" else server.url.removesuffix("/v1")
        model = "gpt-4o-mini" if provider == "openai" else "claude-3-5-haiku"
        system = load_system("s", f"{provider}:{model}", base_url=url)
        batch = BatchOptions(poll_interval=0.01, poll_max=0.05, call_backoff=0.001)
        out = tmp_path / "o.jsonl"
        result = run(questions(tmp_path, 12), [system], templates="Q: {question}", out=out, batch=batch)
        interactive = len(server.records)
        again = run(questions(tmp_path, 12), [system], templates="Q: {question}", out=out, batch=batch)
    assert result.complete and interactive == 0 and len(api.submissions) == 1
    rows = read_jsonl(out)
    assert [r["response"] for r in rows] == [str(i) for i in range(12)]
    assert all(r["cost_usd"] > 0 and r["latency_s"] is None for r in rows)  # at batch prices; no latency measured
    assert again.complete and len(api.submissions) == 1 and again.systems["s"].calls == 0
