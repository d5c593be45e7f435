"""Grouping the records of every trace, however they are spread over lines and files, in
memory that does not grow with the input.

A trace's spans arrive in any order: children before parents (an exporter sends a span when
it ends), one trace across many requests and files, files shuffled or split.  So the records
are partitioned first: each goes to one of 2**k temporary bucket files, chosen by the top k
bits of its trace's unit hash (:func:`respeval.traces.sampling.unit_hash`); then one bucket
at a time is read back, grouped by trace and sorted by ``(u, trace_id)``.  Buckets are
ranges of ``u``, so the traces come out in increasing ``(u, trace_id)`` order whatever k is.
Memory holds one bucket's records: k is chosen from the input's size so that a bucket holds
about :data:`BUCKET_BYTES` of input.

Records are written with :mod:`marshal` (spans and log events as tuples of plain values;
chat-log parts and whole cases pickled), and only the attributes a case is built from are
kept (see :data:`KEPT_PREFIXES`).
"""

from __future__ import annotations

import marshal
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from respeval.traces.case import Case, TraceParts
from respeval.traces.otlp import LogEvent, Span, SpanEvent
from respeval.traces.sampling import unit_hash

__all__ = [
    "BUCKET_BYTES",
    "KEPT_PREFIXES",
    "Trace",
    "TraceSpill",
    "add_decoded",
    "bucket_bits",
    "encode_record",
    "kept_attribute",
]

BUCKET_BYTES = 8 << 20  # input bytes per bucket
MAX_BUCKET_BITS = 9  # 512 bucket files open at once
KEPT_PREFIXES = (
    "gen_ai.",
    "llm.",
    "openinference.",
    "input.",
    "output.",
    "tool.",
    "tool_call.",
    "error.",
    "exception.",
    "http.route",
    "annotations.",
    "trace.annotations.",
    "evaluations.",
    "trace.evaluations.",
    "session.",
    "user.",
    "feedback",
    "user_feedback",
)


def bucket_bits(input_bytes: int) -> int:
    """k such that 2**k buckets hold about :data:`BUCKET_BYTES` of input each."""
    k = 0
    while k < MAX_BUCKET_BITS and (input_bytes >> k) > BUCKET_BYTES:
        k += 1
    return k


@dataclass
class Trace:
    """All the records of one trace."""

    trace_id: str
    u: int
    spans: list[Span] = field(default_factory=list)
    logs: list[tuple[str, SpanEvent]] = field(default_factory=list)
    parts: list[TraceParts] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)


def _events(events: list[SpanEvent]) -> list[tuple]:
    """The events a case is built from: GenAI events whole, exceptions' own attributes."""
    out = []
    for e in events:
        if e.name.startswith("gen_ai."):
            out.append((e.name, e.time_ns, e.attributes, e.body))
        elif e.name == "exception":
            out.append((e.name, e.time_ns, {k: v for k, v in e.attributes.items() if k.startswith("exception.")}, None))
    return out


def kept_attribute(key: str, extra: frozenset[str] = frozenset()) -> bool:
    """Whether a span attribute is one a case is built from (see :data:`KEPT_PREFIXES`)."""
    return key.startswith(KEPT_PREFIXES) or key in extra


def encode_record(
    record: Span | LogEvent | TraceParts | Case, keep: Callable[[str], bool] = kept_attribute
) -> tuple[str, Any]:
    """``(trace_id, data)``: the record as plain values :mod:`marshal` writes (spans and log
    events as tuples, keeping the attributes ``keep`` accepts; chat-log parts and whole cases
    pickled).  :func:`add_decoded` reads it back into a :class:`Trace`."""
    if type(record) is Span:
        data: Any = (
            "s",
            record.trace_id,
            record.span_id,
            record.parent_id,
            record.name,
            record.kind,
            record.start_ns,
            record.end_ns,
            record.status_code,
            record.status_message,
            {k: v for k, v in record.attributes.items() if keep(k)},
            _events(record.events),
            record.service,
            record.source,
        )
        return record.trace_id, data
    if type(record) is LogEvent:
        e = record.event
        data = ("l", record.trace_id, record.span_id, (e.name, e.time_ns, e.attributes, e.body), record.service)
        return record.trace_id, data
    return record.trace_id, ("p", record.trace_id, pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))


def add_decoded(trace: Trace, data: Any) -> None:
    """Add one record written by :func:`encode_record` to its trace."""
    tag = data[0]
    if tag == "s":
        events = [SpanEvent(*e) for e in data[11]]
        trace.spans.append(
            Span(
                data[1],
                data[2],
                data[3],
                data[4],
                data[5],
                data[6],
                data[7],
                data[8],
                data[9],
                data[10],
                events,
                data[12],
                data[13],
            )  # fmt: skip
        )
    elif tag == "l":
        trace.logs.append((data[2], SpanEvent(*data[3])))
    else:
        obj = pickle.loads(data[2])
        (trace.cases if isinstance(obj, Case) else trace.parts).append(obj)


class TraceSpill:
    """Partition records by trace into bucket files under ``directory`` (a temporary
    directory by default), then read the traces back in ``(u, trace_id)`` order.

    ``keep_trace(u)`` (optional) drops the records of traces it refuses as they arrive (a
    sample decided by the trace id alone needs no room for the rest)."""

    def __init__(
        self,
        input_bytes: int,
        seed: int,
        *,
        directory: str | None = None,
        keep_trace: Callable[[int], bool] | None = None,
        extra_attributes: Sequence[str] = (),
    ) -> None:
        self.bits = bucket_bits(input_bytes)
        self.seed = seed
        self.keep_trace = keep_trace
        self._owned = directory is None
        self.directory = tempfile.mkdtemp(prefix="respeval-traces-") if directory is None else directory
        if directory is not None:
            os.makedirs(directory, exist_ok=True)
        self._files: list[IO[bytes] | None] = [None] * (1 << self.bits)
        self._paths = [os.path.join(self.directory, f"bucket-{i:04d}.marshal") for i in range(1 << self.bits)]
        self._hashes: dict[str, int] = {}
        self._extra = frozenset(extra_attributes)
        self.records = 0
        self.dropped = 0

    # ------------------------------------------------------------------ writing
    def _keep(self, key: str) -> bool:
        return kept_attribute(key, self._extra)

    def _u(self, trace_id: str) -> int:
        u = self._hashes.get(trace_id)
        if u is None:
            if len(self._hashes) > 4096:
                self._hashes.clear()  # a cache of recent ids: records of one trace come together
            u = self._hashes[trace_id] = unit_hash(trace_id, self.seed)
        return u

    def add(self, record: Span | LogEvent | TraceParts | Case) -> None:
        trace_id, data = encode_record(record, self._keep)
        u = self._u(trace_id)
        if self.keep_trace is not None and not self.keep_trace(u):
            self.dropped += 1
            return
        bucket = u >> (64 - self.bits) if self.bits else 0
        fh = self._files[bucket]
        if fh is None:
            fh = self._files[bucket] = open(self._paths[bucket], "ab", buffering=1 << 16)
        marshal.dump(data, fh)
        self.records += 1

    # ------------------------------------------------------------------ reading
    def _bucket(self, i: int) -> dict[str, Trace]:
        traces: dict[str, Trace] = {}
        if not os.path.exists(self._paths[i]):
            return traces
        with open(self._paths[i], "rb", buffering=1 << 20) as fh:
            while True:
                try:
                    data = marshal.load(fh)
                except EOFError:
                    break
                trace_id = data[1]
                trace = traces.get(trace_id)
                if trace is None:
                    trace = traces[trace_id] = Trace(trace_id, self._u(trace_id))
                add_decoded(trace, data)
        return traces

    def traces(self) -> Iterator[Trace]:
        """Every trace, in increasing ``(u, trace_id)`` order (closes the bucket files first)."""
        self.close_files()
        for i in range(len(self._paths)):
            bucket = self._bucket(i)
            yield from sorted(bucket.values(), key=lambda t: (t.u, t.trace_id))
            del bucket
            try:
                os.unlink(self._paths[i])
            except FileNotFoundError:
                pass

    def close_files(self) -> None:
        for i, fh in enumerate(self._files):
            if fh is not None:
                fh.close()
                self._files[i] = None

    def cleanup(self) -> None:
        self.close_files()
        if self._owned:
            shutil.rmtree(self.directory, ignore_errors=True)
        else:
            for p in self._paths:
                try:
                    os.unlink(p)
                except FileNotFoundError:
                    pass

    def __enter__(self) -> TraceSpill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
