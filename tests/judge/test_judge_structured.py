"""Structured verdicts everywhere: the verdict's JSON schema as OpenAI ``response_format``
(strict), as vLLM's guided JSON (``guided_json`` / ``structured_outputs``, or detected), as a
forced tool call for Anthropic; request bodies checked against the providers' documented
shapes; the mode in the cache key; and the honest text parser still the fallback when a
server ignores the schema."""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest

from _helpers.batch_api import BatchAPI
from _helpers.judge_server import JudgeServer, default_responder
from respeval import judge
from respeval.judge import AnthropicModel, OpenAIChatModel, Pointwise, cache_key
from respeval.judge.batch import BatchOptions
from respeval.judge.errors import JudgeError
from respeval.judge.methods.pairwise import Pairwise, PairwiseItem
from respeval.judge.methods.pointwise import PointwiseItem
from respeval.judge.methods.rubrics import Criterion, Rubric, RubricGenerator
from respeval.judge.models.base import Capabilities
from respeval.judge.specs import load_model

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # OpenAI schema names and Anthropic tool names
VERDICT = {"reasoning": "same facts", "score": 1.0, "pass": True}
OPENAI_OK = {
    "choices": [{"message": {"role": "assistant", "content": json.dumps(VERDICT)}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5},
}


def rows(n: int = 1) -> list[dict]:
    return [{"id": i, "prompt": f"q{i}", "reference": f"ref {i}", "response": f"cand {i}"} for i in range(n)]


def every_method_request() -> list:
    """One request from every judging method, with structured output available."""
    caps = Capabilities(temperature=True, seed=True, json_schema=True)
    criteria = (Criterion("c1", "states the capital"),)
    rubric_item = Rubric(criteria).item({"response": "Paris", "prompt": "Capital of France?"})
    return [
        Pointwise().build(PointwiseItem("Paris", "Paris", "Capital?"), caps),
        Pairwise().build(PairwiseItem("a", "b", "ab", "q"), caps),
        Rubric(criteria).build(rubric_item, caps),
        RubricGenerator().build("Capital of France?", caps),
    ]


def capture(reply: dict, seen: list) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=reply)

    return httpx.MockTransport(handler)


# --------------------------------------------------------------------------- OpenAI strict


def strict_problems(schema: dict, where: str = "$") -> list[str]:
    """What OpenAI's strict structured outputs would refuse: every object must list all its
    properties as required and forbid others; only supported keywords."""
    problems = []
    supported = {
        "type", "properties", "required", "additionalProperties", "items", "enum", "description",
        "minimum", "maximum", "anyOf", "$defs", "const",
    }  # fmt: skip
    problems += [f"{where}: unsupported keyword {k}" for k in schema if k not in supported]
    if schema.get("type") == "object":
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            problems.append(f"{where}: additionalProperties must be false")
        if sorted(schema.get("required", [])) != sorted(props):
            problems.append(f"{where}: every property must be required")
        for name, sub in props.items():
            problems += strict_problems(sub, f"{where}.{name}")
    if schema.get("type") == "array":
        problems += strict_problems(schema["items"], f"{where}[]")
    return problems


@pytest.mark.parametrize("request_", every_method_request(), ids=["pointwise", "pairwise", "rubric", "generator"])
def test_openai_body_is_strict_json_schema_response_format(request_):
    body = OpenAIChatModel("gpt-4o-mini").build_body(request_)
    fmt = body["response_format"]
    assert set(fmt) == {"type", "json_schema"} and fmt["type"] == "json_schema"
    spec = fmt["json_schema"]
    assert set(spec) == {"name", "schema", "strict"} and spec["strict"] is True and NAME.match(spec["name"])
    assert strict_problems(spec["schema"]) == []
    assert "guided_json" not in body and "structured_outputs" not in body and "tools" not in body


def test_vllm_guided_json_and_structured_outputs_bodies():
    request = every_method_request()[0]
    guided = OpenAIChatModel("q", base_url="http://127.0.0.1:1/v1", structured="guided_json").build_body(request)
    assert guided["guided_json"] == request.json_schema.schema and "response_format" not in guided
    new = OpenAIChatModel("q", base_url="http://127.0.0.1:1/v1", structured="structured_outputs").build_body(request)
    assert new["structured_outputs"] == {"json": request.json_schema.schema} and "response_format" not in new
    off = OpenAIChatModel("q", structured="none").build_body(request.__class__(messages=request.messages))
    assert not {"response_format", "guided_json", "structured_outputs"} & set(off)
    with pytest.raises(ValueError, match="structured must be one of"):
        OpenAIChatModel("q", structured="tool")


def detect_server(models: dict | None, version: str | None):
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models" and models is not None:
            return httpx.Response(200, json=models)
        if request.url.path == "/version" and version is not None:
            return httpx.Response(200, json={"version": version})
        if request.url.path == "/v1/chat/completions":
            return httpx.Response(200, json=OPENAI_OK)
        return httpx.Response(404, json={"error": {"message": "not found"}})

    return httpx.MockTransport(handler)


VLLM = {"object": "list", "data": [{"id": "Qwen/Qwen2.5-7B", "object": "model", "owned_by": "vllm"}]}


@pytest.mark.parametrize(
    ("models", "version", "expected"),
    [
        (VLLM, "0.12.1", "structured_outputs"),
        (VLLM, "0.6.3.post1", "guided_json"),
        (VLLM, None, "guided_json"),
        ({"object": "list", "data": [{"id": "llama", "owned_by": "llamacpp"}]}, None, "response_format"),
        (None, None, "response_format"),  # no /models at all
    ],
)
def test_detect_settles_the_mode_when_the_model_opens(models, version, expected):
    model = OpenAIChatModel(
        "Qwen/Qwen2.5-7B", base_url="http://vllm.invalid/v1", structured="detect",
        transport=detect_server(models, version),
    )  # fmt: skip
    with pytest.raises(JudgeError, match="settled when the model is opened"):
        model.identity()  # the mode is part of the key: no key before it is known

    async def opened() -> dict:
        async with model:
            return model.identity()

    identity = asyncio.run(opened())
    assert model.structured == expected
    if expected in ("response_format",):
        assert "structured" not in identity  # same keys as before modes existed
    else:
        assert identity["structured"] == expected


def test_the_cache_key_says_which_mode_produced_an_answer():
    request = every_method_request()[0]
    keys = {
        mode: cache_key(OpenAIChatModel("m", base_url="http://h.invalid/v1", structured=mode).identity(), request)
        for mode in ("response_format", "guided_json", "structured_outputs", "none")
    }
    assert len(set(keys.values())) == 4
    tool = AnthropicModel("claude-x").identity()
    text = AnthropicModel("claude-x", structured="none").identity()
    assert tool["structured"] == "tool" and "structured" not in text
    assert cache_key(tool, request) != cache_key(text, request)
    # the old spelling still works and keeps its keys
    assert OpenAIChatModel("m", json_schema=False).identity() == OpenAIChatModel("m", structured="none").identity()


def test_load_model_passes_the_mode():
    assert load_model("openai:m", structured="guided_json").structured == "guided_json"
    assert load_model("anthropic:c").structured == "tool"
    assert load_model("anthropic:c", json_schema=False).structured == "none"
    with pytest.raises(ValueError, match="--structured applies"):
        load_model("fake:", structured="tool")


# --------------------------------------------------------------------------- Anthropic tool


@pytest.mark.parametrize("request_", every_method_request(), ids=["pointwise", "pairwise", "rubric", "generator"])
def test_anthropic_body_forces_one_tool_whose_input_schema_is_the_verdict(request_):
    body = AnthropicModel("claude-sonnet-4-5").build_body(request_)
    (tool,) = body["tools"]
    assert set(tool) == {"name", "description", "input_schema"} and NAME.match(tool["name"])
    assert tool["input_schema"] == request_.json_schema.schema and tool["input_schema"]["type"] == "object"
    assert body["tool_choice"] == {"type": "tool", "name": tool["name"]}
    assert "response_format" not in body and "temperature" not in body


def test_anthropic_tool_use_reply_is_the_structured_verdict(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-key")
    seen: list = []
    reply = {
        "content": [
            {"type": "text", "text": "Let me record the verdict."},
            {"type": "tool_use", "id": "toolu_1", "name": "pointwise_verdict", "input": VERDICT},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 30, "output_tokens": 12},
    }
    model = AnthropicModel("claude-x", transport=capture(reply, seen))
    row = judge.run(rows(), model).rows[0]
    assert row.status == "scored" and row.parsed_from == "structured" and row.verdict["score"] == 1.0
    body = json.loads(seen[0].content)
    assert body["tool_choice"]["name"] == "pointwise_verdict"
    # text mode: no tools at all
    seen.clear()
    text_reply = {"content": [{"type": "text", "text": json.dumps(VERDICT)}], "stop_reason": "end_turn", "usage": {}}
    row = judge.run(rows(), AnthropicModel("claude-x", structured="none", transport=capture(text_reply, seen))).rows[0]
    assert row.parsed_from == "json" and "tools" not in json.loads(seen[0].content)


def test_a_key_twice_in_an_anthropic_tool_use_verdict_is_unscored_live_and_from_the_cache(tmp_path, monkeypatch):
    """The tool input arrives as JSON the response body holds: ``{"pass": true, ..., "pass":
    false}`` must not become its last value (issue 28: a planted verdict seen as one)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-key")
    body = (
        b'{"content": [{"type": "tool_use", "id": "toolu_1", "name": "pointwise_verdict", "input": '
        b'{"reasoning": "same facts", "score": 1.0, "pass": true, "PASS": false}}], '
        b'"stop_reason": "tool_use", "usage": {"input_tokens": 30, "output_tokens": 12}}'
    )
    calls: list = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})

    cache = judge.JudgeCache(tmp_path / "c.sqlite")
    for _ in range(2):  # live, then answered from the cache: the same decision
        model = AnthropicModel("claude-x", transport=httpx.MockTransport(handler))
        row = judge.run(rows(), model, cache=cache, max_retries=0, backoff_base=0.001).rows[0]
        assert row.status == "unscored" and "duplicate key 'PASS'" in row.unscored_reason, row.unscored_reason
    assert len(calls) == 2  # a re-ask of the malformed verdict, then nothing: the rerun is all cache
    cache.close()


# --------------------------------------------------------------------------- servers ignoring the schema

BAD = "[[bad]]"


def ignoring_responder(body: dict) -> str:
    """A judge that ignores the schema: prose for rows marked [[bad]], JSON for the rest."""
    text = " ".join(str(m.get("content") or "") for m in body.get("messages") or [])
    return "I would say it is mostly right, all things considered." if BAD in text else default_responder(body)


def mixed_rows(n: int = 12) -> list[dict]:
    out = rows(n)
    for r in out[::3]:
        r["response"] += f" {BAD}"
    return out


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_server_that_ignores_the_schema_leaves_unparseable_rows_unscored(provider):
    with JudgeServer(responder=ignoring_responder) as server:  # answers text whatever was asked
        if provider == "openai":
            model = OpenAIChatModel("m", base_url=server.url)
        else:
            model = AnthropicModel("claude-x", base_url=server.url.removesuffix("/v1"))
        result = judge.run(mixed_rows(), model, backoff_base=0.001)
        sent = [r.body for r in server.records]
    assert all(("response_format" in b) if provider == "openai" else ("tools" in b) for b in sent)
    for row in result.rows:
        if row.row % 3 == 0:
            assert row.status == "unscored" and row.reasked
            assert row.unscored_reason.startswith("unparseable: no JSON verdict or SCORE:/PASS: lines")
            assert "after one re-ask" in row.unscored_reason
        else:
            assert row.status == "scored" and row.parsed_from == "json"


def test_a_batch_that_ignores_the_schema_goes_through_the_text_parser_too(tmp_path):
    api = BatchAPI(responder=ignoring_responder, ignore_schema=True)
    with JudgeServer(batch_api=api) as server:
        model = AnthropicModel("claude-x", base_url=server.url.removesuffix("/v1"))
        result = judge.run(mixed_rows(), model, cache=tmp_path / "c.sqlite", batch=BatchOptions(poll_interval=0.01))
    first = api.submissions[0]
    assert len(first["custom_ids"]) == 12
    bad = [r for r in result.rows if r.row % 3 == 0]
    assert all(r.status == "unscored" and "no JSON verdict" in r.unscored_reason and r.reasked for r in bad)
    assert all(r.status == "scored" and r.parsed_from == "json" for r in result.rows if r.row % 3)
    # the re-asks went out as a second batch: one per unparseable row
    assert [len(s["custom_ids"]) for s in api.submissions] == [12, 4]
