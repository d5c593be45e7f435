"""Reading what is new in the source into the store, with the checkpoint in the same
transaction.

Files are read with :mod:`respeval.traces.sources` (the one reader of trace formats): a
JSON-lines file from the byte offset where the last read stopped, whole lines only (a line
still being written waits for the next poll); a JSON document once it parses whole (read
again only when its size or modification time changes).  A file whose device or inode
changed, or that got shorter, is a new file (rotated or truncated) and is read from the
start.

Each record goes to its trace's time window (the window of the trace's earliest start read
so far, see :meth:`MonitorConfig.window_of`).  The **watermark** is the latest span end read;
window ``w`` is closed once the watermark reaches its end plus the lateness.  A record is
**late**, counted and dropped, when its trace belongs to a closed window already (scored or
left out: a trace is scored once) or, for a trace not seen before, when its window is
closed.  Which records are late depends only on the order of the lines read (the watermark
moves after each line), never on when a poll ran or a process was killed, so a run that was
killed and rerun decides exactly what an uninterrupted one does.

With a sample decided by the trace id alone (a rate, without ``all_failures`` or strata), the
records of traces outside the sample are dropped as they are read, as ``dataset
from-traces`` does.

Every ``batch_lines`` lines (and at the end of each file) the records, the traces' windows,
the bad records, the file's offset and the counters are committed in one transaction.

**Scale-out** (``engine=``, a ``dask.distributed.Client``): the decoding of JSON-lines files,
where the time goes, is partitioned over the cluster — one task per file's new lines, or per
slice of ``slice_bytes`` of a larger one, cut at line ends — and the decoded lines are applied
here in file and line order, as one process reads them, so the store is the single process's
(windows, watermark and late records depend only on that order).  JSON documents are read
here.  Workers need the source's path (a shared file system).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.io.files import describe_os_error
from respeval.monitor.config import MonitorConfig
from respeval.monitor.store import FileState, Store
from respeval.traces.case import Case, TraceParts
from respeval.traces.errors import BadRecord, BadRecords, TraceInputError
from respeval.traces.otlp import LogEvent, Span
from respeval.traces.sampling import unit_hash
from respeval.traces.sources import DOCUMENT, JSON_LINES, Record, file_kind, input_files, read_appended, read_document
from respeval.traces.spill import encode_record, kept_attribute

__all__ = ["IngestReport", "Reader", "decode_lines", "record_times", "source_files"]

BATCH_LINES = 2000
SLICE_BYTES = 8 << 20  # the new lines of a file decoded by one task of the scale-out
_SCAN = 1 << 20


DecodedLine = tuple[int, int, list[Record], list[BadRecord]]


def decode_lines(path: str, start: int, end: int, line: int) -> list[DecodedLine]:
    """The lines of ``path`` in the byte range ``[start, end)`` (whole lines; ``line`` lines
    before ``start``), decoded: ``(offset after the line, its number, its records, its bad
    records)`` each.  A scale-out task (pure: it reads the file and returns data)."""
    out: list[DecodedLine] = []
    bad: list[BadRecord] = []
    if end <= start:
        return out
    for offset, number, records in read_appended(path, start, line, bad.append, max_bytes=end - start):
        out.append((offset, number, records, bad[:]))
        bad.clear()
    return out


def line_slices(path: str, start: int, line: int, size: int, slice_bytes: int) -> list[tuple[int, int, int]]:
    """``[(start, end, lines before start), ...]``: the complete lines of ``path`` between byte
    ``start`` and ``size`` cut into slices of about ``slice_bytes``, each ending at a newline."""
    slices: list[tuple[int, int, int]] = []
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise TraceInputError(describe_os_error(exc, path)) from exc
    with fh:
        fh.seek(start)
        first, first_line, pos, lines, last_end, last_lines = start, line, start, line, start, line
        while pos < size:
            block = fh.read(min(_SCAN, size - pos))
            if not block:
                break
            at = 0
            while True:
                nl = block.find(b"\n", at)
                if nl < 0:
                    break
                lines += 1
                at = nl + 1
                last_end, last_lines = pos + at, lines
                if last_end - first >= slice_bytes:
                    slices.append((first, last_end, first_line))
                    first, first_line = last_end, last_lines
            pos += len(block)
        if last_end > first:
            slices.append((first, last_end, first_line))
    return slices


def source_files(sources: Sequence[str]) -> list[str]:
    """The trace files of ``sources`` now (a directory with none yet is no error)."""
    out: list[str] = []
    for source in sources:
        if os.path.isdir(source):
            try:
                out.extend(input_files([source]))
            except TraceInputError:
                continue  # no trace file in it yet
        else:
            out.extend(input_files([source]))
    return sorted(dict.fromkeys(out))


def record_times(record: Record) -> tuple[int | None, int | None]:
    """(start, end) in nanoseconds of one record."""
    if type(record) is Span:
        return record.start_ns or None, record.end_ns or record.start_ns or None
    if type(record) is LogEvent:
        t = record.event.time_ns or None
        return t, t
    if isinstance(record, TraceParts):
        return record.start_ns, record.end_ns or record.start_ns
    if isinstance(record, Case):
        start = record.start_ns
        end = start + round(record.latency_s * 1e9) if start and record.latency_s else start
        return start, end
    return None, None


@dataclass
class IngestReport:
    """What one poll read (counts only)."""

    files: int = 0
    new_files: int = 0
    bytes: int = 0
    lines: int = 0
    records: int = 0
    late: int = 0
    outside_sample: int = 0
    untimed: int = 0
    bad: int = 0
    restarted: list[str] = field(default_factory=list)  # files read again from the start (rotated, truncated)
    incomplete: list[str] = field(default_factory=list)  # JSON documents that do not parse yet (being written?)

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


class Reader:
    """Reads the source into the store (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        config: MonitorConfig,
        sources: Sequence[str],
        *,
        errors: Callable[[BadRecord], None] | None = None,
        progress: Callable[[int], None] | None = None,
        batch_lines: int = BATCH_LINES,
        engine: Any = None,
        slice_bytes: int = SLICE_BYTES,
    ) -> None:
        self.engine = engine  # a dask.distributed.Client: the decoding partitioned over it
        self.slice_bytes = slice_bytes
        self.store = store
        self.config = config
        self.sources = list(sources)
        self.progress = progress
        self.batch_lines = batch_lines
        self.pending = store.pending()  # trace id -> (window, start_ns)
        self.counters = store.counters()
        self._errors = errors
        sampling = config.sampling
        self.keep_trace: Callable[[int], bool] | None = None
        if sampling.per_trace and not sampling.keep_errors and not sampling.everything:
            threshold = sampling.threshold
            self.keep_trace = lambda u: u < threshold
        extra = frozenset(config.feedback_attributes)
        self._keep_attribute = lambda key: kept_attribute(key, extra)
        self._hashes: dict[str, int] = {}
        # the batch being read: committed together
        self._records: list[tuple[str, Any]] = []
        self._moved: dict[str, tuple[int, int]] = {}
        self._bad: list[BadRecord] = []
        self._handled_cache: dict[str, bool] = {}

    # ------------------------------------------------------------------ records
    def _u(self, trace_id: str) -> int:
        u = self._hashes.get(trace_id)
        if u is None:
            if len(self._hashes) > 4096:
                self._hashes.clear()
            u = self._hashes[trace_id] = unit_hash(trace_id, self.config.sampling.seed)
        return u

    def _policy(self) -> Callable[[BadRecord], None]:
        """The bad-record policy: ``fail`` raises at the first, ``skip`` counts, ``record``
        counts and keeps each (file, line, field, reason) in the store, committed with the
        offset of its line."""
        scrub = None
        if self.config.scrub_pii and self.config.pii_key is not None:
            from respeval.traces.pii import Scrubber

            scrub = Scrubber(self.config.pii_key).text
        inner = BadRecords(self.config.on_error, self._bad.append, scrub=scrub)

        def policy(record: BadRecord) -> None:
            inner(record)
            self.counters["bad_records"] += 1
            if self._errors is not None:
                self._errors(record)

        return policy

    def _handled(self, trace_id: str) -> bool:
        known = self._handled_cache.get(trace_id)
        if known is None:
            if len(self._handled_cache) > 65536:
                self._handled_cache.clear()
            known = self._handled_cache[trace_id] = self.store.handled(trace_id)
        return known

    def _add(self, record: Record, watermark: int, report: IngestReport) -> int:
        """Place one record; returns its end time (0 when it was dropped)."""
        config = self.config
        trace_id = record.trace_id
        if self.keep_trace is not None and not self.keep_trace(self._u(trace_id)):
            self.counters["outside_sample"] += 1
            report.outside_sample += 1
            return 0
        start, end = record_times(record)
        if not start:
            self.counters["untimed"] += 1
            report.untimed += 1
            return 0
        window = config.window_of(start)
        current = self.pending.get(trace_id)
        if current is None:
            if self._handled(trace_id) or config.closed(window, watermark):
                self.counters["late_records"] += 1
                report.late += 1
                return 0
            self.pending[trace_id] = self._moved[trace_id] = (window, start)
            first = self.counters["first_window"]
            if first < 0 or window < first:
                self.counters["first_window"] = window
        elif start < current[1] and window < current[0] and not config.closed(window, watermark):
            # an earlier span of the trace: the trace starts in an earlier, still open window
            self.pending[trace_id] = self._moved[trace_id] = (window, start)
            if window < self.counters["first_window"]:
                self.counters["first_window"] = window
        self._records.append(encode_record(record, self._keep_attribute))
        self.counters["records"] += 1
        report.records += 1
        return end or start

    def _line(self, records: list[Record], report: IngestReport) -> None:
        unknown = {
            r.trace_id for r in records if r.trace_id not in self.pending and r.trace_id not in self._handled_cache
        }
        if unknown:  # one query for the line's new traces (a line holds many spans)
            if len(self._handled_cache) > 65536:
                self._handled_cache.clear()
            handled = self.store.handled_among(unknown)
            for trace_id in unknown:
                self._handled_cache[trace_id] = trace_id in handled
        watermark = self.counters["watermark_ns"]
        latest = watermark
        for record in records:
            latest = max(latest, self._add(record, watermark, report))
        self.counters["watermark_ns"] = latest  # moves after the line: late is decided line by line

    def _commit(self, state: FileState) -> None:
        store = self.store
        with store.transaction():
            store.add_records(self._records)
            store.write_pending((t, w, s) for t, (w, s) in self._moved.items())
            store.add_bad(self._bad)
            store.write_file(state)
            store.write_counters(self.counters)
        store.reload_counters()
        self._records.clear()
        self._moved.clear()
        self._bad.clear()

    # ------------------------------------------------------------------ files
    def poll(self, *, final: bool = False) -> IngestReport:
        """Read everything new in the source once.  A JSON document that does not parse is
        taken to be still being written and is read again at the next poll; ``final`` (the
        source is complete) makes it a bad record."""
        report = IngestReport()
        known = self.store.files()
        policy = self._policy()
        bad_before = self.counters["bad_records"]
        for path in source_files(self.sources):
            try:
                st = os.stat(path)
            except FileNotFoundError:
                continue  # gone between the listing and now (rotated away)
            state = known.get(path)
            report.files += 1
            if state is None:
                state = FileState(path)
                report.new_files += 1
            elif (state.dev, state.ino) != (st.st_dev, st.st_ino) or st.st_size < state.offset:
                report.restarted.append(path)
                state = FileState(path)
            state.dev, state.ino = st.st_dev, st.st_ino
            if state.kind is None:
                state.kind = file_kind(path)
                if state.kind is None and final and st.st_size > 0:
                    state.kind = DOCUMENT  # the source is complete: what does not parse is bad
                if state.kind is None:
                    continue  # empty, or a first line still being written
            if state.kind == DOCUMENT:
                if state.done and (state.size, state.mtime_ns) == (st.st_size, st.st_mtime_ns):
                    continue
                self._document(path, state, st, policy, report, final)
            elif state.kind == JSON_LINES:
                if st.st_size == state.offset and state.size == st.st_size:
                    continue
                self._lines(path, state, st, policy, report)
        report.bad = self.counters["bad_records"] - bad_before
        return report

    def _document(
        self, path: str, state: FileState, st: os.stat_result, policy: Any, report: IngestReport, final: bool
    ) -> None:
        try:
            records = read_document(path, policy)
        except TraceInputError as exc:
            if not final:
                report.incomplete.append(path)
                return
            records = []
            policy(BadRecord(path, None, None, str(exc).removeprefix(f"{path}: ")))
        self._line(records, report)
        report.bytes += st.st_size
        report.lines += 1
        state.done, state.size, state.mtime_ns, state.offset = True, st.st_size, st.st_mtime_ns, st.st_size
        self._commit(state)
        if self.progress is not None:
            self.progress(st.st_size)

    def _lines(self, path: str, state: FileState, st: os.stat_result, policy: Any, report: IngestReport) -> None:
        if self.engine is not None:
            decoded: Iterator[DecodedLine] = self._decoded_on_cluster(path, state, st)
        else:  # bad records go to the policy as they are read (each before its line's records)
            decoded = ((o, n, r, []) for o, n, r in read_appended(path, state.offset, state.line, policy))
        start_offset = state.offset
        count = 0
        for offset, line, records, bad in decoded:
            for record in bad:
                policy(record)
            self._line(records, report)
            state.offset, state.line = offset, line
            count += 1
            report.lines += 1
            if count >= self.batch_lines:
                state.size, state.mtime_ns = st.st_size, st.st_mtime_ns
                self._commit(state)
                if self.progress is not None:
                    self.progress(state.offset - start_offset)
                start_offset = state.offset
                count = 0
        report.bytes += state.offset - start_offset
        state.size, state.mtime_ns = st.st_size, st.st_mtime_ns
        self._commit(state)
        if self.progress is not None:
            self.progress(state.offset - start_offset)

    def _decoded_on_cluster(self, path: str, state: FileState, st: os.stat_result) -> Iterator[DecodedLine]:
        """The file's new lines decoded by the cluster's tasks, in order; a few tasks ahead
        of the one being applied, so memory stays bounded on a long backlog."""
        slices = line_slices(path, state.offset, state.line, st.st_size, self.slice_bytes)
        ahead = 2 * max(1, len(self.engine.scheduler_info().get("workers", {})))
        futures: deque[Any] = deque()
        for piece in slices:
            futures.append(self.engine.submit(decode_lines, path, *piece, pure=False))
            if len(futures) >= ahead:
                yield from futures.popleft().result()
        while futures:
            yield from futures.popleft().result()

    def closed(self, trace_ids: Sequence[str]) -> None:
        """The traces of a window just scored (committed): no longer pending, handled."""
        for trace_id in trace_ids:
            self.pending.pop(trace_id, None)
            self._handled_cache[trace_id] = True

    def drain(self) -> int:
        """Treat the source as complete: move the watermark past every window with pending
        traces (committed), so that all of them close.  Returns the new watermark."""
        windows = self.store.pending_windows()
        if windows:
            config = self.config
            target = (windows[-1] + 1) * config.window_ns + config.lateness_ns
            if target > self.counters["watermark_ns"]:
                self.counters["watermark_ns"] = target
                with self.store.transaction():
                    self.store.write_counters(self.counters)
                self.store.reload_counters()
        return self.counters["watermark_ns"]
