"""The completion cache: content addressing, durability settings, and no secrets in it."""

from __future__ import annotations

import dataclasses
import json
import sqlite3

import httpx
import pytest

from respeval import judge
from respeval.judge import Completion, JsonSchema, JudgeCache, JudgeRequest, Message, OpenAIChatModel, cache_key
from respeval.judge.models.base import ToolSpec

IDENTITY = {"provider": "openai", "model": "m", "endpoint": "http://localhost:8000/v1", "defaults": {"seed": None}}
REQUEST = JudgeRequest(
    messages=(Message("system", "grade"), Message("user", "candidate")),
    temperature=0.0,
    seed=1,
    max_tokens=64,
    json_schema=JsonSchema("v", {"type": "object"}),
    template_version="t/1",
)


def test_the_key_is_pinned():
    # A cache filled by this release must stay valid for the next: changing the key format
    # (or what goes into it) must be a deliberate change of this value.
    assert cache_key(IDENTITY, REQUEST) == "00086ab1b635207868560092b72c43b84d801a8f62b47635a5758f2cad822278"


@pytest.mark.parametrize(
    "change",
    [
        {"messages": (Message("system", "grade"), Message("user", "candidate!"))},
        {"messages": (Message("system", "grade"), Message("assistant", "candidate"))},
        {"messages": (Message("system", "gradec"), Message("user", "andidate"))},  # same concatenation
        {"messages": (Message("system", "grade"),)},
        {"temperature": 0.7},
        {"temperature": None},
        {"seed": 2},
        {"max_tokens": 65},
        {"json_schema": JsonSchema("v", {"type": "array"})},
        {"json_schema": None},
        {"logprobs": True},
        {"template_version": "t/2"},
        {"sample_index": 1},
        {"flip": True},
        {"tools": (ToolSpec("lookup", "find a record", {"type": "object"}),)},
    ],
)
def test_every_request_field_is_in_the_key(change):
    assert cache_key(IDENTITY, dataclasses.replace(REQUEST, **change)) != cache_key(IDENTITY, REQUEST)


def test_the_parametrized_changes_cover_every_request_field():
    changed = set()
    for change in test_every_request_field_is_in_the_key.pytestmark[0].args[1]:
        changed |= set(change)
    fields = {f.name for f in dataclasses.fields(JudgeRequest)}
    assert changed == set(REQUEST.to_json()) == fields  # a new request field must join the key (and the list)


@pytest.mark.parametrize(
    "change",
    [{"model": "m2"}, {"endpoint": "http://localhost:8001/v1"}, {"provider": "anthropic"}, {"defaults": {"seed": 3}}],
)
def test_the_model_identity_is_in_the_key(change):
    assert cache_key({**IDENTITY, **change}, REQUEST) != cache_key(IDENTITY, REQUEST)


def test_the_key_ignores_dict_order_of_the_identity():
    reordered = dict(reversed(list(IDENTITY.items())))
    assert cache_key(reordered, REQUEST) == cache_key(IDENTITY, REQUEST)


def test_store_reopen_and_first_answer_wins(tmp_path):
    path = tmp_path / "cache.sqlite"
    first = Completion(
        text="one", tokens_in=3, tokens_out=1, finish_reason="stop", model="m", structured={"score": 1}, refusal=None
    )
    with JudgeCache(path) as cache:
        assert cache.journal_mode == "wal"
        assert cache.get("k") is None and "k" not in cache
        cache.put("k", first, model="openai:m", endpoint="e", template_version="t")
        cache.put("k", Completion(text="two"), model="openai:m", endpoint="e", template_version="t")
    with JudgeCache(path) as cache:
        assert cache.get("k") == first and len(cache) == 1 and list(cache.keys()) == ["k"]


def test_two_connections_share_one_cache(tmp_path):
    path = tmp_path / "cache.sqlite"
    with JudgeCache(path) as a, JudgeCache(path) as b:
        for i in range(20):
            (a if i % 2 else b).put(f"k{i}", Completion(text=str(i)), model="m", endpoint="", template_version="")
        assert len(a) == len(b) == 20 and b.get("k7").text == "7"


def test_not_a_cache_is_a_clear_error(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ValueError, match="cannot use .*junk.sqlite as a judge cache"):
        JudgeCache(junk)
    other = tmp_path / "other.sqlite"
    JudgeCache(other).close()
    db = sqlite3.connect(other)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    db.commit()
    db.close()
    with pytest.raises(ValueError, match="schema 99"):
        JudgeCache(other)


def test_the_cache_never_stores_the_api_key(tmp_path, monkeypatch):
    secret = "sk-test-SECRET-4f9a2c"
    monkeypatch.setenv("MY_JUDGE_KEY", secret)
    seen_auth = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen_auth.append(request.headers.get("authorization"))
        body = {
            "choices": [
                {"message": {"content": '{"score": 1, "pass": true, "reasoning": "r"}'}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2},
        }
        return httpx.Response(200, json=body)

    model = OpenAIChatModel(
        "m",
        base_url="http://user:PASSWORD-77@judge.invalid/v1",
        api_key_env="MY_JUDGE_KEY",
        transport=httpx.MockTransport(handler),
        headers={"x-team-token": "TEAM-TOKEN-31"},
    )
    path = tmp_path / "cache.sqlite"
    result = judge.run([{"reference": "r", "response": "c"}], model, cache=path)
    assert result.rows[0].status == "scored" and seen_auth == [f"Bearer {secret}"]
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    for needle in (secret, "SECRET", "PASSWORD-77", "TEAM-TOKEN-31", "MY_JUDGE_KEY"):
        assert needle.encode() not in stored
    with JudgeCache(path) as cache:
        row = cache._db.execute("SELECT endpoint, model, completion FROM completions").fetchone()
    assert row[0] == "http://judge.invalid/v1" and row[1] == "openai:m"
    assert json.loads(row[2])["tokens_in"] == 5
