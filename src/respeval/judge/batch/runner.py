"""Submitting, polling and downloading provider batches, resumably.

:class:`BatchRunner` takes the requests a pass of the engine deferred, and:

1. picks up the jobs an earlier (killed) run left open: a ``preparing`` or ``uploaded``
   job is sent now, a ``submitting`` one is first looked up at the provider, a
   ``submitted`` one is polled; a never-submitted job whose requests this run no longer
   needs is abandoned;
2. splits the requests no job holds into batches at the provider's per-batch request and
   byte limits (and the budget), records each job before sending it, then uploads and
   submits it;
3. polls every open job with backoff until it ends (or ``max_wait`` passes), and stores
   each ended batch's results in the cache as soon as it ends.

Management calls that fail transiently are retried with backoff; a submission that failed
in transit is looked up before it is sent again (never submitted twice).  What a lookup
finds is this job's only when it carries the job's marker (see
:mod:`respeval.judge.batch.store`): an OpenAI batch by its metadata; an Anthropic one,
found by size and time only, stays unconfirmed (polled, never cancelled) until its results
show the marker in every ``custom_id``, and is otherwise recorded as foreign, its results
unread into the cache, and the job sent again.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from respeval.judge.batch.store import (
    PREPARING,
    SUBMITTED,
    SUBMITTING,
    UPLOADED,
    BatchCache,
    Job,
    custom_id,
    new_job_id,
)
from respeval.judge.errors import FatalError, TransientError
from respeval.judge.limits import Budget, Price, backoff_delay, jitter_unit
from respeval.judge.models.base import JudgeRequest, input_token_bound
from respeval.judge.models.batching import BatchClient, RemoteBatch
from respeval.judge.prices import ModelPrice
from respeval.judge.results import STOP_BUDGET, STOP_WAITING

__all__ = ["BatchOptions", "BatchReport", "BatchRunner"]

T = TypeVar("T")


@dataclass(frozen=True)
class BatchOptions:
    """How batch mode runs.

    Attributes:
        poll_interval: seconds before the first status check; each wait is 1.5x the last.
        poll_max: the longest wait between status checks.
        max_wait: stop waiting after this many seconds (None: until every batch ends,
            which the providers promise within 24 hours); the batches keep running, and a
            rerun (or ``respeval batches fetch``) collects them.
        retries: how many times a request that failed inside a batch (an error, an
            expired or cancelled batch) is sent again before its row is left unscored.
        retry: ``batch`` (again in the next batch) or ``interactive`` (an ordinary call).
        max_requests, max_bytes: per-batch limits below the provider's (None: the
            provider's: OpenAI 50,000 requests and 200 MB, Anthropic 100,000 and 256 MB).
        prices: the model's prices (a :class:`ModelPrice`), or a table of them by model;
            default: :data:`respeval.judge.prices.PRICE_TABLE`.
        call_retries, call_backoff: retries of a failed management call (upload, submit,
            status, download) and the first backoff in seconds.
    """

    poll_interval: float = 10.0
    poll_max: float = 300.0
    max_wait: float | None = None
    retries: int = 2
    retry: str = "batch"
    max_requests: int | None = None
    max_bytes: int | None = None
    prices: ModelPrice | Mapping[str, ModelPrice] | None = None
    call_retries: int = 6
    call_backoff: float = 1.0

    def __post_init__(self) -> None:
        if self.poll_interval <= 0 or self.poll_max <= 0:
            raise ValueError("poll intervals must be positive")
        if self.max_wait is not None and self.max_wait < 0:
            raise ValueError(f"max_wait must be non-negative, got {self.max_wait}")
        if self.retries < 0:
            raise ValueError(f"retries must be non-negative, got {self.retries}")
        if self.retry not in ("batch", "interactive"):
            raise ValueError(f"retry must be batch or interactive, got {self.retry!r}")
        for name in ("max_requests", "max_bytes"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")


@dataclass
class BatchReport:
    """What batch mode did in this run (counts are requests, not rows).

    ``succeeded + failed`` is every request result stored; a failed request was
    ``resubmitted`` in a later batch, ``retried_interactively``, or its row ``gave_up``
    (unscored with the provider's reason) once past the retry limit.
    """

    provider: str
    model: str
    price_source: str | None = None
    rounds: int = 0
    batches_submitted: int = 0
    batches_resumed: int = 0
    batches_abandoned: int = 0
    requests_submitted: int = 0
    resubmitted: int = 0
    succeeded: int = 0
    errored: int = 0
    expired: int = 0
    cancelled: int = 0
    missing: int = 0
    unknown_results: int = 0
    retried_interactively: int = 0
    gave_up: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    cost_interactive_equivalent: float = 0.0
    live_calls: int = 0
    live_tokens_in: int = 0
    live_tokens_out: int = 0
    live_cost: float = 0.0
    seconds_waiting: float = 0.0
    pending_batches: int = 0
    stop_reason: str | None = None
    stop_kind: str | None = None
    batch_ids: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return self.errored + self.expired + self.cancelled + self.missing

    @property
    def total_cost(self) -> float:
        """Batch and interactive spend of this run."""
        return self.cost + self.live_cost

    @property
    def savings(self) -> float:
        return self.cost_interactive_equivalent - self.cost

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "batch_ids"}
        out["failed"] = self.failed
        out["total_cost"] = self.total_cost
        out["batch_ids"] = list(self.batch_ids)
        return out

    def format(self) -> str:
        lines = [
            f"batch       {self.requests_submitted:,} requests in {self.batches_submitted} new batches"
            + (f", {self.batches_resumed} resumed" if self.batches_resumed else "")
            + f" ({self.provider}, {self.rounds} {'pass' if self.rounds == 1 else 'passes'})",
            f"            {self.succeeded:,} answered, {self.failed:,} failed "
            f"({self.errored} errors, {self.expired} expired, {self.cancelled} cancelled, {self.missing} missing); "
            f"{self.resubmitted} resent, {self.retried_interactively} retried interactively, "
            f"{self.gave_up} given up",
        ]
        if self.price_source is None:
            lines.append(
                f"            tokens {self.tokens_in:,} in, {self.tokens_out:,} out; cost unknown "
                "(no price for this model: --price-in/--price-out or --prices)"
            )
        else:
            lines.append(
                f"            tokens {self.tokens_in:,} in, {self.tokens_out:,} out; cost ${self.cost:.4f} at batch "
                f"prices (interactively ${self.cost_interactive_equivalent:.4f}; saved ${self.savings:.4f}; "
                f"prices: {self.price_source})"
            )
        if self.live_calls:
            lines.append(
                f"            interactive retries: {self.live_calls} calls, {self.live_tokens_in:,} in, "
                f"{self.live_tokens_out:,} out, ${self.live_cost:.4f}"
            )
        if self.stop_reason:
            lines.append(f"            STOPPED: {self.stop_reason}")
        return "\n".join(lines)


Progress = Callable[[str], None]


class BatchRunner:
    """Drives one provider's batches for one model (see the module docstring)."""

    def __init__(
        self,
        client: BatchClient,
        cache: BatchCache,
        *,
        model_id: str,
        identity_endpoint: str,
        options: BatchOptions,
        report: BatchReport,
        price: ModelPrice | None,
        budget: Budget | None = None,
        on_progress: Progress | None = None,
        seed: int = 0,
    ) -> None:
        self.client = client
        self.cache = cache
        self.store = cache.store
        self.model_id = model_id
        self.identity_endpoint = identity_endpoint
        self.options = options
        self.report = report
        self.price = price
        self.budget = budget or Budget()
        self._progress = on_progress
        self._seed = seed
        self._started = time.monotonic()
        self.max_requests = min(options.max_requests or client.max_requests, client.max_requests)
        self.max_bytes = min(options.max_bytes or client.max_bytes, client.max_bytes)
        self._released: list[str] = []  # jobs whose found batch was foreign, to resend

    def say(self, message: str) -> None:
        if self._progress is not None:
            self._progress(message)

    # ------------------------------------------------------------------ management calls

    async def _retrying(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        attempt = 0
        while True:
            try:
                return await call()
            except TransientError as exc:
                if attempt >= self.options.call_retries:
                    raise FatalError(f"{what}: gave up after {attempt + 1} attempts; last: {exc}") from None
                delay = backoff_delay(
                    attempt,
                    base=self.options.call_backoff,
                    cap=max(self.options.call_backoff, 60.0),
                    unit=jitter_unit(self._seed, what, attempt),
                    retry_after=exc.retry_after,
                )
                attempt += 1
                await asyncio.sleep(delay)

    # ------------------------------------------------------------------ one pass

    async def resolve(self, deferred: Mapping[str, JudgeRequest]) -> bool:
        """Get answers (or failures) for the ``deferred`` requests into the cache.  Returns
        whether anything was learned: False when nothing could be sent (the budget) or the
        batches are still running after ``max_wait``."""
        self.report.gave_up = len(self.cache.gave_up)
        self.report.retried_interactively = len(self.cache.retried_live)
        open_jobs: list[Job] = []
        held: set[str] = set()
        for job in self.store.open_jobs():
            members = self.store.members(job.id)
            if job.state == SUBMITTED:
                if deferred.keys() & members.keys():
                    open_jobs.append(job)
                    held.update(members)
                continue
            resumed = await self._resume(job, members, deferred)
            if resumed is not None:
                open_jobs.append(resumed)
                held.update(members)
        fresh = [key for key in deferred if key not in held]
        fresh = self._within_budget(fresh, deferred)
        open_jobs.extend(await self._submit_new(fresh, deferred))
        learned = False
        while open_jobs:
            learned |= await self._wait(open_jobs)
            # jobs whose batch turned out to be foreign: look again, or send them now
            released = [again for job_id in self._released if (again := self.store.job(job_id)) is not None]
            self._released = []
            open_jobs = []
            for again in released:
                resumed = await self._resume(again, self.store.members(again.id), deferred)
                if resumed is not None:
                    open_jobs.append(resumed)
        return learned

    def _adopt(self, job: Job, remote: RemoteBatch, how: str) -> Job:
        """Record ``remote``, found by a lookup, as ``job``'s batch: confirmed when it carries
        the job's marker (OpenAI's metadata), else unconfirmed until its results show it."""
        confirmed = remote.metadata.get("respeval_job") == job.id
        self.store.set_state(
            job.id, SUBMITTED, remote_id=remote.id, remote_status=remote.status, confirmed=int(confirmed)
        )
        if confirmed:
            self.say(f"batch {remote.id}: found the submission {how} ({remote.status})")
        else:
            self.say(
                f"batch {remote.id}: may be the submission {how} ({remote.status}; found by its size and time only: "
                "it is used once its results show this run's marker, and never cancelled before)"
            )
        updated = self.store.job(job.id)
        assert updated is not None
        return updated

    async def _resume(self, job: Job, members: Mapping[str, str], deferred: Mapping[str, JudgeRequest]) -> Job | None:
        """An open job an earlier run did not finish submitting (see the module docstring)."""
        if job.state == SUBMITTING:
            claimed = self.store.claimed_remote_ids()
            since = job.submit_started or job.created
            remote = await self._retrying(
                "looking up an interrupted submission",
                lambda: self.client.find(job.id, since=since, count=job.requests, claimed=claimed),
            )
            if remote is not None:
                self.report.batches_resumed += 1
                self.report.batch_ids.append(remote.id)
                return self._adopt(job, remote, "an earlier run sent")
        if not members.keys() <= deferred.keys():
            self.store.abandon(job.id, "not submitted, and this run no longer needs all of its requests")
            self.report.batches_abandoned += 1
            return None
        lines = [self.client.line(job.custom_id(key), deferred[key]) for key in members]
        self.report.batches_resumed += 1
        return await self._send(job, lines)

    def _within_budget(self, keys: list[str], deferred: Mapping[str, JudgeRequest]) -> list[str]:
        """The prefix of ``keys`` the budget allows, at the worst case per request (its
        input bounded from above, as interactive calls reserve it, its whole max_tokens as
        output)."""
        b = self.budget
        if b.unlimited or not keys:
            return keys
        before_calls, before_tokens, before_cost = b.spent  # what earlier runs sharing the budget spent
        calls = before_calls + self.report.requests_submitted + self.report.live_calls
        tokens = before_tokens + (
            self.report.tokens_in + self.report.tokens_out + self.report.live_tokens_in + self.report.live_tokens_out
        )
        cost = before_cost + self.report.total_cost
        batch_price: Price | None = self.price.batch if self.price is not None else None
        allowed: list[str] = []
        for key in keys:
            request = deferred[key]
            est_in = input_token_bound(request)
            est_out = request.max_tokens or 1024
            calls += 1
            tokens += est_in + est_out
            cost += batch_price.cost(est_in, est_out) if batch_price is not None else 0.0
            if (
                (b.max_calls is not None and calls > b.max_calls)
                or (b.max_tokens is not None and tokens > b.max_tokens)
                or (b.max_cost is not None and cost > b.max_cost)
            ):
                self.report.stop_kind = STOP_BUDGET
                self.report.stop_reason = (
                    f"budget reached: {len(keys) - len(allowed):,} requests not submitted (a batch is submitted only "
                    "while its worst case, max tokens per reply, fits in the budget)"
                )
                break
            allowed.append(key)
        return allowed

    async def _submit_new(self, keys: Sequence[str], deferred: Mapping[str, JudgeRequest]) -> list[Job]:
        """Split ``keys`` at the per-batch limits; record, then send, each batch."""
        jobs = []
        chunk: list[str] = []
        lines: list[bytes] = []
        size = 0
        job_id = new_job_id()  # its lines carry its marker, so it is named before it is recorded

        async def flush() -> None:
            nonlocal chunk, lines, size, job_id
            if not chunk:
                return
            members = {key: deferred[key].template_version for key in chunk}
            job = self.store.create_job(
                provider=self.client.provider,
                model=self.model_id,
                endpoint=self.identity_endpoint,
                members=members,
                size=size,
                job_id=job_id,
            )
            self.report.resubmitted += job.resent
            jobs.append(await self._send(job, lines, new=True))
            chunk, lines, size, job_id = [], [], 0, new_job_id()

        for key in keys:
            line = self.client.line(custom_id(job_id, key), deferred[key])
            if len(line) > self.max_bytes:
                raise FatalError(
                    f"one request is {len(line):,} bytes, over the batch limit of {self.max_bytes:,}: it cannot be batched"
                )
            if chunk and (len(chunk) >= self.max_requests or size + len(line) > self.max_bytes):
                await flush()
                line = self.client.line(custom_id(job_id, key), deferred[key])  # the next job's marker
            chunk.append(key)
            lines.append(line)
            size += len(line)
        await flush()
        return jobs

    async def _send(self, job: Job, lines: Sequence[bytes], *, new: bool = False) -> Job:
        """Upload (if the provider wants a file) and submit one recorded job."""
        handle = job.handle
        if job.state == PREPARING:
            self.say(f"batch {job.id}: uploading {job.requests:,} requests ({job.bytes / 1e6:.1f} MB)")
            handle = await self._retrying("uploading a batch file", lambda: self.client.prepare(job.id, lines))
            self.store.set_state(job.id, UPLOADED, handle=handle)
        attempt = 0
        while True:
            self.store.set_state(job.id, SUBMITTING, submit_started=time.time())
            try:
                remote = await self.client.submit(job.id, handle, lines)
                break
            except TransientError as exc:
                # It may have been created all the same: look before sending it again.
                claimed = self.store.claimed_remote_ids()
                found = await self._retrying(
                    "looking up a submission that failed in transit",
                    functools.partial(self.client.find, job.id, since=job.created, count=job.requests, claimed=claimed),
                )
                if found is not None:
                    if new:
                        self.report.batches_submitted += 1
                        self.report.requests_submitted += job.requests
                    self.report.batch_ids.append(found.id)
                    return self._adopt(job, found, "that failed in transit")
                if attempt >= self.options.call_retries:
                    raise FatalError(f"submitting a batch: gave up after {attempt + 1} attempts; last: {exc}") from None
                await asyncio.sleep(
                    backoff_delay(
                        attempt,
                        base=self.options.call_backoff,
                        cap=60.0,
                        unit=jitter_unit(self._seed, job.id, attempt),
                        retry_after=exc.retry_after,
                    )
                )
                attempt += 1
            except FatalError as exc:
                self.store.abandon(job.id, f"the provider refused the batch: {exc}")
                raise
        self.store.set_state(job.id, SUBMITTED, remote_id=remote.id, remote_status=remote.status)
        if new:
            self.report.batches_submitted += 1
            self.report.requests_submitted += job.requests
        self.report.batch_ids.append(remote.id)
        self.say(f"batch {remote.id}: submitted {job.requests:,} requests ({remote.status})")
        updated = self.store.job(job.id)
        assert updated is not None
        return updated

    # ------------------------------------------------------------------ collecting (respeval batches fetch)

    async def locate(self, job: Job) -> Job | None:
        """A ``submitting`` job's batch at the provider (recorded as submitted), or None."""
        claimed = self.store.claimed_remote_ids()
        remote = await self._retrying(
            "looking up an interrupted submission",
            functools.partial(
                self.client.find, job.id, since=job.submit_started or job.created, count=job.requests, claimed=claimed
            ),
        )
        if remote is None:
            return None
        return self._adopt(job, remote, "an earlier run sent")

    async def collect(self, jobs: list[Job]) -> bool:
        """Poll submitted jobs (until they end, or ``max_wait``) and store their results."""
        return await self._wait(jobs)

    async def cancel(self, job: Job) -> RemoteBatch:
        """Ask the provider to cancel a submitted job's batch (its results stay fetchable).
        Raises ValueError for a batch not known to be the job's (found by size and time
        only): it may be someone else's, and is never cancelled."""
        assert job.remote_id is not None
        if not job.confirmed:
            raise ValueError(
                f"batch {job.remote_id} was found by its size and creation time after a lost submission, and is not "
                "known to be this job's (Anthropic batches carry no metadata): not cancelled; `respeval batches "
                "fetch` confirms it (or releases it) once it ends"
            )
        remote = await self._retrying("cancelling a batch", functools.partial(self.client.cancel, job.remote_id))
        self.store.set_remote_status(job.id, remote.status)
        return remote

    # ------------------------------------------------------------------ waiting

    async def _wait(self, jobs: list[Job]) -> bool:
        """Poll until every job has ended and its results are stored (or ``max_wait``)."""
        pending = {job.id: job for job in jobs}
        delay = self.options.poll_interval
        first = True
        learned = False
        waited_from = time.monotonic()
        while pending:
            for job_id, job in list(pending.items()):
                assert job.remote_id is not None
                remote_id = job.remote_id
                remote = await self._retrying("checking a batch", functools.partial(self.client.retrieve, remote_id))
                if remote.status != job.remote_status:
                    self.store.set_remote_status(job.id, remote.status)
                    pending[job_id] = job = self.store.job(job.id) or job
                if remote.ended:
                    await self._download(job, remote)
                    del pending[job_id]
                    learned = True
                elif not first:
                    self.say(
                        f"batch {remote.id}: {remote.status}, {remote.done:,}/{remote.total or job.requests:,} done"
                    )
            first = False
            if not pending:
                break
            waited = time.monotonic() - self._started  # max_wait is for the whole run, every pass
            if self.options.max_wait is not None and waited + delay > self.options.max_wait:
                self.report.pending_batches = len(pending)
                self.report.stop_kind = STOP_WAITING
                self.report.stop_reason = (
                    f"{len(pending)} batches still running after {waited:.0f}s (--batch-wait); they keep running: "
                    "rerun the same command, or respeval batches fetch, to collect them"
                )
                break
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, self.options.poll_max)
        self.report.seconds_waiting += time.monotonic() - waited_from
        return learned

    async def _download(self, job: Job, remote: RemoteBatch) -> None:
        results = await self._retrying("downloading batch results", lambda: self.client.results(remote))
        if not job.confirmed:
            ours = job.keys_by_custom_id(list(self.store.members(job.id)))
            if not results or any(r.custom_id not in ours for r in results):
                reason = f"batch {remote.id}, found by size and time after a lost submission, is not this job's"
                self.store.release_foreign(job.id, remote.id, reason)
                self._released.append(job.id)
                self.say(f"{reason}: left alone; the job is sent again")
                return
            self.store.set_state(job.id, job.state, confirmed=1)
            self.say(f"batch {remote.id}: its results carry this run's marker: it is this job's")
        stored = self.store.store_results(
            job,
            remote,
            results,
            identity_endpoint=self.identity_endpoint,
            batch_price=self.price.batch if self.price is not None else None,
            interactive_price=self.price.interactive if self.price is not None else None,
        )
        r = self.report
        r.succeeded += stored.succeeded
        r.errored += stored.errored
        r.expired += stored.expired
        r.cancelled += stored.cancelled
        r.missing += stored.missing
        r.unknown_results += stored.unknown
        r.tokens_in += stored.tokens_in
        r.tokens_out += stored.tokens_out
        r.cost += stored.cost
        r.cost_interactive_equivalent += stored.cost_interactive
        failed = f", {stored.failed:,} failed" if stored.failed else ""
        self.say(f"batch {remote.id}: {remote.status}; {stored.succeeded:,} answers stored{failed}")
