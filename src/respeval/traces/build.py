"""From trace files to an eval dataset: read, group by trace, build cases, filter, sample,
scrub PII, drop near duplicates, write.

::

    inputs ──read──▶ records ──partition by unit hash──▶ bucket files (temporary)
          ──one bucket at a time──▶ traces in (u, trace_id) order ──▶ cases
          ──▶ filters ──▶ sample ──▶ scrub PII ──▶ near duplicates ──▶ dataset · ADK eval set · sheet

Memory holds one bucket of records (see :mod:`respeval.traces.spill`) and, with dedupe on,
the index of the cases kept so far (:mod:`respeval.traces.dedupe`); nothing else grows with
the input.  A sample decided by the trace id alone (a rate, without ``keep_errors`` or
strata) drops the other traces' records as they are read.

:func:`read_cases` is the reader (every case of the inputs, in the output order);
:func:`from_traces` the whole build, returning a :class:`BuildReport` of counts (never a
value from the data).
"""

from __future__ import annotations

import marshal
import os
import pickle
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.traces.case import (
    DEFAULT_FEEDBACK_ATTRIBUTES,
    Case,
    case_from_parts,
    merge_parts,
    parts_from_spans,
    trajectory_problem,
)
from respeval.traces.dedupe import THRESHOLD, NearDuplicates, dedupe_text
from respeval.traces.errors import BadRecord, BadRecords
from respeval.traces.otlp import Span
from respeval.traces.pii import Scrubber
from respeval.traces.sampling import Sampling, stratum_of
from respeval.traces.sources import SourceStats, input_files, read_records
from respeval.traces.spill import Trace, TraceSpill

__all__ = ["BuildReport", "Filters", "Options", "from_traces", "read_cases", "scrub_row", "trace_case"]

_BATCH = 512
ERRORS = ("include", "only", "exclude")


@dataclass(frozen=True)
class Filters:
    """Which cases are eligible: a time window on ``start_time`` (``since`` inclusive,
    ``until`` exclusive, nanoseconds since the epoch), services, models (a case matches when
    any of its model calls used one), routes, and errors (``include`` all, ``only`` the
    traces that recorded an error, ``exclude`` them)."""

    since_ns: int | None = None
    until_ns: int | None = None
    services: frozenset[str] = frozenset()
    models: frozenset[str] = frozenset()
    routes: frozenset[str] = frozenset()
    errors: str = "include"

    def __post_init__(self) -> None:
        if self.errors not in ERRORS:
            raise ValueError(f"errors must be one of {', '.join(ERRORS)}, not {self.errors!r}")

    def reason(self, case: Case) -> str | None:
        """Which filter leaves the case out, or None."""
        if self.since_ns is not None and (case.start_ns is None or case.start_ns < self.since_ns):
            return "time"
        if self.until_ns is not None and (case.start_ns is None or case.start_ns >= self.until_ns):
            return "time"
        if self.services and case.service not in self.services:
            return "service"
        if self.models and not self.models.intersection(case.models):
            return "model"
        if self.routes and case.route not in self.routes:
            return "route"
        if self.errors == "only" and case.error is None:
            return "error"
        if self.errors == "exclude" and case.error is not None:
            return "error"
        return None


@dataclass(frozen=True)
class Options:
    """Everything a build does besides where it reads and writes."""

    filters: Filters = field(default_factory=Filters)
    sampling: Sampling = field(default_factory=Sampling)
    dedupe: bool = False
    dedupe_threshold: float = THRESHOLD
    dedupe_on: str = "prompt"
    scrub_pii: bool = False
    pii_key: bytes | None = None
    feedback_attributes: tuple[str, ...] = DEFAULT_FEEDBACK_ATTRIBUTES
    on_error: str = "fail"
    tmp_dir: str | None = None
    implementation: str | None = None


@dataclass
class BuildReport:
    """What a build read, kept and wrote: counts only (the PII report never holds a value)."""

    inputs: SourceStats = field(default_factory=SourceStats)
    traces: int = 0  # traces built (a sample decided by trace id alone skips the others while reading)
    records_outside_sample: int = 0  # records of those skipped traces
    filtered_out: dict[str, int] = field(
        default_factory=lambda: {"time": 0, "service": 0, "model": 0, "route": 0, "error": 0}
    )
    eligible: int = 0
    sampled: int = 0
    errors_kept: int = 0
    strata: dict[str, dict[str, int]] | None = None
    near_duplicates: int = 0
    dedupe: dict[str, Any] | None = None
    pii: dict[str, int] | None = None
    pii_key: str | None = None
    written: int = 0
    unreadable_trajectories: int = 0
    adk_cases: int | None = None
    adk_left_out: int | None = None
    sheet_rows: int | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    sampling: dict[str, Any] = field(default_factory=dict)
    first_bad_record: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in vars(self).items() if k != "inputs"}
        out["inputs"] = self.inputs.to_json()
        return out


def trace_case(trace: Trace, feedback_attributes: Sequence[str] = DEFAULT_FEEDBACK_ATTRIBUTES) -> Case:
    """The case of one grouped trace."""
    if trace.cases:  # an ADK session: whole already (the same id twice: the first by its start)
        return min(trace.cases, key=lambda c: (c.start_ns or 0, len(c.messages)))
    parts = list(trace.parts)
    if trace.spans or trace.logs:
        unique: dict[str, Span] = {}
        for span in trace.spans:  # an export sent twice (a retry, a file given twice) counts once
            unique.setdefault(span.span_id, span)
        parts.insert(
            0,
            parts_from_spans(
                trace.trace_id, list(unique.values()), trace.logs, feedback_attributes=feedback_attributes
            ),
        )
    return case_from_parts(merge_parts(parts))


def _spill_traces(
    inputs: Iterable[str | os.PathLike[str]],
    options: Options,
    report: BuildReport,
    bad: BadRecords,
    keep_trace: Callable[[int], bool] | None,
    progress: Callable[[int], None] | None,
) -> Iterator[tuple[int, Case]]:
    files = input_files(inputs)
    total = 0
    for path in files:
        try:
            total += os.path.getsize(path)
        except OSError:
            pass
    spill = TraceSpill(
        total,
        options.sampling.seed,
        directory=tempfile.mkdtemp(prefix="respeval-traces-", dir=options.tmp_dir) if options.tmp_dir else None,
        keep_trace=keep_trace,
        extra_attributes=options.feedback_attributes,
    )
    try:
        for path in files:
            for record in read_records(path, bad, report.inputs, progress):
                spill.add(record)
        report.records_outside_sample = spill.dropped
        for trace in spill.traces():
            report.traces += 1
            yield trace.u, trace_case(trace, options.feedback_attributes)
    finally:
        spill.cleanup()
        if options.tmp_dir:
            try:
                os.rmdir(spill.directory)
            except OSError:
                pass


def read_cases(
    inputs: Iterable[str | os.PathLike[str]],
    *,
    seed: int = 0,
    on_error: str = "fail",
    errors: Callable[[BadRecord], None] | None = None,
    feedback_attributes: Sequence[str] = DEFAULT_FEEDBACK_ATTRIBUTES,
    tmp_dir: str | None = None,
) -> Iterator[Case]:
    """Every case of the trace files ``inputs`` (files or directories), one per trace, in
    increasing unit-hash order for ``seed`` (see :mod:`respeval.traces.sampling`).  Bad
    records: ``on_error`` (``fail``, ``skip``, ``record``: each handed to ``errors``)."""
    options = Options(
        sampling=Sampling(seed=seed), feedback_attributes=tuple(feedback_attributes), on_error=on_error, tmp_dir=tmp_dir
    )
    report = BuildReport()
    for _, case in _spill_traces(inputs, options, report, BadRecords(on_error, errors), None, None):
        yield case


class _Strata:
    """Stratified selection: a first pass spills eligible cases and counts each stratum, the
    second keeps each stratum's quota of its smallest unit hashes."""

    def __init__(self, sampling: Sampling, tmp_dir: str | None) -> None:
        self.sampling = sampling
        self.sizes: dict[Any, int] = {}
        self.taken: dict[Any, int] = {}
        fd, self.path = tempfile.mkstemp(prefix="respeval-strata-", suffix=".marshal", dir=tmp_dir)
        self.fh = os.fdopen(fd, "wb", buffering=1 << 16)

    def add(self, u: int, case: Case) -> None:
        assert self.sampling.stratify is not None
        if not (self.sampling.keep_errors and case.error is not None):
            key = stratum_of(case.row(), self.sampling.stratify)
            self.sizes[key] = self.sizes.get(key, 0) + 1
        marshal.dump(pickle.dumps((u, case), protocol=pickle.HIGHEST_PROTOCOL), self.fh)

    def selected(self) -> Iterator[tuple[int, Case]]:
        assert self.sampling.stratify is not None
        self.fh.close()
        quotas = {k: self.sampling.quota(n) for k, n in self.sizes.items()}
        try:
            with open(self.path, "rb", buffering=1 << 20) as fh:
                while True:
                    try:
                        u, case = pickle.loads(marshal.load(fh))
                    except EOFError:
                        break
                    if self.sampling.keep_errors and case.error is not None:
                        yield u, case
                        continue
                    key = stratum_of(case.row(), self.sampling.stratify)
                    if self.taken.get(key, 0) < quotas[key]:
                        self.taken[key] = self.taken.get(key, 0) + 1
                        yield u, case
        finally:
            self.cleanup()

    def report(self) -> dict[str, dict[str, int]]:
        return {
            "null" if k is None else str(k): {"cases": n, "kept": self.taken.get(k, 0)}
            for k, n in sorted(self.sizes.items(), key=lambda kv: str(kv[0]))
        }

    def cleanup(self) -> None:
        if not self.fh.closed:
            self.fh.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def from_traces(
    inputs: Iterable[str | os.PathLike[str]],
    *,
    out: str | None = None,
    out_format: str | None = None,
    adk_evalset: str | None = None,
    label_sheet: str | None = None,
    options: Options | None = None,
    errors: Callable[[BadRecord], None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> BuildReport:
    """Build an eval dataset from trace files (see the module docstring).

    ``out`` (``.jsonl``, ``.parquet`` or ``.csv``), ``adk_evalset`` and ``label_sheet`` are
    written when given (each atomically: an existing file is replaced only by a complete
    one).  ``errors`` receives each bad record with ``options.on_error="record"``;
    ``progress`` the input bytes read as reading goes on.
    """
    from respeval.traces.outputs import AdkEvalSetWriter, DatasetWriter, LabelSheetWriter

    options = options or Options()
    sampling = options.sampling
    report = BuildReport()
    report.sampling = {
        "rate": sampling.rate,
        "seed": sampling.seed,
        "keep_errors": sampling.keep_errors,
        "stratify": sampling.stratify,
        "per_stratum": sampling.per_stratum,
        "min_per_stratum": sampling.min_per_stratum if sampling.stratify else None,
        "unit_hash": "blake2b-64(trace_id, key=str(seed))",
    }
    scrubber = None
    if options.scrub_pii:
        from respeval.traces.pii import run_key

        key, origin = (options.pii_key, "given") if options.pii_key is not None else run_key()
        scrubber = Scrubber(key)
        report.pii_key = origin

    def on_bad(record: BadRecord) -> None:
        if report.first_bad_record is None:
            report.first_bad_record = str(record)
        if errors is not None:
            errors(record)

    bad = BadRecords(options.on_error, on_bad, scrub=scrubber.text if scrubber is not None else None)

    # a sample that only the trace id decides drops the others' records as they are read
    keep_trace = None
    if sampling.per_trace and not sampling.keep_errors and not sampling.everything:
        threshold = sampling.threshold
        keep_trace = lambda u: u < threshold  # noqa: E731
    dedupe = NearDuplicates(options.dedupe_threshold, implementation=options.implementation) if options.dedupe else None
    writers: list[Any] = []
    dataset = adk = sheet = None
    strata = None
    try:
        if out is not None:
            dataset = DatasetWriter(out, out_format)
            writers.append(dataset)
            report.outputs["dataset"] = out
        if adk_evalset is not None:
            set_id = os.path.basename(adk_evalset).split(".")[0] or "traces"
            adk = AdkEvalSetWriter(adk_evalset, set_id, "cases built from traces by respeval dataset from-traces")
            writers.append(adk)
            report.outputs["adk_evalset"] = adk_evalset
        if label_sheet is not None:
            sheet = LabelSheetWriter(label_sheet)
            writers.append(sheet)
            report.outputs["label_sheet"] = label_sheet

        def eligible() -> Iterator[tuple[int, Case]]:
            for u, case in _spill_traces(inputs, options, report, bad, keep_trace, progress):
                why = options.filters.reason(case)
                if why is not None:
                    report.filtered_out[why] += 1
                    continue
                report.eligible += 1
                yield u, case

        def sampled() -> Iterator[tuple[int, Case]]:
            nonlocal strata
            if sampling.stratify is not None:
                strata = _Strata(sampling, options.tmp_dir)
                for u, case in eligible():
                    strata.add(u, case)
                yield from strata.selected()
                return
            for u, case in eligible():
                if sampling.member(u, case.error is not None):
                    yield u, case

        pending: list[dict[str, Any]] = []

        def flush() -> None:
            rows = pending
            if dedupe is not None:
                keep = dedupe.keep([dedupe_text(r["messages"], r["prompt"], options.dedupe_on) for r in rows])
                report.near_duplicates += keep.count(False)
                rows = [r for r, k in zip(rows, keep) if k]
            for r in rows:
                if trajectory_problem(r["tool_calls"]) is not None:
                    report.unreadable_trajectories += 1
                if adk is not None:
                    adk.write(r)
                if sheet is not None:
                    sheet.write(r)
            if dataset is not None:
                dataset.write(rows)
            report.written += len(rows)
            pending.clear()

        for _, case in sampled():
            report.sampled += 1
            if case.error is not None:
                report.errors_kept += 1
            row = case.row()
            if scrubber is not None:
                row = scrub_row(row, scrubber)
            pending.append(row)
            if len(pending) >= _BATCH:
                flush()
        flush()
        for w in writers:
            w.commit()
    except BaseException:
        for w in writers:
            w.abort()
        raise
    finally:
        if strata is not None:
            strata.cleanup()
    if strata is not None:
        report.strata = strata.report()
    if dedupe is not None:
        report.dedupe = {
            **dedupe.settings(),
            "on": options.dedupe_on,
            "compared": dedupe.compared,
            "without_text": dedupe.without_text,
        }
    if scrubber is not None:
        report.pii = scrubber.report()
    if adk is not None:
        report.adk_cases, report.adk_left_out = adk.cases, adk.left_out
    if sheet is not None:
        report.sheet_rows = sheet.rows
    return report


_HEX = frozenset("0123456789abcdef")


def scrub_row(row: dict[str, Any], scrubber: Scrubber) -> dict[str, Any]:
    """A case row with PII replaced in every field but the OTLP trace id and the start time."""
    out = {}
    for name, value in row.items():
        if name == "trace_id" and isinstance(value, str) and len(value) == 32 and _HEX.issuperset(value):
            out[name] = value  # an OTLP trace id: random hex, nothing to scrub
        elif name == "start_time":
            out[name] = value
        else:
            out[name] = scrubber.value(value)
    return out
