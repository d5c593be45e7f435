"""A trace record that cannot be read: where it is (file, line, the field inside the record)
and why; and what to do with one (``fail``, ``skip`` or ``record``, :data:`respeval.io.ON_ERROR`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from respeval.io.errors import InputError, check_on_error

__all__ = ["BadRecord", "BadRecords", "TraceInputError"]


@dataclass(frozen=True)
class BadRecord:
    """One bad record.  ``line`` is the 1-based line of a JSON-lines file, or None for a
    whole-document file (an OTLP/HTTP payload, an ADK session), where ``field`` (a JSON
    path such as ``resourceSpans[0].scopeSpans[0].spans[3].traceId``) says where."""

    path: str
    line: int | None
    field: str | None
    reason: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        what = f"{self.field}: " if self.field else ""
        return f"{where}: {what}{self.reason}"

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "field": self.field, "reason": self.reason}


class TraceInputError(InputError):
    """A trace file that cannot be read, or (``on_error="fail"``) its first bad record."""

    def __init__(self, message: str, record: BadRecord | None = None) -> None:
        super().__init__(message)
        self.record = record


class BadRecords:
    """The policy for bad records: ``fail`` raises :class:`TraceInputError` at the first,
    ``skip`` counts them, ``record`` counts them and hands each to ``sink`` (e.g. a writer of
    an errors file).  ``count`` and ``first`` say what was seen; ``scrub`` (the PII
    scrubber's) rewrites every reason before anything else sees it."""

    def __init__(
        self,
        on_error: str = "fail",
        sink: Callable[[BadRecord], None] | None = None,
        scrub: Callable[[str], str] | None = None,
    ) -> None:
        self.on_error = check_on_error(on_error)
        self.sink = sink
        self.scrub = scrub  # applied to every reason first (a reason may quote the bad value)
        self.count = 0
        self.first: BadRecord | None = None

    def __call__(self, record: BadRecord) -> None:
        if self.scrub is not None:
            record = BadRecord(record.path, record.line, record.field, self.scrub(record.reason))
        self.count += 1
        if self.first is None:
            self.first = record
        if self.on_error == "fail":
            raise TraceInputError(
                f"{record} (fix the record, or rerun with --on-error skip to leave bad records out)", record
            )
        if self.on_error == "record" and self.sink is not None:
            self.sink(record)
