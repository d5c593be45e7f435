"""Batch mode: judge through the providers' batch APIs, at half the price, resumably.

OpenAI's Batch API and Anthropic's Message Batches answer within 24 hours (most batches
within the hour) and bill half the interactive rate.  Batch mode keeps everything else
the engine promises: every answer lands in the same cache, rows are answered exactly as
interactive ones are (same parsing, re-asks, sampling, pairwise orders, rubrics, gate),
nothing is paid for twice, and every row ends scored or unscored with its reason.

How it works: any judge pipeline (pointwise, pairwise, rubrics, sampling, the gate) is run
in *passes* over a :class:`BatchCache`.  In a pass, every request whose answer is not in
the cache is *deferred* instead of sent, and its row left for later.  The deferred requests
go out as provider batches (:class:`~respeval.judge.batch.runner.BatchRunner`: split at the
provider's limits, recorded before sending, polled with backoff, results stored by
``custom_id``), then the next pass runs.  Follow-up requests that only exist once a first
answer is known (a re-ask after an unreadable reply, the next sample of an undecided
majority, grading against a rubric the judge just wrote) are deferred in that pass and go
out in the next batch.  The pass with nothing deferred is the result.

Failures inside a batch (a request's error, an expired or cancelled batch) leave the
request ``failed`` with the provider's reason; the next pass sends it again, in a batch or
interactively (``retry``), up to ``retries`` times, after which its row is unscored with
that reason.

Kill the process at any moment and rerun the same command: open batches are found in the
cache database and polled, a submission that may or may not have reached the provider is
looked up before anything is sent again, and results already stored are not downloaded or
paid for twice.  ``respeval batches list|cancel|fetch`` shows and manages them.

Library use::

    from respeval import judge
    result = judge.run(rows, "openai:gpt-4o-mini", cache="judge.sqlite", batch=True)
    print(result.summary.format())          # includes the batch section and its cost
    pairs = judge.run(rows, model, method="pairwise", cache="judge.sqlite", batch=True)  # any method

    # any pipeline: a coroutine function (model, cache, options) -> result
    run = await judge.batch.arun_batched(
        lambda m, c, o: arun_pairwise(pairs, m, cache=c, options=o), model, cache="judge.sqlite")
    run.result, run.report
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from respeval._sync import run_sync
from respeval.judge.batch.runner import STOP_BUDGET, STOP_WAITING, BatchOptions, BatchReport, BatchRunner
from respeval.judge.batch.store import RETRY_MODES, BatchCache, BatchStore, Job, job_summary
from respeval.judge.cache import JudgeCache, PathLike
from respeval.judge.engine import STOP_DEFERRED, EngineOptions, JudgeEngine, RunResult
from respeval.judge.limits import Budget, Prices, price_for
from respeval.judge.methods.base import JudgeMethod
from respeval.judge.models.base import JudgeModel
from respeval.judge.models.batching import SupportsBatch
from respeval.judge.prices import ModelPrice, model_price
from respeval.judge.results import JudgeRunSummary, RowResult

__all__ = [
    "RETRY_MODES",
    "STOP_BUDGET",
    "STOP_WAITING",
    "BatchCache",
    "BatchOptions",
    "BatchReport",
    "BatchRun",
    "BatchStore",
    "Job",
    "Pipeline",
    "arun_batched",
    "arun_rows_batched",
    "job_summary",
    "price_of",
    "run_batched",
]

T = TypeVar("T")
Pipeline = Callable[[JudgeModel, JudgeCache, EngineOptions], Awaitable[T]]


@dataclass
class BatchRun(Generic[T]):
    """The pipeline's result from its last pass, and what batch mode did."""

    result: T
    report: BatchReport

    @property
    def complete(self) -> bool:
        """No request is left waiting (for the budget, or for a batch still running)."""
        return self.report.stop_kind is None


def price_of(model: JudgeModel, batch: BatchOptions, interactive: Prices | None = None) -> ModelPrice | None:
    """The model's interactive and batch prices: ``batch.prices`` when it is one
    :class:`ModelPrice`; else the engine's interactive ``prices`` with the providers' batch
    discount; else the table in ``batch.prices`` or :data:`~respeval.judge.prices.PRICE_TABLE`."""
    if isinstance(batch.prices, ModelPrice):
        return batch.prices
    given = price_for(interactive, model.name, model.model_id)
    if given is not None:
        return ModelPrice.of(given.input_per_million, given.output_per_million, "given prices")
    return model_price(model.model_id, model.name, table=batch.prices)


def _remaining(budget: Budget | None, report: BatchReport) -> Budget | None:
    """What is left of the run's budget for the next pass's interactive calls."""
    if budget is None or budget.unlimited:
        return budget
    calls = report.requests_submitted + report.live_calls
    tokens = report.tokens_in + report.tokens_out + report.live_tokens_in + report.live_tokens_out
    return budget.after(calls, tokens, report.total_cost)


async def arun_batched(
    pipeline: Pipeline[T],
    model: JudgeModel,
    *,
    cache: BatchCache | JudgeCache | PathLike,
    options: EngineOptions | None = None,
    batch: BatchOptions | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> BatchRun[T]:
    """Run ``pipeline(model, cache, options)`` in passes, sending what it defers as
    provider batches between passes (see the module docstring).

    Args:
        pipeline: the judge run, e.g. ``lambda m, c, o: arun_sampled(rows, m, method,
            cache=c, options=o)``; it must use the model, cache and options it is given.
        model: an ``openai:`` or ``anthropic:`` model (one with a batch API).
        cache: a :class:`BatchCache`, or the path of the cache file (required: batch
            answers and batch state live there).
        options: engine options; their budget counts batch prices, and their prices (when
            set) are the interactive ones.
        on_progress: called with one-line progress messages (uploads, status, downloads).
    """
    if not isinstance(model, SupportsBatch):
        raise ValueError(
            f"{model.model_id} has no batch API: batch mode needs an openai: or anthropic: model "
            "(OpenAI's Batch API, Anthropic's Message Batches)"
        )
    batch = batch or BatchOptions()
    options = options or EngineOptions()
    if options.replay_only:
        raise ValueError("batch mode sends requests; it cannot be combined with replay-only")
    price = price_of(model, batch, options.prices)
    budget = options.budget
    if budget is not None and budget.max_cost is not None and price is None:
        raise ValueError(
            f"a cost budget needs prices for {model.model_id}: it is not in respeval's price table "
            "(give --price-in/--price-out or --prices FILE)"
        )
    # the engine prices what it calls itself: interactive retries
    engine_options = options if price is None else dataclasses.replace(options, prices=price.interactive)
    if isinstance(cache, JudgeCache) and not isinstance(cache, BatchCache):
        cache = cache.path  # the same file, opened with the batch tables
    own = not isinstance(cache, BatchCache)
    if isinstance(cache, BatchCache):
        batch_cache = cache
        batch_cache.retries, batch_cache.retry = batch.retries, batch.retry
        batch_cache.interactive_price = price.interactive if price is not None else None
    else:
        batch_cache = BatchCache(
            cache, retries=batch.retries, retry=batch.retry, interactive_price=price.interactive if price else None
        )
    report = BatchReport(
        provider=model.model_id.split(":", 1)[0],
        model=model.model_id,
        price_source=price.source if price is not None else None,
    )
    try:
        async with model:
            client = model.batch_client()
            runner = BatchRunner(
                client,
                batch_cache,
                model_id=model.model_id,
                identity_endpoint=str(model.identity().get("endpoint", "")),
                options=batch,
                report=report,
                price=price,
                budget=budget,
                on_progress=on_progress,
                seed=options.seed,
            )
            while True:
                report.rounds += 1
                batch_cache.begin_round()
                round_options = dataclasses.replace(engine_options, budget=_remaining(budget, report))
                result = await pipeline(model, batch_cache, round_options)
                _collect_live(report, batch_cache)
                deferred = dict(batch_cache.deferred)
                if not deferred or getattr(result, "stop_kind", None) not in (None, STOP_DEFERRED):
                    break  # done, or stopped for a reason of its own (a model error, the budget, Ctrl-C)
                if on_progress is not None:
                    on_progress(f"pass {report.rounds}: {len(deferred):,} requests to get from provider batches")
                if not await runner.resolve(deferred):
                    break
            return BatchRun(result, report)
    finally:
        if own:
            batch_cache.close()


def _collect_live(report: BatchReport, cache: BatchCache) -> None:
    report.live_calls = cache.live.calls
    report.live_tokens_in = cache.live.tokens_in
    report.live_tokens_out = cache.live.tokens_out
    report.live_cost = cache.live.cost
    report.gave_up = len(cache.gave_up)
    report.retried_interactively = len(cache.retried_live)


async def arun_rows_batched(
    records: Sequence[Mapping[str, Any]],
    model: JudgeModel,
    method: JudgeMethod,
    *,
    cache: JudgeCache | PathLike,
    options: EngineOptions | None = None,
    batch: BatchOptions | None = None,
    fields: Mapping[str, str] | None = None,
    on_row: Callable[[RowResult], None] | None = None,
    keep_rows: bool = True,
    on_progress: Callable[[str], None] | None = None,
) -> tuple[RunResult, BatchReport]:
    """One method over ``records`` in batch mode, as :class:`~respeval.judge.engine.JudgeEngine`
    judges them interactively.  Each pass after the first runs only the rows the previous
    one left waiting, so a row is reported (``on_row``) once, when it is complete, and the
    summary covers every row once.  Returns the run's result (its summary carries the
    batch report, see :meth:`JudgeRunSummary.attach_batch`) and the report."""
    started = time.perf_counter()
    id_column = dict(fields or {}).get("id", "id")
    pending = list(range(len(records)))
    kept: list[RowResult] = []
    summary: JudgeRunSummary | None = None
    last: RunResult | None = None

    async def one_pass(m: JudgeModel, c: JudgeCache, o: EngineOptions) -> RunResult:
        nonlocal pending, summary, last
        positions = pending
        if positions == list(range(len(records))):
            subset: Sequence[Mapping[str, Any]] = records
        else:  # a row keeps its position as its id when it has none of its own
            subset = [records[i] if id_column in records[i] else {**records[i], id_column: i} for i in positions]

        def emit(row: RowResult) -> None:
            row.row = positions[row.row]
            if keep_rows:
                kept.append(row)
            if on_row is not None:
                on_row(row)

        engine = JudgeEngine(m, method, o, cache=c, fields=fields)
        result = await engine.run(subset, on_row=emit, keep_rows=False)
        first = result.summary
        if summary is None:
            summary = JudgeRunSummary(
                method=first.method, signature=first.signature, model=first.model, confidence=first.confidence
            )
        summary.merge(result.summary)  # each pass adds the rows it completed
        pending = [positions[i] for i in result.not_run]
        last = result
        return result

    done = await arun_batched(one_pass, model, cache=cache, options=options, batch=batch, on_progress=on_progress)
    assert summary is not None and last is not None
    summary.total = len(records)
    summary.stop_reason = last.summary.stop_reason
    summary.attach_batch(done.report)
    summary.seconds = time.perf_counter() - started  # the whole run, waiting for batches included
    stop_kind = last.stop_kind
    if stop_kind == STOP_DEFERRED and done.report.stop_kind is not None:
        stop_kind = done.report.stop_kind  # budget, or batches still running
    kept.sort(key=lambda r: r.row)
    return RunResult(rows=kept, summary=summary, not_run=sorted(pending), stop_kind=stop_kind), done.report


def run_batched(pipeline: Pipeline[T], model: JudgeModel, **kwargs: Any) -> BatchRun[T]:
    """The synchronous :func:`arun_batched` (works inside a running event loop too)."""
    return run_sync(arun_batched(pipeline, model, **kwargs), thread_name="respeval-batch")
