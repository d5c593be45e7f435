"""``respeval.run`` with fakes and Python functions: the output's shape, every kind of bad
input named, errors per row, tools, prices, budget stops and resuming."""

from __future__ import annotations

import json

import pytest

import respeval
from _helpers import systems as helpers
from _helpers.corpora import read_jsonl
from respeval.bulk.parts import ResumeRefused
from respeval.io import InputError
from respeval.judge import Budget, EngineOptions, FakeModel, Price
from respeval.judge.models.base import ToolSpec
from respeval.systems import Template, load_system, run

OUTPUT = ["response", "tool_calls", "latency_s", "tokens_in", "tokens_out", "cost_usd", "finish_reason", "error"]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def variables(tmp_path, n=6, boom=()):
    rows = [{"id": f"c{i}", "question": f"question {i}" + (" boom" if i in boom else ""), "expected": f"a{i}"}
            for i in range(n)]  # fmt: skip
    return write_jsonl(tmp_path / "vars.jsonl", rows)


def echo_model(name):
    return FakeModel(lambda request: f"{name}: {request.messages[-1].content[-12:]}", name=name)


def read(path):
    return read_jsonl(path)


def without_latency(rows):
    return [{k: v for k, v in r.items() if k != "latency_s"} for r in rows]


def test_the_matrix_writes_one_row_per_case_template_and_system_in_order(tmp_path):
    data = variables(tmp_path, 3)
    out = tmp_path / "out.jsonl"
    result = respeval.run(
        data,
        {"baseline": echo_model("b"), "candidate": echo_model("c")},
        templates={"short": "Q: {question}", "long": "Please answer: {question}"},
        out=out,
    )
    rows = read(out)
    assert result.complete and result.output == str(out) and not (tmp_path / "out.jsonl.parts").exists()
    assert [(r["id"], r["template"], r["system"]) for r in rows] == [
        (f"c{i}", t, s) for i in range(3) for t in ("short", "long") for s in ("baseline", "candidate")
    ]
    first = rows[0]
    assert list(first)[:4] == ["id", "question", "expected", "system"]
    assert list(first)[-len(OUTPUT) :] == OUTPUT
    assert first["prompt"].startswith("Q: \n[QUESTION ") and "question 0" in first["prompt"]
    assert first["response"].startswith("b: ") and first["error"] is None and first["finish_reason"] == "stop"
    assert first["tokens_in"] > 0 and first["cost_usd"] is None and first["latency_s"] >= 0
    assert result.systems["baseline"].rows == 6 and result.systems["candidate"].responses == 6
    assert "3 cases x 2 systems x 2 templates" in result.format()


def test_one_template_writes_no_template_column_and_rows_come_back_without_out(tmp_path):
    result = run(variables(tmp_path, 2), {"only": echo_model("o")}, templates="Q: {question}")
    assert result.output is None and [r["id"] for r in result.rows] == ["c0", "c1"]
    assert "template" not in result.rows[0]


def test_rows_with_a_prompt_of_their_own_are_sent_as_they_are(tmp_path):
    model = FakeModel("ok", name="p")
    data = write_jsonl(tmp_path / "p.jsonl", [{"id": 1, "prompt": "Say hi. [[x]]"}])
    result = run(data, {"s": model})
    assert model.requests[0].messages[-1].content == "Say hi. [[x]]"
    assert result.rows[0]["prompt"] == "Say hi. [[x]]" and result.rows[0]["response"] == "ok"


def test_a_function_that_raises_fails_its_row_with_the_reason_and_the_rest_run(tmp_path):
    helpers.CALLS.clear()
    out = tmp_path / "out.jsonl"
    data = variables(tmp_path, 5, boom={2})
    result = run(data, {"fn": "python:_helpers.systems:echo"}, templates="Q: {question}", out=out)
    rows = read(out)
    assert result.complete
    bad = [r for r in rows if r["error"] is not None]
    assert [r["id"] for r in bad] == ["c2"] and bad[0]["response"] is None
    assert "_helpers.systems:echo raised ValueError" in bad[0]["error"] and "boom" in bad[0]["error"]
    assert all(r["response"] == f"echo: question {i}" for i, r in enumerate(rows) if i != 2)
    assert rows[0]["tokens_in"] == 10 and rows[0]["tokens_out"] == 3
    assert result.systems["fn"].errors == 1 and result.systems["fn"].responses == 4
    # the failure is not cached: a rerun asks that row again, and only that row
    before = len(helpers.CALLS)
    again = run(data, {"fn": "python:_helpers.systems:echo"}, templates="Q: {question}", out=out)
    assert len(helpers.CALLS) - before == 1 and again.systems["fn"].cache_hits == 4


def test_an_async_function_and_the_request_it_is_given(tmp_path):
    system = load_system("loud", "python:_helpers.systems:shout", system_instruction="Be loud.", temperature=0.3,
                         max_tokens=20, seed=7)  # fmt: skip
    result = run(variables(tmp_path, 2), [system], templates="Q: {question}")
    assert [r["response"] for r in result.rows] == ["QUESTION 0", "QUESTION 1"]
    helpers.CALLS.clear()
    run(variables(tmp_path, 1), [load_system("e", "python:_helpers.systems:echo", system_instruction="Be brief.",
                                             temperature=0.0, max_tokens=9, seed=3)], templates="Q: {question}")  # fmt: skip
    request = helpers.CALLS[0]
    assert request["system_instruction"] == "Be brief." and request["messages"][0] == {
        "role": "system",
        "content": "Be brief.",
    }
    assert (request["temperature"], request["max_tokens"], request["seed"]) == (0.0, 9, 3)
    assert request["prompt"].startswith("Q: \n[QUESTION ") and request["tools"] == []


def test_tools_are_passed_through_and_tool_calls_come_back(tmp_path):
    tools = (ToolSpec("lookup", "find a record", {"type": "object", "properties": {"q": {"type": "string"}}}),)
    result = run(variables(tmp_path, 1), [load_system("agent", "python:_helpers.systems:caller", tools=tools)],
                 templates="Q: {question}")  # fmt: skip
    row = result.rows[0]
    assert row["tool_calls"] == [{"name": "lookup", "arguments": {"q": "question 0"}}]
    assert row["response"] == "" and row["error"] is None and row["finish_reason"] == "tool_calls"
    model = FakeModel("fine", name="tooled")
    run(variables(tmp_path, 1), [load_system("m", model, tools=tools)], templates="Q: {question}")
    assert model.requests[0].tools == tools


@pytest.mark.parametrize(
    "spec,reason",
    [
        ("python:_helpers.systems:contract_breaker", "answered without a 'response' string"),
        ("python:_helpers.systems:says_error", "answered an error: the backend refused 'question 0'"),
    ],
)
def test_a_reply_that_breaks_the_contract_fails_its_row(tmp_path, spec, reason):
    result = run(variables(tmp_path, 2), {"s": spec}, templates="Q: {question}")
    assert result.complete and all(reason.split("'")[0] in r["error"] for r in result.rows)
    assert reason in result.rows[0]["error"]


@pytest.mark.parametrize(
    "spec,message",
    [
        ("gpt-4o", "expected KIND:..."),
        ("ollama:llama3", "unknown kind 'ollama'"),
        ("python:nowhere_at_all:fn", "cannot import nowhere_at_all"),
        ("python:_helpers.systems:missing", "has no attribute missing"),
        ("http:localhost", "expected an agent URL"),
        ("openai:", "the model name is missing"),
    ],
)
def test_an_unknown_or_broken_system_spec_is_named(spec, message):
    with pytest.raises(ValueError, match=message):
        load_system("s", spec)


def test_system_and_template_names_are_checked(tmp_path):
    with pytest.raises(ValueError, match="system name 'a b'"):
        load_system("a b", "fake:")
    with pytest.raises(ValueError, match="system 'x' is given twice"):
        run(variables(tmp_path), [load_system("x", "fake:"), load_system("x", "fake:")], templates="{question}")
    with pytest.raises(ValueError, match="template 'a' is given twice"):
        run(variables(tmp_path), {"x": "fake:"}, templates=[Template("a", "{question}"), Template("a", "Q {question}")])


def test_bad_rows_are_named_before_any_call(tmp_path):
    model = FakeModel("x", name="never")
    data = write_jsonl(tmp_path / "v.jsonl", [{"id": 1, "question": "q"}, {"id": 2}])
    with pytest.raises(InputError, match=r"v.jsonl:2 \(row 1\): field 'question': missing"):
        run(data, {"s": model}, templates="Q: {question}")
    assert model.calls == 0


def test_cost_is_the_answer_usage_at_the_given_or_listed_price(tmp_path):
    options = EngineOptions(prices=Price(1.0, 2.0))
    result = run(variables(tmp_path, 2), {"s": echo_model("p")}, templates="Q: {question}", options=options)
    row = result.rows[0]
    assert row["cost_usd"] == pytest.approx((row["tokens_in"] * 1.0 + row["tokens_out"] * 2.0) / 1e6)


def test_a_budget_stop_keeps_the_rows_and_resume_finishes_without_repeating_a_call(tmp_path):
    data = variables(tmp_path, 20)
    out = tmp_path / "out.jsonl"
    model = echo_model("m")
    stopped = run(data, {"s": model}, templates="Q: {question}", out=out,
                  options=EngineOptions(budget=Budget(max_calls=7), concurrency=2))  # fmt: skip
    assert not stopped.complete and stopped.stop_kind == "budget" and not out.exists()
    assert stopped.output == f"{out}.parts"
    kept = read_jsonl(f"{out}.parts/system-0.jsonl")
    assert 0 < len(kept) <= 7
    resumed = run(data, {"s": model}, templates="Q: {question}", out=out, resume=True)
    assert resumed.complete and resumed.systems["s"].resumed == len(kept)
    assert model.calls == 20  # every request answered once, the budget's 7 and the rest
    fresh = tmp_path / "fresh.jsonl"
    run(data, {"s": echo_model("m")}, templates="Q: {question}", out=fresh, cache=False)
    assert without_latency(read(out)) == without_latency(read(fresh))
    assert read(out)[: len(kept)] == kept


def test_a_rerun_serves_every_answer_from_the_cache_with_the_same_rows(tmp_path):
    data, out = variables(tmp_path, 8), tmp_path / "out.jsonl"
    model = echo_model("m")
    run(data, {"s": model}, templates="Q: {question}", out=out)
    first = read(out)
    again = run(data, {"s": model}, templates="Q: {question}", out=out)
    assert model.calls == 8 and again.systems["s"].calls == 0 and again.systems["s"].cache_hits == 8
    assert read(out) == first  # latency and usage are the answers', kept with them


def test_resume_refuses_another_run_naming_what_changed(tmp_path):
    data, out = variables(tmp_path, 10), tmp_path / "out.jsonl"
    run(data, {"s": echo_model("m")}, templates="Q: {question}", out=out,
        options=EngineOptions(budget=Budget(max_calls=3), concurrency=1))  # fmt: skip
    with pytest.raises(ResumeRefused, match="the templates"):
        run(data, {"s": echo_model("m")}, templates="Question: {question}", out=out, resume=True)
    with pytest.raises(ResumeRefused, match="system 's'"):
        run(data, [load_system("s", echo_model("m"), temperature=0.5)], templates="Q: {question}", out=out,
            resume=True)  # fmt: skip


def test_replay_only_answers_from_the_cache_and_stops_on_a_miss(tmp_path):
    data, out = variables(tmp_path, 4), tmp_path / "out.jsonl"
    run(data, {"s": echo_model("m")}, templates="Q: {question}", out=out)
    replayed = run(data, {"s": echo_model("m")}, templates="Q: {question}", out=out, replay_only=True)
    assert replayed.complete and replayed.systems["s"].calls == 0
    missed = run(data, {"s": echo_model("m")}, templates="Other: {question}", out=tmp_path / "o2.jsonl",
                 cache=f"{out}.cache.sqlite", replay_only=True)  # fmt: skip
    assert not missed.complete and "replay-only" in missed.stop_reason


def test_an_isolated_function_runs_in_the_sandbox(tmp_path):
    pytest.importorskip("respeval.evaluate.isolation")
    data = variables(tmp_path, 3)
    try:
        result = run(data, [load_system("iso", "python:_helpers.systems:plain", isolation="process")],
                     templates="Q: {question}")  # fmt: skip
    except Exception as exc:  # noqa: BLE001
        if "sandbox" in str(exc).lower() and "unavailable" in str(exc).lower():
            pytest.skip(str(exc))
        raise
    assert [r["response"] for r in result.rows] == [f"question {i}"[::-1] for i in range(3)]
    refused = run(data, [load_system("net", "python:_helpers.systems:networked", isolation="process")],
                  templates="Q: {question}")  # fmt: skip
    assert all(r["error"] and "sandbox" in r["error"] for r in refused.rows)


def test_isolation_needs_a_plain_python_function():
    with pytest.raises(ValueError, match="isolation applies to python: systems only"):
        load_system("s", "fake:", isolation="process")
    with pytest.raises(ValueError, match="async function cannot run isolated"):
        load_system("s", "python:_helpers.systems:shout", isolation="process")
