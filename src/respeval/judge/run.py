"""One entry point for every judging method: :func:`arun` (and :func:`run`, its
synchronous twin) resolve the method, the model and the cache, and run live or as provider
batches, whichever method it is.

A method is either

* a per-request method (a :class:`~respeval.judge.methods.base.JudgeMethod`: pointwise, a
  rubric generator, your own), run as one pass of the
  :class:`~respeval.judge.engine.JudgeEngine` over the records; its result is a
  :class:`~respeval.judge.engine.RunResult`, and the records may be any iterable (they are
  read as the engine goes, and ``keep_rows=False`` keeps memory flat); or
* a whole-run method (a :class:`JudgePlan`: pairwise in both
  orders, rubrics, adaptive rubrics, multi-sampling, multi-turn conversations), which runs
  the engine as it needs and returns its own report.

Either way the result follows :class:`~respeval.judge.results.JudgeReport` (rows, spend,
stop reason, ``to_json``, ``format``), and ``batch=True`` works for every method: a
per-request method goes through :func:`~respeval.judge.batch.arun_rows_batched` (each row
reported once, when complete), a whole-run method through
:func:`~respeval.judge.batch.arun_batched` (its run repeated pass by pass over the cache the
batches fill).  Method names are the registry's, :data:`respeval.judge.methods.METHODS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar, overload, runtime_checkable

from respeval._sync import run_sync
from respeval.judge.batch import BatchCache, BatchOptions, arun_batched, arun_rows_batched
from respeval.judge.cache import JudgeCache, PathLike
from respeval.judge.engine import EngineOptions, JudgeEngine, RunResult
from respeval.judge.methods import get_method
from respeval.judge.methods.base import JudgeMethod
from respeval.judge.models.base import JudgeModel
from respeval.judge.results import JudgeReport, RowResult

__all__ = ["EnginePass", "JudgePlan", "RunControl", "arun", "resolve_method", "run"]

R = TypeVar("R", bound=JudgeReport)
R_co = TypeVar("R_co", covariant=True)


@runtime_checkable
class JudgePlan(Protocol[R_co]):
    """A whole judging run over a set of records (pairwise in both orders, multi-sampling,
    rubrics written then checked, multi-turn conversations): what
    :func:`respeval.judge.run` runs, live or pass by pass in batch mode.

    ``arun`` must judge through the model, cache and options it is given (in batch mode
    they are the pass's), enter nothing it was not given, and return a report following
    :class:`~respeval.judge.results.JudgeReport` with ``attach_batch(report)``.  ``on_row``
    sees each row (pair, case) once it is final."""

    @property
    def name(self) -> str: ...

    async def arun(
        self,
        records: Sequence[Any],
        model: JudgeModel,
        *,
        cache: JudgeCache | None = None,
        options: EngineOptions | None = None,
        fields: Mapping[str, str] | None = None,
        on_row: Callable[[Any], None] | None = None,
    ) -> R_co: ...


class RunControl:
    """A handle on a live run from outside it (the CLI's Ctrl-C): :meth:`interrupt` stops
    new calls and lets calls in flight finish, a second one cancels them (see
    :meth:`JudgeEngine.interrupt`).  Runs of per-request methods only; a batch-mode run
    ignores it."""

    def __init__(self) -> None:
        self._engines: list[JudgeEngine] = []

    def attach(self, engine: JudgeEngine) -> None:
        self._engines.append(engine)

    def interrupt(self) -> int:
        """Interrupt every engine of the run; how many interrupts there have been."""
        return max((engine.interrupt() for engine in self._engines), default=0)

    @property
    def in_flight(self) -> int:
        """Calls running now."""
        return sum(engine.in_flight for engine in self._engines)


class EnginePass:
    """A per-request method as a whole-run method: one engine pass over the records."""

    def __init__(self, method: JudgeMethod, *, keep_rows: bool = True, control: RunControl | None = None) -> None:
        self.method = method
        self.name = method.name
        self.keep_rows = keep_rows
        self.control = control

    async def arun(
        self,
        records: Iterable[Mapping[str, Any]],
        model: JudgeModel,
        *,
        cache: JudgeCache | None = None,
        options: EngineOptions | None = None,
        fields: Mapping[str, str] | None = None,
        on_row: Callable[[RowResult], None] | None = None,
    ) -> RunResult:
        engine = JudgeEngine(model, self.method, options, cache=cache, fields=fields)
        if self.control is not None:
            self.control.attach(engine)
        return await engine.run(records, on_row=on_row, keep_rows=self.keep_rows)


def resolve_method(
    method: JudgeMethod | JudgePlan[Any] | str, *, keep_rows: bool = True, control: RunControl | None = None
) -> JudgePlan[Any]:
    """The whole-run method ``method`` names (a registry name, a per-request method, or a
    whole-run method, returned as it is)."""
    resolved = get_method(method) if isinstance(method, str) else method
    if isinstance(resolved, JudgePlan):
        return resolved
    return EnginePass(resolved, keep_rows=keep_rows, control=control)


@overload
async def arun(
    records: Iterable[Any],
    model: JudgeModel | str,
    *,
    method: JudgePlan[R],
    cache: JudgeCache | PathLike | None = ...,
    fields: Mapping[str, str] | None = ...,
    on_row: Callable[[Any], None] | None = ...,
    keep_rows: bool = ...,
    options: EngineOptions | None = ...,
    batch: bool | BatchOptions = ...,
    on_progress: Callable[[str], None] | None = ...,
    control: RunControl | None = ...,
    **overrides: Any,
) -> R: ...


@overload
async def arun(
    records: Iterable[Any],
    model: JudgeModel | str,
    *,
    method: JudgeMethod | str = ...,
    cache: JudgeCache | PathLike | None = ...,
    fields: Mapping[str, str] | None = ...,
    on_row: Callable[[Any], None] | None = ...,
    keep_rows: bool = ...,
    options: EngineOptions | None = ...,
    batch: bool | BatchOptions = ...,
    on_progress: Callable[[str], None] | None = ...,
    control: RunControl | None = ...,
    **overrides: Any,
) -> RunResult: ...


async def arun(
    records: Iterable[Any],
    model: JudgeModel | str,
    *,
    method: JudgeMethod | JudgePlan[Any] | str = "pointwise",
    cache: JudgeCache | PathLike | None = None,
    fields: Mapping[str, str] | None = None,
    on_row: Callable[[Any], None] | None = None,
    keep_rows: bool = True,
    options: EngineOptions | None = None,
    batch: bool | BatchOptions = False,
    on_progress: Callable[[str], None] | None = None,
    control: RunControl | None = None,
    **overrides: Any,
) -> Any:
    """Judge ``records`` with ``method`` (mappings with ``prompt``, ``response``,
    ``reference``, ``id`` for the default pointwise method).

    Args:
        model: a :class:`JudgeModel`, or a model string (``openai:gpt-4o-mini``,
            ``anthropic:claude-...``, ``python:module:function``, ``fake:...``; see
            :func:`respeval.judge.load_model`).
        method: a registry name (``"pointwise"``, ``"pairwise"``, ``"rubric"``,
            ``"adaptive-rubric"``, ``"sampled"``, ``"multi-turn"``: see
            :data:`respeval.judge.methods.METHODS`), a per-request method object
            (``Pointwise(threshold=0.7)``) or a whole-run method object
            (``PairwiseRun(flip="half")``).
        cache: a JudgeCache or the path of its SQLite file (None: no cache).
        fields: renames, method field -> record key (``{"response": "answer"}``).
        on_row: called with each row (each pair, for pairwise) as soon as it is final.
        keep_rows: keep every row in the result (a per-request method only: turn off for
            huge runs).
        batch: True (or a :class:`respeval.judge.batch.BatchOptions`) sends the requests
            as provider batches, at batch prices, resumably (needs ``cache``; see
            :mod:`respeval.judge.batch`); ``on_progress`` gets batch mode's progress lines.
        control: a :class:`RunControl` to interrupt a live per-request run from outside.
        options, overrides: :class:`EngineOptions`, and/or its fields as keywords
            (``concurrency=32, max_retries=3, budget=Budget(max_cost=5.0)``).

    Returns the method's report (a :class:`RunResult` for a per-request method); a stopped
    run (budget, fatal error) returns normally with its ``stop_reason``.
    """
    from respeval.judge.specs import load_model

    opts = dataclasses.replace(options or EngineOptions(), **overrides)
    plan = resolve_method(method, keep_rows=keep_rows, control=control)
    judge_model = load_model(model) if isinstance(model, str) else model
    if batch:
        return await _arun_batched(
            plan, records, judge_model, cache, opts, batch if isinstance(batch, BatchOptions) else None, fields,
            on_row, on_progress,
        )  # fmt: skip
    own_cache = cache is not None and not isinstance(cache, JudgeCache)
    judge_cache = cache if cache is None or isinstance(cache, JudgeCache) else JudgeCache(cache)
    try:
        async with judge_model:
            # a per-request method streams its records; a whole-run method may read them twice
            rows: Any = records if isinstance(plan, EnginePass) else list(records)
            return await plan.arun(rows, judge_model, cache=judge_cache, options=opts, fields=fields, on_row=on_row)
    finally:
        if own_cache and judge_cache is not None:
            judge_cache.close()


async def _arun_batched(
    plan: JudgePlan[Any],
    records: Iterable[Any],
    model: JudgeModel,
    cache: JudgeCache | PathLike | None,
    options: EngineOptions,
    batch: BatchOptions | None,
    fields: Mapping[str, str] | None,
    on_row: Callable[[Any], None] | None,
    on_progress: Callable[[str], None] | None,
) -> Any:
    if cache is None:
        raise ValueError("batch mode needs a cache (cache=PATH): batch answers and batch state are kept there")
    if isinstance(cache, JudgeCache) and not isinstance(cache, BatchCache):
        cache = cache.path  # the same file, with the batch tables
    rows: Sequence[Any] = list(records)  # later passes read some of them again
    if isinstance(plan, EnginePass):
        result, _ = await arun_rows_batched(
            rows,
            model,
            plan.method,
            cache=cache,
            options=options,
            batch=batch,
            fields=fields,
            on_row=on_row,
            keep_rows=plan.keep_rows,
            on_progress=on_progress,
        )
        return result

    async def one_pass(m: JudgeModel, c: JudgeCache, o: EngineOptions) -> Any:
        return await plan.arun(rows, m, cache=c, options=o, fields=fields)

    done = await arun_batched(one_pass, model, cache=cache, options=options, batch=batch, on_progress=on_progress)
    done.result.attach_batch(done.report)
    if on_row is not None:  # the rows of the last pass are the final ones
        for row in done.result.rows:
            on_row(row)
    return done.result


@overload
def run(records: Iterable[Any], model: JudgeModel | str, *, method: JudgePlan[R], **kwargs: Any) -> R: ...


@overload
def run(
    records: Iterable[Any], model: JudgeModel | str, *, method: JudgeMethod | str = ..., **kwargs: Any
) -> RunResult: ...


def run(records: Iterable[Any], model: JudgeModel | str, **kwargs: Any) -> Any:
    """The synchronous :func:`arun`, callable from plain code and from inside a running
    event loop (a notebook, an async app), where it runs on a helper thread with its own
    loop instead of needing nest_asyncio.  In async code, prefer ``await arun(...)``."""
    return run_sync(arun(records, model, **kwargs), thread_name="respeval-judge")
