"""``respeval.run``: every case through every (template, system), into one table.

Each system is run by the judge's engine (:func:`respeval.judge.run.arun` with
:class:`~respeval.systems.base.Generate`): live, or as provider batches with ``batch=True``,
with one answer cache for the whole run.  The systems run at the same time, each with its own
``concurrency`` calls in flight, rate limits and budget.

**The output** has one row per (case, template, system), in that order: the input row's
fields, ``id`` (the input's ``id_field``, or the row number when the input has no ids),
``system``, ``template`` (when there are several), ``prompt`` (the message sent, unless the
input has a ``prompt`` of its own), then ``response``, ``tool_calls`` (null when none),
``latency_s``, ``tokens_in``, ``tokens_out``, ``cost_usd`` (null without a price for the
model), ``finish_reason`` and ``error`` (null, or why the row has no response: retries
exhausted, the system's own error, a refusal, an empty reply).  It is what ``respeval
compare --input OUT --baseline A --candidate B`` reads, and ``score``, ``judge``,
``evaluate`` and ``gate`` read its ``response`` column like any other.  Usage and latency
are the answer's, kept with it in the cache, so a rerun writes the same rows.

**Writing, stopping and resuming** (with ``out``): ``OUT`` is locked for the run.  Each
system's rows go, in order, to ``OUT.parts/system-N.jsonl`` as they finish (whole lines,
flushed every 50 ms), beside a manifest of what makes the run this run (the rows read, the
templates, each system's model and settings, the options: :class:`respeval.bulk.parts.RunFingerprint`).
``OUT`` is written (atomically, a temporary file renamed into place) only when every row is
done; then the parts are removed.  Every answer is in the cache before its row is written,
so after a crash, a ``kill -9``, Ctrl-C or a budget stop a rerun sends no request whose
answer arrived; ``resume=True`` also keeps the rows already written and refuses, naming what
changed, when the run is not the same run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from respeval._sync import run_sync
from respeval._version import __version__
from respeval.bulk.parts import RunFingerprint, check_manifest, write_manifest
from respeval.fingerprint import CodeFingerprint
from respeval.io.files import atomic_output, guarded_outputs
from respeval.judge.batch import BatchOptions, price_of
from respeval.judge.cache import JudgeCache
from respeval.judge.engine import EngineOptions, budget_left
from respeval.judge.engine import RunResult as EngineResult
from respeval.judge.limits import Price, price_for
from respeval.judge.models.base import JudgeModel
from respeval.judge.models.batching import SupportsBatch
from respeval.judge.prices import model_price
from respeval.judge.results import RowResult, Spend
from respeval.judge.run import RunControl
from respeval.judge.run import arun as judge_arun
from respeval.systems.base import GENERATE_VERSION, Generate, System
from respeval.systems.simulate import (
    CONVERSATION_FIELDS,
    SCENARIO_FIELDS,
    SIMULATE_VERSION,
    Dialogue,
    Turn,
    add_cost,
    is_stop,
    scenario_fields,
)
from respeval.systems.specs import load_system
from respeval.systems.templates import OUTPUT_FIELDS, Case, Prompt, Template, build_cases, prompts_of

__all__ = ["RunResult", "SystemSummary", "arun", "run"]

_FLUSH_SECONDS = 0.05


@dataclass
class SystemSummary:
    """What one system did in a run.  ``calls``, ``retries``, ``spent_tokens_in``/``_out``
    and ``spent_usd`` count this run's calls only (a cached answer is free); ``rows``,
    ``responses`` and ``errors`` every row the output holds for the system (resumed ones
    too), and ``tokens_in``, ``tokens_out``, ``cost_usd`` their answers' usage."""

    name: str
    model: str
    rows: int = 0
    total: int = 0
    responses: int = 0
    errors: int = 0
    resumed: int = 0
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    spent_tokens_in: int = 0
    spent_tokens_out: int = 0
    spent_usd: float = 0.0
    seconds: float = 0.0
    stop_reason: str | None = None
    stop_kind: str | None = None
    error_reasons: dict[str, int] = field(default_factory=dict)
    batch: Any = None

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "batch"}
        out["batch"] = self.batch.to_json() if self.batch is not None else None
        return out

    def format(self) -> str:
        cost = "" if self.cost_usd is None else f", ${self.cost_usd:.4f}"
        line = (
            f"{self.name} ({self.model}): {self.rows:,}/{self.total:,} rows, {self.responses:,} responses, "
            f"{self.errors:,} errors; {self.calls:,} calls, {self.cache_hits:,} from the cache, {self.retries:,} retries; "
            f"tokens {self.tokens_in:,} in, {self.tokens_out:,} out{cost}"
        )
        if self.resumed:
            line += f"; {self.resumed:,} rows resumed"
        if self.error_reasons:
            top = sorted(self.error_reasons.items(), key=lambda kv: -kv[1])[:3]
            line += "\n    errors: " + "; ".join(f"{n} x {reason}" for reason, n in top)
        if self.stop_reason:
            line += f"\n    stopped: {self.stop_reason}"
        return line


@dataclass
class RunResult:
    """What :func:`run` did: a summary per system, where the rows went (``output``: ``OUT``
    when complete, else the parts folder), and the rows themselves when no ``out`` was given."""

    systems: dict[str, SystemSummary]
    templates: list[str]
    cases: int
    output: str | None
    complete: bool
    seconds: float
    rows: list[dict[str, Any]] | None = None
    simulator: SystemSummary | None = None
    """A multi-turn run's user simulator: what it was sent and spent (its rows are the systems')."""

    @property
    def stop_kind(self) -> str | None:
        """The first system's reason to stop (the engine's kinds: ``budget``, ``error``,
        ``interrupted``, ``cache``, ``deferred``), None when every system finished."""
        for summary in self.systems.values():
            if summary.stop_kind is not None:
                return summary.stop_kind
        return None

    @property
    def stop_reason(self) -> str | None:
        for summary in self.systems.values():
            if summary.stop_reason is not None:
                return f"{summary.name}: {summary.stop_reason}"
        return None

    @property
    def spent_usd(self) -> float:
        return sum(s.spent_usd for s in self.systems.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "templates": self.templates,
            "systems": {name: s.to_json() for name, s in self.systems.items()},
            "rows": sum(s.rows for s in self.systems.values()),
            "errors": sum(s.errors for s in self.systems.values()),
            "calls": sum(s.calls for s in self.systems.values()),
            "spent_usd": self.spent_usd,
            "seconds": self.seconds,
            "complete": self.complete,
            "stop_reason": self.stop_reason,
            "output": self.output,
            **({"simulator": self.simulator.to_json()} if self.simulator is not None else {}),
        }

    def format(self) -> str:
        shape = f"{self.cases:,} cases x {len(self.systems)} systems"
        if len(self.templates) > 1:
            shape += f" x {len(self.templates)} templates"
        lines = [f"respeval run: {shape}, {self.seconds:.1f} s" + ("" if self.complete else " (not complete)")]
        lines += [summary.format() for summary in self.systems.values()]
        sim = self.simulator
        if sim is not None:
            lines.append(
                f"simulator ({sim.model}): {sim.calls:,} calls, {sim.cache_hits:,} from the cache, {sim.retries:,} retries"
            )
        return "\n".join(lines)


# --------------------------------------------------------------------------- resolving


def _systems(systems: Any, **settings: Any) -> list[System]:
    if isinstance(systems, Mapping):
        items: Iterable[Any] = [
            value if isinstance(value, System) else load_system(name, value, **settings)
            for name, value in systems.items()
        ]
    else:
        items = systems
    out: list[System] = []
    for item in items:
        if not isinstance(item, System):
            raise TypeError(f"systems: expected System objects or a mapping name -> spec, got {type(item).__name__}")
        out.append(item)
    if not out:
        raise ValueError("no systems to run: give at least one (baseline=openai:MODEL)")
    names = [s.name for s in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"system {dupes[0]!r} is given twice: every system needs its own name")
    return out


def _templates(templates: Any, fence: bool) -> list[Template]:
    if templates is None:
        return []
    if isinstance(templates, (str, Template)):
        templates = [templates]
    if isinstance(templates, Mapping):
        out = [Template(name, text, fence) for name, text in templates.items()]
    else:
        out = [t if isinstance(t, Template) else Template(f"t{i}", t, fence) for i, t in enumerate(templates, 1)]
    names = [t.name for t in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"template {dupes[0]!r} is given twice: every template needs its own name")
    return out


def _price(system: System, options: EngineOptions, batched: bool, batch: BatchOptions | None) -> Price | None:
    """The system's price per million tokens: the options' (``--price-in``/``--price-out``),
    else the judge's price table; the batch price in batch mode."""
    model = system.model
    if batched:
        found = price_of(model, batch or BatchOptions(), options.prices)
        return found.batch if found is not None else None
    given = price_for(options.prices, model.name, model.model_id)
    if given is not None:
        return given
    listed = model_price(model.model_id, model.name) if system.kind == "provider" else None
    return listed.interactive if listed is not None else None


def _fingerprint(
    systems: Sequence[System],
    templates: Sequence[Template],
    data_digest: str,
    options: Mapping[str, Any],
) -> RunFingerprint:
    parts: dict[str, Any] = {
        "the rows read": data_digest,
        "the templates": [t.to_json() for t in templates],
        "the systems": [s.name for s in systems],
    }
    unproven: dict[str, str] = {}
    for system in systems:
        parts[f"system {system.name!r}"] = system.identity()
        code = getattr(system.model, "code", None)
        if isinstance(code, CodeFingerprint) and not code.proven:
            unproven[f"system {system.name!r}'s code"] = (
                f"{code.reason}; give it a version (python:module:function@VERSION)"
            )
    parts.update(options)
    parts["the respeval version"] = __version__
    return RunFingerprint(parts, unproven)


# --------------------------------------------------------------------------- rows


def _row(
    case: Case,
    prompt: Prompt,
    system: System,
    result: RowResult,
    price: Price | None,
    several_templates: bool,
) -> dict[str, Any]:
    out = dict(case.record)
    out["id"] = case.id
    out["system"] = system.name
    if several_templates:
        out["template"] = prompt.template
    if "prompt" not in case.record:
        out["prompt"] = prompt.text
    verdict = result.verdict if result.scored else None
    if verdict is None:
        out.update(
            response=None,
            tool_calls=None,
            latency_s=None,
            tokens_in=0,
            tokens_out=0,
            cost_usd=None if price is None else 0.0,
            finish_reason=None,
            error=result.unscored_reason or "no response",
        )
        return out
    tokens_in, tokens_out = int(verdict["tokens_in"]), int(verdict["tokens_out"])
    out.update(
        response=verdict["response"],
        tool_calls=verdict["tool_calls"],
        latency_s=verdict["latency_s"],
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost_usd=None if price is None else price.cost(tokens_in, tokens_out),
        finish_reason=verdict["finish_reason"],
        error=verdict["error"],
    )
    return out


def _reason(error: Any) -> str:
    """An error as the summary groups it (its first 120 characters)."""
    text = str(error)
    return text if len(text) <= 120 else text[:117] + "..."


def _dumps(row: Mapping[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, default=str) + "\n"


class _Part:
    """One system's rows in order: a reorder buffer over what finishes, and (with a file) the
    contiguous prefix written out, flushed within 50 ms."""

    def __init__(self, path: Path | None, total: int, start: int) -> None:
        self.path = path
        self.next = start
        self.total = total
        self.waiting: dict[int, str] = {}
        self.lines: list[str] | None = None if path is not None else []
        self._fh = open(path, "a", encoding="utf-8") if path is not None else None  # noqa: SIM115 - closed in close()
        self._last_flush = time.monotonic()
        self._unflushed = False

    def add(self, k: int, line: str) -> None:
        self.waiting[k] = line
        ready = []
        while self.next in self.waiting:
            ready.append(self.waiting.pop(self.next))
            self.next += 1
        if not ready:
            return
        if self._fh is None:
            assert self.lines is not None
            self.lines.extend(ready)
            return
        self._fh.write("".join(ready))
        self._unflushed = True
        now = time.monotonic()
        if now - self._last_flush >= _FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self._fh is not None and self._unflushed:
            self._fh.flush()
            self._unflushed = False
            self._last_flush = time.monotonic()

    def close(self) -> None:
        if self._fh is not None:
            self.flush()
            self._fh.close()
            self._fh = None

    @property
    def done(self) -> bool:
        return self.next >= self.total


def _resumed_count(path: Path) -> int:
    """Whole lines of a part a killed run left (a line cut by the kill is dropped: its answer
    is in the cache and it is written again)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with open(path, "r+b") as fh:
            fh.truncate(end)
    return data.count(b"\n", 0, end)


class _Folder:
    """``OUT.parts/``: the manifest and one file of rows per system."""

    def __init__(self, out: str, fingerprint: RunFingerprint, resume: bool, systems: int) -> None:
        self.out = out
        self.dir = Path(out + ".parts")
        resuming = self.dir.exists() and resume and check_manifest(self.dir, fingerprint, out)
        if self.dir.exists() and not resuming:
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        if not resuming:
            write_manifest(self.dir, fingerprint, out)
        self.files = [self.dir / f"system-{i}.jsonl" for i in range(systems)]
        self.done = [_resumed_count(p) if resuming else 0 for p in self.files]

    def join(self, order: Sequence[int], per_system: int) -> None:
        """Write ``OUT`` from the parts, row by row in the run's order, then remove them."""
        handles = [open(p, encoding="utf-8") for p in self.files]  # noqa: SIM115 - closed below
        try:
            with atomic_output(self.out) as fh:
                for _ in range(per_system):
                    for s in order:
                        line = handles[s].readline()
                        if not line.endswith("\n"):
                            raise OSError(f"{self.files[s]} holds fewer rows than the run wrote; rerun with --resume")
                        fh.write(line)
        finally:
            for h in handles:
                h.close()
        trash = self.dir.with_name(f"{self.dir.name}.trash-{os.getpid()}")
        os.replace(self.dir, trash)  # a kill during the removal leaves no parts to resume from
        shutil.rmtree(trash, ignore_errors=True)


# --------------------------------------------------------------------------- the run


async def arun(
    data: Any,
    systems: Mapping[str, str | JudgeModel | System] | Sequence[System],
    *,
    templates: Sequence[str | Template] | Mapping[str, str] | str | None = None,
    out: str | os.PathLike[str] | None = None,
    cache: JudgeCache | str | os.PathLike[str] | bool | None = None,
    resume: bool = False,
    batch: bool | BatchOptions = False,
    id_field: str = "id",
    keep: Iterable[str] = (),
    fence: bool = True,
    options: EngineOptions | None = None,
    control: RunControl | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    on_progress: Callable[[int, int, float], None] | None = None,
    on_batch_progress: Callable[[str], None] | None = None,
    simulator: str | JudgeModel | System | None = None,
    max_turns: int = 6,
    **overrides: Any,
) -> RunResult:
    """The asynchronous :func:`run` (same arguments)."""
    if simulator is not None:
        if batch:
            raise ValueError("batch mode does not apply to simulated conversations: each turn waits for the one before")
        return await _arun_conversations(
            data, systems, simulator, max_turns=max_turns, templates=templates, out=out, cache=cache, resume=resume,
            id_field=id_field, keep=tuple(keep), fence=fence, options=options, control=control, on_row=on_row,
            on_progress=on_progress, **overrides,
        )  # fmt: skip
    started = time.perf_counter()
    opts = dataclasses.replace(options or EngineOptions(), **overrides)
    template_list = _templates(templates, fence)
    system_list = _systems(systems)
    keep = tuple(keep)
    cases, data_digest = build_cases(data, template_list, id_field=id_field, keep=keep)
    if id_field != "id":
        for case in cases:
            if "id" in case.record:
                raise ValueError(
                    f"{case.where}: field 'id': the run writes the case id ({id_field!r}) as 'id'; "
                    "rename the input's own 'id' column"
                )
    prompts = [p for case in cases for p in prompts_of(case, template_list)]
    per_system = len(prompts)
    n_templates = max(1, len(template_list))
    out_path = os.fspath(out) if out is not None else None
    batch_options = batch if isinstance(batch, BatchOptions) else (BatchOptions() if batch else None)
    given_cache, cache_path = _cache_of(cache, out_path)
    if batch_options is not None and cache_path is None:
        raise ValueError("batch mode needs a cache (cache=PATH, or out=): batch answers and batch state are kept there")
    with _guarded(data, out_path, cache_path):
        opened = _open_outputs(
            out_path, resume, system_list, template_list, data_digest,
            {"the id field": id_field, "the fields kept": sorted(keep), "fencing": fence},
            per_system, given_cache, cache_path,
        )  # fmt: skip
        folder, parts, starts, shared_cache = opened.folder, opened.parts, opened.starts, opened.cache
        done_rows = sum(p.next for p in parts)
        total_rows = per_system * len(system_list)
        spent = [0.0]
        summaries: dict[str, SystemSummary] = {}
        row_counts: list[dict[str, Any]] = []

        async def run_system(i: int, system: System) -> EngineResult:
            nonlocal done_rows
            part = parts[i]
            batched = batch_options is not None and isinstance(system.model, SupportsBatch)
            price = _price(system, opts, batched, batch_options)
            start = part.next
            tally = row_counts[i]

            def record(k: int) -> dict[str, Any]:
                prompt = prompts[k]
                return {"id": cases[k // n_templates].id, "prompt": prompt.text}

            def emit(result: RowResult) -> None:
                nonlocal done_rows
                k = start + result.row
                row = _row(cases[k // n_templates], prompts[k], system, result, price, len(template_list) > 1)
                tally["rows"] += 1
                if row["error"] is not None:
                    tally["errors"] += 1
                    reason = _reason(row["error"])
                    tally["reasons"][reason] = tally["reasons"].get(reason, 0) + 1
                if row["response"] is not None and row["error"] is None:
                    tally["responses"] += 1
                tally["tokens_in"] += row["tokens_in"]
                tally["tokens_out"] += row["tokens_out"]
                if row["cost_usd"] is not None:
                    tally["cost"] = (tally["cost"] or 0.0) + row["cost_usd"]
                part.add(k, _dumps(row))
                if on_row is not None:
                    on_row(row)
                done_rows += 1
                spent[0] += result.cost
                if on_progress is not None:
                    on_progress(done_rows, total_rows, spent[0])

            records: Iterator[dict[str, Any]] = (record(k) for k in range(start, per_system))
            method = Generate(system)
            if batched:
                assert batch_options is not None
                result: EngineResult = await judge_arun(
                    list(records),
                    system.model,
                    method=method,
                    cache=cache_path,
                    on_row=emit,
                    keep_rows=False,
                    options=opts,
                    batch=batch_options,
                    on_progress=on_batch_progress,
                )
                return result
            return await judge_arun(
                records, system.model, method=method, cache=shared_cache, on_row=emit, keep_rows=False,
                options=opts, control=control,
            )  # fmt: skip

        for _ in system_list:
            row_counts.append(
                {"rows": 0, "errors": 0, "responses": 0, "tokens_in": 0, "tokens_out": 0, "cost": None, "reasons": {}}
            )
        if out_path is not None and folder is not None:
            _count_resumed(folder, parts, row_counts)
        try:
            if on_progress is not None:
                on_progress(done_rows, total_rows, 0.0)
            results = await asyncio.gather(*(run_system(i, s) for i, s in enumerate(system_list)))
        finally:
            opened.close()
        complete = True
        for i, (system, result) in enumerate(zip(system_list, results)):
            s = result.summary
            tally = row_counts[i]
            stop_kind = result.stop_kind
            if stop_kind is None and not parts[i].done:
                stop_kind = "not_run"
            report = getattr(s, "batch", None)
            if report is not None and getattr(report, "stop_kind", None) is not None and stop_kind is None:
                stop_kind = report.stop_kind
            complete = complete and stop_kind is None
            summaries[system.name] = SystemSummary(
                name=system.name,
                model=system.model.model_id,
                rows=tally["rows"],
                total=per_system,
                responses=tally["responses"],
                errors=tally["errors"],
                resumed=starts[i],
                calls=s.calls,
                cache_hits=s.cache_hits,
                retries=s.retries,
                tokens_in=tally["tokens_in"],
                tokens_out=tally["tokens_out"],
                cost_usd=tally["cost"],
                spent_tokens_in=s.tokens_in,
                spent_tokens_out=s.tokens_out,
                spent_usd=s.cost,
                seconds=s.seconds,
                stop_reason=s.stop_reason or (None if stop_kind is None else "rows left not run"),
                stop_kind=stop_kind,
                error_reasons=tally["reasons"],
                batch=report,
            )
        output, rows = _finished(folder, parts, out_path, complete, len(system_list), per_system)
        return RunResult(
            systems=summaries,
            templates=[t.name for t in template_list],
            cases=len(cases),
            output=output,
            complete=complete,
            seconds=time.perf_counter() - started,
            rows=rows,
        )


def _guarded(data: Any, out_path: str | None, cache_path: str | None) -> contextlib.AbstractContextManager[None]:
    """The run's files locked against a second run: its input, ``OUT`` and (unlocked, shared
    between runs by design) its cache."""
    inputs = [("--input", os.fspath(data))] if isinstance(data, (str, os.PathLike)) else []
    outputs = [("--out", out_path)] if out_path else []
    return guarded_outputs(inputs, outputs, unlocked=[("--cache", cache_path)])


@dataclass
class _Outputs:
    """Where a run writes: ``OUT.parts/`` (None without ``OUT``), one part per system
    (resumed where it stopped) and the cache answers are kept in."""

    folder: _Folder | None
    parts: list[_Part]
    starts: list[int]  # the rows each system had done before this run
    cache: JudgeCache | None
    owns_cache: bool

    def close(self) -> None:
        for part in self.parts:
            part.close()
        if self.cache is not None and self.owns_cache:
            self.cache.close()


def _open_outputs(
    out_path: str | None,
    resume: bool,
    systems: Sequence[System],
    templates: Sequence[Template],
    data_digest: str,
    options: Mapping[str, Any],
    per_system: int,
    given_cache: JudgeCache | None,
    cache_path: str | None,
) -> _Outputs:
    folder = None
    if out_path is not None:
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        fingerprint = _fingerprint(systems, templates, data_digest, options)
        folder = _Folder(out_path, fingerprint, resume, len(systems))
    starts = folder.done if folder is not None else [0] * len(systems)
    parts = [
        _Part(folder.files[i] if folder is not None else None, per_system, min(starts[i], per_system))
        for i in range(len(systems))
    ]
    cache = given_cache if given_cache is not None else (JudgeCache(cache_path) if cache_path else None)
    return _Outputs(folder, parts, starts, cache, owns_cache=cache is not given_cache)


def _cache_of(cache: Any, out_path: str | None) -> tuple[JudgeCache | None, str | None]:
    """The cache a run was given (an open one) and the file it answers from: ``cache`` a
    JudgeCache, a path, False (none), or None/True (``OUT.cache.sqlite`` beside ``out``)."""
    if isinstance(cache, JudgeCache):
        return cache, cache.path
    if cache is None or cache is True:
        return None, (out_path + ".cache.sqlite" if out_path is not None else None)
    if cache is False:
        return None, None
    return None, os.fspath(cache)


def _finished(
    folder: _Folder | None, parts: Any, out_path: Any, complete: bool, n_systems: int, per_system: int
) -> tuple[str | None, list[dict[str, Any]] | None]:
    """Where the rows went (OUT once complete, else the parts folder) and, without OUT, the
    rows themselves, case by case and system by system."""
    order = list(range(n_systems))
    if folder is not None:
        if not complete:
            return str(folder.dir), None
        folder.join(order, per_system)
        return out_path, None
    if complete:
        return None, [json.loads(parts[s].lines[k]) for k in range(per_system) for s in order]
    return None, None


def _count_resumed(folder: _Folder, parts: Sequence[_Part], tallies: list[dict[str, Any]]) -> None:
    """Fold the rows a resumed run kept into the summary's counts."""
    for i, part in enumerate(parts):
        if not part.next:
            continue
        tally = tallies[i]
        with open(folder.files[i], encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                tally["rows"] += 1
                if row.get("error") is not None:
                    tally["errors"] += 1
                    reason = _reason(row["error"])
                    tally["reasons"][reason] = tally["reasons"].get(reason, 0) + 1
                elif row.get("response") is not None:
                    tally["responses"] += 1
                tally["tokens_in"] += int(row.get("tokens_in") or 0)
                tally["tokens_out"] += int(row.get("tokens_out") or 0)
                if row.get("cost_usd") is not None:
                    tally["cost"] = (tally["cost"] or 0.0) + float(row["cost_usd"])


async def _arun_conversations(
    data: Any,
    systems: Mapping[str, str | JudgeModel | System] | Sequence[System],
    simulator: str | JudgeModel | System,
    *,
    max_turns: int = 6,
    templates: Sequence[str | Template] | Mapping[str, str] | str | None = None,
    out: str | os.PathLike[str] | None = None,
    cache: JudgeCache | str | os.PathLike[str] | bool | None = None,
    resume: bool = False,
    id_field: str = "id",
    keep: Sequence[str] = (),
    fence: bool = True,
    options: EngineOptions | None = None,
    control: RunControl | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    on_progress: Callable[[int, int, float], None] | None = None,
    **overrides: Any,
) -> RunResult:
    """A multi-turn run (``run(..., simulator=SPEC)``): see :mod:`respeval.systems.simulate`."""
    started = time.perf_counter()
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ValueError(f"max_turns must be a whole number, at least 1, got {max_turns!r}")
    opts = dataclasses.replace(options or EngineOptions(), **overrides)
    template_list = _templates(templates, fence)
    system_list = _systems(systems)
    sim = simulator if isinstance(simulator, System) else load_system("simulator", simulator)
    reserved = (*OUTPUT_FIELDS, *CONVERSATION_FIELDS) + (("scenario",) if template_list else ())
    cases, data_digest = build_cases(
        data, template_list, id_field=id_field, keep=(*keep, *SCENARIO_FIELDS), prompt_field="scenario",
        reserved=reserved,
    )  # fmt: skip
    n_templates = max(1, len(template_list))
    scenarios = [(case, p) for case in cases for p in prompts_of(case, template_list, "scenario")]
    fields = [scenario_fields(case, max_turns) for case in cases]
    per_system = len(scenarios)
    out_path = os.fspath(out) if out is not None else None
    given_cache, cache_path = _cache_of(cache, out_path)
    with _guarded(data, out_path, cache_path):
        opened = _open_outputs(
            out_path,
            resume,
            system_list,
            template_list,
            data_digest,
            {
                "the id field": id_field,
                "the fields kept": sorted(keep),
                "fencing": fence,
                "the simulator": sim.identity(),
                "the turn limit": max_turns,
                "the simulator's prompt": SIMULATE_VERSION,
            },
            per_system,
            given_cache,
            cache_path,
        )
        folder, parts, starts, shared = opened.folder, opened.parts, opened.starts, opened.cache
        prices = [_price(s, opts, False, None) for s in system_list]
        sim_price = _price(sim, opts, False, None)
        spends = [Spend() for _ in system_list]
        sim_spend = Spend()
        stops: list[tuple[str | None, str | None]] = [(None, None)] * len(system_list)
        sim_stop: tuple[str | None, str | None] = (None, None)
        counts: list[dict[str, Any]] = [{"rows": 0, "errors": 0, "responses": 0, "tokens_in": 0, "tokens_out": 0, "cost": None}
                  for _ in system_list]  # fmt: skip
        live: list[Dialogue] = []
        for s, system in enumerate(system_list):
            for k in range(parts[s].next, per_system):
                persona, stop, turns = fields[k // n_templates]
                d = Dialogue(k, s, persona, scenarios[k][1].text, stop, turns)
                if system.system_instruction:
                    d.messages.append({"role": "system", "content": system.system_instruction})
                live.append(d)

        def emit(d: Dialogue) -> None:
            case, prompt = scenarios[d.k]
            system = system_list[d.s]
            row = dict(case.record)
            row["id"] = case.id
            row["system"] = system.name
            if template_list and len(template_list) > 1:
                row["template"] = prompt.template
            if template_list:
                row["scenario"] = prompt.text
            replies = [m for m in d.messages if m["role"] == "assistant"]
            row.update(
                messages=d.messages,
                response=replies[-1]["content"] if replies else None,
                turns=d.turns,
                stop_reason=d.done,
                error=d.error,
                tokens_in=d.tokens_in,
                tokens_out=d.tokens_out,
                cost_usd=d.cost if prices[d.s] is not None else None,
                latency_s=d.latency,
                simulator_tokens_in=d.sim_tokens_in,
                simulator_tokens_out=d.sim_tokens_out,
                simulator_cost_usd=d.sim_cost if sim_price is not None else None,
            )
            tally = counts[d.s]
            tally["rows"] += 1
            tally["errors" if d.error else "responses"] += 1
            tally["tokens_in"] += d.tokens_in
            tally["tokens_out"] += d.tokens_out
            if row["cost_usd"] is not None:
                tally["cost"] = (tally["cost"] or 0.0) + row["cost_usd"]
            parts[d.s].add(d.k, _dumps(row))
            if on_row is not None:
                on_row(row)
            if on_progress is not None:
                written = sum(p.next + len(p.waiting) for p in parts)
                on_progress(written, per_system * len(system_list), sim_spend.cost + sum(x.cost for x in spends))

        async def wave(model_system: System, dialogues: list[Dialogue], version: str, spend: Spend) -> Any:
            if version == SIMULATE_VERSION:
                records = [{"id": f"{d.k}/{d.s}", "item": d.simulator_messages()} for d in dialogues]
            else:
                records = [{"id": f"{d.k}/{d.s}", "item": d.system_messages()} for d in dialogues]
            got: dict[int, RowResult] = {}

            def seen(row: RowResult) -> None:
                got[row.row] = row

            result = await judge_arun(
                records, model_system.model, method=Turn(model_system, version), cache=shared, on_row=seen,
                keep_rows=False, options=budget_left(opts, spend), control=control,
            )  # fmt: skip
            spend.add(result.summary)
            return result, got

        def failed(row: RowResult) -> str | None:
            if not row.scored or row.verdict is None:
                return row.unscored_reason or "no answer"
            return row.verdict["error"]

        try:
            async with contextlib.AsyncExitStack() as stack:
                for model in {id(m): m for m in [sim.model, *(s.model for s in system_list)]}.values():
                    await stack.enter_async_context(model)
                while live:
                    # the simulator writes each live conversation's next user message
                    result, got = await wave(sim, live, SIMULATE_VERSION, sim_spend)
                    if result.stop_kind is not None and sim_stop[0] is None:
                        sim_stop = (result.summary.stop_reason, result.stop_kind)
                    asked: list[Dialogue] = []
                    for i, d in enumerate(live):
                        row = got.get(i)
                        if row is None:
                            continue  # not run: the run stopped
                        v = row.verdict or {}
                        d.sim_tokens_in += int(v.get("tokens_in") or 0)
                        d.sim_tokens_out += int(v.get("tokens_out") or 0)
                        d.sim_cost = add_cost(d.sim_cost, sim_price, int(v.get("tokens_in") or 0),
                                               int(v.get("tokens_out") or 0))  # fmt: skip
                        why = failed(row)
                        if why is not None:
                            d.done, d.error = "error", f"turn {d.turns + 1}, the simulator: {why}"
                        elif is_stop(str(v["response"]), d.stop):
                            d.done = "stopped"
                        else:
                            d.messages.append({"role": "user", "content": str(v["response"]).strip()})
                            asked.append(d)
                            continue
                        emit(d)
                    if sim_stop[0] is not None:
                        break
                    # each system answers its conversations' new messages, the systems at once
                    by_system = [[d for d in asked if d.s == s] for s in range(len(system_list))]
                    answers = await asyncio.gather(
                        *(wave(system_list[s], ds, GENERATE_VERSION, spends[s]) for s, ds in enumerate(by_system) if ds)
                    )
                    going: list[Dialogue] = []
                    stopped_any = False
                    for (result, got), ds in zip(answers, [ds for ds in by_system if ds]):
                        if result.stop_kind is not None:
                            stopped_any = True
                            s = ds[0].s
                            if stops[s][0] is None:
                                stops[s] = (result.summary.stop_reason, result.stop_kind)
                        for i, d in enumerate(ds):
                            row = got.get(i)
                            if row is None:
                                continue
                            v = row.verdict or {}
                            t_in, t_out = int(v.get("tokens_in") or 0), int(v.get("tokens_out") or 0)
                            d.tokens_in += t_in
                            d.tokens_out += t_out
                            d.cost = add_cost(d.cost, prices[d.s], t_in, t_out)
                            d.latency += float(v.get("latency_s") or 0.0)
                            why = failed(row)
                            if why is not None:
                                d.done, d.error = "error", f"turn {d.turns + 1}, the system: {why}"
                                emit(d)
                                continue
                            message: dict[str, Any] = {"role": "assistant", "content": v["response"] or ""}
                            if v.get("tool_calls"):
                                message["tool_calls"] = v["tool_calls"]
                            d.messages.append(message)
                            if d.turns >= d.max_turns:
                                d.done = "turn_limit"
                                emit(d)
                            else:
                                going.append(d)
                    if stopped_any:
                        break
                    live = going
        finally:
            opened.close()
        summaries: dict[str, SystemSummary] = {}
        complete = True
        for s, system in enumerate(system_list):
            reason, kind = stops[s] if stops[s][0] is not None else sim_stop
            if kind is None and not parts[s].done:
                kind, reason = "not_run", "rows left not run"
            complete = complete and kind is None
            tally = counts[s]
            summaries[system.name] = SystemSummary(
                name=system.name,
                model=system.model.model_id,
                rows=tally["rows"] + starts[s],
                total=per_system,
                responses=tally["responses"],
                errors=tally["errors"],
                resumed=starts[s],
                calls=spends[s].calls,
                cache_hits=spends[s].cache_hits,
                retries=spends[s].retries,
                tokens_in=tally["tokens_in"],
                tokens_out=tally["tokens_out"],
                cost_usd=tally["cost"],
                spent_tokens_in=spends[s].tokens_in,
                spent_tokens_out=spends[s].tokens_out,
                spent_usd=spends[s].cost,
                seconds=time.perf_counter() - started,
                stop_reason=reason,
                stop_kind=kind,
            )
        summaries_sim = SystemSummary(
            name="simulator",
            model=sim.model.model_id,
            calls=sim_spend.calls,
            cache_hits=sim_spend.cache_hits,
            retries=sim_spend.retries,
            spent_tokens_in=sim_spend.tokens_in,
            spent_tokens_out=sim_spend.tokens_out,
            spent_usd=sim_spend.cost,
        )
        output, rows = _finished(folder, parts, out_path, complete, len(system_list), per_system)
        return RunResult(
            systems=summaries,
            templates=[t.name for t in template_list],
            cases=len(cases),
            output=output,
            complete=complete,
            seconds=time.perf_counter() - started,
            rows=rows,
            simulator=summaries_sim,
        )


def run(data: Any, systems: Any, **kwargs: Any) -> RunResult:
    """Run every case of ``data`` through every system (and template); see the module
    docstring for the output, writing and resuming.

    Args:
        data: a JSONL, CSV or Parquet file, a list of dicts, an Arrow table or a DataFrame:
            rows with a ``prompt``, or the variables of ``templates``.
        systems: ``{"baseline": "openai:gpt-4o-mini", "candidate": "python:app:answer"}``
            (specs: :mod:`respeval.systems.specs`; a :class:`respeval.judge.JudgeModel`
            works too), or :class:`~respeval.systems.System` objects (for a system
            instruction, temperature, max tokens, seed and tools: :func:`~respeval.systems.load_system`).
        templates: one template, several (named ``t1``, ``t2``, ...), a mapping name ->
            template, or :class:`~respeval.systems.Template` objects; None: the rows' ``prompt``.
        out: write the rows here (JSONL), resumably; without it they are returned in ``rows``.
        cache: the answer cache (a path or a :class:`respeval.judge.JudgeCache`; default
            ``OUT.cache.sqlite`` with ``out``; False: none).
        resume: keep the rows an interrupted run into the same ``out`` wrote (after
            checking it is the same run).
        batch: send the requests of ``openai:``/``anthropic:`` systems as provider batches
            (half price; a :class:`respeval.judge.batch.BatchOptions` for its options).
        id_field: the input's id column (default ``id``; the row number when no row has one).
        keep: input fields carried to the output that no template names (besides the id and
            the reference columns, :data:`respeval.systems.templates.DEFAULT_KEEP`).
        fence: insert template values fenced as data (default) or verbatim.
        options, overrides: the engine's :class:`respeval.judge.EngineOptions` (concurrency
            per system, retries, timeout, rate limits, budget per system, prices, replay-only).
        control: a :class:`respeval.judge.run.RunControl` to interrupt the run from outside.
        on_row: called with each output row as it is made; on_progress: with (rows done,
            rows in all, USD spent so far); on_batch_progress: batch mode's messages.
        simulator: a user simulator (a system spec, a model or a System): each row of
            ``data`` is then a scenario (``scenario``, or the templates rendered; optional
            ``persona``, ``stop``, ``max_turns``) and every system converses with the
            simulator; one row per (case, system[, template]) with the conversation in
            ``messages``, ``turns`` and ``stop_reason`` (:mod:`respeval.systems.simulate`).
        max_turns: with a simulator, the system answers at most this many messages.

    Returns a :class:`RunResult`; a run stopped early (budget, a model error, Ctrl-C)
    returns normally with ``complete=False`` and its ``stop_reason``.

    Example::

        result = respeval.run(
            "questions.jsonl", {"baseline": "openai:gpt-4o-mini", "candidate": "openai:gpt-4.1-mini"},
            templates="Q: {question}", out="responses.jsonl",
        )
        respeval.compare("responses.jsonl", metrics=["exact_match"], ref_field="expected")
    """
    return run_sync(arun(data, systems, **kwargs), thread_name="respeval-run")


# help() and inspect.signature show arun's parameters (run passes them on as they are)
run.__signature__ = inspect.signature(arun)  # type: ignore[attr-defined]
