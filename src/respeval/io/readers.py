"""Streaming input: corpora in checked chunks, JSONL records one by one.

:func:`read_columns` turns a file into a stream of :class:`Chunk` objects (column-wise
Python lists of ``chunk_size`` source records each) and checks every selected field on the
way, so a bad record is reported as ``file:line: field 'name': reason`` instead of
surfacing later as a wrong score.  Formats and record numbering: :mod:`respeval.io.formats`.

Three properties the bulk run builds on:

* **Read once.**  The file is opened once and read front to back, so a pipe, a FIFO or
  ``/dev/stdin`` works (nothing is counted or re-opened first).
* **A content digest while reading.**  Each chunk carries the SHA-256 of every input byte
  consumed up to its end (for Parquet: the footer and the selected column chunks of the row
  groups read so far), so a resume can prove that the part of a file it skips is the part
  an interrupted run read, whatever the file's size and mtime say.
* **Field kinds.**  ``text`` fields must hold strings; ``allow_list_fields`` may hold a
  non-empty list of strings (several references); ``key_fields`` (ids, systems, groups)
  hold strings or integers, given back as strings; ``raw_fields`` are handed over as read
  (JSON values, Parquet nested values), with :attr:`Chunk.text_fields` saying which came
  from a text column and so may hold JSON text.  ``whole_records`` adds every good record
  as a dict.

pyarrow is imported only inside the Parquet code paths, so text, JSONL and CSV work (and
this module imports) without it.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import IO, TYPE_CHECKING, Any, Union

from respeval.io.errors import ON_ERROR, InputError, RowError
from respeval.io.files import describe_os_error, is_regular
from respeval.io.formats import READ_FORMATS, format_of, resolve_format, sniff_mismatch
from respeval.io.nested import describe_repeated_field, raw_values

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa

PathLike = Union[str, "os.PathLike[str]"]

_TEXT_FIELD = "text"
# Large read buffer: line iteration over a BufferedReader is C code, and fewer syscalls
# matter when a corpus has millions of short lines.
_BUFFER_SIZE = 1 << 20
_HASH_LINES = 256  # lines joined per hasher.update
# Python's csv module refuses fields over 131,072 characters by default: a limit of the
# module, not of CSV.  A cell holds whatever the same row holds in JSONL.
_CSV_FIELD_LIMIT = min(sys.maxsize, 2**31 - 1)


@dataclass
class Chunk:
    """A run of consecutive source records, column-wise.

    Attributes:
        start_row: 0-based index of the first source record in this chunk.
        row_numbers: line numbers (text/JSONL/CSV) or row indices (Parquet) of the good
            records, parallel to every list in ``columns``.
        columns: selected field name -> values of the good records.
        errors: the bad records of this chunk (empty when ``on_error="fail"``).
        end_row: 0-based index one past the last source record consumed, good or bad;
            resume a stopped job with ``start_row=chunk.end_row``.
        records: 0-based source record index of each good record (parallel to
            ``row_numbers``): what lines up rows of two files read in lockstep.
        digest: hex SHA-256 of the input consumed from the start of the file to the end of
            this chunk (see the module docstring).
        text_fields: the selected fields whose values came from a text column (CSV, plain
            text, a Parquet string column): a raw field there holds text, e.g. JSON text.
        rows: with ``whole_records``, each good record as a dict of all its fields.
        table: with ``arrow_table`` (Parquet) or from a table in memory, the good records
            as an Arrow table; ``rows`` is then made from it on demand (:meth:`dicts`).
    """

    start_row: int
    row_numbers: list[int]
    columns: dict[str, list[Any]]
    errors: list[RowError]
    end_row: int
    records: list[int] = field(default_factory=list)
    digest: str = ""
    text_fields: frozenset[str] = frozenset()
    rows: list[dict[str, Any]] | None = None
    table: Any = None

    def __len__(self) -> int:
        return len(self.row_numbers)

    def dicts(self) -> list[dict[str, Any]]:
        """Every good record as a dict: :attr:`rows`, made from :attr:`table` when the chunk
        was read as one."""
        if self.rows is None:
            self.rows = self.table.to_pylist() if self.table is not None else []
        return self.rows

    def column(self, name: str) -> list[Any]:
        """A field's value in every good record (None where a record lacks it), from the
        table without making the records when the chunk was read as one."""
        if self.table is not None and self.rows is None:
            if name not in self.table.column_names:
                return [None] * len(self)
            return self.table.column(name).to_pylist()
        if name in self.text_fields and name in self.columns:  # a text column's values: the records' own
            return list(self.columns[name])
        return [r.get(name) for r in self.dicts()]

    def json_column(self, name: str) -> list[Any]:
        """A column's values as the JSON they stand for: from Arrow, as ``json_values`` reads
        them (the null fields an Arrow struct adds to objects that lacked those keys dropped,
        maps as objects), so a trajectory reads the same from a table as from its records."""
        if self.table is not None and self.rows is None and name in self.table.column_names:
            from respeval.io.nested import json_values

            return json_values(self.table.column(name))
        return self.column(name)

    def arrow(self) -> Any:
        """The good records as a ``pyarrow.RecordBatch`` (for batch functions)."""
        import pyarrow as pa

        if self.table is None:
            records = self.dicts()
            try:
                self.table = pa.Table.from_pylist(records)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError) as exc:
                raise ValueError(
                    f"rows {self.records[0]}-{self.records[-1]}: {_mixed_column(records) or 'a column'} mixes types "
                    f"({exc}), so a batch metric cannot have them as an Arrow batch; give the column one type, or "
                    "make the metric a per-row one (batch=False)"
                ) from None
        table = self.table.combine_chunks()
        batches = table.to_batches()
        if len(batches) == 1:
            return batches[0]
        return pa.RecordBatch.from_pylist([], schema=table.schema) if not batches else table.to_batches()[0]


def _mixed_column(records: list[dict[str, Any]]) -> str | None:
    """The first column of ``records`` that has no one Arrow type, quoted."""
    import pyarrow as pa

    for name in dict.fromkeys(k for r in records for k in r):
        try:
            pa.array([r.get(name) for r in records])
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
            return f"column {name!r}"
    return None


# --------------------------------------------------------------------------- helpers


def _open_binary(path: str) -> IO[bytes]:
    """Open ``path`` for reading, turning OS errors into an InputError naming the file."""
    try:
        return open(path, "rb", buffering=_BUFFER_SIZE)
    except OSError as exc:
        raise InputError(describe_os_error(exc, path)) from exc


def type_name(value: object) -> str:
    """Name a value's type in JSON terms, which is what users of these files think in."""
    if value is None:
        return "null"
    names = {bool: "bool", int: "int", float: "float", str: "string", dict: "object", list: "list"}
    return names.get(type(value), type(value).__name__)


_FIELDS_SHOWN = 8  # a record's field names an error lists

# How a selected field is checked (see the module docstring).
TEXT, TEXT_LIST, KEY, RAW = "text", "text_list", "key", "raw"
# a list of strings that may be empty (SQuAD v2's unanswerable questions have no gold answer)
TEXT_LIST_OR_EMPTY = "text_list_or_empty"
LIST_KINDS = (TEXT_LIST, TEXT_LIST_OR_EMPTY)


def convert_value(value: Any, kind: str) -> tuple[Any, str | None]:
    """``(value to hand over, None)`` or ``(None, why the value does not fit the kind)``."""
    if type(value) is str or kind == RAW:
        return value, None
    if kind == KEY:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value), None
        return None, f"expected a string or an integer, got {type_name(value)}"
    if kind == TEXT:
        return None, f"expected a string, got {type_name(value)}"
    if isinstance(value, str):
        return value, None
    if not isinstance(value, list):
        return None, f"expected a string or a non-empty list of strings, got {type_name(value)}"
    if not value:
        if kind == TEXT_LIST_OR_EMPTY:
            return value, None
        return None, "expected a non-empty list of strings, got an empty list"
    for i, item in enumerate(value):
        if not isinstance(item, str):
            return None, f"list item {i}: expected a string, got {type_name(item)}"
    return value, None


def _decode_line(raw: bytes) -> tuple[str | None, str | None]:
    """Decode one raw line, dropping a trailing ``\\n`` or ``\\r\\n`` (and nothing else).

    Returns ``(text, None)`` or ``(None, reason)``.  Decoding per line, rather than the
    whole file, is what lets invalid UTF-8 be reported with its line number.
    """
    if raw.endswith(b"\n"):
        raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start}"


# ``json.loads`` gives up (RecursionError) on values nested about a thousand levels deep
NESTED_TOO_DEEPLY = "JSON nested too deeply to decode (more than about 1000 levels of arrays and objects)"


def _strip_bom(text: str, line: int) -> str:
    """Drop a UTF-8 byte order mark at the start of a file (Excel and Notepad write one)."""
    return text[1:] if line == 1 and text.startswith("\ufeff") else text


# A source record as produced by the per-format parsers: its line number, and either the
# selected values (in field order) with the whole record (or None), or why it was rejected.
_Record = tuple[int, tuple[list[Any], dict[str, Any] | None] | RowError]


@dataclass(frozen=True)
class _Fields:
    """The selected fields and how each is checked."""

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    whole: bool = False
    raw_text: bool = False  # raw arrays and objects may be given as their JSON text
    arrow_text: bool = False  # text fields (Parquet string columns, JSONL, CSV) may be given as Arrow arrays
    skip_blank: bool = False  # JSONL, CSV: a blank line is no record (not counted, not an error)
    tables: bool = False  # Parquet: each chunk's records as its Arrow table, no column read into Python

    @functools.cached_property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        return tuple(zip(self.names, self.kinds))


def _make_chunk(
    batch: list[_Record], fields: _Fields, row: int, on_error: str, digest: str, text_fields: frozenset[str]
) -> Chunk:
    """Group per-record results into one chunk of source records (good and bad).

    Chunks count source records, so chunk boundaries and ``end_row`` do not depend on how
    many records were rejected, which keeps resume offsets stable.
    """
    good_values: list[list[Any]] = []
    numbers: list[int] = []
    good: list[int] = []
    errors: list[RowError] = []
    rows: list[dict[str, Any]] | None = [] if fields.whole else None
    whole_only = rows is not None and not fields.names  # evaluate's read: no per-value lists
    for i, (number, parsed) in enumerate(batch):
        if isinstance(parsed, RowError):
            _keep_error(parsed, on_error, errors)
            continue
        values, record = parsed
        numbers.append(number)
        good.append(row + i)
        if rows is not None:
            rows.append(record if record is not None else dict(zip(fields.names, values)))
        if not whole_only:
            good_values.append(values)
    if whole_only:
        return Chunk(row, numbers, {}, errors, row + len(batch), good, digest, text_fields, rows)
    # one transpose in C rather than an append per value
    cols = [list(c) for c in zip(*good_values)] if good_values else [[] for _ in fields.names]
    return Chunk(row, numbers, dict(zip(fields.names, cols)), errors, row + len(batch), good, digest, text_fields, rows)


def _keep_error(error: RowError, on_error: str, errors: list[RowError]) -> None:
    """A bad record, kept in ``errors`` (raised with ``on_error="fail"``)."""
    if on_error == "fail":
        raise InputError(str(error), error)
    errors.append(error)


def _records_chunk(numbered: list[tuple[int, bytes]], path: str, row: int, on_error: str, digest: str) -> Chunk:
    """Whole JSONL records, no field selected (evaluate's read): the records themselves, with
    none of :func:`_make_chunk`'s per-value lists (a third of the read, and the collections
    those containers set off)."""
    numbers: list[int] = []
    good: list[int] = []
    records: list[dict[str, Any]] = []
    errors: list[RowError] = []
    for i, (number, raw) in enumerate(numbered):
        obj = parse_json_object(raw, path, number)
        if isinstance(obj, RowError):
            _keep_error(obj, on_error, errors)
            continue
        numbers.append(number)
        good.append(row + i)
        records.append(obj)
    return Chunk(row, numbers, {}, errors, row + len(numbered), good, digest, frozenset(), records)


def _missing(obj: dict[str, Any]) -> str:
    """Why a field is missing from a record, with the fields it has (the usual cause is a
    field named differently, e.g. the hosted service's ``predicted_trajectory``)."""
    names = [repr(k) for k in islice(obj, _FIELDS_SHOWN)]
    if not names:
        return "missing; the record is an empty object"
    more = f" and {len(obj) - _FIELDS_SHOWN} more" if len(obj) > _FIELDS_SHOWN else ""
    return f"missing; the record's fields: {', '.join(names)}{more}"


def _select(obj: dict[str, Any], fields: _Fields, path: str, number: int) -> list[Any] | RowError:
    """The selected values of one record, converted by kind, or the first problem."""
    values = []
    for name, kind in fields.pairs:
        try:
            value = obj[name]
        except KeyError:
            return RowError(path, number, name, _missing(obj))
        if type(value) is not str and kind != RAW:  # a str fits every kind: the common case costs nothing
            value, reason = convert_value(value, kind)
            if reason is not None:
                return RowError(path, number, name, reason)
        values.append(value)
    return values


# --------------------------------------------------------------------------- JSON lines


# A JSON escape of a UTF-16 surrogate: the only way a lone one gets into a str (UTF-8 bytes
# cannot hold one; Python's strict decoder refuses them), so only lines with one are walked.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_in(value: Any, where: str) -> tuple[str, str] | None:
    """``(where, the character)`` of the first string (or key) of ``value`` holding a lone surrogate."""
    if isinstance(value, str):
        m = _SURROGATE.search(value)
        return (where, m.group()) if m else None
    if isinstance(value, dict):
        for key, item in value.items():
            m = _SURROGATE.search(key)
            if m:
                return (f"{where} (a key)" if where else "a key", m.group())
            found = _surrogate_in(item, f"{where}.{key}" if where else key)
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _surrogate_in(item, f"{where}[{i}]")
            if found:
                return found
    return None


def lone_surrogate(value: Any, raw: str | bytes | None = None) -> tuple[str | None, str] | None:
    """The one rule for text holding a lone surrogate (``"\\ud800"`` in JSON: valid JSON,
    but half of a UTF-16 pair, no character, and nothing UTF-8 can write): the record is bad.
    ``(top-level field or None, reason)`` for the first such string of a record, else None.
    ``raw``: the JSON text ``value`` was parsed from (only text with such an escape is walked)."""
    if raw is not None:
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogatepass")
        if not _SURROGATE_ESCAPE.search(raw):
            return None
    found = _surrogate_in(value, "")
    if found is None:
        return None
    where, char = found
    field = where.split(".")[0].split("[")[0] if isinstance(value, dict) and not where.startswith("a key") else None
    at = "" if where in ("", field) else f"at {where}: "
    return field, (
        f"{at}text holds a lone surrogate \\u{ord(char):04x} (half of a UTF-16 pair: no character, and not "
        "writable as UTF-8); fix the text (the escape needs its other half, or remove it)"
    )


def parse_json_line(raw: bytes, path: str, number: int) -> Any:
    """Decode and parse one JSONL line: the JSON value, or the :class:`RowError` saying why not.

    The one JSONL line parser: the chunked readers and :func:`read_jsonl` (judge, gate,
    validate) read lines through it, so every command reports a bad line the same way.
    """
    text, reason = _decode_line(raw)
    if text is None:
        return RowError(path, number, None, reason or "undecodable")
    text = _strip_bom(text, number)
    # An empty line usually means a truncated or concatenated file; skipping it silently
    # would shift every later record against its reference.
    if not text.strip():
        return RowError(path, number, None, "empty line")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return RowError(path, number, None, f"malformed JSON: {exc.msg} (column {exc.colno})")
    except RecursionError:
        return RowError(path, number, None, NESTED_TOO_DEEPLY)
    problem = lone_surrogate(value, raw)
    if problem is not None:
        return RowError(path, number, problem[0], problem[1])
    return value


def parse_json_object(raw: bytes, path: str, number: int) -> dict[str, Any] | RowError:
    """One JSONL line that must hold a JSON object."""
    obj = parse_json_line(raw, path, number)
    if isinstance(obj, (RowError, dict)):
        return obj
    return RowError(path, number, None, f"expected a JSON object, got {type_name(obj)}")


def read_jsonl(path: PathLike, *, skip_blank: bool = True) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every record of a JSONL file as ``(line number, object)``, stopping at the first bad line.

    For commands that take whole records (judge, gate, validate): a line that is not a JSON
    object raises :class:`InputError` naming the file and line.  Blank lines are skipped
    unless ``skip_blank`` is false.  The file is read once, front to back (pipes work).
    """
    path = os.fspath(path)
    fmt = format_of(path)
    if fmt not in (None, "jsonl"):  # the one extension map: a .csv or .json is not JSON lines
        raise InputError(f"{path}: a {fmt} file by its extension; this command reads JSON lines (.jsonl, .ndjson)")
    with _open_binary(path) as fh:
        try:
            for number, raw in enumerate(fh, 1):
                if skip_blank and not raw.strip():
                    continue
                record = parse_json_object(raw, path, number)
                if isinstance(record, RowError):
                    raise InputError(str(record), record)
                yield number, record
        except OSError as exc:
            raise InputError(describe_os_error(exc, path)) from exc


RECORD_FORMATS = ("jsonl", "csv", "parquet")  # what the commands that take whole records read


def read_records(path: PathLike) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every record of a JSONL, CSV or Parquet file as ``(where, record)``, stopping at the
    first bad one with an :class:`InputError` naming the file and line (or Parquet row).

    For commands that take whole records (judge, gate): ``where`` is ``FILE:LINE`` (JSONL,
    CSV) or ``FILE:row N`` (Parquet), as :class:`RowError` names a row.  CSV values are text;
    JSONL and Parquet values keep their types.  A file whose extension names no format (a
    pipe) is read as JSON lines, front to back, once.
    """
    path = os.fspath(path)
    fmt = format_of(path) or "jsonl"
    if fmt == "jsonl":
        for number, record in read_jsonl(path):
            yield f"{path}:{number}", record
        return
    if fmt not in RECORD_FORMATS:
        raise InputError(f"{path}: a {fmt} file by its extension; this command reads .jsonl, .csv or .parquet")
    raw: list[str] = []
    if fmt == "parquet":  # nested and typed columns are handed over as read, as JSONL's values
        with _open_binary(path) as fh:
            raw = list(_open_parquet(fh, path).schema_arrow.names)
    with read_columns(path, None, fmt=fmt, raw_fields=raw, whole_records=True) as reader:
        unit = "row " if fmt == "parquet" else ""
        for chunk in reader:
            for number, record in zip(chunk.row_numbers, chunk.rows or []):
                yield f"{path}:{unit}{number}", dict(record)


# --------------------------------------------------------------------------- text / JSONL chunks


def hash_lines(hasher: Any, lines: list[bytes]) -> None:
    """Feed ``lines`` to ``hasher`` a few hundred at a time: one joined copy of a whole
    chunk (tens of MB) is fresh memory every time, its page faults costing as much as
    the hashing."""
    for start in range(0, len(lines), _HASH_LINES):
        hasher.update(b"".join(lines[start : start + _HASH_LINES]))


def _skip_sizes(start_row: int, chunk_size: int) -> Iterator[int]:
    while start_row > 0:
        step = min(start_row, chunk_size)
        yield step
        start_row -= step


def _nonblank_lines(fh: IO[bytes], hasher: Any) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line)`` of every line that is not blank, each line hashed (blank
    ones too: the digest covers the bytes read)."""
    for number, raw in enumerate(fh, 1):
        hasher.update(raw)
        if raw.strip():
            yield number, raw


def _text_record(raw: bytes, path: str, number: int, fields: _Fields) -> Any:
    text, reason = _decode_line(raw)
    if text is None:
        return RowError(path, number, None, reason or "undecodable")
    text = _strip_bom(text, number)
    return [text], ({_TEXT_FIELD: text} if fields.whole else None)


def _jsonl_record(raw: bytes, path: str, number: int, fields: _Fields) -> Any:
    obj = parse_json_object(raw, path, number)
    if isinstance(obj, RowError):
        return obj
    values = _select(obj, fields, path, number)
    if isinstance(values, RowError):
        return values
    return values, (obj if fields.whole else None)


_KIND_CODES = {RAW: "r", KEY: "k", TEXT: "t", TEXT_LIST: "t", TEXT_LIST_OR_EMPTY: "t"}


def _arrow_strings(buffers: tuple[bytes, bytes]) -> Any:
    """``jsonl_columns``' (offsets, data) of a column as an Arrow large_string array."""
    import pyarrow as pa

    offsets, data = buffers
    n = len(offsets) // 8 - 1
    return pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _jsonl_chunk_as_text(
    block: memoryview,
    lines: int,
    path: str,
    row: int,
    fields: _Fields,
    columns_of: Callable[[memoryview, list, bytes], tuple[list[tuple[int, int, int]], list[Any]]],
    on_error: str,
    digest: str,
) -> Chunk:
    """A block of ``lines`` JSONL lines as a chunk (each raw field whose value is an array or
    an object given as its JSON text, a str, not decoded).  ``columns_of`` (the native core's
    ``jsonl_block_columns``) checks the lines in place and takes the values of the lines it
    is certain of; the others (``fallback``) are read by :func:`_jsonl_record`, as every line
    is without this path, so their values and errors are the same."""
    # with arrow_text, text fields come as Arrow buffers ("a"): no Python str per value
    # (a list of references is no string: its line is json.loads', as with "t")
    kinds = "".join(_KIND_CODES[kind] if kind in (RAW, KEY) or not fields.arrow_text else "a" for kind in fields.kinds)
    fallback, columns = columns_of(block, list(fields.names), kinds.encode("ascii"))
    columns = [_arrow_strings(c) if code == "a" else c for c, code in zip(columns, kinds)]
    if not fallback:
        numbers = list(range(row + 1, row + lines + 1))
        return Chunk(
            row, numbers, dict(zip(fields.names, columns)), [], row + lines, list(range(row, row + lines)), digest
        )
    columns = [as_list(c) for c in columns]  # the lines taken go in among the others, one by one
    taken = zip(*columns)
    redo = {i: bytes(block[start:end]) for i, start, end in fallback}
    batch: list[_Record] = [
        (row + i + 1, _jsonl_record(redo[i], path, row + i + 1, fields) if i in redo else (list(next(taken)), None))
        for i in range(lines)
    ]
    return _make_chunk(batch, fields, row, on_error, digest, frozenset())


def _jsonl_columns(
    fields: _Fields,
) -> Callable[[memoryview, list, bytes], tuple[list[tuple[int, int, int]], list[Any]]] | None:
    """The native line reader, when the native core runs (the twin's checker is slower than
    ``json.loads``), no record is wanted whole, and raw fields (if any) may come as JSON
    text: text and key fields are taken from the lines without a Python ``json.loads``."""
    if fields.whole or (RAW in fields.kinds and not fields.raw_text):
        return None
    from respeval import _backend

    kernels = _backend.get()
    return kernels.jsonl_block_columns if _backend.name_of(kernels) == "native" else None


class _LineBlocks:
    """A binary file's lines in blocks of whole lines, read once, front to back (a pipe
    works): the core's ``line_block`` finds where the lines end in each read, so no bytes
    object is made per line, and each block is hashed as one piece."""

    def __init__(self, fh: IO[bytes], hasher: Any) -> None:
        from respeval import _backend

        self.fh, self.hasher = fh, hasher
        self._line_block = _backend.get().line_block
        self._rest = b""  # read, past the lines taken so far
        self._eof = False

    def take(self, n: int) -> tuple[memoryview, int]:
        """The next ``n`` lines (fewer at the end of the file) as one hashed block, and how many."""
        pieces = [self._rest]
        lines, end = self._line_block(self._rest, 0, n, self._eof)
        cut = (0, end)  # where the last line found ends: (piece, offset)
        while lines < n and not self._eof:
            more = self.fh.read(_BUFFER_SIZE)  # reads of a fixed size: memory stays one block's
            if more:
                pieces.append(more)
                found, end = self._line_block(more, 0, n - lines, False)
                if found:
                    lines, cut = lines + found, (len(pieces) - 1, end)
            else:
                self._eof = True
                if pieces[cut[0]][cut[1] :] or len(pieces) > cut[0] + 1:
                    lines, cut = lines + 1, (len(pieces) - 1, len(pieces[-1]))  # the last line, without b"\n"
        piece, end = cut
        block = b"".join([*pieces[:piece], pieces[piece][:end]])
        self._rest = b"".join([pieces[piece][end:], *pieces[piece + 1 :]])
        self.hasher.update(block)
        return memoryview(block), lines


class _LineSource:
    """Text or JSONL: one record per line, read in hashed blocks of lines."""

    def __init__(self, fh: IO[bytes], path: str, fmt: str, fields: _Fields) -> None:
        self.path, self.fields = path, fields
        self.parse = _text_record if fmt == "text" else _jsonl_record
        self.columns_of = _jsonl_columns(fields) if fmt == "jsonl" and not fields.skip_blank else None
        self.text_fields = frozenset(fields.names) if fmt == "text" else frozenset()
        self.hasher = hashlib.sha256()
        # records are numbered lines when blank lines are none (line and record numbers part)
        self._numbered = _nonblank_lines(fh, self.hasher) if fields.skip_blank else None
        self.blocks = _LineBlocks(fh, self.hasher) if self._numbered is None else None

    def skip(self, rows: int, chunk_size: int) -> int:
        if self._numbered is not None:
            return sum(1 for _ in islice(self._numbered, rows))
        assert self.blocks is not None
        return sum(self.blocks.take(size)[1] for size in _skip_sizes(rows, chunk_size))

    def chunks(self, start_row: int, chunk_size: int, on_error: str) -> Iterator[Chunk]:
        row = start_row
        if self._numbered is not None:
            records_only = self.parse is _jsonl_record and self.fields.whole and not self.fields.names
            while numbered := list(islice(self._numbered, chunk_size)):
                if records_only:
                    yield _records_chunk(numbered, self.path, row, on_error, self.hasher.hexdigest())
                else:
                    batch = [(n, self.parse(raw, self.path, n, self.fields)) for n, raw in numbered]
                    yield _make_chunk(batch, self.fields, row, on_error, self.hasher.hexdigest(), self.text_fields)
                row += len(numbered)
            return
        assert self.blocks is not None
        while True:
            block, n = self.blocks.take(chunk_size)
            if not n:
                return
            if self.columns_of is not None:
                chunk = _jsonl_chunk_as_text(
                    block, n, self.path, row, self.fields, self.columns_of, on_error, self.hasher.hexdigest()
                )
            else:
                # a binary file's lines: split at b"\n" only, each with its end
                lines = io.BytesIO(block).readlines()
                batch = [
                    (row + i + 1, self.parse(raw, self.path, row + i + 1, self.fields)) for i, raw in enumerate(lines)
                ]
                chunk = _make_chunk(batch, self.fields, row, on_error, self.hasher.hexdigest(), self.text_fields)
            block.release()  # the bytes read are the chunk's values now: not kept while it waits
            yield chunk
            row += n


# --------------------------------------------------------------------------- JSON documents

KEYED_ID, KEYED_VALUE = "id", "prediction"  # the fields of an {id: answer} document's rows


@dataclass
class JsonDocument:
    """A ``.json`` input: ``records`` (an array of objects), or ``keyed`` (an ``{id: answer}``
    object, SQuAD's predictions, in the file's order), and the SHA-256 of its bytes."""

    path: str
    records: list[Any] | None
    keyed: dict[str, Any] | None
    digest: str

    def rows(self) -> list[Any]:
        """One item per row: the array's items, or ``{"id": key, "prediction": answer}``."""
        if self.records is not None:
            return self.records
        assert self.keyed is not None
        return [{KEYED_ID: k, KEYED_VALUE: v} for k, v in self.keyed.items()]


def read_json(path: PathLike) -> Any:
    """A JSON file's value, whatever its shape, read as :func:`read_json_document` reads one
    (a byte order mark dropped; invalid UTF-8, malformed JSON or an empty file an
    :class:`InputError` naming the file and line)."""
    return _json_value(os.fspath(path), None)[0]


def read_json_document(path: PathLike, fh: IO[bytes] | None = None) -> JsonDocument:
    """A ``.json`` input, whole (a JSON document has no rows before it is parsed): an array
    of objects, or an object whose values are all strings or null (``{id: answer}``).
    Anything else raises :class:`InputError` saying what the file holds."""
    path = os.fspath(path)
    doc, raw = _json_value(path, fh)
    digest = hashlib.sha256(raw).hexdigest()
    problem = lone_surrogate(doc, raw)
    if isinstance(doc, list):
        if problem is not None:
            where = problem[1].split(":", 1)[0].removeprefix("at ")
            raise InputError(f"{path}: {where}: {problem[1]}")
        return JsonDocument(path, doc, None, digest)
    if isinstance(doc, dict) and all(v is None or isinstance(v, str) for v in doc.values()):
        if problem is not None:
            raise InputError(f"{path}: {problem[1]}")
        return JsonDocument(path, None, doc, digest)
    what = "an object whose values are not all strings" if isinstance(doc, dict) else f"a JSON {type_name(doc)}"
    raise InputError(
        f"{path}: holds {what}; a .json input is an array of objects (one per row) or an {{id: answer}} object "
        "(SQuAD's predictions); name JSON lines .jsonl"
    )


def _json_value(path: str, fh: IO[bytes] | None) -> tuple[Any, bytes]:
    """A JSON file's value and its bytes (read from ``fh`` when given)."""
    own = fh is None
    handle = _open_binary(path) if fh is None else fh
    try:
        raw = handle.read()
    except OSError as exc:
        raise InputError(describe_os_error(exc, path)) from exc
    finally:
        if own:
            handle.close()
    text, reason = _decode_line(raw)
    if text is None:
        raise InputError(f"{path}: {reason}")
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise InputError(f"{path}: empty file, expected a JSON document (an array of objects, or {{id: answer}})")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = "; it holds more than one JSON value: JSON lines? name it .jsonl" if exc.msg == "Extra data" else ""
        raise InputError(f"{path}:{exc.lineno}: malformed JSON: {exc.msg} (column {exc.colno}){hint}") from None
    except RecursionError:
        raise InputError(f"{path}: {NESTED_TOO_DEEPLY}") from None
    return doc, raw


def _item_record(item: Any, path: str, number: int, fields: _Fields) -> Any:
    """One row of a JSON document (0-based ``number``), as a JSONL line's record."""
    if not isinstance(item, dict):
        return RowError(path, number, None, f"expected a JSON object, got {type_name(item)}", unit="row")
    problem = lone_surrogate(item)
    if problem is not None:
        return RowError(path, number, problem[0], problem[1], unit="row")
    values = _select(item, fields, path, number)
    if isinstance(values, RowError):
        return RowError(values.path, values.line, values.field, values.reason, unit="row")
    return values, (item if fields.whole else None)


class RowsSource:
    """Rows already in memory (a JSON document, or rows a caller lined up), read in chunks
    like any file: ``items`` are records (dicts), or :class:`RowError` for rows known bad."""

    def __init__(self, items: Sequence[Any], path: str, fields: _Fields, digest: str) -> None:
        self.items, self.path, self.fields = items, path, fields
        self.hasher = _FixedDigest(digest)

    def skip(self, rows: int, chunk_size: int) -> int:
        return min(rows, len(self.items))

    def chunks(self, start_row: int, chunk_size: int, on_error: str) -> Iterator[Chunk]:
        for row in range(start_row, len(self.items), chunk_size):
            batch: list[_Record] = [
                (i, item if isinstance(item, RowError) else _item_record(item, self.path, i, self.fields))
                for i, item in enumerate(self.items[row : row + chunk_size], row)
            ]
            yield _make_chunk(batch, self.fields, row, on_error, self.hasher.hexdigest(), frozenset())


class _FixedDigest:
    """The digest of a source read whole before its first row (every chunk has it)."""

    def __init__(self, digest: str) -> None:
        self._digest = digest

    def hexdigest(self) -> str:
        return self._digest


# --------------------------------------------------------------------------- CSV


class _CsvLines:
    """Decoded lines for ``csv.reader``, hashed, remembering which were not valid UTF-8.

    The csv module needs text, but a decode error raised from inside its iteration would
    abort the whole file.  Undecodable lines are passed on with surrogate escapes and their
    numbers kept here, so the record containing them can be rejected by line number.
    The csv reader pulls exactly the lines of the records it returns, so the hash covers
    every record returned so far and nothing more.
    """

    def __init__(self, fh: Iterable[bytes], hasher: Any = None, first_line: int = 1) -> None:
        self._fh = fh
        self._hasher = hasher
        self._first = first_line
        self.bad: dict[int, str] = {}

    def __iter__(self) -> Iterator[str]:
        update = self._hasher.update if self._hasher is not None else None
        for number, raw in enumerate(self._fh, self._first):
            if update is not None:
                update(raw)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                self.bad[number] = f"invalid UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start}"
                text = raw.decode("utf-8", "surrogateescape")
            yield _strip_bom(text, number)


def lift_csv_field_limit() -> None:
    """Lift the csv module's 131,072-character field limit (process-wide; only ever raised)."""
    if csv.field_size_limit() < _CSV_FIELD_LIMIT:
        csv.field_size_limit(_CSV_FIELD_LIMIT)


def csv_reader(lines: Iterable[str]) -> Any:
    """``csv.reader`` without the csv module's field limit."""
    lift_csv_field_limit()
    return csv.reader(lines)


def _csv_header(reader: Iterator[list[str]], lines: _CsvLines, path: str) -> list[str]:
    """Read and check the header row."""
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(f"{path}: empty file, expected a CSV header row") from None
    except csv.Error as exc:
        raise InputError(f"{path}:1: CSV parse error: {exc}") from exc
    if lines.bad:
        raise InputError(f"{path}:1: header: {lines.bad[min(lines.bad)]}")
    return header


def _select_columns(path: str, available: Sequence[str], fields: Sequence[str] | None, what: str) -> list[str]:
    """Resolve ``fields`` against a file's columns; missing ones are an error up front."""
    if fields is None:
        return list(available)
    missing = [name for name in fields if name not in available]
    if missing:
        names = ", ".join(repr(name) for name in missing)
        have = ", ".join(repr(name) for name in available)
        raise InputError(f"{path}: missing {what} {names}; available {what}s: {have}")
    return list(fields)


def _csv_splitter() -> Callable[[list, int, list, bytes], tuple[list[int], list[Any]]] | None:
    """The native CSV line splitter, when the native core runs (the twin's is slower than
    the csv module)."""
    from respeval import _backend

    kernels = _backend.get()
    return kernels.csv_columns if _backend.name_of(kernels) == "native" else None


class _CsvSource:
    """CSV: one record per row after the header; values are strings by construction."""

    def __init__(self, fh: IO[bytes], path: str, fields: Sequence[str] | None) -> None:
        self.path, self.fh = path, fh
        self.hasher = hashlib.sha256()
        self.lines = _CsvLines(fh, self.hasher)
        self.reader = csv_reader(self.lines)
        self.header = _csv_header(self.reader, self.lines, path)
        self.names = _select_columns(path, self.header, fields, "column")
        duplicated = sorted({name for name in self.names if self.header.count(name) > 1})
        if duplicated:
            raise InputError(f"{path}: ambiguous column(s) {', '.join(map(repr, duplicated))}: repeated in the header")
        self._records: Iterator[_Record] | None = None

    def bind(self, fields: _Fields) -> None:
        self.fields = fields
        self.indices = [self.header.index(name) for name in fields.names]
        # lines become records natively unless every record must also come whole, as a dict
        self.columns_of = None if fields.whole or fields.skip_blank else _csv_splitter()
        self.line = self.reader.line_num  # the lines read so far: the header's
        self._records = self._parse() if self.columns_of is None else None

    def _parse(self) -> Iterator[_Record]:
        reader, lines, header, indices = self.reader, self.lines, self.header, self.indices
        last_line = reader.line_num
        width, whole = len(header), self.fields.whole
        every_column = indices == list(range(width))  # the row itself is the values, in order
        try:
            for row in reader:
                # A quoted field may span lines: the record starts on the line after the last one.
                first_line, last_line = last_line + 1, reader.line_num
                if not row and self.fields.skip_blank and not lines.bad:
                    continue
                if len(row) == width and not lines.bad:  # a good record (what _record would return)
                    values = row if every_column else [row[i] for i in indices]
                    yield first_line, (values, dict(zip(header, row)) if whole else None)
                    continue
                yield self._record(row, first_line, lines, last_line)
        except csv.Error as exc:
            # After a parser error the reader may be out of step with record boundaries, so
            # later rows cannot be trusted: this is fatal whatever on_error says.
            raise InputError(f"{self.path}:{reader.line_num}: CSV parse error: {exc}") from exc

    def _record(self, row: list[str], first_line: int, lines: _CsvLines, last_line: int | None = None) -> _Record:
        """One record the csv module read, on lines ``first_line`` .. ``last_line``, checked."""
        path, header = self.path, self.header
        # Report the record's first undecodable line; forget the rest of its lines.
        if lines.bad:
            bad = sorted(lines.bad)
            reason = lines.bad[bad[0]]
            lines.bad.clear()
            return first_line, RowError(path, bad[0], None, reason)
        if not row:
            return first_line, RowError(path, first_line, None, "empty line")
        if len(row) != len(header):
            reason = f"expected {len(header)} columns, got {len(row)}"
            if last_line is not None and last_line > first_line:
                # a quoted field that is never closed takes in every line after it
                reason += (
                    f" in a record that runs over lines {first_line}-{last_line}: a quote opened in it and not"
                    " closed makes the lines after it part of one field; close the quote (or double a quote"
                    " that belongs to the text)"
                )
            return first_line, RowError(path, first_line, None, reason)
        # a CSV cell is a string: it fits every kind
        return first_line, ([row[i] for i in self.indices], dict(zip(header, row)) if self.fields.whole else None)

    def _split_chunk(self, row: int, size: int, on_error: str) -> Chunk | None:
        """The next ``size`` records (fewer at the end of the file) as a chunk: ``size`` lines
        split natively (``csv_columns``) when each is certainly one record; from the first
        line that is not, the csv module reads the rest of the chunk's records (a quoted
        field may take one past those lines), so values, line numbers and errors are the
        same as :meth:`_parse`'s, and the digest covers exactly the chunk's lines, as there."""
        assert self.columns_of is not None
        block = list(islice(self.fh, size))
        if not block:
            return None
        # with arrow_text, text fields come as Arrow buffers ("a"): no Python str per value
        kinds = bytes(97 if self.fields.arrow_text and kind not in (RAW, KEY) else 116 for kind in self.fields.kinds)
        fallback, columns = self.columns_of(block, len(self.header), self.indices, kinds)
        columns = [_arrow_strings(c) if code == 97 else c for c, code in zip(columns, kinds)]
        plain = fallback[0] if fallback else len(block)
        if plain < len(block):  # the records before the first line not taken, one by one
            columns = [as_list(c) for c in columns]
        hash_lines(self.hasher, block[:plain] if plain < len(block) else block)
        first = self.line + 1
        self.line += plain
        if plain == len(block):
            good = list(range(row, row + plain))
            numbers = list(range(first, first + plain))
            cols = dict(zip(self.fields.names, columns))
            return Chunk(
                row, numbers, cols, [], row + plain, good, self.hasher.hexdigest(), frozenset(self.fields.names)
            )
        batch: list[_Record] = [
            (first + i, (list(values), None)) for i, values in enumerate(islice(zip(*columns), plain))
        ]
        lines = _CsvLines(chain(block[plain:], self.fh), self.hasher, self.line + 1)
        reader = csv_reader(lines)
        used = 0
        for _ in range(size - plain):
            try:
                parsed = next(reader, None)
            except csv.Error as exc:
                raise InputError(f"{self.path}:{self.line + reader.line_num}: CSV parse error: {exc}") from exc
            if parsed is None:
                break
            batch.append(self._record(parsed, self.line + used + 1, lines, self.line + reader.line_num))
            used = reader.line_num
        self.line += used
        return _make_chunk(batch, self.fields, row, on_error, self.hasher.hexdigest(), frozenset(self.fields.names))

    def skip(self, rows: int, chunk_size: int) -> int:
        if self.columns_of is None:
            assert self._records is not None
            return sum(1 for _ in islice(self._records, rows))
        skipped = 0
        for size in _skip_sizes(rows, chunk_size):
            chunk = self._split_chunk(skipped, size, "record")
            if chunk is None:
                break
            skipped = chunk.end_row
        return skipped

    def chunks(self, start_row: int, chunk_size: int, on_error: str) -> Iterator[Chunk]:
        row = start_row
        if self.columns_of is not None:
            while (chunk := self._split_chunk(row, chunk_size, on_error)) is not None:
                yield chunk
                row = chunk.end_row
            return
        assert self._records is not None
        text = frozenset(self.fields.names)
        while batch := list(islice(self._records, chunk_size)):
            yield _make_chunk(batch, self.fields, row, on_error, self.hasher.hexdigest(), text)
            row += len(batch)


# --------------------------------------------------------------------------- Parquet


def _is_string_type(pa: Any, typ: Any) -> bool:
    """True for Arrow string types, including dictionary-encoded strings."""
    if pa.types.is_dictionary(typ):
        typ = typ.value_type
    is_view = getattr(pa.types, "is_string_view", None)
    return bool(pa.types.is_string(typ) or pa.types.is_large_string(typ) or (is_view is not None and is_view(typ)))


def _is_string_list_type(pa: Any, typ: Any) -> bool:
    """True for list-of-string Arrow types."""
    is_list = pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ)
    return bool(is_list and _is_string_type(pa, typ.value_type))


def is_arrow(values: Any) -> bool:
    """``values`` is an Arrow array (a column a reader handed on as Arrow, ``arrow_text``)."""
    return type(values).__module__.startswith("pyarrow")


def as_list(values: Any) -> list[Any]:
    """A column's values as a list (an Arrow array's as Python values)."""
    return values.to_pylist() if is_arrow(values) else values


def _open_parquet(fh: IO[bytes], path: str) -> Any:
    """Wrap an open file in a ParquetFile, naming the file when it is not Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not is_regular(path):
        raise InputError(
            f"{path}: Parquet cannot be read from a pipe (its index is at the end of the file); "
            "write it to a file first"
        )
    try:
        # pre_buffer would cache the bytes of every row group read so far until the
        # reader is done: memory growing with the file, the opposite of streaming
        return pq.ParquetFile(fh, pre_buffer=False)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a readable Parquet file: {exc}") from exc


def _parquet_fields(
    pf: Any, path: str, fields: Sequence[str] | None, kinds: dict[str, str], *, any_type: bool = False
) -> list[str]:
    """Check the selected columns exist and (unless ``any_type``) hold what their kind needs,
    before any data is read."""
    import pyarrow as pa

    schema = pf.schema_arrow
    selected = _select_columns(path, schema.names, fields, "column")
    for name in [] if any_type else selected:
        typ = schema.field(name).type
        kind = kinds.get(name, TEXT)
        if kind == RAW or _is_string_type(pa, typ):
            continue
        if kind in LIST_KINDS and _is_string_list_type(pa, typ):
            continue
        if kind == KEY and pa.types.is_integer(typ):
            continue
        expected = {TEXT: "string", KEY: "string or integer"}.get(kind, "string or list<string>")
        raise InputError(f"{path}: column {name!r} has type {typ}, expected {expected}")
    return selected


class _ParquetSource:
    """Parquet: row groups read in batches, re-sliced into chunks of exactly ``chunk_size``."""

    def __init__(
        self, fh: IO[bytes], path: str, fields: Sequence[str] | None, kinds: dict[str, str], *, tables: bool = False
    ) -> None:
        import pyarrow as pa

        self.fh, self.path = fh, path
        self.pf = _open_parquet(fh, path)
        self.names = _parquet_fields(self.pf, path, fields, kinds, any_type=tables)
        schema = self.pf.schema_arrow
        self.text = frozenset(n for n in self.names if _is_string_type(pa, schema.field(n).type))
        self.hasher = hashlib.sha256()
        self._hashed_groups = 0
        self._hash_footer()

    def bind(self, fields: _Fields) -> None:
        self.fields = fields
        wanted = set(self.pf.schema_arrow.names) if fields.whole else set(fields.names)
        for name in wanted:
            problem = describe_repeated_field(self.pf.schema_arrow.field(name).type)
            if problem is not None:
                raise InputError(f"{self.path}: column {name!r} cannot be read: {problem}")
        meta = self.pf.metadata
        # the leaf columns (nested columns have several) of the selected fields
        self._leaves = [i for i in range(meta.num_columns) if meta.schema.column(i).path.split(".")[0] in wanted]
        self.columns = sorted(wanted, key=self.pf.schema_arrow.names.index)

    def _hash_footer(self) -> None:
        size = os.fstat(self.fh.fileno()).st_size
        tail = os.pread(self.fh.fileno(), 8, size - 8)
        length = int.from_bytes(tail[:4], "little")
        self.hasher.update(os.pread(self.fh.fileno(), length + 8, size - 8 - length))

    def _hash_groups_through(self, row: int) -> None:
        """Hash the selected column chunks of every row group holding rows before ``row``."""
        meta = self.pf.metadata
        start = sum(meta.row_group(g).num_rows for g in range(self._hashed_groups))
        fd = self.fh.fileno()
        while self._hashed_groups < meta.num_row_groups and start < row:
            group = meta.row_group(self._hashed_groups)
            for i in self._leaves:
                col = group.column(i)
                offset = col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset
                left = col.total_compressed_size
                while left > 0:
                    block = os.pread(fd, min(left, _BUFFER_SIZE), offset)
                    if not block:
                        break
                    self.hasher.update(block)
                    offset += len(block)
                    left -= len(block)
            start += group.num_rows
            self._hashed_groups += 1

    def skip(self, rows: int, chunk_size: int) -> int:
        total = int(self.pf.metadata.num_rows)
        self._hash_groups_through(min(rows, total))
        return min(rows, total)

    def _tables(self, start_row: int, chunk_size: int) -> Iterator[pa.Table]:
        """Tables of exactly ``chunk_size`` rows (the last may be shorter) from ``start_row``.

        Whole row groups before ``start_row`` are skipped using the footer metadata, so
        resuming near the end of a large file does not decode its beginning.
        """
        import pyarrow as pa

        metadata = self.pf.metadata
        groups: list[int] = []
        to_drop = start_row
        for i in range(metadata.num_row_groups):
            rows = metadata.row_group(i).num_rows
            if not groups and to_drop >= rows:
                to_drop -= rows
                continue
            groups.append(i)
        if not groups:
            return
        pending: list[pa.RecordBatch] = []
        pending_rows = 0
        # iter_batches does not cross row groups, so batches can come out short; re-slice
        # them so that every chunk has the same number of rows whatever the file's layout.
        for batch in self.pf.iter_batches(batch_size=chunk_size, row_groups=groups, columns=self.columns):
            if to_drop:
                if batch.num_rows <= to_drop:
                    to_drop -= batch.num_rows
                    continue
                batch, to_drop = batch.slice(to_drop), 0
            pending.append(batch)
            pending_rows += batch.num_rows
            while pending_rows >= chunk_size:
                table = pa.Table.from_batches(pending)
                yield table.slice(0, chunk_size)
                pending = table.slice(chunk_size).to_batches()
                pending_rows -= chunk_size
        if pending_rows:
            yield pa.Table.from_batches(pending)

    def chunks(self, start_row: int, chunk_size: int, on_error: str) -> Iterator[Chunk]:
        row = start_row
        for table in self._tables(start_row, chunk_size):
            self._hash_groups_through(row + table.num_rows)
            if self.fields.tables:  # every value as it is in the table: nothing to check
                numbers = list(range(row, row + table.num_rows))
                text = self.text & set(self.fields.names)
                yield Chunk(
                    row, numbers, {}, [], row + len(numbers), list(numbers), self.hasher.hexdigest(), text, None, table
                )
            else:
                yield self._chunk(table, row, on_error)
            row += table.num_rows

    def _texts(self, pa: Any, column: Any, kind: str) -> Any:
        """A column's values: a list, or (``arrow_text``, a text field of a null-free string
        column whose UTF-8 is valid) the Arrow string array itself, which the ROUGE kernels
        read in place (``to_pylist`` made a Python str of every value)."""
        typ = column.type
        if self.fields.arrow_text and kind in (TEXT, *LIST_KINDS) and column.null_count == 0:
            if pa.types.is_string(typ) or pa.types.is_large_string(typ):
                # one chunk (the common case) is a view; several are joined (a copy)
                array = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
                try:
                    array.validate(full=True)  # the UTF-8 of every value
                except pa.ArrowInvalid:
                    return column.to_pylist()  # which reports it as it always did
                return array
        return column.to_pylist()

    def _chunk(self, table: pa.Table, row: int, on_error: str) -> Chunk:
        """One table slice as a Chunk, rejecting rows with nulls or values of the wrong kind."""
        import pyarrow as pa

        names, kinds = self.fields.names, self.fields.kinds
        # nested values as the JSON they were written from (struct nulls that Arrow added)
        columns = {
            name: raw_values(table.column(name), self.fields.raw_text)
            if kind == RAW
            else self._texts(pa, table.column(name), kind)
            for name, kind in zip(names, kinds)
        }
        bad: dict[int, RowError] = {}
        for name, kind in zip(names, kinds):
            column = table.column(name)
            if kind == RAW:
                continue
            # A null-free string column needs no per-value check; only pay for the others.
            if column.null_count == 0 and _is_string_type(pa, column.type):
                continue
            values = columns[name]
            for i, value in enumerate(values):
                if i in bad:
                    continue
                converted, reason = convert_value(value, kind)
                if reason is not None:
                    bad[i] = RowError(self.path, row + i, name, reason, unit="row")
                elif converted is not value:
                    values[i] = converted
        errors = [bad[i] for i in sorted(bad)]
        if errors and on_error == "fail":
            raise InputError(str(errors[0]), errors[0])
        numbers = [row + i for i in range(table.num_rows) if i not in bad]
        if bad:
            columns = {
                name: [v for i, v in enumerate(as_list(values)) if i not in bad] for name, values in columns.items()
            }
        rows = None
        if self.fields.whole:
            rows = [r for i, r in enumerate(table.to_pylist()) if i not in bad]
        return Chunk(
            row,
            numbers,
            columns,
            errors,
            row + table.num_rows,
            list(numbers),
            self.hasher.hexdigest(),
            self.text & set(names),
            rows,
        )


# --------------------------------------------------------------------------- reading API


def _check_arguments(fields: Sequence[str] | None, chunk_size: int, on_error: str, start_row: int) -> None:
    """Reject programming errors early with a clear message."""
    if isinstance(fields, str):
        raise TypeError(f"fields must be a sequence of names, not a string; did you mean [{fields!r}]?")
    if fields is not None:
        if not fields:
            raise ValueError("fields must name at least one field (or be None)")
        if len(set(fields)) != len(fields):
            raise ValueError(f"fields contains duplicates: {list(fields)}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {list(ON_ERROR)}, got {on_error!r}")
    if start_row < 0:
        raise ValueError(f"start_row must be >= 0, got {start_row}")


class ChunkReader:
    """The chunks of one file, read once from an already open handle.

    Iterate it for :class:`Chunk` objects.  :meth:`skip` moves to ``start_row`` (hashing what
    it passes) and returns the digest of everything before it; iteration calls it first.
    """

    def __init__(
        self,
        fh: IO[bytes],
        source: Any,
        path: str,
        fmt: str,
        fields: _Fields,
        start_row: int,
        chunk_size: int,
        on_error: str,
    ) -> None:
        self._fh = fh
        self._source = source
        self.path = path
        self.format = fmt
        self.fields = list(fields.names)
        self.start_row = start_row
        self.chunk_size = chunk_size
        self.on_error = on_error
        self._skipped: str | None = None
        self._chunks: Iterator[Chunk] | None = None

    def skip(self) -> str:
        """Move to ``start_row``; the digest of the input before it (the whole prefix)."""
        if self._skipped is None:
            try:
                self._source.skip(self.start_row, self.chunk_size)
            except OSError as exc:
                raise InputError(describe_os_error(exc, self.path)) from exc
            self._skipped = self._source.hasher.hexdigest()
        return self._skipped

    def __iter__(self) -> ChunkReader:
        return self

    def __next__(self) -> Chunk:
        if self._chunks is None:
            self.skip()
            self._chunks = self._source.chunks(self.start_row, self.chunk_size, self.on_error)
        try:
            return next(self._chunks)
        except StopIteration:
            self.close()
            raise
        except OSError as exc:  # e.g. a network file system going away mid-read
            self.close()
            raise InputError(describe_os_error(exc, self.path)) from exc
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> ChunkReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_columns(
    path: PathLike,
    fields: Sequence[str] | None,
    *,
    fmt: str | None = None,
    chunk_size: int = 65536,
    on_error: str = "fail",
    start_row: int = 0,
    allow_list_fields: Iterable[str] = (),
    key_fields: Iterable[str] = (),
    raw_fields: Iterable[str] = (),
    whole_records: bool = False,
    raw_as_json_text: bool = False,
    empty_list_fields: Iterable[str] = (),
    check_content: bool = True,
    arrow_text: bool = False,
    skip_blank: bool = False,
    arrow_table: bool = False,
) -> ChunkReader:
    """Stream the selected fields of a corpus file in chunks.

    Args:
        path: the file to read (a pipe or FIFO too, except for Parquet).
        fields: field names to select; None means all columns (CSV, Parquet) or ``text``
            (plain text).  JSONL and JSON need explicit fields, or ``whole_records`` (every
            record whole, no field selected or checked).
        fmt: ``"text"``, ``"jsonl"``, ``"csv"``, ``"parquet"`` or ``"json"``; inferred from the
            extension when None.
        chunk_size: source records per chunk (bad records count too).
        on_error: ``"fail"`` raises :class:`InputError` at the first bad record;
            ``"skip"`` and ``"record"`` both leave bad records out of ``columns`` and list
            them in ``Chunk.errors`` (what to do with them is the caller's policy).
        start_row: 0-based index of the first source record to read (for resuming).
        allow_list_fields: fields that may also hold a non-empty list of strings (several
            references per row).
        key_fields: fields that may hold strings or integers (ids, systems, groups);
            integers are given back as strings.
        raw_fields: fields handed over as read, unchecked (JSON values, nested Parquet
            values); see :attr:`Chunk.text_fields`.
        whole_records: also give every good record as a dict (:attr:`Chunk.rows`).
        empty_list_fields: as ``allow_list_fields``, and the list may be empty (SQuAD v2's
            unanswerable questions).
        check_content: refuse a file read as text under an extension that names no format
            when its first bytes are another format's (:func:`check_text_content`); False when
            the caller was told it is text.
        raw_as_json_text: a raw field's array or object value may be given as its JSON text
            (a str) instead of its Python value, for callers that read JSON text themselves
            (the trajectory metrics read it natively, several times faster than decoding it
            in Python first): from JSONL lines the native core's checker is certain of, and
            from nested Parquet columns of types it writes from their buffers
            (:func:`respeval.io.nested.raw_values`).  The values mean the same either way.
        arrow_text: a text field of a Parquet string column without nulls, or of a JSONL or
            CSV chunk whose every line the native reader takes, may be given as the chunk's Arrow
            string array instead of a list of str (for callers that read Arrow strings in
            place: the ROUGE kernels); :func:`as_list` makes it a list.
        skip_blank: JSONL and CSV: a blank line is no record (neither counted nor an error),
            as evaluate has always read them; record numbers then count the other lines.
        arrow_table: Parquet: each chunk's records as its Arrow table (:attr:`Chunk.table`),
            of any column types, without reading a value into Python or checking one.

    Every other selected value must be a string: JSON null, numbers, objects, Parquet nulls
    and non-string columns are errors, never coerced.

    Raises:
        InputError: the file is unreadable, lacks a selected column, or (with
            ``on_error="fail"``) holds a bad record.  File and schema problems are raised
            by this call itself; record problems while iterating.
    """
    path = os.fspath(path)
    _check_arguments(fields, chunk_size, on_error, start_row)
    fmt = resolve_format(path, fmt, READ_FORMATS)
    kinds = _field_kinds(allow_list_fields, key_fields, raw_fields, empty_list_fields)
    fh = _open_binary(path)
    try:
        if fmt == "text":
            if fields is not None and list(fields) != [_TEXT_FIELD]:
                raise ValueError(f"plain text files have a single field {_TEXT_FIELD!r}, got {list(fields)}")
            selected = [_TEXT_FIELD]
            if check_content:
                check_text_content(path, fh)
        elif fmt == "json":
            if fields is None and not whole_records:
                raise ValueError("a JSON document's rows have no header: pass fields=[...] naming the fields to read")
            document = read_json_document(path, fh)
            selected = list(fields or ())
        elif fmt == "jsonl":
            if fields is None and not whole_records:
                raise ValueError("JSONL has no header: pass fields=[...] naming the fields to read")
            selected = list(fields or ())
        elif fmt == "csv":
            source: Any = _CsvSource(fh, path, fields)
            selected = source.names
        else:
            source = _ParquetSource(fh, path, fields, kinds, tables=arrow_table)
            selected = source.names
        unknown = sorted(set(kinds) - set(selected))
        if unknown:
            raise ValueError(f"field kinds name fields that are not selected: {unknown}")
        chosen = _Fields(
            tuple(selected),
            tuple(kinds.get(n, TEXT) for n in selected),
            whole_records,
            raw_as_json_text,
            arrow_text,
            skip_blank,
            arrow_table,
        )
        if fmt in ("text", "jsonl"):
            source = _LineSource(fh, path, fmt, chosen)
        elif fmt == "json":
            source = RowsSource(document.rows(), path, chosen, document.digest)
        else:
            source.bind(chosen)
    except BaseException:
        fh.close()
        raise
    return ChunkReader(fh, source, path, fmt, chosen, start_row, chunk_size, on_error)


def _field_kinds(
    allow_list_fields: Iterable[str],
    key_fields: Iterable[str],
    raw_fields: Iterable[str],
    empty_list_fields: Iterable[str],
) -> dict[str, str]:
    kinds: dict[str, str] = {}
    for names, kind in (
        (allow_list_fields, TEXT_LIST),
        (key_fields, KEY),
        (raw_fields, RAW),
        (empty_list_fields, TEXT_LIST_OR_EMPTY),
    ):
        for name in names:
            if name in kinds:
                raise ValueError(f"field {name!r} is given two kinds ({kinds[name]} and {kind})")
            kinds[name] = kind
    return kinds


def check_text_content(path: str, fh: Any) -> None:
    """A file read as plain text because its extension names no format (``.de``, none):
    refused when its first bytes say it is JSON, JSON lines, Parquet, compressed or binary
    (:func:`respeval.io.formats.sniff_mismatch`).  Reads nothing (peeks), so a pipe works."""
    if format_of(path) is not None or not hasattr(fh, "peek"):
        return
    try:
        head = fh.peek(4096)[:4096]
    except OSError:
        return
    what = sniff_mismatch(head)
    if what is not None:
        raise InputError(f"{path}: read as plain text (its extension names no format), but it is {what}")


def sniff_file(path: PathLike) -> None:
    """:func:`check_text_content` for a regular file about to be read as plain text, before
    a run starts (a pipe is checked by its reader, on the bytes it reads)."""
    path = os.fspath(path)
    if format_of(path) is not None or not is_regular(path):
        return
    with _open_binary(path) as fh:
        check_text_content(path, fh)


def rows_reader(
    items: Sequence[Any],
    path: PathLike,
    fields: Sequence[str] | None,
    *,
    digest: str,
    chunk_size: int = 20_000,
    on_error: str = "fail",
    start_row: int = 0,
    allow_list_fields: Sequence[str] = (),
    key_fields: Sequence[str] = (),
    raw_fields: Sequence[str] = (),
    whole_records: bool = False,
    raw_as_json_text: bool = False,
    empty_list_fields: Sequence[str] = (),
    arrow_text: bool = False,
) -> ChunkReader:
    """:func:`read_columns` over rows in memory (records, or :class:`RowError` for rows known
    bad), numbered 0, 1, ... as a JSON document's; ``path`` names them in messages and
    ``digest`` stands for their content (a resume compares it); ``arrow_text`` is accepted
    for :func:`read_columns`' sake and changes nothing (rows in memory are Python values).
    ``fields`` None, with ``whole_records``: every row whole, no field selected or checked."""
    path = os.fspath(path)
    _check_arguments(fields, chunk_size, on_error, start_row)
    kinds = _field_kinds(allow_list_fields, key_fields, raw_fields, empty_list_fields)
    if fields is None and not whole_records:
        raise ValueError("rows in memory have no header: pass fields=[...] naming the fields to read")
    names = tuple(fields or ())
    chosen = _Fields(names, tuple(kinds.get(n, TEXT) for n in names), whole_records, raw_as_json_text)
    source = RowsSource(items, path, chosen, digest)
    return ChunkReader(io.BytesIO(), source, path, "json", chosen, start_row, chunk_size, on_error)


def count_rows(path: PathLike, fmt: str | None = None, *, skip_blank: bool = False) -> int:
    """Number of source records, as ``read_columns`` would number them (bad ones included;
    with ``skip_blank``, as it numbers them with ``skip_blank``: blank lines are no records).

    Parquet reads the footer; text and JSONL count newlines in binary blocks; CSV has to be
    parsed, because a quoted field may contain newlines.  Counting reads the file, so it is
    refused for a pipe (which would then be empty for the real read).
    """
    path = os.fspath(path)
    fmt = resolve_format(path, fmt, READ_FORMATS)
    if os.path.exists(path) and not is_regular(path):
        raise InputError(f"{path}: not a regular file (a pipe?): its rows cannot be counted without consuming it")
    with _open_binary(path) as fh:
        if fmt == "parquet":
            return int(_open_parquet(fh, path).metadata.num_rows)
        if fmt == "json":
            return len(read_json_document(path, fh).rows())
        if fmt == "csv":
            try:
                return max(sum(1 for row in csv_reader(_CsvLines(fh)) if row or not skip_blank) - 1, 0)
            except csv.Error as exc:
                raise InputError(f"{path}: CSV parse error: {exc}") from exc
        if skip_blank:
            return sum(1 for line in fh if line.strip())
        return _count_lines(fh)


def column_names(path: PathLike, fmt: str | None = None) -> list[str] | None:
    """The columns of a CSV (its header; none in an empty file) or Parquet file (its
    schema), read without the records; None for a format whose records name their own."""
    path = os.fspath(path)
    fmt = resolve_format(path, fmt, READ_FORMATS)
    if fmt not in ("csv", "parquet"):
        return None
    with _open_binary(path) as fh:
        if fmt == "parquet":
            return list(_open_parquet(fh, path).schema_arrow.names)
        try:
            return next(csv_reader(_CsvLines(fh)), [])
        except csv.Error as exc:
            raise InputError(f"{path}:1: CSV parse error: {exc}") from exc


def _count_lines(fh: IO[bytes]) -> int:
    """Count lines, including a last line without a trailing newline."""
    count = 0
    last = b"\n"
    while block := fh.read(_BUFFER_SIZE):
        count += block.count(b"\n")
        last = block[-1:]
    return count + (last != b"\n")
