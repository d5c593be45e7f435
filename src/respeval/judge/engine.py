"""The judge engine: concurrency, rate limits, timeouts, retries, cache, budget, accounting.

One asyncio event loop, ``concurrency`` worker coroutines pulling rows from a shared
iterator (so memory stays flat however long the input), and per row:

    record -> method.item -> method.build -> [cache | limits -> model.generate -> retry] -> method.parse
           -> (one re-ask if unparseable) -> RowResult -> on_row callback

With a cache, identical requests are paid for once: a hit is free, and a request identical
to one already in flight (duplicate rows) waits for that call's answer.  Transient
failures (429, 5xx, timeouts, dropped connections, malformed bodies) are retried with
seeded exponential backoff; a ``Retry-After`` pauses every worker, not just the one that
got it.  If the first rows exhaust their retries before any call has succeeded, the
endpoint is dead or misconfigured and the run stops rather than retrying every row.

Stopping is always clean.  A budget cap, a fatal error (401, 400, a cache miss in
replay-only mode), a cache file that cannot be read or written (a damaged page) or an
interrupt stops new calls from starting; calls already in flight finish, their answers
are cached and their rows reported, and every row that did not finish is counted as not run, so the summary says what is left.  Rows already reported are
never lost, and a rerun with the same cache pays for none of their answers again.

The entry points are :func:`respeval.judge.run` and :func:`respeval.judge.arun`
(:mod:`respeval.judge.run`), which resolve the method, the model and the cache, and run the
engine live or through provider batches.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from respeval.judge.cache import CacheError, JudgeCache, KeyMaker
from respeval.judge.errors import DeferredError, FatalError, JudgeError, RequestFailedError, TransientError
from respeval.judge.limits import (
    Budget,
    BudgetTracker,
    Prices,
    RateLimiter,
    Reservation,
    backoff_delay,
    jitter_unit,
    price_for,
)
from respeval.judge.methods.base import JudgeMethod
from respeval.judge.models.base import Completion, JudgeModel, JudgeRequest, estimate_tokens, input_token_bound
from respeval.judge.parsing import ParseFailure
from respeval.judge.results import (
    SCORED,
    STOP_BUDGET,
    STOP_CACHE,
    STOP_DEFERRED,
    STOP_ERROR,
    STOP_INTERRUPTED,
    UNSCORED,
    JudgeRunSummary,
    RowResult,
    Spend,
)
from respeval.redact import redact

__all__ = ["STOP_CACHE", "STOP_DEFERRED", "EngineOptions", "JudgeEngine", "RunResult", "budget_left"]


@dataclass(frozen=True)
class EngineOptions:
    """How the engine calls the model.

    Attributes:
        concurrency: calls in flight at once.
        max_retries: retries per request after the first attempt (transient errors only).
        timeout: seconds per attempt (None: no limit); a timeout is retried.
        backoff_base, backoff_max: exponential backoff ``base * 2**n`` seconds, capped,
            with seeded jitter (see :func:`~respeval.judge.limits.backoff_delay`).
        max_retry_after: the longest ``Retry-After`` the engine honours, in seconds.
        requests_per_minute, tokens_per_minute: client-side rate limits (None: none).
        budget: caps on calls, tokens and cost for the run.
        prices: USD per million tokens (one Price, or a mapping by model); needed for cost.
        reask: re-ask once when the judge's reply cannot be parsed (counted in the cost).
        replay_only: answer from the cache only; a miss stops the run (for CI).
        seed: seeds the retry jitter.
        confidence: confidence level of the pass-rate interval.
    """

    concurrency: int = 8
    max_retries: int = 5
    timeout: float | None = 60.0
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    max_retry_after: float = 300.0
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    budget: Budget | None = None
    prices: Prices | None = None
    reask: bool = True
    replay_only: bool = False
    seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be non-negative, got {self.max_retries}")
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError(f"timeout must be positive, got {self.timeout}")
        if self.backoff_base < 0 or self.backoff_max < 0:
            raise ValueError("backoff times must be non-negative")
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence}")


def budget_left(options: EngineOptions | None, spend: Spend) -> EngineOptions | None:
    """``options`` for the next of several runs sharing their budget (passes, phases,
    metrics), once the earlier ones spent ``spend``: it may spend only what is left, and
    its budget stop reports what all of them spent (see :meth:`Budget.after`)."""
    if options is None or options.budget is None or options.budget.unlimited:
        return options
    left = options.budget.after(spend.calls, spend.tokens_in + spend.tokens_out, spend.cost)
    return dataclasses.replace(options, budget=left)


@dataclass
class RunResult:
    """The rows judged (sorted by input row; empty with ``keep_rows=False``), the summary,
    and the input rows left not run when the run stopped early."""

    rows: list[RowResult]
    summary: JudgeRunSummary
    not_run: list[int] = field(default_factory=list)
    stop_kind: str | None = None

    @property
    def stop_reason(self) -> str | None:
        return self.summary.stop_reason

    @property
    def completed(self) -> bool:
        """True when every input row was judged (scored or unscored)."""
        return self.stop_reason is None and not self.not_run

    # the rest of respeval.judge.results.JudgeReport: the summary's
    @property
    def spend(self) -> Spend:
        return Spend.of(self.summary)

    @property
    def batch(self) -> Any:
        return self.summary.batch

    def to_json(self) -> dict[str, Any]:
        return self.summary.to_json()

    def format(self) -> str:
        return self.summary.format()


class _Stop(Exception):
    """The run is stopping: this row's next call may not start (the row is left not run)."""


class _GaveUp(Exception):
    """A request failed transiently more than max_retries times (or failed for good in a batch)."""


class _Deferred(Exception):
    """The row's answer comes from a provider batch: it is left not run in this pass."""


@dataclass
class _RowSpend:
    attempts: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    live: bool = False  # at least one answer came from the model, not the cache
    hits: int = 0  # answers served from the cache (taken back if the row is deferred)


if sys.version_info >= (3, 11):

    async def _with_timeout(coro: Any, seconds: float) -> Any:
        async with asyncio.timeout(seconds):  # no extra task, unlike wait_for on 3.11
            return await coro
else:  # pragma: no cover - Python 3.10

    async def _with_timeout(coro: Any, seconds: float) -> Any:
        return await asyncio.wait_for(coro, seconds)


def transcript(request: JudgeRequest, completion: Completion) -> dict[str, Any]:
    """One call as a row keeps it: the messages sent, the raw reply, which sample and order."""
    out: dict[str, Any] = {
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "reply": completion.text,
        "sample": request.sample_index,
        "flipped": request.flip,
    }
    if completion.refusal:
        out["refusal"] = completion.refusal
    if completion.structured is not None:
        out["structured"] = completion.structured
    return out


class JudgeEngine:
    """Runs one method with one model over a stream of records (see the module docstring).

    The caller owns ``model`` (enter it first) and ``cache``; :func:`arun` does that for you.
    """

    def __init__(
        self,
        model: JudgeModel,
        method: JudgeMethod,
        options: EngineOptions | None = None,
        *,
        cache: JudgeCache | None = None,
        fields: Mapping[str, str] | None = None,
    ) -> None:
        self.model = model
        self.method = method
        self.options = options or EngineOptions()
        self.cache = cache
        if self.options.replay_only and cache is None:
            raise ValueError("replay_only needs a cache")
        self._fields = dict(fields or {})
        self._identity = model.identity()
        self._key = KeyMaker(self._identity)
        self._price = price_for(self.options.prices, model.name, model.model_id)
        budget = self.options.budget or Budget()
        if budget.max_cost is not None and self._price is None:
            raise ValueError(f"a cost budget needs prices for {model.model_id} (EngineOptions.prices)")
        self._budget = BudgetTracker(budget)
        self._budget_stopped = False  # the tracker refused a request: its stop reason is final at the end
        o = self.options
        self._rpm = RateLimiter(o.requests_per_minute) if o.requests_per_minute else None
        self._tpm = RateLimiter(o.tokens_per_minute) if o.tokens_per_minute else None
        self.summary = JudgeRunSummary(
            method=method.name,
            signature=f"{method.signature()}|model:{model.model_id}",
            model=model.model_id,
            confidence=o.confidence,
        )
        self._stop_kind: str | None = None
        self._stop_event = asyncio.Event()
        self._resume_at = 0.0  # monotonic time before which no call starts (a 429's Retry-After)
        self._active: set[int] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._interrupts = 0
        self._successes = 0
        self._pending: dict[str, asyncio.Future[Completion]] = {}  # cache key -> the call in flight
        self._deferred: set[int] = set()  # rows whose answer waits for a provider batch (batch mode)

    # ------------------------------------------------------------------ stopping

    @property
    def stopping(self) -> bool:
        return self._stop_kind is not None

    def halt(self, reason: str, kind: str = STOP_ERROR) -> None:
        """Stop starting calls; the first reason given is the one reported."""
        if self._stop_kind is None:
            self._stop_kind = kind
            self.summary.stop_reason = redact(reason)  # printed, and in every summary
            self._stop_event.set()

    def interrupt(self) -> int:
        """Ctrl-C: the first stops new calls and lets calls in flight finish (they are paid
        for, so their answers are kept); the second cancels them.  Returns how many
        interrupts there have been."""
        self._interrupts += 1
        self.halt("interrupted", STOP_INTERRUPTED)
        if self._interrupts > 1:
            for task in self._tasks:
                task.cancel()
        return self._interrupts

    @property
    def in_flight(self) -> int:
        return len(self._active)

    @property
    def deferred(self) -> int:
        """Rows left not run because their answer waits for a provider batch (batch mode)."""
        return len(self._deferred)

    # ------------------------------------------------------------------ the run

    async def run(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        on_row: Callable[[RowResult], None] | None = None,
        keep_rows: bool = True,
    ) -> RunResult:
        """Judge every record (once per engine); ``on_row`` sees each row as it finishes,
        in finishing order."""
        started = time.perf_counter()
        rows: list[RowResult] = []
        rows_iter: Iterator[tuple[int, Mapping[str, Any]]] = enumerate(records)

        def emit(result: RowResult) -> None:
            self.summary.add(result)
            if keep_rows:
                rows.append(result)
            if on_row is not None:
                on_row(result)

        self._tasks = [asyncio.ensure_future(self._worker(rows_iter, emit)) for _ in range(self.options.concurrency)]
        try:
            done, _ = await asyncio.wait(self._tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
        finally:
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
        # Rows started but not finished (cancelled by a second Ctrl-C), then rows never started.
        not_run = sorted(self._active | self._deferred)
        not_run.extend(row for row, _ in rows_iter)
        if self._budget_stopped:
            # every call in flight has settled now: say what was really spent
            self.summary.stop_reason = redact(self._budget.stop_reason())
        if self._deferred and self._stop_kind is None:
            self._stop_kind = STOP_DEFERRED
            self.summary.stop_reason = f"{len(self._deferred)} rows wait for answers from a provider batch"
        self.summary.total = self.summary.scored + self.summary.unscored + len(not_run)
        self.summary.seconds = time.perf_counter() - started
        rows.sort(key=lambda r: r.row)
        return RunResult(rows=rows, summary=self.summary, not_run=not_run, stop_kind=self._stop_kind)

    async def _worker(
        self, rows_iter: Iterator[tuple[int, Mapping[str, Any]]], emit: Callable[[RowResult], None]
    ) -> None:
        while not self.stopping:
            try:
                row, record = next(rows_iter)
            except StopIteration:
                return
            self._active.add(row)
            result = await self._judge_row(row, record)
            if result is None:
                continue  # left not run; the run is stopping
            self._active.discard(row)
            emit(result)

    # ------------------------------------------------------------------ one row

    def _project(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """The record with the method's field names (``--field NAME=COLUMN`` renames)."""
        out = {}
        for name in (*self.method.fields, "id"):
            column = self._fields.get(name, name)
            if column in record:
                out[name] = record[column]
        return out

    async def _judge_row(self, row: int, record: Mapping[str, Any]) -> RowResult | None:
        projected = self._project(record)
        row_id = projected.get("id", row)
        try:
            item = self.method.item(projected)
        except (ValueError, TypeError) as exc:
            return RowResult(row=row, id=row_id, status=UNSCORED, unscored_reason=f"invalid input: {exc}")
        spend = _RowSpend()
        request = self.method.build(item, self.model.capabilities)
        reasked = False
        calls: list[dict[str, Any]] = []
        try:
            completion = await self._call(request, spend, row)
            calls.append(transcript(request, completion))
            outcome = self.method.parse(item, completion)
            if isinstance(outcome, ParseFailure) and self.options.reask:
                reasked = True
                self.summary.reasks += 1
                second_request = self.method.reask(item, request, completion, outcome)
                second_completion = await self._call(second_request, spend, row)
                calls.append(transcript(second_request, second_completion))
                second = self.method.parse(item, second_completion)
                outcome = (
                    ParseFailure(f"{outcome.reason}; after one re-ask: {second.reason}")
                    if isinstance(second, ParseFailure)
                    else second
                )
        except _Stop:
            # Left not run, but what it already spent was spent: keep the totals honest.
            self.summary.add_spend(spend.tokens_in, spend.tokens_out, spend.cost)
            return None
        except _Deferred:
            # The row is judged again in a later pass: it leaves no count here but its spend,
            # so that the passes' summaries add up.
            self._active.discard(row)
            self._deferred.add(row)
            self.summary.cache_hits -= spend.hits
            self.summary.reasks -= reasked
            self.summary.add_spend(spend.tokens_in, spend.tokens_out, spend.cost)
            return None
        except _GaveUp as exc:
            return self._row(row, row_id, spend, reasked, reason=str(exc), calls=calls)
        if isinstance(outcome, ParseFailure):
            return self._row(row, row_id, spend, reasked, reason=f"unparseable: {outcome.reason}", calls=calls)
        return self._row(
            row,
            row_id,
            spend,
            reasked,
            verdict=self.method.row_fields(outcome.verdict),
            parsed_from=outcome.stage,
            calls=calls,
        )

    @staticmethod
    def _row(
        row: int,
        row_id: Any,
        spend: _RowSpend,
        reasked: bool,
        *,
        reason: str | None = None,
        verdict: dict[str, Any] | None = None,
        parsed_from: str | None = None,
        calls: list[dict[str, Any]] | None = None,
    ) -> RowResult:
        return RowResult(
            row=row,
            id=row_id,
            status=SCORED if verdict is not None else UNSCORED,
            verdict=verdict,
            unscored_reason=reason,
            tokens_in=spend.tokens_in,
            tokens_out=spend.tokens_out,
            cost=spend.cost,
            cache_hit=not spend.live,
            attempts=spend.attempts,
            reasked=reasked,
            parsed_from=parsed_from,
            calls=calls or [],
        )

    # ------------------------------------------------------------------ one request

    async def _call(self, request: JudgeRequest, spend: _RowSpend, row: int) -> Completion:
        """The answer to ``request``: from the cache, from an identical call already in
        flight (duplicate rows are paid for once), or from the model with retries."""
        if self.cache is None:
            return await self._live_call(request, spend, row, None)
        key = self._key(request)
        try:
            cached = self.cache.get(key)
        except CacheError as exc:  # a damaged page met mid-run: stop cleanly, keep what was judged
            self.halt(str(exc), STOP_CACHE)
            raise _Stop from exc
        if cached is not None:
            self.summary.cache_hits += 1
            spend.hits += 1
            return cached
        if self.options.replay_only:
            self.halt(
                f"replay-only: cache miss for input row {row} ({self.model.model_id}, "
                f"template {request.template_version}) in {self.cache.path}"
            )
            raise _Stop
        try:
            self.cache.on_miss(key, request)  # batch mode: the answer may come from a provider batch
        except DeferredError:
            raise _Deferred from None
        except RequestFailedError as exc:
            raise _GaveUp(str(exc)) from None
        except CacheError as exc:
            self.halt(str(exc), STOP_CACHE)
            raise _Stop from exc
        while (shared := self._pending.get(key)) is not None:
            try:
                completion = await asyncio.shield(shared)
            except asyncio.CancelledError:
                if not shared.cancelled():
                    raise  # this task itself was cancelled
                continue  # that call failed; another waiter may have taken over: look again
            self.summary.cache_hits += 1
            spend.hits += 1
            return completion
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            completion = await self._live_call(request, spend, row, key)
        except BaseException:
            future.cancel()  # the waiters fall back to calls of their own
            raise
        finally:
            del self._pending[key]
        future.set_result(completion)
        return completion

    async def _live_call(self, request: JudgeRequest, spend: _RowSpend, row: int, key: str | None) -> Completion:
        """Call the model, with retries; cache the answer under ``key`` before returning it."""
        estimate = estimate_tokens(request.prompt_chars()) + (request.max_tokens or 256)
        worst = self._worst_case(request)
        jitter_key = f"{row}:{len(request.messages)}"
        attempt = 0
        while True:
            reservation = await self._gate(estimate, worst)
            spend.attempts += 1
            self.summary.calls += 1
            if attempt:
                self.summary.retries += 1
            try:
                try:
                    completion = await self._generate(request)
                except BaseException:
                    self._budget.settle(reservation, 0, 0.0)  # no reply, no usage reported: nothing billed
                    raise
            except TransientError as exc:
                self.summary.errors[exc.kind] += 1
                if attempt >= self.options.max_retries:
                    if self._successes == 0:
                        # Not one call has worked: a dead endpoint or a wrong URL, not bad luck.
                        # Stop instead of spending max_retries backoffs on every remaining row.
                        self.halt(
                            f"giving up: no call has succeeded yet ({attempt + 1} attempts for input "
                            f"row {row}); last error: {exc}",
                            STOP_ERROR,
                        )
                        raise _Stop from exc
                    raise _GaveUp(f"retries exhausted: {attempt + 1} attempts, last: {exc}") from exc
                o = self.options
                delay = backoff_delay(
                    attempt,
                    base=o.backoff_base,
                    cap=o.backoff_max,
                    unit=jitter_unit(o.seed, jitter_key, attempt),
                    retry_after=exc.retry_after,
                    max_retry_after=o.max_retry_after,
                )
                if exc.retry_after is not None:
                    # The server is rate-limiting all of us: hold every worker, not just this one.
                    self._resume_at = max(self._resume_at, time.monotonic() + min(exc.retry_after, o.max_retry_after))
                attempt += 1
                await self._sleep(delay)
                continue
            except FatalError as exc:
                self.halt(f"{exc}", STOP_ERROR)
                raise _Stop from exc
            except RequestFailedError as exc:  # this request failed for good: its row says why, the rest go on
                self.summary.errors["failed"] += 1
                raise _GaveUp(str(exc)) from None
            self._account(completion, spend, estimate, reservation)
            if key is not None and self.cache is not None:
                try:
                    self.cache.put(
                        key,
                        completion,
                        model=self.model.model_id,
                        endpoint=str(self._identity.get("endpoint", "")),
                        template_version=request.template_version,
                    )
                except CacheError as exc:  # the answer is this row's all the same; nothing more starts
                    self.halt(str(exc), STOP_CACHE)
            return completion

    async def _generate(self, request: JudgeRequest) -> Completion:
        timeout = self.options.timeout
        started = time.perf_counter()
        try:
            if timeout is None:
                completion: Completion = await self.model.generate(request)
            else:
                completion = await _with_timeout(self.model.generate(request), timeout)
            if completion.latency_s is None:  # kept with the answer: a rerun reports what the call took
                completion = dataclasses.replace(completion, latency_s=round(time.perf_counter() - started, 6))
            # A model or proxy may repeat what it was sent: no secret goes past this point
            # (into the parser, the cache, a row or a summary).
            return completion.redacted()
        except (asyncio.TimeoutError, TimeoutError) as exc:
            raise TransientError(f"timeout: no answer within {timeout:g}s", kind="timeout") from exc
        except JudgeError:
            raise
        except Exception as exc:  # noqa: BLE001 - an adapter bug must stop the run, not vanish
            raise FatalError(f"{self.model.model_id} failed unexpectedly: {type(exc).__name__}: {exc}") from exc

    def _worst_case(self, request: JudgeRequest) -> tuple[int, float]:
        """The most ``request`` can cost, in tokens and dollars: its input bounded from above
        (:func:`~respeval.judge.models.base.input_token_bound`) and all of its max tokens."""
        out = request.max_tokens
        budget = self._budget.budget
        if out is None:
            if budget.max_tokens is not None or budget.max_cost is not None:
                self.halt(
                    "budget: a request without max tokens per reply has no worst case to reserve, so a token or "
                    "cost budget cannot hold; give the method max_tokens (--max-tokens)",
                    STOP_BUDGET,
                )
                raise _Stop
            out = 0
        tokens_in = input_token_bound(request)
        return tokens_in + out, self._price.cost(tokens_in, out) if self._price is not None else 0.0

    def _account(self, completion: Completion, spend: _RowSpend, estimate: int, reservation: Reservation) -> None:
        cost = self._price.cost(completion.tokens_in, completion.tokens_out) if self._price is not None else 0.0
        self._successes += 1
        spend.live = True
        spend.tokens_in += completion.tokens_in
        spend.tokens_out += completion.tokens_out
        spend.cost += cost
        tokens = completion.tokens_in + completion.tokens_out
        self._budget.settle(reservation, tokens, cost)
        if self._tpm is not None and tokens:
            self._tpm.adjust(tokens - estimate)

    async def _gate(self, estimate: int, worst: tuple[int, float]) -> Reservation:
        """Everything a call waits for or may be refused by, in order: the stop flag, a
        server-requested pause, the rate limits, the budget (which reserves ``worst``, the
        request's worst case, until its reply settles it; a request that does not fit waits
        for the calls in flight to settle, and is not started when even alone it would
        not fit)."""
        if self.stopping:
            raise _Stop
        wait = self._resume_at - time.monotonic()
        if wait > 0:
            await self._sleep(wait)
        if self._rpm is not None:
            await self._rpm.acquire(1)
        if self._tpm is not None:
            await self._tpm.acquire(estimate)
        while True:
            if self.stopping:
                raise _Stop
            got = self._budget.reserve(*worst)
            if not isinstance(got, str):
                return got
            if self._budget.in_flight == 0 or not self._budget.fits_alone(*worst):
                self._budget_stopped = True
                self.halt(got, STOP_BUDGET)
                raise _Stop
            await self._until_settled()

    async def _until_settled(self) -> None:
        """Wait until a call in flight settles its reservation, or the run stops."""
        settled = asyncio.ensure_future(self._budget.settled())
        stopped = asyncio.ensure_future(self._stop_event.wait())
        try:
            await asyncio.wait({settled, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            settled.cancel()
            stopped.cancel()

    async def _sleep(self, seconds: float) -> None:
        """Sleep, but wake up (and stop) as soon as the run is halted."""
        if seconds <= 0:
            return
        try:
            await asyncio.wait_for(self._stop_event.wait(), seconds)
        except asyncio.TimeoutError:
            return
        raise _Stop
