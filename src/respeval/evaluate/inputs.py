"""The dataset of an evaluation, chunk by chunk: an Arrow table, a pandas DataFrame, a list of
dicts, or a file (JSONL, CSV, Parquet, JSON), read through respeval.io's readers (its rules
for a bad record, its :class:`~respeval.io.readers.Chunk`).  Each chunk holds whole records;
a record that cannot be read (bad JSON, not an object) is reported with its file, line and
reason.  Blank lines of JSONL and CSV files are no records."""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from respeval._collector import fewer_collections
from respeval.io.errors import InputError, RowError
from respeval.io.files import check_readable, is_regular
from respeval.io.formats import extensions_for, format_of
from respeval.io.readers import (
    Chunk,
    ChunkReader,
    column_names,
    count_rows,
    lone_surrogate,
    read_columns,
    read_json_document,
    rows_reader,
)

__all__ = ["BadRecord", "Chunk", "Dataset", "bad_records", "open_dataset"]

# the one extension map (respeval.io.formats); .json: an array of objects or {id: answer}
FORMATS = ("jsonl", "csv", "parquet", "json")
IN_MEMORY = "dataset"  # what names rows given in memory in messages ("dataset row 3")


@dataclass(frozen=True)
class BadRecord:
    """A bad record as the errors file holds it: its 0-based record number, where it is
    (``FILE:LINE``, or ``FILE row N`` for rows read whole) and why."""

    row: int
    where: str
    reason: str

    @classmethod
    def of(cls, row: int, error: RowError) -> BadRecord:
        where = f"{error.path}:{error.line}" if error.unit == "line" else f"{error.path} row {error.line}"
        return cls(row, where, (f"field {error.field!r}: " if error.field is not None else "") + error.reason)

    def to_json(self) -> dict[str, Any]:
        return {"row": self.row, "where": self.where, "reason": self.reason}


def bad_records(chunk: Chunk) -> list[BadRecord]:
    """The chunk's bad records (its records that are not good, in order, with their errors)."""
    if not chunk.errors:
        return []
    good = set(chunk.records)
    rows = [row for row in range(chunk.start_row, chunk.end_row) if row not in good]
    return [BadRecord.of(row, error) for row, error in zip(rows, chunk.errors)]


class Dataset:
    """Where the records come from, and how to read them in chunks from any row."""

    def __init__(self, source: Any, *, on_error: str = "fail") -> None:
        self.source = source
        self.on_error = on_error
        self.path: str | None = None
        self._table: Any = None
        self._records: list[Any] | None = None  # records in memory (and a JSON document's rows)
        if isinstance(source, (str, os.PathLike)):
            self.path = os.fspath(source)
            fmt = format_of(self.path)
            if fmt not in FORMATS:
                suffix = Path(self.path).suffix.lower() or "(none)"
                raise ValueError(
                    f"{self.path}: unknown format {suffix!r} (expected "
                    f"{', '.join(e for f in FORMATS for e in extensions_for(f))})"
                )
            check_readable(self.path)  # names a missing file, a symlink loop, a permission problem
            self.format = fmt
            if fmt == "json":  # a document is read whole: its rows are records in memory
                try:
                    self._keep_records(read_json_document(self.path).rows())
                except InputError as exc:
                    raise ValueError(str(exc)) from None
            return
        import pyarrow as pa

        if isinstance(source, pa.RecordBatch):
            source = pa.Table.from_batches([source])
        if isinstance(source, pa.Table):
            self._table = source
        elif hasattr(source, "to_dict") and hasattr(source, "columns"):  # pandas
            try:
                self._table = pa.Table.from_pandas(source, preserve_index=False)
            except UnicodeEncodeError:  # a lone surrogate in a text: the rows that hold one are bad
                self._keep_records(source.to_dict("records"))
                return
        elif isinstance(source, Sequence) and all(isinstance(r, Mapping) for r in source):
            records = [dict(r) for r in source]
            try:
                self._table = pa.Table.from_pylist(records)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError, UnicodeEncodeError):
                # a column whose values have no one Arrow type (a trajectory that is sometimes
                # not a list, a number among texts): the records stay as they are, and each
                # metric names the rows it cannot read
                self._keep_records(records)
                return
        else:
            raise TypeError(
                "dataset must be an Arrow table, a pandas DataFrame, a list of dicts or a file path "
                f"(.jsonl, .csv, .parquet), got {type(source).__name__}"
            )
        self.format = "arrow"

    def _keep_records(self, records: list[Any]) -> None:
        """Records kept as they are, read through respeval.io's rows in memory: one that is
        no object, or holds a lone surrogate (respeval.io.readers.lone_surrogate), is a bad row."""
        self._records = records
        self.format = "records"

    def fingerprint(self) -> str:
        if self._records is not None:
            text = json.dumps(self._records, sort_keys=True, ensure_ascii=False, default=repr)
            return "records:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        if self.path is not None:
            # the content, not the path (relative or absolute is one input) nor size and mtime
            # (which cp -p and archives restore): a resume must read what the first run read
            digest = hashlib.sha256()
            with open(self.path, "rb") as fh:
                while block := fh.read(1 << 20):
                    digest.update(block)
            return "file:" + digest.hexdigest()
        digest = hashlib.sha256()
        for batch in self._table.to_batches(max_chunksize=65536):
            sink = io.BytesIO()
            import pyarrow as pa

            with pa.ipc.new_stream(sink, batch.schema) as writer:
                writer.write_batch(batch)
            digest.update(sink.getvalue())
        return "table:" + digest.hexdigest()

    def columns(self) -> list[str] | None:
        """Column names when known without reading the data (tables, Parquet, CSV)."""
        if self._table is not None:
            return list(self._table.column_names)
        if self._records is not None:  # the good records' (a bad one is no row of the table)
            good = (r for r in self._records if isinstance(r, dict) and lone_surrogate(r) is None)
            return list(dict.fromkeys(k for r in good for k in r))
        assert self.path is not None
        return column_names(self.path, self.format)

    def count(self) -> int | None:
        if self._table is not None:
            return int(self._table.num_rows)
        if self._records is not None:
            return len(self._records)
        assert self.path is not None
        if not is_regular(self.path):
            return None  # counting would consume a pipe
        try:
            return count_rows(self.path, self.format, skip_blank=True)
        except (OSError, InputError):
            return None  # a progress bar without a total; the read names the problem

    def chunks(self, chunk_size: int, start_chunk: int = 0) -> Iterator[Chunk]:
        """Chunks of ``chunk_size`` records, from chunk ``start_chunk`` on; with
        ``on_error="fail"``, a ValueError at the first bad record."""
        start = start_chunk * chunk_size
        if self._table is not None:
            for row in range(start, self._table.num_rows, chunk_size):
                part = self._table.slice(row, chunk_size)
                numbers = list(range(row, row + part.num_rows))
                yield Chunk(row, numbers, {}, [], row + part.num_rows, list(numbers), table=part)
            return
        if self._records is not None:
            reader = rows_reader(
                self._records,
                self.path or IN_MEMORY,
                None,
                digest="",
                chunk_size=chunk_size,
                on_error="record",
                start_row=start,
                whole_records=True,
            )
            advice = " (use on_error='skip' or 'record' to go on)"
        else:
            assert self.path is not None
            reader = self._file_reader(chunk_size, start)
            advice = " (use --on-error skip or record to go on)"
        with reader:
            while True:
                with fewer_collections():  # a chunk's records: many small containers, no cycles
                    chunk = next(reader, None)
                if chunk is None:
                    return
                if chunk.errors and self.on_error == "fail":
                    bad = bad_records(chunk)[0]
                    raise ValueError(f"{bad.where}: {bad.reason}{advice}")
                yield chunk

    def _file_reader(self, chunk_size: int, start_row: int) -> ChunkReader:
        assert self.path is not None
        try:
            return read_columns(
                self.path,
                None,
                fmt=self.format,
                chunk_size=chunk_size,
                on_error="record",
                start_row=start_row,
                whole_records=self.format != "parquet",
                skip_blank=True,
                arrow_table=self.format == "parquet",
            )
        except InputError as exc:
            raise ValueError(str(exc)) from None


def open_dataset(source: Any, *, on_error: str = "fail") -> Dataset:
    return source if isinstance(source, Dataset) else Dataset(source, on_error=on_error)
