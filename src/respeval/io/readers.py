"""Streaming input: text corpora in chunks, JSONL records one by one.

Readers turn a file into a stream of :class:`Chunk` objects (column-wise Python lists of
``chunk_size`` source records each) and check every selected field on the way, so a bad
record is reported as ``file:line: field 'name': reason`` instead of surfacing later as a
wrong score.  Formats and record numbering: :mod:`respeval.io.formats`.

pyarrow is imported only inside the Parquet code paths, so text, JSONL and CSV work (and
this module imports) without it.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import IO, TYPE_CHECKING, Any, Union

from respeval.io.errors import ON_ERROR, InputError, RowError
from respeval.io.formats import READ_FORMATS, resolve_format

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pyarrow as pa

PathLike = Union[str, "os.PathLike[str]"]

_TEXT_FIELD = "text"
# Large read buffer: line iteration over a BufferedReader is C code, and fewer syscalls
# matter when a corpus has millions of short lines.
_BUFFER_SIZE = 1 << 20


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
    """

    start_row: int
    row_numbers: list[int]
    columns: dict[str, list[Any]]
    errors: list[RowError]
    end_row: int
    records: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.row_numbers)


# --------------------------------------------------------------------------- helpers


def _open_binary(path: str) -> IO[bytes]:
    """Open ``path`` for reading, turning OS errors into an InputError naming the file."""
    try:
        return open(path, "rb", buffering=_BUFFER_SIZE)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def type_name(value: object) -> str:
    """Name a value's type in JSON terms, which is what users of these files think in."""
    if value is None:
        return "null"
    names = {bool: "bool", int: "int", float: "float", str: "string", dict: "object", list: "list"}
    return names.get(type(value), type(value).__name__)


def _check_value(value: object, allow_list: bool) -> str | None:
    """Return why ``value`` is not a valid text field, or None when it is."""
    if isinstance(value, str):
        return None
    if not allow_list:
        return f"expected a string, got {type_name(value)}"
    if not isinstance(value, list):
        return f"expected a string or a non-empty list of strings, got {type_name(value)}"
    if not value:
        return "expected a non-empty list of strings, got an empty list"
    for i, item in enumerate(value):
        if not isinstance(item, str):
            return f"list item {i}: expected a string, got {type_name(item)}"
    return None


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


def _strip_bom(text: str, line: int) -> str:
    """Drop a UTF-8 byte order mark at the start of a file (Excel and Notepad write one)."""
    return text[1:] if line == 1 and text.startswith("\ufeff") else text


# A source record as produced by the per-format generators: its line number and either the
# selected values (in field order) or the reason it was rejected.
_Record = tuple[int, list[Any] | RowError]


def _chunked(
    records: Iterator[_Record], fields: Sequence[str], start_row: int, chunk_size: int, on_error: str
) -> Iterator[Chunk]:
    """Group per-record results into chunks of ``chunk_size`` source records.

    Chunks count source records (good and bad), so chunk boundaries and ``end_row`` do not
    depend on how many records were rejected, which keeps resume offsets stable.
    """
    row = start_row
    while True:
        batch = list(islice(records, chunk_size))
        if not batch:
            return
        cols: list[list[Any]] = [[] for _ in fields]
        numbers: list[int] = []
        good: list[int] = []
        errors: list[RowError] = []
        for i, (number, values) in enumerate(batch):
            if isinstance(values, RowError):
                if on_error == "fail":
                    raise InputError(str(values), values)
                errors.append(values)
                continue
            numbers.append(number)
            good.append(row + i)
            for col, value in zip(cols, values):
                col.append(value)
        yield Chunk(row, numbers, dict(zip(fields, cols)), errors, row + len(batch), good)
        row += len(batch)


# --------------------------------------------------------------------------- text / JSONL


def _text_records(fh: IO[bytes], path: str, start_row: int) -> Iterator[_Record]:
    """One record per line; empty lines are valid (empty) texts."""
    for number, raw in enumerate(islice(fh, start_row, None), start_row + 1):
        text, reason = _decode_line(raw)
        if reason is not None:
            yield number, RowError(path, number, None, reason)
        else:
            yield number, [_strip_bom(text, number)]


def _jsonl_records(
    fh: IO[bytes], path: str, fields: Sequence[str], list_fields: frozenset[str], start_row: int
) -> Iterator[_Record]:
    """One JSON object per line; every selected field must be present and textual."""
    for number, raw in enumerate(islice(fh, start_row, None), start_row + 1):
        yield number, _parse_jsonl_line(raw, path, number, fields, list_fields)


def parse_json_line(raw: bytes, path: str, number: int) -> Any:
    """Decode and parse one JSONL line: the JSON value, or the :class:`RowError` saying why not.

    The one JSONL line parser: the chunked readers and :func:`read_jsonl` (judge, gate,
    validate) read lines through it, so every command reports a bad line the same way.
    """
    text, reason = _decode_line(raw)
    if reason is not None:
        return RowError(path, number, None, reason)
    text = _strip_bom(text, number)
    # An empty line usually means a truncated or concatenated file; skipping it silently
    # would shift every later record against its reference.
    if not text.strip():
        return RowError(path, number, None, "empty line")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        return RowError(path, number, None, f"malformed JSON: {exc.msg} (column {exc.colno})")


def parse_json_object(raw: bytes, path: str, number: int) -> dict[str, Any] | RowError:
    """One JSONL line that must hold a JSON object."""
    obj = parse_json_line(raw, path, number)
    if isinstance(obj, RowError) or isinstance(obj, dict):
        return obj
    return RowError(path, number, None, f"expected a JSON object, got {type_name(obj)}")


def _parse_jsonl_line(
    raw: bytes, path: str, number: int, fields: Sequence[str], list_fields: frozenset[str]
) -> list[Any] | RowError:
    """Parse and check one JSONL line; return the selected values or the error."""
    obj = parse_json_object(raw, path, number)
    if isinstance(obj, RowError):
        return obj
    values = []
    for name in fields:
        if name not in obj:
            return RowError(path, number, name, "missing")
        value = obj[name]
        reason = _check_value(value, name in list_fields)
        if reason is not None:
            return RowError(path, number, name, reason)
        values.append(value)
    return values


def read_jsonl(path: PathLike, *, skip_blank: bool = True) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every record of a JSONL file as ``(line number, object)``, stopping at the first bad line.

    For commands that take whole records (judge, gate, validate): a line that is not a JSON
    object raises :class:`InputError` naming the file and line.  Blank lines are skipped
    unless ``skip_blank`` is false.
    """
    path = os.fspath(path)
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
            raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


# --------------------------------------------------------------------------- CSV


class _CsvLines:
    """Decoded lines for ``csv.reader``, remembering which lines were not valid UTF-8.

    The csv module needs text, but a decode error raised from inside its iteration would
    abort the whole file.  Undecodable lines are passed on with surrogate escapes and their
    numbers kept here, so the record containing them can be rejected by line number.
    """

    def __init__(self, fh: IO[bytes]) -> None:
        self._fh = fh
        self.bad: dict[int, str] = {}

    def __iter__(self) -> Iterator[str]:
        for number, raw in enumerate(self._fh, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                self.bad[number] = f"invalid UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start}"
                text = raw.decode("utf-8", "surrogateescape")
            yield _strip_bom(text, number)


def _csv_header(reader: Iterator[list[str]], lines: _CsvLines, path: str) -> list[str]:
    """Read and check the header row."""
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(f"{path}: empty file, expected a CSV header row") from None
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


def _csv_records(fh: IO[bytes], path: str, fields: Sequence[str], start_row: int) -> Iterator[_Record]:
    """One record per CSV row after the header; values are strings by construction."""
    lines = _CsvLines(fh)
    reader = csv.reader(lines)
    try:
        header = _csv_header(reader, lines, path)
        duplicated = sorted({name for name in fields if header.count(name) > 1})
        if duplicated:
            raise InputError(f"{path}: ambiguous column(s) {', '.join(map(repr, duplicated))}: repeated in the header")
        indices = [header.index(name) for name in fields]
        last_line = reader.line_num
        for index, row in enumerate(reader):
            # A quoted field may span lines: the record starts on the line after the last one.
            first_line, last_line = last_line + 1, reader.line_num
            # Report the record's first undecodable line; forget the rest of its lines.
            bad = sorted(lines.bad)
            reasons = [lines.bad.pop(n) for n in bad]
            if index < start_row:
                continue
            if bad:
                yield first_line, RowError(path, bad[0], None, reasons[0])
            elif not row:
                yield first_line, RowError(path, first_line, None, "empty line")
            elif len(row) != len(header):
                yield first_line, RowError(path, first_line, None, f"expected {len(header)} columns, got {len(row)}")
            else:
                yield first_line, [row[i] for i in indices]
    except csv.Error as exc:
        # After a parser error the reader may be out of step with record boundaries, so
        # later rows cannot be trusted: this is fatal whatever on_error says.
        raise InputError(f"{path}:{reader.line_num}: CSV parse error: {exc}") from exc


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


def _open_parquet(fh: IO[bytes], path: str) -> Any:
    """Wrap an open file in a ParquetFile, naming the file when it is not Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # pre_buffer would cache the bytes of every row group read so far until the
        # reader is done: memory growing with the file, the opposite of streaming
        return pq.ParquetFile(fh, pre_buffer=False)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a readable Parquet file: {exc}") from exc


def _parquet_fields(pf: Any, path: str, fields: Sequence[str] | None, list_fields: frozenset[str]) -> list[str]:
    """Check the selected columns exist and hold text, before any data is read."""
    import pyarrow as pa

    schema = pf.schema_arrow
    selected = _select_columns(path, schema.names, fields, "column")
    for name in selected:
        typ = schema.field(name).type
        if _is_string_type(pa, typ) or (name in list_fields and _is_string_list_type(pa, typ)):
            continue
        expected = "string or list<string>" if name in list_fields else "string"
        raise InputError(f"{path}: column {name!r} has type {typ}, expected {expected}")
    return selected


def _parquet_tables(pf: Any, fields: Sequence[str], start_row: int, chunk_size: int) -> Iterator[pa.Table]:
    """Yield tables of exactly ``chunk_size`` rows (the last may be shorter) from ``start_row``.

    Whole row groups before ``start_row`` are skipped using the footer metadata, so resuming
    near the end of a large file does not decode its beginning.
    """
    import pyarrow as pa

    metadata = pf.metadata
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
    # iter_batches does not cross row groups, so batches can come out short; re-slice them
    # so that every chunk has the same number of rows whatever the file's layout.
    for batch in pf.iter_batches(batch_size=chunk_size, row_groups=groups, columns=list(fields)):
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


def _parquet_chunk(
    table: pa.Table, path: str, fields: Sequence[str], list_fields: frozenset[str], row: int, on_error: str
) -> Chunk:
    """Convert one table slice to a Chunk, rejecting rows with nulls or bad lists."""
    columns = {name: table.column(name).to_pylist() for name in fields}
    bad: dict[int, RowError] = {}
    for name in fields:
        # A null-free string column needs no per-value check; only pay for the others.
        if table.column(name).null_count == 0 and name not in list_fields:
            continue
        allow_list = name in list_fields
        for i, value in enumerate(columns[name]):
            if i not in bad:
                reason = _check_value(value, allow_list)
                if reason is not None:
                    bad[i] = RowError(path, row + i, name, reason, unit="row")
    errors = [bad[i] for i in sorted(bad)]
    if errors and on_error == "fail":
        raise InputError(str(errors[0]), errors[0])
    numbers = [row + i for i in range(table.num_rows) if i not in bad]
    if bad:
        columns = {name: [v for i, v in enumerate(values) if i not in bad] for name, values in columns.items()}
    return Chunk(row, numbers, columns, errors, row + table.num_rows, list(numbers))


def _parquet_chunks(
    path: str, fields: Sequence[str], list_fields: frozenset[str], start_row: int, chunk_size: int, on_error: str
) -> Iterator[Chunk]:
    """Read a Parquet file as chunks of ``chunk_size`` rows."""
    with _open_binary(path) as fh:
        pf = _open_parquet(fh, path)
        row = start_row
        for table in _parquet_tables(pf, fields, start_row, chunk_size):
            yield _parquet_chunk(table, path, fields, list_fields, row, on_error)
            row += table.num_rows


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


def _resolve_fields(path: str, fmt: str, fields: Sequence[str] | None) -> list[str]:
    """Open the file once to check it is readable and resolve ``fields`` against its schema.

    Done eagerly, so a missing file or column is reported when ``read_columns`` is called
    rather than at the first ``next()``; the generator then reopens the file.
    """
    with _open_binary(path) as fh:
        if fmt == "text":
            if fields is not None and list(fields) != [_TEXT_FIELD]:
                raise ValueError(f"plain text files have a single field {_TEXT_FIELD!r}, got {list(fields)}")
            return [_TEXT_FIELD]
        if fmt == "jsonl":
            if fields is None:
                raise ValueError("JSONL has no header: pass fields=[...] naming the fields to read")
            return list(fields)
        if fmt == "csv":
            lines = _CsvLines(fh)
            try:
                header = _csv_header(csv.reader(lines), lines, path)
            except csv.Error as exc:
                raise InputError(f"{path}:1: CSV parse error: {exc}") from exc
            return _select_columns(path, header, fields, "column")
    raise AssertionError(fmt)  # pragma: no cover - parquet is handled by the caller


def read_columns(
    path: PathLike,
    fields: Sequence[str] | None,
    *,
    fmt: str | None = None,
    chunk_size: int = 65536,
    on_error: str = "fail",
    start_row: int = 0,
    allow_list_fields: Iterable[str] = (),
) -> Iterator[Chunk]:
    """Stream the selected text fields of a corpus file in chunks.

    Args:
        path: the file to read.
        fields: field names to select; None means all columns (CSV, Parquet) or ``text``
            (plain text).  JSONL needs explicit fields.
        fmt: ``"text"``, ``"jsonl"``, ``"csv"`` or ``"parquet"``; inferred from the
            extension when None.
        chunk_size: source records per chunk (bad records count too).
        on_error: ``"fail"`` raises :class:`InputError` at the first bad record;
            ``"skip"`` and ``"record"`` both leave bad records out of ``columns`` and list
            them in ``Chunk.errors`` (what to do with them is the caller's policy).
        start_row: 0-based index of the first source record to read (for resuming).
        allow_list_fields: fields that may also hold a non-empty list of strings (several
            references per row).

    Every selected value must be a string: JSON null, numbers, objects, Parquet nulls and
    non-string columns are errors, never coerced.

    Raises:
        InputError: the file is unreadable, lacks a selected column, or (with
            ``on_error="fail"``) holds a bad record.  File and schema problems are raised
            by this call itself; record problems while iterating.
    """
    path = os.fspath(path)
    _check_arguments(fields, chunk_size, on_error, start_row)
    fmt = resolve_format(path, fmt, READ_FORMATS)
    list_fields = frozenset(allow_list_fields)
    if fmt == "parquet":
        with _open_binary(path) as fh:
            selected = _parquet_fields(_open_parquet(fh, path), path, fields, list_fields)
    else:
        selected = _resolve_fields(path, fmt, fields)
    unknown = sorted(list_fields - set(selected))
    if unknown:
        raise ValueError(f"allow_list_fields names fields that are not selected: {unknown}")
    if fmt == "parquet":
        return _parquet_chunks(path, selected, list_fields, start_row, chunk_size, on_error)
    return _text_like_chunks(path, fmt, selected, list_fields, start_row, chunk_size, on_error)


def _text_like_chunks(
    path: str, fmt: str, fields: list[str], list_fields: frozenset[str], start_row: int, chunk_size: int, on_error: str
) -> Iterator[Chunk]:
    """Read a line-based file (text, JSONL, CSV) as chunks."""
    with _open_binary(path) as fh:
        if fmt == "text":
            records = _text_records(fh, path, start_row)
        elif fmt == "jsonl":
            records = _jsonl_records(fh, path, fields, list_fields, start_row)
        else:
            records = _csv_records(fh, path, fields, start_row)
        try:
            yield from _chunked(records, fields, start_row, chunk_size, on_error)
        except OSError as exc:  # e.g. a network file system going away mid-read
            raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def count_rows(path: PathLike, fmt: str | None = None) -> int:
    """Number of source records, as ``read_columns`` would number them (bad ones included).

    Parquet reads the footer; text and JSONL count newlines in binary blocks; CSV has to be
    parsed, because a quoted field may contain newlines.
    """
    path = os.fspath(path)
    fmt = resolve_format(path, fmt, READ_FORMATS)
    with _open_binary(path) as fh:
        if fmt == "parquet":
            return int(_open_parquet(fh, path).metadata.num_rows)
        if fmt == "csv":
            try:
                return max(sum(1 for _ in csv.reader(_CsvLines(fh))) - 1, 0)
            except csv.Error as exc:
                raise InputError(f"{path}: CSV parse error: {exc}") from exc
        return _count_lines(fh)


def _count_lines(fh: IO[bytes]) -> int:
    """Count lines, including a last line without a trailing newline."""
    count = 0
    last = b"\n"
    while block := fh.read(_BUFFER_SIZE):
        count += block.count(b"\n")
        last = block[-1:]
    return count + (last != b"\n")
