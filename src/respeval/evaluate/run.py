"""``evaluate()``: any mix of computed, custom and judged metrics over one dataset, chunk by
chunk, into one results table and one summary.

Per chunk of ``chunk_size`` records: the registry families score the response against the
reference, custom functions run (in process or in workers), and every judged metric goes
through :class:`~respeval.judge.engine.JudgeEngine` (via the multi-sampling driver) with the
shared answer cache, so a rerun pays for nothing twice.  With ``out``, each finished chunk is
written to ``OUT.parts/`` (results, the families' statistics, the bad records) before the
next starts; ``resume=True`` reuses the completed chunks of an interrupted run with the same
inputs and metrics, so a killed run finishes with the table an uninterrupted run writes.

Columns (the hosted evaluation services' names, plus respeval's own):

================================  ===========================================================
``row``, the id column, inputs    the 0-based input row, then the columns the metrics read
``{metric}/score``                the row's score (registry metrics: their headline, e.g.
                                  ``rougeLsum`` F; judges: the judge's score)
``{metric}/explanation``          the judge's reasoning, a check's failure, a function's text
``{metric}/pairwise_choice``      pairwise: CANDIDATE, BASELINE or TIE, in the first order asked
``{metric}/pairwise_choice_swapped``  pairwise, both orders: the verdict with the responses
                                  swapped, in the same labels (validate reads it)
``{metric}/outcome``              pairwise: the pair's result, INCONSISTENT when orders differ
``{metric}/pass``                 judges and checks: whether the row passes
``{metric}/judge_calls``          judges: what the judge was asked and answered, as JSON text
                                  (a list: messages, raw reply, sample, order; ``respeval view``)
``{metric}/status``               ``scored`` or ``unscored``
``{metric}/unscored_reason``      why a row has no score (never a silent 0)
``{metric}/details``              multi-step metrics: the JSON list of their claims, chunks,
                                  statements or citations, each with its verdict and reason
``{metric}/{field}``              a family's other per-row fields (``rouge1/p``, ``word_count/n``)
================================  ===========================================================
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from respeval._run_summary import SCORED, STOP_DEFERRED, UNSCORED
from respeval._spend import Spend
from respeval._version import __version__
from respeval.bulk.parts import Parts, RunFingerprint, parts_folder
from respeval.errors import RespevalError
from respeval.evaluate.inputs import Chunk, Dataset, bad_records, open_dataset
from respeval.evaluate.plan import FamilyUse, Plan, is_multi_step, judged_fields, resolve_metrics
from respeval.fingerprint import CodeFingerprint
from respeval.io.files import atomic_output, guarded_outputs
from respeval.metrics.base import ChunkScores
from respeval.stats import DEFAULT_SEED

__all__ = ["EvalResult", "JudgeStopped", "evaluate"]

ON_ERROR = ("fail", "skip", "record")


class JudgeStopped(RespevalError, RuntimeError):
    """The judge stopped (budget, fatal model error, interrupt): rerun with ``resume`` to go on."""

    def __init__(self, reason: str, kind: str | None) -> None:
        super().__init__(reason)
        self.kind = kind


@dataclass
class Columns:
    """Which dataset columns the metrics read."""

    response: str = "response"
    reference: str = "reference"
    baseline: str = "baseline_model_response"
    prompt: str = "prompt"
    id: str | None = None

    def judge_fields(self) -> dict[str, str]:
        return {"response": self.response, "reference": self.reference, "baseline_model_response": self.baseline}


@dataclass
class EvalResult:
    """What :func:`evaluate` produced: the per-row ``table`` (pyarrow), the hosted-service style
    ``summary_metrics`` (``row_count``, ``{metric}/mean``, ``{metric}/std``, ...), respeval's
    ``run_summary`` (the report schema), and where things were written."""

    table: Any
    summary_metrics: dict[str, Any]
    run_summary: dict[str, Any]
    output: str | None = None
    errors_output: str | None = None
    resumed_chunks: int = 0
    spend: Spend = field(default_factory=Spend)
    batch: Any = None
    """With ``batch=``: what the provider batches did (a :class:`respeval.judge.batch.BatchReport`)."""

    @property
    def metrics_table(self) -> Any:
        """The table as a pandas DataFrame (the hosted SDKs' ``metrics_table``)."""
        return self.table.to_pandas()

    def format(self) -> str:
        from respeval.evaluate.summary import format_summary

        return format_summary(self)


# --------------------------------------------------------------------------- the judge loop


class _JudgeLoop:
    """One event loop on a helper thread for the whole run: the model is opened once and every
    chunk's judge calls run there (an HTTP client's connections survive between chunks)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="respeval-evaluate-judge", daemon=True)
        self.thread.start()
        self.run(model.__aenter__())

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        try:
            self.run(self.model.__aexit__(None, None, None))
            # as asyncio.run does: an injected transport closes this loop's connections then
            self.run(self.loop.shutdown_asyncgens())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


# --------------------------------------------------------------------------- one chunk


def _status_columns(n: int, reasons: dict[int, str]) -> tuple[Any, Any]:
    """The ``status`` and ``unscored_reason`` columns of ``n`` rows as Arrow string arrays,
    built without a Python object per row (a million-row batch metric spends nothing here)."""
    import pyarrow as pa

    codes = np.zeros(n, dtype=np.int8)
    if not reasons:
        status = pa.DictionaryArray.from_arrays(codes, pa.array([SCORED, UNSCORED])).cast(pa.string())
        return status, pa.nulls(n, pa.string())
    rows = np.fromiter(reasons.keys(), dtype=np.int64, count=len(reasons))
    codes[rows] = 1
    status = pa.DictionaryArray.from_arrays(codes, pa.array([SCORED, UNSCORED])).cast(pa.string())
    texts = list(dict.fromkeys(reasons.values()))
    index = {text: k for k, text in enumerate(texts)}
    which = np.zeros(n, dtype=np.int32)
    which[rows] = np.fromiter((index[r] for r in reasons.values()), dtype=np.int32, count=len(reasons))
    mask = np.ones(n, dtype=bool)
    mask[rows] = False
    reason = pa.DictionaryArray.from_arrays(pa.array(which, mask=mask), pa.array(texts, pa.string()))
    return status, reason.cast(pa.string())


def _text_column(values: list[Any]) -> list[str | None]:
    return [v if isinstance(v, str) or v is None else json.dumps(v, ensure_ascii=False, default=str) for v in values]


def _computed(use: FamilyUse, chunk: Chunk, columns: Columns, out: dict[str, Any]) -> dict[str, np.ndarray]:
    """Score one family on the chunk; returns its statistics (zeros on unscored rows) and the
    scored mask, keyed for the parts file."""
    n = len(chunk)
    # a family that reads JSON (trajectories) takes nested values or their text and names
    # the rows it cannot read itself; only a missing value is refused here
    json_family = getattr(use.family, "inputs", "text") == "json"
    read = chunk.json_column if json_family else chunk.column
    preds = read(columns.response)
    refs = read(columns.reference) if use.reference else [""] * n
    reasons: dict[int, str] = {}
    keep: list[int] = []
    for i, (p, r) in enumerate(zip(preds, refs)):
        if json_family:
            if p is None or (use.reference and r is None):
                field = columns.response if p is None else columns.reference
                reasons[i] = f"field {field!r}: missing"
            else:
                keep.append(i)
        elif not isinstance(p, str):
            reasons[i] = f"field {columns.response!r}: " + (
                "missing" if p is None else f"not text ({type(p).__name__})"
            )
        elif use.reference and not (
            isinstance(r, str) or (isinstance(r, list) and r and all(isinstance(x, str) for x in r))
        ):
            reasons[i] = f"field {columns.reference!r}: " + (
                "missing" if r is None else "expected text or a list of texts"
            )
        else:
            keep.append(i)
    family = use.family
    width = len(family.stat_names)
    stats = np.zeros((n, width), dtype=np.float64)
    scored_cols: dict[str, np.ndarray] = {}
    if keep:
        sub_preds = [preds[i] for i in keep]
        sub_refs = [refs[i] for i in keep]
        result: ChunkScores = family.score(family.prepare(sub_refs), sub_preds)
        idx = np.asarray(keep, dtype=np.int64)
        stats[idx] = np.asarray(result.stats, dtype=np.float64)
        for j, reason in result.errors.items():
            reasons[keep[j]] = reason
        for name, col in result.columns.items():
            col = np.asarray(col)
            full = np.full(n, np.nan) if col.dtype.kind in "fiub" else np.full(n, None, dtype=object)
            full[idx] = col
            scored_cols[name] = full
    scored = np.ones(n, dtype=bool)
    for i in reasons:
        scored[i] = False
    stats[~scored] = 0.0
    for metric, headline in use.metrics.items():
        prefix = metric + "_"
        own = family.name == metric  # a renamed check owns every column of its family
        score = scored_cols.get(headline, np.full(n, np.nan)).astype(np.float64)
        score[~scored] = np.nan
        out[f"{metric}/score"] = score
        for name, col in scored_cols.items():
            if name == headline or not (own or name.startswith(prefix)):
                continue
            suffix = name[len(prefix) :] if name.startswith(prefix) else name
            if suffix == "error":
                out[f"{metric}/explanation"] = list(col)
            elif suffix == "pass":
                out[f"{metric}/pass"] = col
            else:
                out[f"{metric}/{suffix}"] = col
        out[f"{metric}/status"], out[f"{metric}/unscored_reason"] = _status_columns(n, reasons)
    got = {"stats": stats, "scored": scored}
    if hasattr(family, "signature_for_run"):  # an MT family's signature counts the references (nrefs)
        got["nrefs"] = np.array(
            [(len(r) if isinstance(r, list) else 1) if ok else 0 for r, ok in zip(refs, scored)], dtype=np.int64
        )
    return got


def _custom(metric: Any, chunk: Chunk, out: dict[str, Any]) -> None:
    import pyarrow as pa

    batch = chunk.arrow() if metric.batch else None
    scores = metric.score_rows(chunk.dicts() if not metric.batch else [], batch)
    n = len(chunk)
    names = metric.metric_names
    keys = list(metric.outputs) if metric.outputs is not None else ["score"]
    for name, key in zip(names, keys):
        out[f"{name}/score"] = scores.columns[key]
        if scores.explanations is not None or metric.outputs is None:
            out[f"{name}/explanation"] = (
                scores.explanations if scores.explanations is not None else pa.nulls(n, pa.string())
            )
        out[f"{name}/status"], out[f"{name}/unscored_reason"] = _status_columns(n, scores.errors)


def _calls_text(row: Any, order: str | None = None) -> str | None:
    """A judged row's calls (every sample's, the re-asks too) as JSON text, or None."""
    samples = getattr(row, "samples", None) or [row]
    calls = [
        {**call, **({"order": order} if order else {})} for sample in samples for call in getattr(sample, "calls", [])
    ]
    return json.dumps(calls, ensure_ascii=False, default=str) if calls else None


def _pointwise_columns(metric: Any, rows: list[Any], n: int, out: dict[str, Any]) -> None:
    score = np.full(n, np.nan)
    passed: list[bool | None] = [None] * n
    explanation: list[str | None] = [None] * n
    labels: list[str | None] = [None] * n
    status = [UNSCORED] * n
    reason: list[str | None] = ["not run"] * n
    calls: list[str | None] = [None] * n
    for row in rows:
        i = row.row
        calls[i] = _calls_text(row)
        status[i] = SCORED if row.scored and row.verdict is not None else UNSCORED
        reason[i] = None if status[i] == SCORED else (row.unscored_reason or "unscored")
        if row.verdict is not None and status[i] == SCORED:
            v = row.verdict
            if isinstance(v.get("score"), (int, float)):
                score[i] = float(v["score"])
            passed[i] = bool(v.get("pass"))
            explanation[i] = v.get("reasoning") if isinstance(v.get("reasoning"), str) else None
            labels[i] = v.get("label")
    name = metric.name
    out[f"{name}/score"] = score
    out[f"{name}/explanation"] = explanation
    out[f"{name}/pass"] = passed
    if any(label is not None for label in labels) or getattr(metric.contract, "labels", None):
        out[f"{name}/label"] = labels
    out[f"{name}/judge_calls"] = calls
    out[f"{name}/status"] = status
    out[f"{name}/unscored_reason"] = reason


def _pairwise_columns(metric: Any, chunk: Chunk, jobs: list[tuple[int, str]], rows: list[Any], out: dict) -> None:
    from respeval.judge.methods.pairwise import OUTCOME_LABELS as PAIR_LABELS
    from respeval.judge.methods.pairwise import combine_orders

    n = len(chunk)
    orders: list[dict[str, Any]] = [{} for _ in range(n)]
    for (i, orientation), row in zip(jobs, rows):
        orders[i][orientation] = row
    choice: list[str | None] = [None] * n
    swapped: list[str | None] = [None] * n
    outcome: list[str | None] = [None] * n
    explanation: list[str | None] = [None] * n
    status = [UNSCORED] * n
    reason: list[str | None] = [None] * n
    score = np.full(n, np.nan)
    calls: list[str | None] = [None] * n
    for i, mine in enumerate(orders):
        both = [json.loads(text) for o, r in mine.items() if (text := _calls_text(r, o))]
        calls[i] = json.dumps([c for part in both for c in part], ensure_ascii=False) if both else None
        bad = [f"order {o}: {r.unscored_reason or 'unscored'}" for o, r in mine.items() if not r.scored]
        if bad or not mine:
            reason[i] = "; ".join(bad) or "not run"
            continue
        winners = {o: r.verdict["winner"] for o, r in mine.items()}
        first = "ab" if "ab" in mine else next(iter(mine))
        choice[i] = PAIR_LABELS[winners[first]]
        if len(mine) == 2:
            swapped[i] = PAIR_LABELS[winners["ba"]]
        combined = combine_orders(winners)
        outcome[i] = PAIR_LABELS[combined]
        score[i] = {"B": 1.0, "A": 0.0, "tie": 0.5}.get(combined, np.nan)
        explanation[i] = mine[first].verdict.get("reasoning")
        status[i] = SCORED
    name = metric.name
    out[f"{name}/pairwise_choice"] = choice
    if metric.flip == "both":
        out[f"{name}/pairwise_choice_swapped"] = swapped
    out[f"{name}/outcome"] = outcome
    out[f"{name}/score"] = score
    out[f"{name}/explanation"] = explanation
    out[f"{name}/judge_calls"] = calls
    out[f"{name}/status"] = status
    out[f"{name}/unscored_reason"] = reason


def _multi_step_columns(metric: Any, rows: list[Any], n: int, out: dict[str, Any]) -> None:
    score = np.full(n, np.nan)
    passed: list[bool | None] = [None] * n
    explanation: list[str | None] = [None] * n
    details: list[str | None] = [None] * n
    status = [UNSCORED] * n
    reason: list[str | None] = ["not run"] * n
    for row in rows:
        i = row.row
        status[i] = SCORED if row.scored else UNSCORED
        reason[i] = None if row.scored else (row.unscored_reason or "unscored")
        if row.details:
            details[i] = json.dumps(row.details, ensure_ascii=False)
        if row.scored and row.score is not None:
            score[i] = float(row.score)
            passed[i] = bool(row.passed)
            explanation[i] = row.explanation
    name = metric.name
    out[f"{name}/score"] = score
    out[f"{name}/explanation"] = explanation
    out[f"{name}/pass"] = passed
    out[f"{name}/details"] = details
    out[f"{name}/status"] = status
    out[f"{name}/unscored_reason"] = reason


async def _judge_metric(
    metric: Any, chunk: Chunk, ctx: _JudgeContext
) -> tuple[list[tuple[int, str]] | None, list[Any], Any]:
    from respeval.judge.methods.sampling import arun_sampled

    records = chunk.dicts()
    fields = ctx.columns.judge_fields()
    options = ctx.engine_options
    if ctx.budget_left is not None:
        options = dataclasses.replace(options, budget=ctx.budget_left())
    if is_multi_step(metric):  # its own steps through the engine (RAG, trajectories)
        report = await metric.arun(
            records, ctx.model, cache=ctx.cache, options=options, fields={**fields, "prompt": ctx.columns.prompt}
        )
        return None, report.rows, report
    jobs: list[tuple[int, str]] | None = None
    if metric.kind == "pairwise":
        jobs = [(i, o) for i, row in enumerate(chunk.records) for o in metric.orientations(row)]
        engine_records = [{**records[i], "orientation": o} for i, o in jobs]
    else:
        engine_records = records
    result = await arun_sampled(
        engine_records,
        ctx.model,
        metric,
        samples=ctx.samples,
        vote_field="winner" if metric.kind == "pairwise" else "pass",
        threshold=getattr(metric, "threshold", 0.5),
        cache=ctx.cache,
        options=options,
        fields=fields,
    )
    return jobs, result.rows, result


@dataclass
class _JudgeContext:
    model: Any
    cache: Any
    engine_options: Any
    samples: int
    columns: Columns
    loop: _JudgeLoop
    budget_left: Callable[[], Any] | None = None


def _score_chunk(
    chunk: Chunk, plan: Plan, columns: Columns, judge: _JudgeContext | None, keep: Sequence[str], spend: Spend
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    out: dict[str, Any] = {"row": np.asarray(chunk.records, dtype=np.int64)}
    for name in keep:
        out[name] = _text_column(chunk.column(name))
    stats: dict[str, np.ndarray] = {}
    for k, use in enumerate(plan.computed):
        got = _computed(use, chunk, columns, out)
        stats[f"f{k}_stats"] = got["stats"]
        stats[f"f{k}_scored"] = got["scored"]
        if "nrefs" in got:
            stats[f"f{k}_nrefs"] = got["nrefs"]
    for custom in plan.custom:
        _custom(custom, chunk, out)
    for metric in plan.judged:
        if judge is None:
            raise ValueError(f"metric {metric.name!r} needs a judge: give model= (--model)")
        jobs, rows, result = judge.loop.run(_judge_metric(metric, chunk, judge))
        spend.add(result.spend)
        if result.stop_reason:
            raise JudgeStopped(f"the judge stopped on {metric.name}: {result.stop_reason}", result.stop_kind)
        if metric.kind == "pairwise":
            _pairwise_columns(metric, chunk, jobs, rows, out)
        elif is_multi_step(metric):
            _multi_step_columns(metric, rows, len(chunk), out)
        else:
            _pointwise_columns(metric, rows, len(chunk), out)
    return out, stats


# --------------------------------------------------------------------------- parts on disk


class _Parts(Parts):
    """Finished chunks under ``OUT.parts/``, as ``score`` keeps them (:class:`respeval.bulk.parts.Parts`:
    the manifest, the part names, atomic writes, the meta file that says a part is whole), each
    chunk's results as Parquet whatever the output's format: the output is written from them
    once every chunk is done."""

    def __init__(self, out: str, fingerprint: RunFingerprint, resume: bool) -> None:
        super().__init__(out, fingerprint, resume, results_format="parquet")

    def tables(self, n: int) -> list[Any]:
        return [self.load_results(k) for k in range(n)]

    def stats(self, n: int) -> list[dict[str, np.ndarray]]:
        return [self.load_arrays(k) for k in range(n)]

    def bad(self, n: int) -> list[dict[str, Any]]:
        return [error for k in range(n) for error in self.errors(k)]


def _to_arrow(columns: dict[str, Any]) -> Any:
    import pyarrow as pa

    arrays = {}
    for name, values in columns.items():
        if isinstance(values, pa.Array):
            arrays[name] = values
        elif isinstance(values, np.ndarray) and values.dtype != object:
            arrays[name] = pa.array(values, mask=np.isnan(values)) if values.dtype.kind == "f" else pa.array(values)
        elif name.endswith("/pass"):
            arrays[name] = pa.array(
                [None if v is None or (isinstance(v, float) and np.isnan(v)) else bool(v) for v in values],
                type=pa.bool_(),
            )
        else:
            arrays[name] = pa.array([None if v is None else str(v) for v in values], type=pa.string())
    return pa.table(arrays)


def _write_output(table: Any, out: str) -> None:
    suffix = Path(out).suffix.lower()
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        with atomic_output(out, "wb") as fh:
            pq.write_table(table, fh)
    elif suffix in (".jsonl", ".ndjson"):
        with atomic_output(out) as fh:
            for batch in table.to_batches(max_chunksize=10_000):
                for row in batch.to_pylist():
                    fh.write(json.dumps(_plain(row), ensure_ascii=False) + "\n")
    elif suffix == ".csv":
        import pyarrow.csv as pacsv

        with atomic_output(out, "wb") as fh:
            pacsv.write_csv(table, fh)
    else:
        raise ValueError(f"{out}: the results file is .parquet, .jsonl or .csv")


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}


# --------------------------------------------------------------------------- evaluate()


def _fingerprint(dataset: Dataset, plan: Plan, judge: Any, options: dict[str, Any]) -> RunFingerprint:
    """Everything that changes a number of the parts: the data, each metric (its options,
    thresholds, templates and, for a custom metric, its code), the judge (model, base URL,
    adapter settings, the code of a ``python:`` judge) and the run's options."""
    parts: dict[str, Any] = {"the data": dataset.fingerprint(), "the metrics": plan.names()}
    unproven: dict[str, str] = {}
    parts.update(plan.fingerprint_parts(unproven))
    if plan.judged:
        parts["the judge model"] = judge.identity() if judge is not None else None
        embedders = sorted(str(m.embedder.identity()) for m in plan.judged if getattr(m, "embedder", None) is not None)
        if embedders:
            parts["the embedding models"] = embedders
        code = getattr(judge, "code", None)
        if isinstance(code, CodeFingerprint) and not code.proven:
            unproven["the judge's code"] = f"{code.reason}; give it a version (python:module:function@VERSION)"
    parts.update(options)
    parts["the respeval version"] = __version__
    return RunFingerprint(parts, unproven)


def _keep_columns(plan: Plan, columns: Columns, extra: Sequence[str], available: list[str] | None) -> list[str]:
    names: list[str] = []
    if columns.id:
        names.append(columns.id)
    names.append(columns.prompt)
    if plan.computed:
        names += [columns.response, columns.reference]
    for metric in plan.judged:
        rename = columns.judge_fields()
        if is_multi_step(metric):
            rename.update(prompt=columns.prompt, context=metric.context_field)
        names += [rename.get(f, f) for f in judged_fields(metric)]
    for custom in plan.custom:
        names += list(custom.columns or ())
    names += list(extra)
    names = [n for n in dict.fromkeys(names) if n != "row"]
    if available is not None:
        names = [n for n in names if n in available]
    return names


def evaluate(
    dataset: Any,
    metrics: Sequence[Any],
    *,
    model: Any = None,
    response_column: str = "response",
    reference_column: str = "reference",
    baseline_column: str = "baseline_model_response",
    prompt_column: str = "prompt",
    id_column: str | None = None,
    keep_columns: Sequence[str] = (),
    out: str | os.PathLike[str] | None = None,
    resume: bool = False,
    on_error: str = "fail",
    errors_out: str | None = None,
    chunk_size: int = 5000,
    cache: Any = None,
    concurrency: int = 16,
    samples: int = 1,
    engine_options: Any = None,
    tokenizer: str = "rouge",
    stemmer: bool = False,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int | None = DEFAULT_SEED,
    title: str | None = None,
    progress: Callable[[int], None] | None = None,
    batch: Any = None,
    batch_progress: Callable[[str], None] | None = None,
) -> EvalResult:
    """Evaluate ``dataset`` with every metric in ``metrics``: one table, one summary.

    Args:
        dataset: an Arrow table, a pandas DataFrame, a list of dicts, or a .jsonl/.csv/.parquet file.
        metrics: registry names (``"bleu"``), predefined judge metrics (``"GROUNDING"``),
            ``"python:module:function"``, or objects: :class:`~respeval.evaluate.Computed`,
            :class:`~respeval.evaluate.CustomMetric`, :class:`~respeval.evaluate.PointwiseMetric`,
            :class:`~respeval.evaluate.PairwiseMetric`.
        model: the judge for judged metrics: a model string (``openai:gpt-4o-mini``) or a
            :class:`~respeval.judge.JudgeModel`.
        response_column, reference_column, baseline_column, prompt_column, id_column: where
            the response, the reference, the pairwise baseline, the prompt and the id are.
        keep_columns: more input columns to copy into the table.
        out: write the table here (.parquet, .jsonl, .csv), chunk by chunk (resumable).
        resume: continue an interrupted run into the same ``out``.
        on_error: unreadable records: ``fail`` (stop, naming file and line), ``skip`` or
            ``record`` (write them with their reason to ``errors_out``, default OUT.errors.jsonl).
        cache: the judge's answer cache (a path or a JudgeCache; default OUT.cache.sqlite with ``out``).
        concurrency, samples, engine_options: the judge engine's calls in flight, samples per
            row (strict majority) and other :class:`~respeval.judge.EngineOptions`.
        bootstrap, confidence, seed: the intervals of the summary.
        batch: True or a :class:`respeval.judge.batch.BatchOptions`: before the chunks are
            scored, every judged metric's requests go out as provider batches (OpenAI,
            Anthropic; half price, resumable), which fill the cache the chunks then read;
            ``batch_progress`` gets their progress messages.

    Raises :class:`JudgeStopped` when the judge stops (budget, model error); the finished
    chunks are kept, and ``resume=True`` goes on from there.
    """
    from respeval.evaluate.summary import build_summaries

    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR)}, got {on_error!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    if resume and out is None:
        raise ValueError("resume needs out (the finished chunks are kept beside it)")
    started = time.perf_counter()
    plan = resolve_metrics(metrics, tokenizer=tokenizer, stemmer=stemmer)
    data = open_dataset(dataset, on_error=on_error)
    columns = Columns(response_column, reference_column, baseline_column, prompt_column, id_column)
    keep = _keep_columns(plan, columns, keep_columns, data.columns())
    out_path = os.fspath(out) if out is not None else None
    if out_path is not None:
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    errors_path = (errors_out or (out_path + ".errors.jsonl" if out_path else None)) if on_error == "record" else None
    outputs = [("--out", out_path), ("--errors", errors_path)]
    cache_file = cache if isinstance(cache, (str, os.PathLike)) else None
    # an output that is the input is refused, and each output is locked for the run
    scratch = [("--out's parts folder", parts_folder(out_path) if out_path else None)]
    with guarded_outputs([("--input", data.path)], outputs, unlocked=[("--cache", cache_file)], scratch=scratch):
        judge_model = _judge_model(plan, model)
        parts = None
        if out_path is not None:  # the fingerprint (a pass over in-memory data) only guards a resume
            fingerprint = _fingerprint(
                data,
                plan,
                judge_model,
                {
                    "the chunk size": chunk_size,
                    "on_error": on_error,
                    "the columns": dataclasses.asdict(columns),
                    "the columns kept": keep,
                    "the judge samples per row": samples if plan.judged else None,
                    "the judge's re-ask": getattr(engine_options, "reask", True) if plan.judged else None,
                    "the tokenizer": tokenizer,
                    "stemming": stemmer,
                },
            )
            parts = _Parts(out_path, fingerprint, resume)
        done = len(parts.done()) if parts is not None else 0
        written = done
        spend = Spend()
        judge_ctx, owned = _open_judge(
            plan, judge_model, cache, out_path, concurrency, samples, engine_options, columns, spend, batch=bool(batch)
        )
        tables: list[Any] = []
        stats: list[dict[str, np.ndarray]] = []
        bad: list[dict[str, Any]] = []
        report = None
        try:
            if batch and judge_ctx is not None:
                report = judge_ctx.loop.run(
                    _resolve_batches(data, plan, chunk_size, done, judge_ctx, batch, spend, batch_progress)
                )
            if progress is not None and done:
                progress(min(done * chunk_size, data.count() or 0))
            for chunk in data.chunks(chunk_size, start_chunk=done):
                columns_out, chunk_stats = _score_chunk(chunk, plan, columns, judge_ctx, keep, spend)
                table = _to_arrow(columns_out)
                errors = [b.to_json() for b in bad_records(chunk)]
                if parts is not None:
                    k = chunk.start_row // chunk_size
                    parts.write(k, chunk.start_row, chunk.end_row, table, errors, chunk_stats, [])
                    written = k + 1
                else:
                    tables.append(table)
                    stats.append(chunk_stats)
                    bad.extend(errors)
                if progress is not None:
                    progress(chunk.end_row - chunk.start_row)
        finally:
            for metric in plan.custom:
                metric.close()
            for closer in owned:
                closer()
        if parts is not None:
            n = len(parts.done())
            if n < written:  # a part went missing between its write and the join: never fewer rows
                raise OSError(
                    f"part {n} of {out_path} is missing ({parts.dir}); rerun the same command with --resume "
                    "to score it again"
                )
            tables, stats, bad = parts.tables(n), parts.stats(n), parts.bad(n)
        import pyarrow as pa

        table = pa.concat_tables(tables, promote_options="permissive") if tables else pa.table({})
        if out_path is not None:
            _write_output(table, out_path)
            if errors_path is not None:
                with atomic_output(errors_path) as fh:
                    fh.writelines(json.dumps(b) + "\n" for b in bad)
            assert parts is not None
            parts.remove()
        summary_metrics, run_summary = build_summaries(
            table,
            plan,
            stats,
            bad,
            spend=spend,
            bootstrap=bootstrap,
            confidence=confidence,
            seed=seed,
            title=title,
            model=getattr(judge_ctx.model, "model_id", None) if judge_ctx is not None else None,
            seconds=time.perf_counter() - started,
            output=out_path,
            resumed_chunks=done,
            columns=columns,
        )
        return EvalResult(
            table=table,
            summary_metrics=summary_metrics,
            run_summary=run_summary,
            output=out_path,
            errors_output=errors_path,
            resumed_chunks=done,
            spend=spend,
            batch=report,
        )


async def _resolve_batches(
    data: Dataset,
    plan: Plan,
    chunk_size: int,
    start: int,
    ctx: _JudgeContext,
    batch: Any,
    spend: Spend,
    on_progress: Callable[[str], None] | None,
) -> Any:
    """Every judged metric over every chunk left, in passes that defer what the cache lacks,
    with provider batches between them (:func:`respeval.judge.batch.arun_batched`); after
    it, the chunks are scored from the cache.  Raises JudgeStopped when not everything could
    be had (the budget, batches still running)."""
    from respeval.judge.batch import BatchOptions, arun_batched

    @dataclass
    class _Pass:
        stop_kind: str | None = None

    async def every_chunk(model: Any, cache: Any, options: Any) -> _Pass:
        pass_ctx = dataclasses.replace(ctx, model=model, cache=cache, engine_options=options, budget_left=None)
        for chunk in data.chunks(chunk_size, start_chunk=start):
            for metric in plan.judged:
                _, _, result = await _judge_metric(metric, chunk, pass_ctx)
                if result.stop_kind not in (None, STOP_DEFERRED):
                    return _Pass(result.stop_kind)  # a model error, the budget: no point going on
        return _Pass()

    run = await arun_batched(
        every_chunk,
        ctx.model,
        cache=ctx.cache,
        options=ctx.engine_options,
        batch=batch if isinstance(batch, BatchOptions) else None,
        on_progress=on_progress,
    )
    report = run.report
    spend.calls += report.live_calls
    spend.tokens_in += report.tokens_in + report.live_tokens_in
    spend.tokens_out += report.tokens_out + report.live_tokens_out
    spend.cost += report.total_cost
    if report.stop_kind is not None:
        raise JudgeStopped(f"provider batches: {report.stop_reason}", report.stop_kind)
    if run.result.stop_kind is not None:
        raise JudgeStopped(f"the judge stopped while batching ({run.result.stop_kind})", run.result.stop_kind)
    return report


class _NoJudge:
    """The judge of a run whose judged metrics need none (embeddings only): opens nothing."""

    model_id = None

    def identity(self) -> None:
        return None

    async def __aenter__(self) -> _NoJudge:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None


def _judge_model(plan: Plan, model: Any) -> Any:
    """The judge model object (None when nothing is judged)."""
    if not plan.judged:
        return None
    if model is None and not any(getattr(m, "needs_judge", True) for m in plan.judged):
        return _NoJudge()
    if model is None:
        names = ", ".join(m.name for m in plan.judged)
        raise ValueError(f"judged metric(s) {names} need a judge model (model=, or --model)")
    from respeval.judge.specs import load_model

    return load_model(model) if isinstance(model, str) else model


def _open_judge(
    plan: Plan,
    model: Any,
    cache: Any,
    out: str | None,
    concurrency: int,
    samples: int,
    engine_options: Any,
    columns: Columns,
    spend: Spend,
    *,
    batch: bool = False,
) -> tuple[_JudgeContext | None, list[Callable[[], None]]]:
    if not plan.judged:
        return None, []
    from respeval.judge.cache import JudgeCache
    from respeval.judge.engine import EngineOptions

    judge_model = model
    owned: list[Callable[[], None]] = []
    if cache is None and out is not None:
        cache = out + ".cache.sqlite"
    judge_cache = cache
    if batch:
        from respeval.judge.batch import BatchCache

        if cache is None:
            raise ValueError("batch mode needs a cache (cache=, or out= for OUT.cache.sqlite)")
        if not isinstance(cache, BatchCache):  # the same file, with the batch tables
            judge_cache = BatchCache(cache.path if isinstance(cache, JudgeCache) else cache)
            owned.append(judge_cache.close)
    elif cache is not None and not isinstance(cache, JudgeCache):
        judge_cache = JudgeCache(cache)
        owned.append(judge_cache.close)
    options = engine_options or EngineOptions(concurrency=concurrency)
    if engine_options is not None and concurrency != 16:
        options = dataclasses.replace(options, concurrency=concurrency)
    loop = _JudgeLoop(judge_model)
    owned.insert(0, loop.close)
    ctx = _JudgeContext(judge_model, judge_cache, options, samples, columns, loop)
    budget = options.budget
    if budget is not None and any(v is not None for v in (budget.max_calls, budget.max_tokens, budget.max_cost)):
        ctx_spend = spend

        def left() -> Any:
            return budget.after(ctx_spend.calls, ctx_spend.tokens_in + ctx_spend.tokens_out, ctx_spend.cost)

        ctx.budget_left = left
    return ctx, owned


def records_of(table: Any) -> list[dict[str, Any]]:
    """The rows of a results table as dicts (NaN as None)."""
    return [_plain(r) for r in table.to_pylist()]
