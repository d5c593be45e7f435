"""Trace files in, records out: which files, which format, one record at a time.

An input is a file or a directory (every ``*.jsonl``, ``*.ndjson`` and ``*.json`` below it,
in path order; hidden files and directories are skipped).  A file's format is read from its
content, not its name:

* JSON lines (the first non-blank line is a whole JSON value): each line an OTLP export
  request (``resourceSpans`` / ``resourceLogs``: the collector's file exporter) or an OpenAI
  chat-completions log line (``{request, response}``);
* a JSON document (pretty-printed, or one line): an OTLP/HTTP JSON payload, a list of them,
  or an ADK session dump (``{id, app_name, events, ...}``).

A file that grows (a collector appending export requests, a directory that gets new files)
is read where the last read stopped: :func:`file_kind` says what a file is once that can be
told, :func:`read_appended` yields the records of each complete line after a byte offset
(with the offset and line after it, what a checkpoint stores), and :func:`read_document`
reads a JSON document once it parses whole.

Every bad record calls the :class:`~respeval.traces.errors.BadRecords` policy with its file,
line (JSON lines) and field; a file that cannot be read at all raises
:class:`~respeval.traces.errors.TraceInputError`.  Lines are read one at a time: memory does
not grow with the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Union

from respeval.io.errors import RowError
from respeval.io.files import describe_os_error
from respeval.io.readers import NESTED_TOO_DEEPLY, lone_surrogate, parse_json_line, type_name
from respeval.traces.case import Case, TraceParts
from respeval.traces.errors import BadRecord, BadRecords, TraceInputError
from respeval.traces.otlp import BadField, LogEvent, Span, is_payload, payload_records

__all__ = [
    "DOCUMENT",
    "EXTENSIONS",
    "JSON_LINES",
    "Record",
    "SourceStats",
    "file_kind",
    "input_files",
    "read_appended",
    "read_document",
    "read_records",
]

EXTENSIONS = (".jsonl", ".ndjson", ".json")
_BUFFER = 1 << 20

# what a file yields: spans and GenAI log events (OTLP), one model call's trace parts (a
# chat-completions log line), or a whole case (an ADK session)
Record = Union[Span, LogEvent, TraceParts, Case]


@dataclass
class SourceStats:
    """What was read (counts only)."""

    files: int = 0
    bytes: int = 0
    lines: int = 0
    requests: int = 0  # OTLP export requests
    spans: int = 0
    log_events: int = 0
    chat_lines: int = 0
    sessions: int = 0
    bad_records: int = 0
    formats: dict[str, int] = field(default_factory=dict)  # files per format

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


def input_files(inputs: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The files of ``inputs`` (files as given; directories walked, see the module docstring)."""
    files: list[str] = []
    for raw in inputs:
        path = os.fspath(raw)
        if os.path.isdir(path):
            found: list[str] = []
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found.extend(
                    os.path.join(root, n) for n in names if not n.startswith(".") and n.lower().endswith(EXTENSIONS)
                )
            if not found:
                raise TraceInputError(
                    f"{path}: a directory with no trace files (expected {', '.join('*' + e for e in EXTENSIONS)} in it)"
                )
            files.extend(sorted(found))
        elif os.path.exists(path):
            if not os.path.isfile(path) and not path.startswith("/dev/"):
                raise TraceInputError(f"{path}: not a regular file")
            files.append(path)
        else:
            raise TraceInputError(f"{path}: no such file or directory")
    return files


def _line_records(
    obj: Any, path: str, number: int, bad: Callable[[BadRecord], None], stats: SourceStats
) -> Iterator[Record]:
    source = f"{path}:{number}"
    if is_payload(obj):
        stats.requests += 1

        def bad_field(where: str, reason: str) -> None:
            bad(BadRecord(path, number, where, reason))

        for record in payload_records(obj, source, bad_field):
            if type(record) is Span:
                stats.spans += 1
            else:
                stats.log_events += 1
            yield record
        return
    from respeval.traces.chatlogs import chat_parts, is_chat_log

    if is_chat_log(obj):
        stats.chat_lines += 1
        try:
            yield chat_parts(obj)
        except BadField as exc:
            bad(BadRecord(path, number, exc.field, exc.reason))
        return
    keys = ", ".join(repr(k) for k in list(obj)[:6]) if isinstance(obj, dict) else type_name(obj)
    bad(
        BadRecord(
            path,
            number,
            None,
            f"neither an OTLP export request (resourceSpans / resourceLogs) nor a chat-completions log line "
            f"({{request, response}}); the record has {keys}",
        )
    )


def _document_records(text: str, path: str, bad: Callable[[BadRecord], None], stats: SourceStats) -> Iterator[Record]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceInputError(
            f"{path}:{exc.lineno}: malformed JSON: {exc.msg} (column {exc.colno}); a trace file is JSON lines "
            "(one OTLP request or chat log per line) or one JSON document (an OTLP/HTTP payload, an ADK session)"
        ) from None
    except RecursionError:
        raise TraceInputError(f"{path}: {NESTED_TOO_DEEPLY}") from None
    problem = lone_surrogate(doc, text)  # the one rule of every reader (respeval.io.readers)
    if problem is not None:
        raise TraceInputError(f"{path}: {problem[1]}")
    from respeval.traces.adk import is_session, session_case

    if is_session(doc):
        stats.sessions += 1
        stats.formats["adk_session"] = stats.formats.get("adk_session", 0) + 1
        from respeval.agents.loaders import AgentDataError

        try:
            yield session_case(path)
        except AgentDataError as exc:
            bad(BadRecord(path, None, None, str(exc).removeprefix(f"{path}: ").removeprefix(f"{path}, ")))
        return
    payloads = doc if isinstance(doc, list) else [doc]
    stats.formats["otlp_json"] = stats.formats.get("otlp_json", 0) + 1
    for i, payload in enumerate(payloads):
        prefix = f"[{i}]." if isinstance(doc, list) else ""
        if not is_payload(payload):
            what = type_name(payload)
            bad(
                BadRecord(
                    path,
                    None,
                    prefix.rstrip(".") or None,
                    f"not an OTLP export request, chat log or ADK session ({what})",
                )
            )
            continue
        stats.requests += 1

        def bad_field(where: str, reason: str, prefix: str = prefix) -> None:
            bad(BadRecord(path, None, prefix + where, reason))

        for record in payload_records(payload, path, bad_field):
            if type(record) is Span:
                stats.spans += 1
            else:
                stats.log_events += 1
            yield record


def _counting(bad: BadRecords | Callable[[BadRecord], None], stats: SourceStats) -> Callable[[BadRecord], None]:
    """``bad``, counting each bad record in ``stats`` first."""

    def on_bad(record: BadRecord) -> None:
        stats.bad_records += 1
        bad(record)

    return on_bad


def _open_trace(path: str) -> BinaryIO:
    try:
        return open(path, "rb", buffering=_BUFFER)
    except OSError as exc:
        raise TraceInputError(describe_os_error(exc, path)) from exc


def read_records(
    path: str,
    bad: BadRecords | Callable[[BadRecord], None],
    stats: SourceStats | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Record]:
    """Every record of one trace file (see the module docstring).  ``progress`` is called
    with the bytes read since its last call."""
    stats = stats if stats is not None else SourceStats()
    stats.files += 1

    on_bad = _counting(bad, stats)
    with _open_trace(path) as fh:
        try:
            first_number, first = 0, b""
            for number, raw in enumerate(fh, 1):
                stats.bytes += len(raw)
                if raw.strip():
                    first_number, first = number, raw
                    break
            if not first:
                stats.formats["empty"] = stats.formats.get("empty", 0) + 1
                return
            parsed = parse_json_line(first, path, first_number)
            from respeval.traces.adk import is_session

            if isinstance(parsed, RowError) or is_session(parsed):
                rest = fh.read()
                stats.bytes += len(rest)
                if progress is not None:
                    progress(len(first) + len(rest))
                try:
                    text = (first + rest).decode("utf-8-sig")
                except UnicodeDecodeError as exc:
                    raise TraceInputError(
                        f"{path}: not UTF-8 (byte 0x{(first + rest)[exc.start]:02x} at offset {exc.start})"
                    ) from None
                yield from _document_records(text, path, on_bad, stats)
                return
            stats.formats["jsonl"] = stats.formats.get("jsonl", 0) + 1
            stats.lines += 1
            yield from _line_records(parsed, path, first_number, on_bad, stats)
            pending = len(first)
            for number, raw in enumerate(fh, first_number + 1):
                size = len(raw)
                stats.bytes += size
                pending += size
                if progress is not None and pending >= _BUFFER:
                    progress(pending)
                    pending = 0
                if not raw.strip():
                    continue  # blank lines between requests: the collector never writes them, a cat of files may
                stats.lines += 1
                obj = parse_json_line(raw, path, number)
                if isinstance(obj, RowError):
                    on_bad(BadRecord(path, number, None, obj.reason))
                    continue
                yield from _line_records(obj, path, number, on_bad, stats)
            if progress is not None and pending:
                progress(pending)
        except OSError as exc:
            raise TraceInputError(describe_os_error(exc, path)) from exc


# --------------------------------------------------------------------------- growing files

JSON_LINES, DOCUMENT = "jsonl", "document"


def file_kind(path: str) -> str | None:
    """:data:`JSON_LINES` or :data:`DOCUMENT` (see the module docstring), or None while it
    cannot be told yet (an empty file, a first line still being written that is no JSON
    document either).  Raises :class:`TraceInputError` when the file cannot be read."""
    try:
        with open(path, "rb", buffering=_BUFFER) as fh:
            first = b""
            number = 0
            for raw in fh:
                number += 1
                if raw.strip():
                    first = raw
                    break
            if not first:
                return None
            complete = first.endswith(b"\n")
            parsed = parse_json_line(first, path, number)
            from respeval.traces.adk import is_session

            if complete and not isinstance(parsed, RowError) and not is_session(parsed):
                return JSON_LINES
            rest = first + fh.read()
    except OSError as exc:
        raise TraceInputError(describe_os_error(exc, path)) from exc
    try:
        json.loads(rest.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return DOCUMENT if complete else None  # a whole first line that is no JSON: a document still being written
    return DOCUMENT


def read_appended(
    path: str,
    offset: int,
    line: int,
    bad: BadRecords | Callable[[BadRecord], None],
    stats: SourceStats | None = None,
    *,
    max_bytes: int | None = None,
) -> Iterator[tuple[int, int, list[Record]]]:
    """The records of a JSON-lines trace file after byte ``offset`` (``line`` lines before
    it), line by line: ``(offset, line, records)`` after each complete line (one ending in a
    newline; a last line still being written is left for the next read).  Stops after about
    ``max_bytes`` when given.  Bad records go to ``bad`` named with their line."""
    stats = stats if stats is not None else SourceStats()

    on_bad = _counting(bad, stats)
    with _open_trace(path) as fh:
        try:
            fh.seek(offset)
            read = 0
            for raw in fh:
                if not raw.endswith(b"\n"):
                    return  # still being written
                size = len(raw)
                offset += size
                line += 1
                read += size
                stats.bytes += size
                records: list[Record] = []
                if raw.strip():
                    stats.lines += 1
                    obj = parse_json_line(raw, path, line)
                    if isinstance(obj, RowError):
                        on_bad(BadRecord(path, line, None, obj.reason))
                    else:
                        records.extend(_line_records(obj, path, line, on_bad, stats))
                yield offset, line, records
                if max_bytes is not None and read >= max_bytes:
                    return
        except OSError as exc:
            raise TraceInputError(describe_os_error(exc, path)) from exc


def read_document(
    path: str, bad: BadRecords | Callable[[BadRecord], None], stats: SourceStats | None = None
) -> list[Record]:
    """Every record of a JSON document trace file (an OTLP/HTTP payload, a list of them, an
    ADK session), read whole.  Raises :class:`TraceInputError` when it does not parse."""
    stats = stats if stats is not None else SourceStats()
    stats.files += 1

    on_bad = _counting(bad, stats)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise TraceInputError(describe_os_error(exc, path)) from exc
    stats.bytes += len(data)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceInputError(f"{path}: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    return list(_document_records(text, path, on_bad, stats))
