"""Batch mode against the fake provider batch APIs on 127.0.0.1 (OpenAI files + batches,
Anthropic message batches): splitting at the limits, matching by custom_id, batch prices,
reruns that send nothing, partial failure (per-request errors, expired and cancelled
batches) with retries that resend only the affected requests, the budget, resuming after
an interruption at every step, and every judging method answered as interactively."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter

import pytest

from _helpers.batch_api import BatchAPI, request_of
from _helpers.judge_server import JudgeServer, default_responder
from respeval import judge
from respeval.judge import AnthropicModel, Budget, OpenAIChatModel, Price
from respeval.judge.batch import BatchCache, BatchOptions, BatchStore, arun_batched
from respeval.judge.batch.store import DOWNLOADED, PREPARING, SUBMITTED, SUBMITTING, UPLOADED
from respeval.judge.methods.pairwise import arun_pairwise
from respeval.judge.methods.pointwise import Pointwise
from respeval.judge.methods.rubrics import arun_adaptive
from respeval.judge.methods.sampling import arun_sampled
from respeval.judge.models.base import Completion
from respeval.judge.models.batching import ERRORED, SUCCEEDED, BatchResult, RemoteBatch
from respeval.judge.prices import PRICE_TABLE

SCORES = (0.0, 0.5, 1.0)
FAST = BatchOptions(poll_interval=0.01, poll_max=0.05, call_backoff=0.001)
PROVIDERS = ("openai", "anthropic")


def items(n: int) -> list[dict]:
    return [
        {"id": f"r{i}", "prompt": f"Q{i}?", "reference": f"A{i}", "response": f"cand {i} [[score={SCORES[i % 3]}]]"}
        for i in range(n)
    ]


def model_for(provider: str, server: JudgeServer, name: str | None = None):
    if provider == "openai":
        return OpenAIChatModel(name or "gpt-4o-mini", base_url=server.url)
    return AnthropicModel(name or "claude-3-5-haiku", base_url=server.url.removesuffix("/v1"))


def options(**changes) -> BatchOptions:
    return BatchOptions(**{**FAST.__dict__, **changes})


def check_verdicts(result, n: int) -> None:
    assert [r.row for r in result.rows] == list(range(n))
    for row in result.rows:
        assert row.id == f"r{row.row}"
        if row.status == "scored":  # the verdict is this row's own: matched by custom_id, not order
            assert row.verdict["score"] == SCORES[row.row % 3]


# --------------------------------------------------------------------------- the happy path


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batches_split_at_the_limits_answer_every_row_at_batch_prices(provider, tmp_path):
    api = BatchAPI(responder=default_responder, seconds=0.05)
    n = 250
    with JudgeServer(batch_api=api) as server:
        model = model_for(provider, server)
        first = judge.run(items(n), model, cache=tmp_path / "c.sqlite", batch=options(max_requests=100))
        chat_calls = len(server.records)
        second = judge.run(items(n), model, cache=tmp_path / "c.sqlite", batch=options(max_requests=100))
        assert len(server.records) == chat_calls == 0  # nothing interactive, ever
    sizes = [len(s["custom_ids"]) for s in api.submissions]
    assert sizes == [100, 100, 50]  # split at the request limit, in order
    ids = [request for s in api.submissions for request in s["requests"]]
    assert len(ids) == len(set(ids)) == n  # every request once
    assert first.completed and first.summary.scored == n
    check_verdicts(first, n)
    report = first.summary.batch
    assert (report.batches_submitted, report.requests_submitted, report.succeeded, report.failed) == (3, n, n, 0)
    price = PRICE_TABLE["gpt-4o-mini" if provider == "openai" else "claude-3-5-haiku"]
    tokens_in, tokens_out = report.tokens_in, report.tokens_out
    assert tokens_in > 0 and tokens_out > 0
    assert report.cost == pytest.approx(price.batch.cost(tokens_in, tokens_out))
    assert report.cost_interactive_equivalent == pytest.approx(price.interactive.cost(tokens_in, tokens_out))
    assert report.cost == pytest.approx(report.cost_interactive_equivalent / 2)
    assert first.summary.cost == pytest.approx(report.cost) and first.summary.tokens_in == tokens_in
    text = first.summary.format()
    assert "at batch prices (interactively $" in text and "3 new batches" in text
    # the rerun: the same table, nothing sent, nothing paid
    assert len(api.submissions) == 3 and second.summary.batch.requests_submitted == 0
    assert second.summary.cost == 0 and second.summary.cache_hits == n
    assert [(r.status, r.verdict) for r in second.rows] == [(r.status, r.verdict) for r in first.rows]


def test_batches_split_at_the_byte_limit(tmp_path):
    api = BatchAPI(responder=default_responder)
    with JudgeServer(batch_api=api) as server:
        result = judge.run(items(30), model_for("openai", server), cache=tmp_path / "c.sqlite",
                           batch=options(max_bytes=20_000))  # fmt: skip
    files = [f for f in api.files.values() if f["purpose"] == "batch"]
    assert len(files) > 1 and all(f["bytes"] <= 20_000 for f in files)
    assert sum(len(s["custom_ids"]) for s in api.submissions) == 30 and result.summary.scored == 30


def test_the_provider_limit_is_the_ceiling(tmp_path):
    api = BatchAPI(responder=default_responder, openai_max_requests=7)  # the fake enforces it too
    with JudgeServer(batch_api=api) as server:
        model = model_for("openai", server)
        client = model.batch_client(max_requests=7)

        async def go():
            return await arun_batched(
                lambda m, c, o: judge.JudgeEngine(m, Pointwise(), o, cache=c).run(items(20)),
                model, cache=tmp_path / "c.sqlite", batch=options(max_requests=1000),
            )  # fmt: skip

        model.batch_client = lambda: client  # a provider whose documented limit is 7
        run = asyncio.run(go())
    assert [len(s["custom_ids"]) for s in api.submissions] == [7, 7, 6]
    assert run.result.summary.scored == 20


# --------------------------------------------------------------------------- partial failure


@pytest.mark.parametrize("provider", PROVIDERS)
def test_failed_requests_and_an_expired_batch_resend_only_the_affected_rows(provider, tmp_path):
    api = BatchAPI(responder=default_responder, error_rate=0.05, expire=(0,), expire_fraction=0.3, seed=3)
    n = 400
    with JudgeServer(batch_api=api) as server:
        result = judge.run(items(n), model_for(provider, server), cache=tmp_path / "c.sqlite",
                           batch=options(max_requests=150, retries=2))  # fmt: skip
    report = result.summary.batch
    first_round = api.submissions[:3]
    assert [len(s["custom_ids"]) for s in first_round] == [150, 150, 100]
    # what failed in the first round, from the provider's own results
    failed_first = set()
    for sub in first_round:
        batch = api.batches[sub["id"]]
        failed_first |= {request_of(r["custom_id"]) for r in batch.results if r["kind"] != "succeeded"}
    expired = {request_of(r["custom_id"]) for r in api.batches[first_round[0]["id"]].results if r["kind"] == "expired"}
    assert expired and len(failed_first) > len(expired)  # an expired batch and per-request errors
    second_round = api.submissions[3]
    assert set(second_round["requests"]) == failed_first  # only the affected requests, once each
    # the counts add up
    submitted = Counter(request for s in api.submissions for request in s["requests"])
    assert report.requests_submitted == sum(submitted.values())
    assert report.succeeded + report.failed == report.requests_submitted
    assert report.failed == report.resubmitted + report.gave_up
    assert report.expired == len(expired) and report.errored == report.failed - report.expired
    assert result.summary.scored + result.summary.unscored == n and result.completed
    assert result.summary.unscored == report.gave_up
    check_verdicts(result, n)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_past_the_retry_limit_a_row_is_unscored_with_the_providers_reason(provider, tmp_path):
    api = BatchAPI(responder=default_responder, error_rate=0.2, seed=1)
    with JudgeServer(batch_api=api) as server:
        result = judge.run(items(60), model_for(provider, server), cache=tmp_path / "c.sqlite",
                           batch=options(retries=0))  # fmt: skip
    report = result.summary.batch
    unscored = [r for r in result.rows if r.status == "unscored"]
    assert len(api.submissions) == 1 and unscored and len(unscored) == report.gave_up == report.errored
    for row in unscored:
        assert row.unscored_reason.startswith("batch request failed 1 times (retry limit 0); last: errored in batch ")
        assert "injected per-request error 500" in row.unscored_reason


def test_failed_requests_can_be_retried_interactively(tmp_path):
    api = BatchAPI(responder=default_responder, error_rate=0.1, seed=2)
    with JudgeServer(batch_api=api) as server:
        result = judge.run(items(100), model_for("openai", server), cache=tmp_path / "c.sqlite",
                           batch=options(retry="interactive"))  # fmt: skip
        chat = [r for r in server.records if r.status == 200]
    report = result.summary.batch
    assert len(api.submissions) == 1 and report.errored > 0
    assert len(chat) == report.retried_interactively == report.errored == report.live_calls
    assert result.summary.scored == 100
    price = PRICE_TABLE["gpt-4o-mini"]
    assert report.live_cost == pytest.approx(price.interactive.cost(report.live_tokens_in, report.live_tokens_out))
    assert result.summary.cost == pytest.approx(report.cost + report.live_cost)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_cancelled_batch_and_waiting_no_longer(provider, tmp_path):
    api = BatchAPI(responder=default_responder, seconds=30.0)
    cache = tmp_path / "c.sqlite"
    with JudgeServer(batch_api=api) as server:
        model = model_for(provider, server)
        stopped = judge.run(items(20), model, cache=cache, batch=options(max_wait=0.2))
        assert stopped.stop_kind == "waiting" and not stopped.completed and stopped.summary.scored == 0
        assert "still running" in stopped.summary.stop_reason and len(stopped.not_run) == 20
        batch = api.batches[api.submissions[0]["id"]]
        batch.created -= 15  # half-way: half its requests ran
        with BatchCache(cache) as bc:
            (job,) = bc.store.open_jobs()
        import argparse

        from respeval.cli.batches import run as batches_run

        cancel = argparse.Namespace(action="cancel", ids=[], cache=str(cache), base_url=None, api_key_env=None,
                                    wait=False, poll=0.01, prices=None, json=True)  # fmt: skip
        assert batches_run(cancel) == 0
        api.plan.seconds = 0.05  # the resent requests' batch is quick
        resumed = judge.run(items(20), model, cache=cache, batch=options(retries=1))
    assert batch.cancelled_at is not None
    cancelled = {request_of(r["custom_id"]) for r in batch.results if r["kind"] == "cancelled"}
    assert 0 < len(cancelled) < 20
    assert len(api.submissions) == 2 and set(api.submissions[1]["requests"]) == cancelled
    report = resumed.summary.batch
    assert report.batches_submitted == 1 and report.cancelled == len(cancelled)
    assert resumed.completed and resumed.summary.scored == 20


# --------------------------------------------------------------------------- the budget


def test_the_budget_limits_what_is_submitted(tmp_path):
    api = BatchAPI(responder=default_responder)
    price = PRICE_TABLE["gpt-4o-mini"]
    with JudgeServer(batch_api=api) as server:
        model = model_for("openai", server)
        by_calls = judge.run(items(50), model, cache=tmp_path / "a.sqlite", batch=FAST, budget=Budget(max_calls=20))
        assert by_calls.stop_kind == "budget" and by_calls.summary.scored == 20 and len(by_calls.not_run) == 30
        assert "budget reached" in by_calls.summary.stop_reason
        cap = 0.0015
        by_cost = judge.run(items(50), model, cache=tmp_path / "b.sqlite", batch=FAST, budget=Budget(max_cost=cap))
    report = by_cost.summary.batch
    assert by_cost.stop_kind == "budget" and 0 < report.requests_submitted < 50
    assert report.cost <= cap  # worst case reserved up front: never over
    # a worst case per request: its input estimate and all of max_tokens
    one = price.batch.cost(len(json.dumps(items(1)[0])) // 4, 512)
    assert report.cost + one > 0  # sanity: the estimate is positive


def test_a_cost_budget_needs_a_price(tmp_path):
    api = BatchAPI(responder=default_responder)
    with JudgeServer(batch_api=api) as server:
        model = OpenAIChatModel("my-own-model", base_url=server.url)
        with pytest.raises(ValueError, match="needs prices for openai:my-own-model"):
            judge.run(items(2), model, cache=tmp_path / "c.sqlite", batch=FAST, budget=Budget(max_cost=1))
        given = judge.run(items(2), model, cache=tmp_path / "c.sqlite", batch=FAST, budget=Budget(max_cost=1),
                          prices=Price(1.0, 2.0))  # fmt: skip
    report = given.summary.batch
    assert report.price_source == "given prices"
    assert report.cost == pytest.approx(Price(0.5, 1.0).cost(report.tokens_in, report.tokens_out))


def test_batch_mode_needs_a_batch_api_and_a_cache(tmp_path):
    with pytest.raises(ValueError, match="has no batch API"):
        judge.run(items(1), "fake:", cache=tmp_path / "c.sqlite", batch=True)
    with pytest.raises(ValueError, match="needs a cache"):
        judge.run(items(1), OpenAIChatModel("m"), batch=True)
    with pytest.raises(ValueError, match="replay-only"):
        judge.run(items(1), OpenAIChatModel("m"), cache=tmp_path / "c.sqlite", batch=True, replay_only=True)


# --------------------------------------------------------------------------- resuming


def run_until_cancelled(model, cache, seconds: float, **batch) -> None:
    """Start a batch run and cancel it after ``seconds`` (the task dies mid-step, as a killed
    process would, leaving the cache database as it was at that moment)."""

    async def go():
        task = asyncio.ensure_future(judge.arun(items(40), model, cache=cache, batch=options(**batch), keep_rows=False))
        await asyncio.sleep(seconds)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())


def job_states(cache) -> list[str]:
    store = BatchStore(cache)
    try:
        return [j.state for j in store.jobs()]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("provider", "dial", "state"),
    [
        ("openai", "upload_delay", UPLOADED),  # the file reached the provider; its id did not reach us
        ("openai", "submit_delay", SUBMITTING),  # the batch exists; its id did not reach us
        ("anthropic", "submit_delay", SUBMITTING),
        ("openai", "seconds", SUBMITTED),  # polling
        ("anthropic", "seconds", SUBMITTED),
        ("openai", "download_delay", SUBMITTED),  # downloading
        ("anthropic", "download_delay", SUBMITTED),
    ],
)
def test_an_interrupted_run_resumes_and_submits_nothing_twice(provider, dial, state, tmp_path):
    api = BatchAPI(responder=default_responder, **{dial: 1.0})
    cache = tmp_path / "c.sqlite"
    with JudgeServer(batch_api=api) as server:
        model = model_for(provider, server)
        run_until_cancelled(model, cache, 0.5 if dial != "download_delay" else 0.3)
        expected = PREPARING if (provider, dial) == ("openai", "upload_delay") else state
        assert job_states(cache) == [expected]
        setattr(api.plan, dial, 0.0)
        result = judge.run(items(40), model, cache=cache, batch=FAST)
    assert len(api.submissions) == 1 and len(api.submissions[0]["custom_ids"]) == 40  # one batch, ever
    uploads = [f for f in api.files.values() if f["purpose"] == "batch"]
    assert len(uploads) == (1 if provider == "openai" else 0)  # the upload was found again, not repeated
    assert result.completed and result.summary.scored == 40 and job_states(cache) == [DOWNLOADED]
    report = result.summary.batch
    assert report.batches_submitted == 0 and report.batches_resumed + (state == SUBMITTED) >= 1
    check_verdicts(result, 40)


def test_a_job_never_submitted_whose_rows_changed_is_abandoned(tmp_path):
    api = BatchAPI(responder=default_responder, upload_delay=1.0)
    cache = tmp_path / "c.sqlite"
    with JudgeServer(batch_api=api) as server:
        model = model_for("openai", server)
        run_until_cancelled(model, cache, 0.5)
        api.plan.upload_delay = 0.0
        other = [dict(r, response=r["response"] + " (edited)") for r in items(40)]
        result = judge.run(other, model, cache=cache, batch=FAST)
    assert job_states(cache) == ["abandoned", DOWNLOADED]
    assert len(api.submissions) == 1 and result.summary.batch.batches_abandoned == 1


def test_results_are_matched_by_custom_id_never_by_position(tmp_path):
    with BatchCache(tmp_path / "c.sqlite") as cache:
        store = cache.store
        job = store.create_job(provider="openai", model="openai:m", endpoint="http://x", members={"a": "t", "b": "t",
                               "c": "t"}, size=3)  # fmt: skip
        remote = RemoteBatch(id="batch_1", status="completed", ended=True, created_at=0.0)
        mine = job.custom_id  # the job's marker and the key
        assert mine("b").startswith(f"r{job.id}_") and len(mine("0" * 64)) == 64
        results = [
            BatchResult("zzz", SUCCEEDED, completion=Completion("not ours")),  # a stranger: ignored
            BatchResult("b", SUCCEEDED, completion=Completion("the key, but not this job's marker")),  # ignored
            BatchResult(mine("b"), SUCCEEDED, completion=Completion("for b", tokens_in=3, tokens_out=1)),
            BatchResult(mine("a"), ERRORED, error="HTTP 400: bad"),
            BatchResult(mine("b"), SUCCEEDED, completion=Completion("b again")),  # a duplicate line: ignored
        ]
        stored = store.store_results(job, remote, results, identity_endpoint="http://x", batch_price=Price(1, 1),
                                     interactive_price=Price(2, 2))  # fmt: skip
        assert (stored.succeeded, stored.errored, stored.missing, stored.unknown) == (1, 1, 1, 3)
        assert cache.get("b").text == "for b" and cache.get("a") is None and cache.get("zzz") is None
        assert store.key_state("a")[:2] == ("failed", 1) and "HTTP 400: bad" in store.key_state("a")[2]
        assert store.key_state("c")[:2] == ("failed", 1) and "no result in batch batch_1" in store.key_state("c")[2]
        assert store.job(job.id).state == DOWNLOADED and stored.cost == pytest.approx(4e-6)
        store.create_job(provider="openai", model="openai:m", endpoint="x", members={"c": "t", "d": "t"}, size=2)
        with pytest.raises(ValueError, match="2 of these requests are already queued"):  # another run's
            store.create_job(provider="openai", model="openai:m", endpoint="x", members={"c": "t", "d": "t"}, size=2)


# --------------------------------------------------------------------------- every method


def method_responder(body: dict) -> str:
    """Answers pointwise, pairwise, rubric and rubric-writing requests (by their schema or prompt)."""
    text = " ".join(str(m.get("content") or "") for m in body.get("messages") or []) + json.dumps(body)
    if "pairwise_verdict" in text:
        return json.dumps({"reasoning": "b is better", "winner": "b"})
    if "rubric_verdicts" in text:
        ids = sorted(set(re.findall(r'"id": "(c[0-9]+)"', text)) or {"c1"})
        return json.dumps({"verdicts": [{"id": i, "reasoning": "ok", "pass": True} for i in ids]})
    if '"name": "rubric"' in text or "rubric" in text and "criteria" in text and "Write" in text:
        return json.dumps({"criteria": [{"id": "c1", "description": "answers", "importance": "HIGH"}]})
    return default_responder(body)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_method_is_answered_exactly_as_interactively(provider, tmp_path):
    records = [dict(r, baseline_model_response=f"base {i}") for i, r in enumerate(items(12))]
    pipelines = {
        "pairwise": lambda m, c, o: arun_pairwise(records, m, cache=c, options=o),
        "sampled": lambda m, c, o: arun_sampled(records, m, Pointwise(), samples=3, cache=c, options=o),
        "adaptive": lambda m, c, o: arun_adaptive(records, m, cache=c, options=o),
    }

    def view(name, result):
        if name == "pairwise":
            return [(p.outcome, p.status) for p in result.pairs]
        return [(r.status, r.verdict) for r in result.rows]

    api = BatchAPI(responder=method_responder)
    with JudgeServer(responder=method_responder, batch_api=api) as server:
        model = model_for(provider, server)
        for name, pipeline in pipelines.items():
            interactive = asyncio.run(pipeline(model, judge.JudgeCache(tmp_path / f"i-{name}.sqlite"),
                                               judge.EngineOptions()))  # fmt: skip
            before = len(api.submissions)
            batched = asyncio.run(arun_batched(pipeline, model, cache=tmp_path / f"b-{name}.sqlite", batch=FAST))
            assert view(name, batched.result) == view(name, interactive), name
            assert all(status == "scored" for _, status in view(name, interactive)) or all(
                status == "scored" for status, _ in view(name, interactive)
            ), name
            assert len(api.submissions) > before and batched.report.failed == 0
            if name == "adaptive":
                assert batched.report.rounds >= 3  # rubrics written in one batch, graded in the next


# --------------------------------------------------------------------------- a server that lists no files (issue 28, point 26)


def test_a_server_that_does_not_list_files_gets_an_upload(tmp_path):
    # On main `GET /files` answering 404 ("no route") stopped the run: listing is only how
    # an earlier upload is found again; without it, the file is uploaded.
    api = BatchAPI(responder=default_responder, list_files=False)
    with JudgeServer(batch_api=api) as server:
        result = judge.run(items(30), model_for("openai", server), cache=tmp_path / "c.sqlite", batch=FAST)
    assert result.completed and result.summary.scored == 30, result.stop_reason
    assert api.calls["GET /v1/files"] >= 1 and api.calls["POST /v1/files"] == 1
    assert len(api.submissions) == 1
    check_verdicts(result, 30)


def test_without_file_listing_an_interrupted_upload_is_uploaded_again_and_submitted_once(tmp_path):
    api = BatchAPI(responder=default_responder, list_files=False, upload_delay=30.0)
    cache = tmp_path / "c.sqlite"
    with JudgeServer(batch_api=api) as server:
        model = model_for("openai", server)

        async def killed_while_uploading():
            task = asyncio.ensure_future(judge.arun(items(40), model, cache=cache, batch=FAST, keep_rows=False))
            while not api.files and not task.done():  # the file is stored; the answer is held back
                await asyncio.sleep(0.01)
            assert not task.done(), task.result().stop_reason
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(killed_while_uploading())
        assert job_states(cache) == [PREPARING]
        api.plan.upload_delay = 0.0
        result = judge.run(items(40), model, cache=cache, batch=FAST)
    assert result.completed and result.summary.scored == 40
    assert api.calls["POST /v1/files"] == 2  # the first upload could not be found again: sent again
    assert len(api.submissions) == 1  # but one batch, ever


# --------------------------------------------------------------------------- foreign batches (issue 28, point 15)
# On main a submission lost in transit adopted any batch of the same size created in the last
# two minutes (Anthropic's batches carry no metadata): respeval waited on someone else's batch,
# stored its answers as its own, and `respeval batches cancel` cancelled it.


def submit_foreign(provider: str, server: JudgeServer, custom_ids: list[str]) -> str:
    """Another client's batch on the same account (the same size as ours): its answers all 0.0."""
    import httpx

    body = {"max_tokens": 64, "messages": [{"role": "user", "content": "someone else's row [[score=0.0]]"}]}
    if provider == "anthropic":
        requests = [{"custom_id": cid, "params": {"model": "claude-other", **body}} for cid in custom_ids]
        response = httpx.post(
            server.url + "/messages/batches", json={"requests": requests}, headers={"anthropic-version": "2023-06-01"}
        )
        return response.json()["id"]
    lines = "".join(
        json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions", "body": {"model": "o", **body}})
        + "\n"
        for cid in custom_ids
    )
    file_id = httpx.post(
        server.url + "/files", data={"purpose": "batch"}, files={"file": ("theirs.jsonl", lines.encode())}
    ).json()["id"]
    created = {"input_file_id": file_id, "endpoint": "/v1/chat/completions", "completion_window": "24h"}
    return httpx.post(server.url + "/batches", json={**created, "metadata": {"owner": "someone else"}}).json()["id"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_lost_submission_never_adopts_another_runs_batch_of_the_same_rows(provider, tmp_path):
    api = BatchAPI(responder=default_responder, seconds=0.3)
    with JudgeServer(batch_api=api) as server:
        model = model_for(provider, server)
        theirs = judge.run(items(40), model, cache=tmp_path / "colleague.sqlite", batch=FAST)
        assert theirs.completed
        # the colleague sends the same rows again (to another model): the same custom_ids on main
        foreign = submit_foreign(provider, server, api.submissions[0]["custom_ids"])
        api.plan.drop_submits = 1  # and our first submission is lost in transit
        ours = judge.run(items(40), model, cache=tmp_path / "ours.sqlite", batch=FAST)
        assert api.calls["dropped submit"] == 1
    assert ours.completed and ours.summary.scored == 40, ours.stop_reason
    check_verdicts(ours, 40)  # our own answers, not the colleague's (all 0.0)
    store = BatchStore(tmp_path / "ours.sqlite")
    try:
        jobs = store.jobs()
    finally:
        store.close()
    assert foreign not in {j.remote_id for j in jobs}
    assert all(j.state == DOWNLOADED and j.confirmed for j in jobs)
    assert api.batches[foreign].cancelled_at is None
    mine = [s for s in api.submissions if s["id"] not in (foreign, api.submissions[0]["id"])]
    assert len(mine) == 1 and len(mine[0]["custom_ids"]) == 40  # ours, sent once after the loss


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batches_cancel_never_cancels_a_foreign_batch(provider, tmp_path):
    import argparse

    from respeval.cli.batches import run as batches_run

    api = BatchAPI(responder=default_responder, seconds=30.0)
    cache = tmp_path / "c.sqlite"
    with JudgeServer(batch_api=api) as server:
        model = model_for(provider, server)
        foreign = submit_foreign(provider, server, [f"theirs-{i}" for i in range(40)])
        api.plan.drop_submits = 1
        stopped = judge.run(items(40), model, cache=cache, batch=options(max_wait=0.2))
        assert not stopped.completed
        cancel = argparse.Namespace(action="cancel", ids=[], cache=str(cache), base_url=None, api_key_env=None,
                                    wait=False, poll=0.01, prices=None, json=True)  # fmt: skip
        assert batches_run(cancel) == 0
        assert api.batches[foreign].cancelled_at is None  # never someone else's
        # ours, once known to be ours, can be cancelled
        mine = [s["id"] for s in api.submissions if s["id"] != foreign]
        assert all(api.batches[b].cancelled_at is not None for b in mine)


def test_an_interrupted_anthropic_submission_is_adopted_only_once_its_results_carry_the_runs_marker(tmp_path):
    api = BatchAPI(responder=default_responder, submit_delay=1.0)
    cache = tmp_path / "c.sqlite"
    with JudgeServer(batch_api=api) as server:
        model = model_for("anthropic", server)
        run_until_cancelled(model, cache, 0.5)  # the batch exists; its id never reached us
        api.plan.submit_delay = 0.0
        submit_foreign("anthropic", server, [f"theirs-{i}" for i in range(40)])  # and a stranger of its size
        result = judge.run(items(40), model, cache=cache, batch=FAST)
    assert result.completed and result.summary.scored == 40
    check_verdicts(result, 40)
    ours = api.submissions[0]
    assert all(cid.startswith("r") and "_" in cid for cid in ours["custom_ids"])  # the job's marker
    assert len({cid.split("_")[0] for cid in ours["custom_ids"]}) == 1
    assert len(api.submissions) == 2  # ours (found again, not resent) and the stranger's


def test_a_cache_written_before_the_marker_keeps_its_jobs_and_their_custom_ids(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.execute(  # batch_jobs as respeval wrote it before jobs were marked
        """CREATE TABLE batch_jobs (
        id TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL, endpoint TEXT NOT NULL,
        state TEXT NOT NULL, remote_id TEXT, handle TEXT, remote_status TEXT,
        requests INTEGER NOT NULL, bytes INTEGER NOT NULL,
        created REAL NOT NULL, submit_started REAL, updated REAL NOT NULL, error TEXT,
        succeeded INTEGER NOT NULL DEFAULT 0, errored INTEGER NOT NULL DEFAULT 0,
        expired INTEGER NOT NULL DEFAULT 0, cancelled INTEGER NOT NULL DEFAULT 0,
        missing INTEGER NOT NULL DEFAULT 0, tokens_in INTEGER NOT NULL DEFAULT 0,
        tokens_out INTEGER NOT NULL DEFAULT 0, cost REAL, cost_interactive REAL)"""
    )
    db.execute(
        "INSERT INTO batch_jobs (id, provider, model, endpoint, state, remote_id, requests, bytes, created, updated) "
        "VALUES ('oldjob', 'openai', 'openai:m', 'x', 'submitted', 'batch_9', 1, 10, 0, 0)"
    )
    db.commit()
    db.close()
    store = BatchStore(path)
    try:
        (job,) = store.jobs()
        assert (job.marked, job.confirmed) == (0, 1) and job.custom_id("k" * 64) == "k" * 64  # its ids were its keys
        new = store.create_job(provider="openai", model="openai:m", endpoint="x", members={"a": "t"}, size=1)
        assert new.marked == 1 and new.custom_id("a") == f"r{new.id}_a"
    finally:
        store.close()
