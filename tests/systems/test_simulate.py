"""Multi-turn runs (``respeval run --simulator``): a simulated user converses with each
system under test, against deterministic Python functions and against a real 127.0.0.1
server in OpenAI's wire format: stop phrase, turn limit, errors named, every turn cached (a
rerun sends no request, counted on the server), SIGKILL then ``--resume`` with no answered
request sent again, templates as scenarios, and the conversations fed into the trajectory
metrics (``respeval evaluate``) and multi-turn judging end to end."""

from __future__ import annotations

import json
import random
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from _helpers import kill, rag_judge
from _helpers.cli import run_cli
from _helpers.judge_server import FaultPlan, JudgeServer
from _helpers.systems import simulation_responder
from respeval import judge
from respeval.judge import OpenAIChatModel
from respeval.judge.methods.multiturn import MultiTurnRun
from respeval.systems import run
from respeval.systems.simulate import judge_cases

FAST = ["--backoff-base", "0.001", "--backoff-max", "0.01", "--quiet"]
USER = "python:_helpers.systems:user"


@pytest.fixture
def cli(capsys):
    """``respeval ARGS`` in this process -> CompletedProcess(returncode, stdout, stderr)."""

    def call(*args: str) -> subprocess.CompletedProcess:
        code, out, err = run_cli(capsys, *args)
        return subprocess.CompletedProcess(args, code, out, err)

    return call


def scenarios(path: Path, n: int, questions: int = 3, **extra) -> Path:
    rows = []
    for i in range(n):
        lines = "\n".join(f"- what is {i}.{j}? [[answer={i}.{j}]]" for j in range(questions))
        rows.append({"id": f"c{i}", "persona": "a tester", "scenario": f"Ask, one at a time:\n{lines}", **extra})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def test_conversations_stop_on_the_phrase_at_the_turn_limit_and_on_errors(tmp_path):
    rows = [
        {"id": "ok", "scenario": "Ask:\n- a\n- b"},
        {"id": "long", "scenario": "Ask:\n- a\n- b\n- c\n- d", "max_turns": 2},
        {"id": "boom", "scenario": "Ask:\n- a\n- explode", "persona": "p"},
        {"id": "own", "scenario": "Ask:\n- a", "stop": "THE END"},
        {"id": "mute", "scenario": "Ask:\n- a\n- b [[simulator-empty]]"},
    ]
    result = run(rows, {"agent": "python:_helpers.systems:tool_agent"}, simulator=USER, max_turns=5)
    assert result.complete
    got = {r["id"]: r for r in result.rows}
    ok = got["ok"]
    assert (ok["turns"], ok["stop_reason"], ok["error"], ok["response"]) == (2, "stopped", None, "found: b")
    assert [m["role"] for m in ok["messages"]] == ["user", "assistant", "user", "assistant"]
    assert ok["messages"][1]["tool_calls"] == [{"name": "lookup", "arguments": {"q": "a"}}]
    assert (ok["tokens_in"], ok["tokens_out"], ok["simulator_tokens_in"], ok["simulator_tokens_out"]) == (20, 8, 15, 6)
    assert (got["long"]["turns"], got["long"]["stop_reason"]) == (2, "turn_limit")
    boom = got["boom"]
    assert boom["stop_reason"] == "error" and boom["turns"] == 1
    assert boom["error"].startswith("turn 2, the system:") and "the agent crashed" in boom["error"]
    assert (got["own"]["turns"], got["own"]["stop_reason"]) == (1, "stopped")
    mute = got["mute"]
    assert mute["stop_reason"] == "error" and mute["error"].startswith("turn 2, the simulator: empty response")
    assert result.systems["agent"].errors == 2


def test_bad_scenarios_are_named_before_any_call(cli, tmp_path):
    data = tmp_path / "s.jsonl"
    data.write_text('{"id": 1, "scenario": "x"}\n{"id": 2, "scenario": "y", "max_turns": 0}\n', encoding="utf-8")
    proc = cli("run", "--input", str(data), "--simulator", USER, "--system", "a=python:_helpers.systems:echo",
                   "--out", str(tmp_path / "o.jsonl"))  # fmt: skip
    assert proc.returncode == 1
    assert f"{data}:2 (row 1): field 'max_turns': expected a whole number, at least 1, got 0" in proc.stderr
    data.write_text('{"id": 1, "persona": "p"}\n', encoding="utf-8")
    proc = cli("run", "--input", str(data), "--simulator", USER, "--system", "a=python:_helpers.systems:echo",
                   "--out", str(tmp_path / "o.jsonl"))  # fmt: skip
    assert proc.returncode == 1 and "field 'scenario': missing" in proc.stderr
    proc = cli("run", "--input", str(data), "--simulator", "nonsense:x", "--system", "a=fake:",
                   "--out", str(tmp_path / "o.jsonl"))  # fmt: skip
    assert proc.returncode == 1 and "--simulator:" in proc.stderr and "unknown kind 'nonsense'" in proc.stderr


def test_a_template_renders_the_scenario_from_the_rows_variables(cli, tmp_path):
    data = tmp_path / "v.csv"
    data.write_text("id,first,second,max_turns\na,x,y,3\nb,p,q,1\n", encoding="utf-8")
    out = tmp_path / "o.jsonl"
    proc = cli("run", "--input", str(data), "--template", "Ask:\n- {first}\n- {second}", "--simulator", USER,
                   "--system", "s=python:_helpers.systems:echo", "--out", str(out), "--quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = {r["id"]: r for r in read(out)}
    assert [m["content"] for m in rows["a"]["messages"]] == ["x", "echo: x", "y", "echo: y"]
    assert rows["a"]["stop_reason"] == "stopped" and rows["b"]["stop_reason"] == "turn_limit"
    assert rows["a"]["scenario"].startswith("Ask:\n- \n[FIRST ")  # the values fenced as data


def _key(record) -> tuple[str, str]:
    return record.body["model"], json.dumps(record.body["messages"])


def test_every_turn_is_cached_a_rerun_sends_no_request(cli, tmp_path):
    data, out = scenarios(tmp_path / "s.jsonl", 6), tmp_path / "c.jsonl"
    args = ["run", "--input", str(data), "--simulator", "openai:user-sim", "--system", "baseline=openai:bad",
            "--system", "candidate=openai:good", "--max-turns", "5", "--out", str(out), *FAST]  # fmt: skip
    with JudgeServer(FaultPlan(rate=0.2, seed=3, kinds=("429", "500")), responder=simulation_responder) as server:
        proc = cli(*args, "--base-url", server.url)
        assert proc.returncode == 0, proc.stderr
        answered = [r for r in server.records if r.status == 200]
        first = read(out)
        # 6 cases x 2 systems x 3 turns, the simulator 4 times a conversation (its opening shared)
        models = Counter(r.body["model"] for r in answered)
        assert models == {"bad": 18, "good": 18, "user-sim": 6 + 2 * 6 * 3}
        assert max(Counter(_key(r) for r in answered).values()) == 1  # no request answered twice
        sent = len(server.records)
        proc = cli(*args, "--base-url", server.url)
        assert proc.returncode == 0, proc.stderr
        assert len(server.records) == sent  # every turn from the cache
    again = read(out)
    strip = lambda rs: [{k: v for k, v in r.items() if k != "latency_s"} for r in rs]  # noqa: E731
    assert strip(again) == strip(first)
    good = [r for r in first if r["system"] == "candidate"]
    assert all(r["stop_reason"] == "stopped" and r["turns"] == 3 for r in good)
    assert good[0]["messages"][1] == {"role": "assistant", "content": "0.0"}
    assert [r["system"] for r in first[:4]] == ["baseline", "candidate", "baseline", "candidate"]


def test_sigkill_then_resume_repeats_no_answered_request(tmp_path):
    data = scenarios(tmp_path / "s.jsonl", 30)
    concurrency = 4
    args = ["run", "--input", str(data), "--simulator", "openai:user-sim", "--system", "baseline=openai:bad",
            "--system", "candidate=openai:good", "--max-turns", "4", "--concurrency", str(concurrency),
            "--timeout", "0.5", "--max-retries", "8", *FAST]  # fmt: skip
    rng = random.Random(5)
    plan = FaultPlan(rate=0.05, seed=9, kinds=("429", "500"))
    with JudgeServer(plan, responder=simulation_responder, latency=0.01) as server:
        reference = tmp_path / "reference.jsonl"
        code, output = kill.run([*args, "--base-url", server.url, "--out", str(reference)], cwd=tmp_path)
        assert code == 0, output
        clean = len(server.records)
        out = tmp_path / "c.jsonl"
        killed = 0
        for _ in range(20):
            how = {}
            if killed < 3:
                seen, more = len(server.records), rng.randint(5, 60)
                how = {"kill_when": lambda seen=seen, more=more: len(server.records) >= seen + more}
            code, output = kill.run([*args, "--base-url", server.url, "--out", str(out), "--resume"], cwd=tmp_path,
                                    **how)  # fmt: skip
            if code == -9:
                killed += 1
                continue
            assert code == 0, output
            break
        assert killed >= 2, "the runs finished before they could be killed"
        resumed = server.records[clean:]
        before = len(server.records)
        code, output = kill.run([*args, "--base-url", server.url, "--out", str(out)], cwd=tmp_path)
        assert code == 0, output
        assert len(server.records) == before  # a rerun sends nothing
    strip = lambda rs: [{k: v for k, v in r.items() if k != "latency_s"} for r in rs]  # noqa: E731
    assert strip(read(out)) == strip(read(reference))
    answered = Counter(_key(r) for r in resumed if r.status == 200 and r.fault is None)
    # only a request in flight at a kill (answered, not yet cached) can be sent again
    assert sum(c - 1 for c in answered.values()) <= killed * concurrency * 2


def test_the_conversations_feed_the_trajectory_metrics_and_multi_turn_judging(cli, tmp_path):
    data, out = scenarios(tmp_path / "s.jsonl", 3, questions=2), tmp_path / "c.jsonl"
    proc = cli("run", "--input", str(data), "--simulator", USER, "--system",
                   "agent=python:_helpers.systems:tool_agent", "--out", str(out), "--quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "next: respeval evaluate" in proc.stdout
    with JudgeServer(responder=rag_judge.respond) as server:
        table = tmp_path / "t.jsonl"
        proc = cli("evaluate", "--input", str(out), "--metric", "trajectory_tool_use_quality",
                       "--model", "openai:judge-m", "--base-url", server.url, "--out", str(table))  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        scored = read(table)
        assert len(scored) == 3 and all(r["trajectory_tool_use_quality/score"] == 1.0 for r in scored)
        cases = judge_cases(read(out))
        assert [c.case_id for c in cases] == ["c0/agent", "c1/agent", "c2/agent"]
        assert [len(c.conversation.exchanges) for c in cases] == [2, 2, 2]
        method = MultiTurnRun(metrics=["tool_use_quality"], samples=1)
        report = judge.run(cases, OpenAIChatModel("judge-m", base_url=server.url), method=method)
    assert [c.metrics[0].value for c in report.cases] == [1.0, 1.0, 1.0]


def test_help_shows_the_multi_turn_options_and_an_example(cli):
    proc = cli("run", "--help")
    assert proc.returncode == 0
    for needle in ("--simulator SPEC", "--max-turns N", "toy_user", "stop_reason", "###STOP###"):
        assert needle in proc.stdout, needle
