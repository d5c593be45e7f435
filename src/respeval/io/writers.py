"""Writing results: chunks appended to Parquet, JSONL or CSV, floats exactly.

:class:`ResultWriter` appends result chunks and flushes every chunk to the operating
system; :func:`parquet_writer` and :func:`join_parquet` are the Parquet pieces the bulk
run's parts and final join share.

pyarrow is imported only inside the Parquet code paths.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
from collections.abc import Iterable, Mapping
from typing import IO, Any

from respeval.io.files import OutputError, atomic_output, replace_with_new
from respeval.io.formats import WRITE_FORMATS, resolve_format
from respeval.io.readers import PathLike


def _to_list(values: Any) -> list[Any]:
    """Column values as a Python list (numpy arrays and Arrow arrays included)."""
    if hasattr(values, "to_pylist"):  # pyarrow Array / ChunkedArray
        return values.to_pylist()
    if hasattr(values, "tolist"):  # numpy ndarray: tolist() yields exact Python floats/ints
        return values.tolist()
    return list(values)


def _plain(value: Any) -> Any:
    """Numpy scalars to Python scalars (np.int64 is not JSON serialisable)."""
    return value.item() if type(value).__module__ == "numpy" and hasattr(value, "item") else value


def _json_default(value: Any) -> Any:
    """json.dumps hook for the numpy values that slip into plain lists."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot write a value of type {type(value).__name__} as JSON")


# One shared encoder: json.dumps with keyword arguments builds a new encoder per call,
# which dominated the cost of writing short rows.
_JSON_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_json_default)


_encode_str = json.encoder.encode_basestring  # the C escaper json uses with ensure_ascii=False
_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}  # json's spellings


def _json_value(value: Any) -> str:
    """Encode one value exactly as json.dumps(ensure_ascii=False) would, fast for scalars."""
    kind = type(value)
    if kind is str:
        return _encode_str(value)
    if kind is float:
        text = float.__repr__(value)  # shortest round-trip form, as json uses
        return _NON_FINITE.get(text, text)
    if kind is int:
        return int.__repr__(value)
    return _JSON_ENCODER.encode(value)


def _json_column(values: list[Any]) -> list[str]:
    """Encode a column; all-float, all-int and all-str columns take a C-level ``map``."""
    kinds = set(map(type, values))
    if kinds == {float}:
        texts = list(map(float.__repr__, values))
        if not all(map(math.isfinite, values)):
            texts = [_NON_FINITE.get(text, text) for text in texts]
        return texts
    if kinds == {int}:
        return list(map(int.__repr__, values))
    if kinds == {str}:
        return list(map(_encode_str, values))
    return [_json_value(v) for v in values]


def _csv_cell(value: Any) -> str:
    """Format one CSV cell; floats use repr, the shortest string that reads back exactly."""
    value = _plain(value)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, dict, tuple)):
        return _JSON_ENCODER.encode(value)
    return str(value)


def arrow_array(values: Any, arrow_type: Any = None) -> Any:
    """``pa.array(values, arrow_type)``, made from the buffers themselves for the columns of
    results: a 1-D numeric numpy array, or a list of ASCII strings (ids, systems, groups).
    ``pa.array`` asks pyarrow's pandas shim about any other value, which imports pandas:
    ~0.3 s, more than a short run's scoring.  The arrays are the same."""
    import numpy as np
    import pyarrow as pa

    if isinstance(values, pa.Array):
        return values if arrow_type is None or values.type.equals(arrow_type) else pa.array(values, arrow_type)
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "iuf":
        typ = pa.from_numpy_dtype(values.dtype)
        if arrow_type is None or typ.equals(arrow_type):
            data = pa.py_buffer(np.ascontiguousarray(values))
            return pa.Array.from_buffers(typ, len(values), [None, data])
    elif type(values) is list and (arrow_type is None or arrow_type.equals(pa.string())):
        try:
            text = "".join(values)
        except TypeError:  # not all strings
            text = None
        # ASCII: each character is one byte, so the characters count the offsets
        if text is not None and text.isascii():
            offsets = np.zeros(len(values) + 1, dtype=np.int32)
            np.cumsum(np.fromiter(map(len, values), dtype=np.int64, count=len(values)), out=offsets[1:])
            buffers = [None, pa.py_buffer(offsets), pa.py_buffer(text.encode("ascii"))]
            return pa.Array.from_buffers(pa.string(), len(values), buffers)
    return pa.array(values, arrow_type)


def arrow_table(columns: Mapping[str, Any], schema: Any = None) -> Any:
    """``pa.table(columns, schema=schema)``, each column made by :func:`arrow_array`."""
    import pyarrow as pa

    types = {f.name: f.type for f in schema} if schema is not None else {}
    return pa.table({name: arrow_array(v, types.get(name)) for name, v in columns.items()}, schema=schema)


def parquet_writer(sink: Any, schema: Any, *, scratch: bool = False) -> Any:
    """A ParquetWriter for result tables: dictionary encoding for text columns only.

    Dictionary-encoding float columns of scores (which rarely repeat) costs ~3x the
    whole write for nothing; system, group and id columns do profit from it.  A
    ``scratch`` file (a run's part, read back once and deleted) is written plain, neither
    compressed nor dictionary-encoded: about half the CPU of a part's write, for about
    twice its temporary size.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if scratch:
        return pq.ParquetWriter(sink, schema, use_dictionary=False, compression="none")
    text = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    return pq.ParquetWriter(sink, schema, use_dictionary=text or False)


def close_writer(writer: Any, *, failed: bool = False) -> None:
    """Close a ParquetWriter; after a failure, quietly and for good.

    A ParquetWriter whose close raised (disk full) stays open, and its ``__del__`` tries
    again at garbage collection, printing a traceback after the clean error message.
    """
    if writer is None:
        return
    try:
        writer.close()
    except OSError:
        if not failed:
            raise
    finally:
        if hasattr(writer, "is_open"):
            writer.is_open = False


def write_parquet(table: Any, sink: Any, *, scratch: bool = False) -> None:
    """One table as one Parquet file (one row group) into ``sink`` (a binary file opened by
    :func:`respeval.io.files.open_new`, or a path), the writer closed whatever happens."""
    writer = parquet_writer(sink, table.schema, scratch=scratch)
    try:
        writer.write_table(table)
    except BaseException:
        close_writer(writer, failed=True)
        raise
    close_writer(writer)


def join_parquet(tables: Iterable[Any], sink: IO[bytes]) -> None:
    """Write ``tables`` (same schema, in order) as the row groups of one Parquet file into
    the binary file ``sink``; no tables leave it empty.  The writer is closed even if a table
    fails."""
    writer = None
    try:
        for table in tables:
            if writer is None:
                writer = parquet_writer(sink, table.schema)
            writer.write_table(table)
    except BaseException:
        close_writer(writer, failed=True)
        raise
    close_writer(writer)


class ResultWriter:
    """Append result chunks to a Parquet, JSONL or CSV file.

    Usage::

        with ResultWriter("scores.parquet") as out:
            for chunk in chunks:
                out.write({"row": chunk.row_numbers, "rouge1_f": f})

    The first chunk fixes the columns (and for Parquet the Arrow schema); later chunks must
    have the same column names.  Every ``write`` is flushed to the operating system, so a
    crash loses at most the chunk in progress for JSONL and CSV.  A Parquet file is only
    readable once closed (its footer is written last); ``__exit__`` closes it even when
    the block raises, so the chunks written so far survive an exception.

    Floats are written exactly: shortest round-trip ``repr`` in JSONL and CSV; NaN and
    infinities appear in JSONL as Python's ``NaN``/``Infinity`` tokens (read back by
    Python's json module, not by strict JSON parsers).
    """

    def __init__(self, path: PathLike, fmt: str | None = None, *, stream: IO[Any] | None = None) -> None:
        """``stream``: write into this open file instead of opening ``path`` (a temporary file
        from :func:`respeval.io.files.create_temporary`: binary for Parquet, text opened with
        ``newline=""`` for JSONL and CSV); ``path`` then names the output in messages."""
        self.path = os.fspath(path)
        self.fmt = resolve_format(self.path, fmt, WRITE_FORMATS)
        self._names: list[str] | None = None
        self._parquet: Any = None  # pyarrow.parquet.ParquetWriter, created by the first write
        self._schema: Any = None  # pyarrow.Schema fixed by the first chunk
        self._csv: Any = None
        self.rows_written = 0
        self._fh: IO[Any]
        if stream is not None:
            self._fh = stream
            if self.fmt == "csv":
                self._csv = csv.writer(stream, lineterminator="\n")
            return
        try:  # a new file: whatever is at the name (a link) is replaced, never written through
            if self.fmt == "parquet":
                self._fh = replace_with_new(self.path, "wb")
            else:
                # newline="" keeps csv's and our own line endings exactly as written.
                text = replace_with_new(self.path, "w", encoding="utf-8", newline="")
                self._fh = text
                if self.fmt == "csv":
                    self._csv = csv.writer(text, lineterminator="\n")
        except OSError as exc:
            raise OutputError.wrap(exc, self.path) from exc

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, exc_type: object, *exc_info: object) -> None:
        if exc_type is not None:
            self.abort()  # the block's error is the one to report
        else:
            self.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._fh.closed

    def write(self, table_like: Mapping[str, Any]) -> None:
        """Append one chunk: a mapping of column name to list / numpy array / Arrow array."""
        if self.closed:
            raise ValueError(f"write to closed ResultWriter for {self.path}")
        if hasattr(table_like, "to_pydict") and not isinstance(table_like, Mapping):
            table_like = table_like.to_pydict()  # pyarrow Table / RecordBatch
        names = self._check_columns(table_like)
        columns = {name: table_like[name] for name in names}
        if self.fmt == "parquet":
            self._write_parquet(columns)
        else:
            lists = [_to_list(values) for values in columns.values()]
            if self.fmt == "jsonl":
                self._write_jsonl(names, lists)
            else:
                self._write_csv(lists)
        self._fh.flush()

    def _check_columns(self, table_like: Mapping[str, Any]) -> list[str]:
        """Return the column order fixed by the first chunk; check lengths agree."""
        names = [str(name) for name in table_like]
        if not names:
            raise ValueError("cannot write a chunk with no columns")
        if self._names is None:
            self._names = names
        elif sorted(names) != sorted(self._names):
            raise ValueError(f"{self.path}: chunk columns {names} differ from the first chunk's {self._names}")
        lengths = {name: len(table_like[name]) for name in self._names}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"columns have different lengths: {lengths}")
        self.rows_written += next(iter(lengths.values()))
        return self._names

    def _write_jsonl(self, names: list[str], lists: list[list[Any]]) -> None:
        """One JSON object per row; json uses repr for floats, so they read back exactly."""
        # Values are encoded column by column and spliced into a per-row template: over twice
        # as fast as encoding a dict per row, with the same output as json.dumps.
        template = "{" + ",".join(_JSON_ENCODER.encode(name).replace("%", "%%") + ":%s" for name in names) + "}"
        encoded = [_json_column(values) for values in lists]
        lines = [template % row for row in zip(*encoded)]
        if lines:
            self._fh.write("\n".join(lines) + "\n")

    def _write_csv(self, lists: list[list[Any]]) -> None:
        """Header with the first chunk, then one CSV row per result row."""
        if self._fh.tell() == 0:
            self._csv.writerow(self._names)
        self._csv.writerows([_csv_cell(v) for v in row] for row in zip(*lists))

    def _write_parquet(self, columns: dict[str, Any]) -> None:
        """Each chunk becomes a row group; the first chunk fixes the schema."""
        import pyarrow as pa

        if self._parquet is None:
            table = arrow_table(columns)
            self._schema = table.schema
            self._parquet = parquet_writer(self._fh, table.schema)
        else:
            try:
                table = arrow_table(columns, self._schema)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise ValueError(f"{self.path}: chunk does not match the schema of the first chunk: {exc}") from exc
        if table.num_rows:
            self._parquet.write_table(table)

    def close(self) -> None:
        """Finish the file (Parquet footer) and close it; safe to call twice."""
        if self.closed:
            return
        try:
            close_writer(self._parquet)
        except BaseException:
            with contextlib.suppress(OSError):
                self._fh.close()
            raise
        self._fh.close()

    def abort(self) -> None:
        """Close after a failure, without raising a second error (the file is incomplete)."""
        if self.closed:
            return
        close_writer(self._parquet, failed=True)
        with contextlib.suppress(OSError):
            self._fh.close()


def write_columns(path: PathLike, columns: Mapping[str, Any], fmt: str | None = None) -> int:
    """One table (a mapping of column name to values, or nothing) written to ``path`` in its
    format, atomically: through a new temporary file beside it (:func:`atomic_output`: never a
    fixed name, never through a link) renamed into place when complete.  The rows written."""
    path = os.fspath(path)
    fmt = resolve_format(path, fmt, WRITE_FORMATS)
    binary = fmt == "parquet"
    with (
        atomic_output(
            path, "wb" if binary else "w", encoding=None if binary else "utf-8", newline=None if binary else ""
        ) as fh,
        ResultWriter(path, fmt, stream=fh) as writer,
    ):
        if columns:
            writer.write(columns)
    return writer.rows_written
