"""``respeval dataset generate``: synthetic cases from a template and seed values through the
judge engine, checked against a JSON schema (an unusable reply asked again once, then
recorded with its reason), near duplicates dropped, the edge-case directives, cached and
resumable; against a scripted model and a real HTTP server speaking OpenAI's wire format."""

from __future__ import annotations

import json
import re

import pytest

from _helpers.judge_server import JudgeServer
from respeval.cli import main
from respeval.generate import DIRECTIVES, GenerateOptions, generate_cases, plan_requests
from respeval.judge import JudgeCache
from respeval.judge.engine import EngineOptions
from respeval.judge.limits import Budget
from respeval.judge.models.callables import CallableModel

pytest.importorskip("jsonschema", reason="the schema check needs jsonschema (the evaluate extra)")

SEEDS = [{"product": "a kettle", "tone": "angry"}, {"product": "a bike lock", "tone": "polite"}]
TEMPLATE = "Write a {tone} customer question about {product}."
_VARIANT = re.compile(r"variant (\d+)")


def _user(request) -> str:
    return request.messages[1].content if len(request.messages) > 1 else request.messages[-1].content


def writer(request) -> str:
    """A scripted model: a case that echoes what it was asked (so that each request differs)."""
    user = _user(request)
    product = "kettle" if "kettle" in user else "bike lock"
    variant = _VARIANT.search(user)
    edge = next((name for name in DIRECTIVES if name != "none" and name.split("-")[0] in user), "plain")
    if "in German" in user:
        edge = "German"
    return json.dumps(
        {
            "prompt": f"My {product} broke ({edge}, {variant.group(1) if variant else 1}): what now?",
            "reference": f"Offer a {product} replacement or a refund.",
        }
    )


def test_the_requests_cycle_seeds_directives_languages_and_failed_cases():
    options = GenerateOptions(
        n=12,
        directives=("none", "multilingual", "failed-cases"),
        languages=("German", "Japanese"),
        failed=({"prompt": "Cancel order 17", "response": "Done!", "explanation": "it had shipped"},),
    )
    requests = plan_requests(TEMPLATE, SEEDS, options)
    assert [r["seed_index"] for r in requests] == [0, 1] * 6
    assert [r["directive_name"] for r in requests] == ["none"] * 2 + ["multilingual"] * 2 + ["failed-cases"] * 2 + [
        "none"
    ] * 2 + ["multilingual"] * 2 + ["failed-cases"] * 2
    assert [r["variant"] for r in requests] == [0] * 6 + [1] * 6
    assert [r["language"] for r in requests if r["language"]] == ["German", "Japanese", "German", "Japanese"]
    assert requests[0]["prompt"] == "Write a angry customer question about a kettle."
    failed = requests[4]["directive"]
    assert "Cancel order 17" in failed and "it had shipped" in failed
    with pytest.raises(ValueError, match=r"seed 2: the template names \{colour\}"):
        plan_requests("{colour}", [{"colour": "red"}, {"size": 1}], GenerateOptions(n=2))
    with pytest.raises(ValueError, match="failed-cases directive needs"):
        GenerateOptions(n=2, directives=("failed-cases",))
    with pytest.raises(ValueError, match="unknown directive"):
        GenerateOptions(n=2, directives=("spicy",))


def test_cases_follow_the_schema_invalid_replies_are_asked_again_then_recorded(tmp_path):
    seen: dict[str, int] = {}

    def model(request) -> str:
        user = _user(request)
        seen[user] = seen.get(user, 0) + 1
        if "bike lock" in user and "variant" not in user:
            return '{"prompt": "", "reference": 3}'  # never valid: recorded with the reason
        if "kettle" in user and len(request.messages) == 2:
            return "Sure! Here is a case: prompt = kettle"  # valid only when asked again
        return writer(request)

    cases, report = generate_cases(
        TEMPLATE, SEEDS, CallableModel(model), GenerateOptions(n=4), rejected=tmp_path / "rejected.jsonl"
    )
    assert report.requested == 4 and report.valid == 3 and report.invalid == 1 and report.written == 3
    assert report.reasks >= 2  # the kettle ones were asked again, with the reason
    (bad,) = [json.loads(x) for x in (tmp_path / "rejected.jsonl").read_text().splitlines()]
    assert bad["seed_index"] == 1 and bad["variant"] == 0
    assert "schema" in bad["reason"] and ("prompt" in bad["reason"] or "reference" in bad["reason"])
    assert all(set(c) >= {"prompt", "reference", "id", "seed_index", "directive", "variant"} for c in cases)
    assert all(isinstance(c["prompt"], str) and c["prompt"] for c in cases)


def test_near_duplicates_are_dropped():
    def same(request) -> str:
        return json.dumps({"prompt": "My kettle broke: can I get a new one today please?", "reference": "Yes."})

    cases, report = generate_cases(TEMPLATE, SEEDS, CallableModel(same), GenerateOptions(n=5))
    assert (report.valid, report.near_duplicates, report.written) == (5, 4, 1)
    _, kept = generate_cases(TEMPLATE, SEEDS, CallableModel(same), GenerateOptions(n=5, dedupe=False))
    assert kept.written == 5


def test_a_stopped_run_resumes_from_the_cache_and_writes_what_an_uninterrupted_run_writes(tmp_path):
    calls = []

    def model(request) -> str:
        calls.append(_user(request))
        return writer(request)

    options = GenerateOptions(n=10, directives=("none", "adversarial", "ambiguous"))
    whole = tmp_path / "whole.jsonl"
    generate_cases(TEMPLATE, SEEDS, CallableModel(model), options, out=whole)
    assert len(calls) == 10
    calls.clear()
    cache = JudgeCache(tmp_path / "cache.sqlite")
    try:
        out = tmp_path / "cases.jsonl"
        engine = EngineOptions(budget=Budget(max_calls=4), concurrency=1)
        _, stopped = generate_cases(
            TEMPLATE, SEEDS, CallableModel(model), options, out=out, cache=cache, engine_options=engine
        )
        assert stopped.stop_kind == "budget" and stopped.not_run == 6 and len(calls) == 4
        calls.clear()
        _, done = generate_cases(TEMPLATE, SEEDS, CallableModel(model), options, out=out, cache=cache)
        assert len(calls) == 6 and done.cache_hits == 4 and done.written == 10
    finally:
        cache.close()
    assert out.read_text() == whole.read_text()


def test_the_command_against_an_openai_compatible_server(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-generate")

    def responder(body) -> str:
        class Request:
            messages = [type("M", (), {"content": m["content"]}) for m in body["messages"]]

        return writer(Request)

    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps(s) + "\n" for s in SEEDS))
    schema = tmp_path / "case.schema.json"
    schema.write_text(
        json.dumps(
            {
                "type": "object",
                "properties": {"prompt": {"type": "string", "minLength": 5}, "reference": {"type": "string"}},
                "required": ["prompt", "reference"],
            }
        )
    )
    (tmp_path / "template.txt").write_text(TEMPLATE)
    out = tmp_path / "cases.jsonl"
    with JudgeServer(responder=responder) as server:
        argv = [
            "dataset", "generate", "--template", str(tmp_path / "template.txt"), "--values", str(seeds),
            "--model", "openai:writer-1", "--base-url", server.url, "-n", "8", "--schema", str(schema),
            "--directive", "none", "--directive", "multilingual", "--languages", "German", "--out", str(out),
            "--report", str(tmp_path / "report.json"), "--quiet",
        ]  # fmt: skip
        assert main(argv) == 0
        first = len(server.records)
        assert main(argv) == 0  # cached: the rerun asks nothing
        assert len(server.records) == first == 8
        body = server.records[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["prompt"]["minLength"] == 5
    cases = [json.loads(x) for x in out.read_text().splitlines()]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["written"] == len(cases) == 8 and report["by_directive"]["multilingual"]["written"] == 4
    assert any("German" in c["prompt"] for c in cases) and {c["language"] for c in cases} == {None, "German"}
    assert all(c["model"] == "openai:writer-1" for c in cases)
    assert len({c["id"] for c in cases}) == 8


def test_command_line_errors_name_what_to_fix(tmp_path, capsys):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text('{"product": "x"}\n{"product": \n')
    base = ["dataset", "generate", "--template", "About {product}", "--values", str(seeds), "-n", "2"]
    assert main([*base, "--model", "fake:", "--out", str(tmp_path / "c.txt")]) == 1
    assert "written as .jsonl, .parquet or .csv" in capsys.readouterr().err
    assert main([*base, "--model", "fake:", "--out", str(tmp_path / "c.jsonl")]) == 1
    assert "seeds.jsonl:2" in capsys.readouterr().err
    seeds.write_text('{"product": "x"}\n')
    assert main([*base, "--out", str(tmp_path / "c.jsonl")]) == 1
    assert "--model" in capsys.readouterr().err
    assert main([*base, "--model", "fake:", "--failed", str(seeds), "--out", str(tmp_path / "c.jsonl")]) == 1
    assert "add --directive failed-cases" in capsys.readouterr().err
