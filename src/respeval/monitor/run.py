"""The monitor's loop: read what is new, score the windows that closed, write the report;
once (for cron and CI) or again and again (a process that follows the source).

One step::

    poll the source ──▶ records into the store (with the files' offsets, one transaction per
    batch) ──▶ for each window closed since the last step, in order: score it, test it
    against the reference, commit its result and its traces (one transaction) ──▶ report

A kill at any moment loses at most the step's uncommitted batch or window, which the next
run reads or scores again from the checkpoint; the judge's answers are in its cache, so they
are not paid for twice.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval._version import __version__
from respeval.bulk.parts import RunFingerprint
from respeval.monitor.config import MonitorConfig
from respeval.monitor.drift import REGRESSED
from respeval.monitor.ingest import IngestReport, Reader
from respeval.monitor.score import Judge, WindowScorer, load_references
from respeval.monitor.store import Store
from respeval.traces.errors import BadRecord

__all__ = ["Monitor", "MonitorReport", "monitor"]


@dataclass
class MonitorReport:
    """What one invocation did: what it read, the windows it scored (their results), and the
    judge's spend."""

    ingest: IngestReport = field(default_factory=IngestReport)
    windows: list[dict[str, Any]] = field(default_factory=list)
    judge_calls: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    steps: int = 0

    @property
    def regressed(self) -> list[int]:
        """The windows scored by this run that regressed."""
        return [w["window"] for w in self.windows if w["status"] == REGRESSED]

    def to_json(self) -> dict[str, Any]:
        return {
            "ingest": self.ingest.to_json(),
            "windows": self.windows,
            "regressed": self.regressed,
            "judge": {"calls": self.judge_calls, "cache_hits": self.cache_hits, "cost_usd": self.cost_usd},
            "steps": self.steps,
        }


def _file_digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fingerprint(
    config: MonitorConfig, metrics: Sequence[Any], columns: Mapping[str, str], judge: Judge | None
) -> RunFingerprint:
    """Everything that changes a number of the store: the settings, each metric (and a custom
    metric's code), the columns, the references file, the judge."""
    from respeval.evaluate.plan import resolve_metrics

    parts: dict[str, Any] = dict(config.fingerprint_parts())
    unproven: dict[str, str] = {}
    if metrics:
        plan = resolve_metrics(list(metrics))
        parts["the metrics"] = plan.names()
        parts.update(plan.fingerprint_parts(unproven))
    parts["the columns"] = dict(sorted(columns.items()))
    if config.references is not None:
        parts["the references"] = _file_digest(config.references.path)
    if judge is not None:
        identity = getattr(judge.model, "identity", None)
        parts["the judge model"] = identity() if callable(identity) else getattr(judge.model, "name", None)
        parts["the judge's threshold"] = judge.threshold
        code = getattr(judge.model, "code", None)
        if code is not None and not getattr(code, "proven", True):
            unproven["the judge's code"] = f"{code.reason}; give it a version (python:module:function@VERSION)"
    parts["the respeval version"] = __version__
    return RunFingerprint(parts, unproven)


class Monitor:
    """A monitor over ``sources`` (directories or files of traces) into the store at
    ``store`` (see the module docstring)."""

    def __init__(
        self,
        sources: Sequence[str],
        store: str,
        config: MonitorConfig | None = None,
        metrics: Sequence[Any] = (),
        *,
        columns: Mapping[str, str] | None = None,
        judge: Judge | None = None,
        errors: Callable[[BadRecord], None] | None = None,
        progress: Callable[[int], None] | None = None,
        engine: Any = None,
    ) -> None:
        self.config = config or MonitorConfig()
        self.sources = [os.fspath(s) for s in sources]
        for source in self.sources:
            if not os.path.exists(source):
                from respeval.traces.errors import TraceInputError

                raise TraceInputError(f"{source}: no such file or directory (the monitor's --source)")
        columns = dict(columns or {})
        references = load_references(self.config.references) if self.config.references is not None else None
        self.store = Store(store, fingerprint(self.config, metrics, columns, judge))
        try:
            self.reader = Reader(self.store, self.config, self.sources, errors=errors, progress=progress, engine=engine)
            self.scorer = WindowScorer(
                self.store, self.config, metrics, columns=columns, judge=judge, references=references
            )
        except BaseException:
            self.store.close()
            raise
        self.run_id = self.store.start_run()
        self.report = MonitorReport()

    def close(self) -> None:
        spend = self.scorer.spend
        try:
            self.store.update_run(self.run_id, len(self.report.windows), spend.calls, spend.cache_hits, spend.cost)
        finally:
            self.store.close()

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def score_closed(self) -> list[dict[str, Any]]:
        """Score every window closed and not scored yet, in order; returns their results."""
        store, config = self.store, self.config
        first = store.counter("first_window")
        if first < 0:
            return []
        last = config.last_closed(store.counter("watermark_ns"))
        done = store.last_window()
        out = []
        for window in range((first if done is None else done + 1), last + 1):
            result, traces = self.scorer.score(window)
            with store.transaction():
                store.finish_window(window, result["start"], result, traces)
            self.reader.closed([t[0] for t in traces])
            out.append(result)
        return out

    def step(self, *, drain: bool = False) -> list[dict[str, Any]]:
        """Read what is new, score what closed (``drain``: the source is complete, so every
        window with traces closes); returns the results of the windows scored."""
        got = self.reader.poll(final=drain)
        total = self.report.ingest
        for name, value in got.to_json().items():
            if isinstance(value, int):
                setattr(total, name, getattr(total, name) + value)
            else:
                getattr(total, name).extend(value)
        if drain:
            self.reader.drain()
        scored = self.score_closed()
        self.report.windows.extend(scored)
        self.report.steps += 1
        spend = self.scorer.spend
        self.report.judge_calls, self.report.cache_hits, self.report.cost_usd = (
            spend.calls,
            spend.cache_hits,
            spend.cost,
        )
        return scored

    def follow(
        self,
        *,
        poll: float = 30.0,
        stop: threading.Event | None = None,
        on_step: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> MonitorReport:
        """Step, wait ``poll`` seconds, step again, until ``stop`` is set."""
        stop = stop or threading.Event()
        while True:
            scored = self.step()
            if on_step is not None:
                on_step(scored)
            if stop.wait(poll):
                return self.report


def monitor(
    sources: Sequence[str],
    store: str,
    config: MonitorConfig | None = None,
    metrics: Sequence[Any] = (),
    *,
    columns: Mapping[str, str] | None = None,
    judge: Judge | None = None,
    drain: bool = False,
    errors: Callable[[BadRecord], None] | None = None,
    engine: Any = None,
) -> MonitorReport:
    """One step of a monitor (what ``respeval monitor --once`` does): read what is new in
    ``sources``, score the windows that closed, and return what was done.  ``drain``: the
    source is complete; close and score every window.  ``engine``: a
    ``dask.distributed.Client`` over which the decoding of the source is partitioned (the
    store is the same as one process's; see :mod:`respeval.monitor.ingest`)."""
    with Monitor(sources, store, config, metrics, columns=columns, judge=judge, errors=errors, engine=engine) as m:
        m.step(drain=drain)
        return m.report
