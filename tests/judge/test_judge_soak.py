"""Soak: thousands of rows at concurrency 64 against the fault-injecting server (in its own
process, on the second core), 10% of requests faulty.  Every row ends scored or unscored
with a reason, none lost or duplicated, attempts and tokens add up, and a second run is
served entirely from the cache with zero requests reaching the server.

The 1,000-row version runs in CI; the 10,000-row version is ``-m slow``.
"""

from __future__ import annotations

import pytest

from _helpers.judge_server import FAULTS, spawn_server
from respeval import judge
from respeval.judge import OpenAIChatModel

SCORES = (0.0, 0.5, 1.0)


def soak_items(n: int) -> list[dict]:
    # The server judge reads the [[score=S]] tag, so every scored row's verdict is checkable.
    return [
        {
            "id": f"item-{i}",
            "prompt": f"Question {i}?",
            "reference": f"Answer {i}.",
            "response": f"Candidate answer {i}. [[score={SCORES[i % 3]}]]",
        }
        for i in range(n)
    ]


def soak(n: int, tmp_path) -> None:
    items = soak_items(n)
    cache = tmp_path / "soak.sqlite"
    options = dict(concurrency=64, timeout=1.0, max_retries=6, backoff_base=0.01, backoff_max=0.1, seed=11)
    with spawn_server(0.10, seed=5, retry_after=0.02, slow_seconds=1.5) as server:
        first = judge.run(items, OpenAIChatModel("judge", base_url=server.url), cache=cache, **options)
        stats = server.stats()

        # every row exactly once, in the result and with its own id
        assert first.completed and len(first.rows) == n
        assert [r.row for r in first.rows] == list(range(n))
        assert [r.id for r in first.rows] == [item["id"] for item in items]
        for row in first.rows:
            if row.status == "scored":
                assert row.unscored_reason is None
                expected = SCORES[row.row % 3]
                assert row.verdict["score"] == expected and row.verdict["pass"] is (expected >= 0.5)
            else:
                assert row.status == "unscored" and row.unscored_reason  # never without a reason
        s = first.summary
        assert s.scored + s.unscored == s.total == n
        assert s.scored >= 0.99 * n  # the faults are survivable: retries and the re-ask absorb them

        # the faults happened, and the accounting adds up to what the server saw
        assert set(stats["faults"]) == set(FAULTS) | {"ok"}
        assert s.calls == stats["requests"] == sum(r.attempts for r in first.rows)
        assert s.retries == s.calls - n - s.reasks
        assert s.tokens_in == sum(r.tokens_in for r in first.rows)
        assert s.tokens_out == sum(r.tokens_out for r in first.rows)
        slow = stats["faults"]["slow"]
        assert s.errors["timeout"] >= slow
        if s.errors["timeout"] == slow:  # no ordinary answer arrived after the client's timeout
            assert s.tokens_in == stats["delivered_prompt_tokens"]
            assert s.tokens_out == stats["delivered_completion_tokens"]
        else:  # a loaded machine made an ordinary answer late: the client never accepted its tokens
            assert s.tokens_in < stats["delivered_prompt_tokens"]

        # the second run: entirely from the cache, nothing reaches the server
        second = judge.run(items, OpenAIChatModel("judge", base_url=server.url), cache=cache, **options)
        assert server.stats()["requests"] == stats["requests"]
        assert second.summary.calls == 0 and all(r.cache_hit and r.attempts == 0 for r in second.rows)
        assert [(r.status, r.verdict, r.unscored_reason) for r in second.rows] == [
            (r.status, r.verdict, r.unscored_reason) for r in first.rows
        ]


def test_soak_1000_rows(tmp_path):
    soak(1_000, tmp_path)


@pytest.mark.slow
def test_soak_10000_rows(tmp_path):
    soak(10_000, tmp_path)
