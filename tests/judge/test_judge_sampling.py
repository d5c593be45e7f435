"""Multi-sampling: strict majority (ties and unscored votes undecided), early stop, the
sample index in the cache key, mean/median, the stability flag."""

from __future__ import annotations

import asyncio
import json

import pytest

from _helpers.judge_server import JudgeServer
from respeval.judge import Budget, EngineOptions, FakeModel, JudgeCache, OpenAIChatModel, Pointwise
from respeval.judge.methods.sampling import UNDECIDED, arun_sampled, majority_vote

OPTIONS = EngineOptions(reask=False, concurrency=4, backoff_base=0.001, backoff_max=0.005)
PASS = '{"reasoning": "ok", "score": 1.0, "pass": true}'
FAIL = '{"reasoning": "no", "score": 0.0, "pass": false}'


def rows(n: int) -> list[dict]:
    return [{"id": i, "prompt": f"q{i}", "reference": f"ref {i}", "response": f"cand {i}"} for i in range(n)]


def by_sample(*answers: str):
    """A judge whose answer depends only on the sample index."""
    return lambda request: answers[request.sample_index]


def sampled(model, k, **kwargs):
    return asyncio.run(arun_sampled(rows(kwargs.pop("n", 2)), model, Pointwise(), samples=k, options=OPTIONS, **kwargs))


@pytest.mark.parametrize(
    "votes,asked,k,expected",
    [
        ([True, True], 2, 3, (True, True)),  # 2 of 3: decided early
        ([True, False], 2, 3, (UNDECIDED, False)),  # the third sample decides
        ([True, False], 2, 2, (UNDECIDED, True)),  # a tie is undecided
        ([True, False], 3, 3, (UNDECIDED, True)),  # pass, fail, unscored: no strict majority
        ([True], 3, 3, (UNDECIDED, True)),  # unscored votes count in the denominator
        ([False, False, False], 3, 5, (False, True)),
        ([], 3, 5, (UNDECIDED, True)),  # 3 unscored of 5: nobody can reach 3
        (["A", "A", "tie"], 3, 3, ("A", True)),
    ],
)
def test_majority_vote(votes, asked, k, expected):
    assert majority_vote(votes, asked, k) == expected


def test_early_stop_once_majority_cannot_change():
    model = FakeModel(PASS)
    result = sampled(model, 5)
    assert model.calls == 2 * 3  # floor(5/2)+1 samples settle a unanimous vote
    assert all(r.verdict["pass"] is True and r.verdict["samples"] == 3 and r.verdict["unanimous"] for r in result.rows)


def test_split_votes_ask_more_samples_and_flag_instability():
    model = FakeModel(by_sample(PASS, FAIL, PASS, FAIL, FAIL))
    result = sampled(model, 5)
    assert model.calls == 2 * 5
    row = result.rows[0]
    assert row.verdict["pass"] is False and row.verdict["unanimous"] is False
    assert row.verdict["votes"] == {"True": 2, "False": 3}
    assert sorted(r.row for r in row.samples) == [0, 1, 2, 3, 4]


def test_tie_in_votes_is_undecided_and_unscored():
    result = sampled(FakeModel(by_sample(PASS, FAIL)), 2)
    assert all(r.status == "unscored" and r.unscored_reason.startswith("undecided") for r in result.rows)


def test_unscored_sample_counts_against_the_majority():
    result = sampled(FakeModel(by_sample(PASS, "no verdict here", FAIL)), 3)
    row = result.rows[0]
    assert row.status == "unscored" and "unscored: 1" in row.unscored_reason


def test_sample_index_is_part_of_the_cache_key(tmp_path):
    with JudgeCache(tmp_path / "c.sqlite") as cache:
        first = FakeModel(PASS, name="s")
        sampled(first, 3, cache=cache, early_stop=False)
        assert first.calls == 6 and len(cache) == 6
        assert sorted({r.sample_index for r in first.requests}) == [0, 1, 2]
        again = FakeModel(PASS, name="s")
        sampled(again, 3, cache=cache, early_stop=False)
        assert again.calls == 0


@pytest.mark.parametrize("aggregate,expected", [("mean", 0.5), ("median", 0.5)])
def test_mean_and_median(aggregate, expected):
    answers = [json.dumps({"score": s, "pass": s >= 0.5}) for s in (0.0, 0.5, 1.0)]
    result = sampled(FakeModel(by_sample(*answers)), 3, aggregate=aggregate)
    row = result.rows[0]
    assert row.verdict["score"] == expected and row.verdict["pass"] is True
    assert row.verdict["scores"] == [0.0, 0.5, 1.0] and row.verdict["unanimous"] is False


def test_mean_with_no_scored_sample_is_unscored():
    result = sampled(FakeModel("garbage"), 2, aggregate="mean")
    assert all(r.status == "unscored" and "no sample had a score" in r.unscored_reason for r in result.rows)


def test_temperature_and_seed_per_sample():
    model = FakeModel(PASS)
    asyncio.run(
        arun_sampled(rows(1), model, Pointwise(seed=7), samples=3, temperature=0.8, early_stop=False, options=OPTIONS)
    )
    assert sorted((r.sample_index, r.seed, r.temperature) for r in model.requests) == [
        (0, 7, 0.8),
        (1, 8, 0.8),
        (2, 9, 0.8),
    ]


def test_single_sample_is_a_plain_run():
    result = sampled(FakeModel(FAIL), 1)
    assert [r.verdict["pass"] for r in result.rows] == [False, False]


def test_against_local_server():
    with JudgeServer() as server:
        model = OpenAIChatModel("m", base_url=server.url, api_key_env="RESPEVAL_TEST_NO_KEY")
        result = asyncio.run(arun_sampled(rows(3), model, Pointwise(), samples=3, options=OPTIONS))
        assert len(server.records) == 3 * 2  # unanimous after 2 of 3
    assert all(r.verdict["pass"] and r.verdict["unanimous"] for r in result.rows)


def test_bad_arguments():
    with pytest.raises(ValueError):
        sampled(FakeModel(), 0)
    with pytest.raises(ValueError):
        sampled(FakeModel(), 3, aggregate="mode")


@pytest.mark.parametrize(
    "answers,k,aggregate",
    [
        ((PASS,), 5, "majority"),  # decided after the first round
        ((PASS, FAIL, PASS, FAIL, FAIL), 5, "majority"),  # one more round per sample
        ((PASS, FAIL, FAIL), 3, "mean"),  # one round of every sample
        ((PASS,), 1, "majority"),
    ],
)
def test_each_row_is_handed_on_once_when_final_and_as_the_result_holds_it(answers, k, aggregate):
    seen = []
    model = FakeModel(by_sample(*answers) if len(answers) > 1 else answers[0])
    result = sampled(model, k, n=6, aggregate=aggregate, on_row=seen.append)
    assert sorted(r.row for r in seen) == list(range(6))
    assert {r.row: r for r in seen} == {r.row: r for r in result.rows}


def test_rows_stopped_before_their_vote_is_decided_are_not_handed_on():
    seen = []
    model = FakeModel(by_sample(PASS, FAIL, PASS, FAIL, FAIL))
    options = EngineOptions(
        reask=False, concurrency=1, backoff_base=0.001, backoff_max=0.005, budget=Budget(max_calls=7)
    )
    result = asyncio.run(arun_sampled(rows(3), model, Pointwise(), samples=5, options=options, on_row=seen.append))
    assert result.stop_kind is not None
    assert all(r.status == "not_run" for r in result.rows)  # 7 calls: no row reached its fifth sample
    assert seen == []
