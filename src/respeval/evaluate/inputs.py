"""The dataset of an evaluation, chunk by chunk: an Arrow table, a pandas DataFrame, a list of
dicts, or a file (JSONL, CSV, Parquet).  Each chunk holds whole records; a record that cannot
be read (bad JSON, not an object) is reported with its file, line and reason."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from respeval.io.errors import InputError, RowError
from respeval.io.files import check_readable, is_regular
from respeval.io.formats import extensions_for, format_of
from respeval.io.readers import csv_reader, lift_csv_field_limit, lone_surrogate, parse_json_object, read_json_document

__all__ = ["BadRecord", "Chunk", "Dataset", "open_dataset"]

# the one extension map (respeval.io.formats); .json: an array of objects or {id: answer}
FORMATS = ("jsonl", "csv", "parquet", "json")


@dataclass(frozen=True)
class BadRecord:
    row: int
    where: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"row": self.row, "where": self.where, "reason": self.reason}


@dataclass
class Chunk:
    """Rows ``rows`` (0-based input record numbers) of the dataset, as records or as an Arrow
    table (whichever it was read as; the other is made on demand)."""

    index: int
    rows: list[int]
    bad: list[BadRecord] = field(default_factory=list)
    _records: list[dict[str, Any]] | None = None
    _table: Any = None

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def records(self) -> list[dict[str, Any]]:
        if self._records is None:
            self._records = self._table.to_pylist() if self._table is not None else []
        return self._records

    def column(self, name: str) -> list[Any]:
        if self._table is not None and self._records is None:
            if name not in self._table.column_names:
                return [None] * len(self.rows)
            return self._table.column(name).to_pylist()
        return [r.get(name) for r in self.records]

    def json_column(self, name: str) -> list[Any]:
        """A column's values as the JSON they stand for: from Arrow, as ``json_values`` reads
        them (the null fields an Arrow struct adds to objects that lacked those keys dropped,
        maps as objects), so a trajectory reads the same from a table as from its records."""
        if self._table is not None and self._records is None and name in self._table.column_names:
            from respeval.io.nested import json_values

            return json_values(self._table.column(name))
        return self.column(name)

    def arrow(self) -> Any:
        """The chunk as a ``pyarrow.RecordBatch`` (for batch custom functions)."""
        import pyarrow as pa

        if self._table is None:
            try:
                self._table = pa.Table.from_pylist(self.records)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError) as exc:
                raise ValueError(
                    f"rows {self.rows[0]}-{self.rows[-1]}: {_mixed_column(self.records) or 'a column'} mixes types "
                    f"({exc}), so a batch metric cannot have them as an Arrow batch; give the column one type, or "
                    "make the metric a per-row one (batch=False)"
                ) from None
        table = self._table.combine_chunks()
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


class Dataset:
    """Where the records come from, and how to read them in chunks from any row."""

    def __init__(self, source: Any, *, on_error: str = "fail") -> None:
        self.source = source
        self.on_error = on_error
        self.path: str | None = None
        self._table: Any = None
        self._records: list[dict[str, Any]] | None = None
        self._checked: list[tuple[int, dict[str, Any] | BadRecord]] | None = None  # records with bad rows
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

    def _keep_records(self, records: list[dict[str, Any]]) -> None:
        """In-memory records kept as they are; one holding a lone surrogate is a bad row, by
        the rule every reader follows (respeval.io.readers.lone_surrogate)."""
        checked: list[tuple[int, dict[str, Any] | BadRecord]] = []
        for row, record in enumerate(records):
            if not isinstance(record, dict):
                bad = BadRecord(
                    row, f"{self.path or 'dataset'} row {row}", f"expected a JSON object, got {type(record).__name__}"
                )
                if self.on_error == "fail":
                    raise ValueError(f"{bad.where}: {bad.reason} (use on_error='skip' or 'record' to go on)")
                checked.append((row, bad))
                continue
            problem = lone_surrogate(record)
            if problem is None:
                checked.append((row, record))
                continue
            field, reason = problem
            bad = BadRecord(
                row, f"{self.path or 'dataset'} row {row}", (f"field {field!r}: " if field else "") + reason
            )
            if self.on_error == "fail":
                raise ValueError(f"{bad.where}: {bad.reason} (use on_error='skip' or 'record' to go on)")
            checked.append((row, bad))
        self._records = [r for _, r in checked if not isinstance(r, BadRecord)]
        if len(checked) != len(self._records):
            self._checked = checked
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
        if self._records is not None:
            return list(dict.fromkeys(k for r in self._records for k in r))
        if self.format == "parquet":
            import pyarrow.parquet as pq

            return list(pq.ParquetFile(self.path).schema_arrow.names)
        if self.format == "csv":
            with open(self.path, encoding="utf-8-sig", newline="") as fh:  # type: ignore[arg-type]
                return next(csv_reader(fh), [])
        return None

    def count(self) -> int | None:
        if self._table is not None:
            return int(self._table.num_rows)
        if self._checked is not None:
            return len(self._checked)
        if self._records is not None:
            return len(self._records)
        if self.format == "parquet":
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(self.path).metadata.num_rows)
        if not is_regular(self.path):  # type: ignore[arg-type]
            return None  # counting would consume a pipe
        try:
            with open(self.path, "rb") as fh:  # type: ignore[arg-type]
                lines = sum(1 for line in fh if line.strip())
            return lines - 1 if self.format == "csv" else lines
        except OSError:
            return None

    def chunks(self, chunk_size: int, start_chunk: int = 0) -> Iterator[Chunk]:
        """Chunks of ``chunk_size`` records, from chunk ``start_chunk`` on."""
        if self._table is not None:
            n = self._table.num_rows
            for k, start in enumerate(range(start_chunk * chunk_size, n, chunk_size), start_chunk):
                part = self._table.slice(start, chunk_size)
                yield Chunk(k, list(range(start, start + part.num_rows)), _table=part)
            return
        if self._checked is not None:
            yield from self._record_chunks(iter(self._checked), chunk_size, start_chunk)
            return
        if self._records is not None:
            n = len(self._records)
            for k, start in enumerate(range(start_chunk * chunk_size, n, chunk_size), start_chunk):
                part = self._records[start : start + chunk_size]
                yield Chunk(k, list(range(start, start + len(part))), _records=part)
            return
        if self.format == "parquet":
            yield from self._parquet_chunks(chunk_size, start_chunk)
        elif self.format == "csv":
            yield from self._record_chunks(self._csv_records(), chunk_size, start_chunk)
        else:
            yield from self._record_chunks(self._jsonl_records(), chunk_size, start_chunk)

    def _parquet_chunks(self, chunk_size: int, start_chunk: int) -> Iterator[Chunk]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(self.path)
        skip = start_chunk * chunk_size
        row = 0
        k = start_chunk
        pending: list[Any] = []
        have = 0
        for batch in pf.iter_batches(batch_size=chunk_size):
            if row + batch.num_rows <= skip:
                row += batch.num_rows
                continue
            if row < skip:
                batch = batch.slice(skip - row)
                row = skip
            pending.append(batch)
            have += batch.num_rows
            while have >= chunk_size:
                table = pa.Table.from_batches(pending)
                yield Chunk(k, list(range(row, row + chunk_size)), _table=table.slice(0, chunk_size))
                rest = table.slice(chunk_size)
                pending = rest.to_batches() if rest.num_rows else []
                have = rest.num_rows
                row += chunk_size
                k += 1
        if have:
            table = pa.Table.from_batches(pending)
            yield Chunk(k, list(range(row, row + have)), _table=table)

    def _record_chunks(
        self, records: Iterator[tuple[int, dict[str, Any] | BadRecord]], chunk_size: int, start_chunk: int
    ) -> Iterator[Chunk]:
        skip = start_chunk * chunk_size
        k = start_chunk
        chunk = Chunk(k, [], [], [])
        for row, record in records:
            if row < skip:
                continue
            if isinstance(record, BadRecord):
                if self.on_error == "fail":
                    raise ValueError(f"{record.where}: {record.reason} (use --on-error skip or record to go on)")
                chunk.bad.append(record)
            else:
                chunk.rows.append(row)
                chunk.records.append(record)
            if (row + 1) % chunk_size == 0:
                yield chunk
                k += 1
                chunk = Chunk(k, [], [], [])
        if chunk.rows or chunk.bad:
            yield chunk

    def _jsonl_records(self) -> Iterator[tuple[int, dict[str, Any] | BadRecord]]:
        """Records through the one JSONL line parser (respeval.io): every command reads a line,
        and names a bad one, the same way."""
        assert self.path is not None
        row = 0
        with open(self.path, "rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                record = parse_json_object(raw, self.path, lineno)
                if isinstance(record, RowError):
                    what = f"field {record.field!r}: " if record.field is not None else ""
                    yield row, BadRecord(row, f"{self.path}:{lineno}", what + record.reason)
                else:
                    yield row, record
                row += 1

    def _csv_records(self) -> Iterator[tuple[int, dict[str, Any] | BadRecord]]:
        lift_csv_field_limit()
        with open(self.path, encoding="utf-8-sig", newline="") as fh:  # type: ignore[arg-type]
            reader = csv.DictReader(fh)
            for row, record in enumerate(reader):
                if None in record:
                    where = f"{self.path}:{reader.line_num}"
                    yield row, BadRecord(row, where, "more cells than the header has columns")
                    continue
                yield row, dict(record)


def open_dataset(source: Any, *, on_error: str = "fail") -> Dataset:
    return source if isinstance(source, Dataset) else Dataset(source, on_error=on_error)
