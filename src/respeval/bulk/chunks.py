"""One chunk of a run: the rows of every input file together, scored for every system.

The inputs are read in lockstep (chunk ``k`` of every file covers the same source
records); a chunk's good rows are sorted by system, each family scores them, and the
result is a table of per-row results, the bad rows with their reasons, and the
statistics the corpus sums are made of (:class:`ChunkStats`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from respeval.io import Chunk, InputError, RowError
from respeval.metrics.base import MetricFamily


@dataclass
class Inputs:
    preds: list[str]  # prediction files (one per system, or one with system_field)
    ref: str | None  # separate reference file, or None (same file as each pred)
    pred_field: str
    ref_field: str
    id_field: str | None
    system_field: str | None
    group_field: str | None

    def system_names(self) -> list[str]:
        names = [Path(p).stem for p in self.preds]
        if len(set(names)) != len(names):
            names = [str(Path(p)) for p in self.preds]
        return names

    def pred_fields(self) -> list[str]:
        fields = [self.pred_field]
        if self.ref is None:
            fields.append(self.ref_field)
        for extra in (self.id_field, self.system_field, self.group_field):
            if extra and extra not in fields:
                fields.append(extra)
        return fields


@dataclass
class ChunkStats:
    """Per (system, group): the scored rows' record indices and each family's statistics."""

    entries: list[tuple[str, str | None, np.ndarray, dict[str, np.ndarray]]] = field(default_factory=list)

    def to_arrays(self) -> dict[str, np.ndarray]:
        arrays: dict[str, np.ndarray] = {}
        index = []
        for i, (system, group, keys, fams) in enumerate(self.entries):
            arrays[f"keys{i}"] = keys
            for j, (_name, mat) in enumerate(fams.items()):
                arrays[f"stats{i}_{j}"] = mat
            index.append([system, group, list(fams)])
        arrays["index"] = np.array(json.dumps(index))
        return arrays

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> ChunkStats:
        out = cls()
        for i, (system, group, names) in enumerate(json.loads(str(arrays["index"]))):
            fams = {name: arrays[f"stats{i}_{j}"] for j, name in enumerate(names)}
            out.entries.append((system, group, arrays[f"keys{i}"], fams))
        return out


def bad_records(chunk: Chunk) -> dict[int, RowError]:
    """Source record index -> its error (one error per bad record, in order)."""
    good = set(chunk.records)
    bad = [r for r in range(chunk.start_row, chunk.end_row) if r not in good]
    return dict(zip(bad, chunk.errors))


def error_row(system: str, record: int, errs: list[RowError]) -> dict[str, Any]:
    first = errs[0]
    return {
        "system": system,
        "record": record,
        "file": first.path,
        "line": first.line,
        "unit": first.unit,
        "field": first.field,
        "reason": "; ".join(str(e) for e in errs),
    }


def table_chunk(
    table: Any, fields: list[str], list_fields: tuple[str, ...], source: str, record_offset: int = 0
) -> Chunk:
    """An Arrow table as one Chunk, every value checked (a null or a non-str names its row)."""
    import pyarrow as pa

    columns: dict[str, list[Any]] = {}
    missing = [f for f in fields if f not in table.column_names]
    if missing:
        raise InputError(
            f"{source}: missing column {missing[0]!r}; available columns: {', '.join(map(repr, table.column_names))}"
        )
    for name in fields:
        column = table.column(name)
        values = column.to_pylist()
        if (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)) and column.null_count == 0:
            columns[name] = values  # every value is a str: nothing to check row by row
            continue
        for i, v in enumerate(values):
            ok = isinstance(v, str) or (
                name in list_fields and isinstance(v, list) and v and all(isinstance(x, str) for x in v)
            )
            if not ok:
                what = "null" if v is None else type(v).__name__
                raise InputError(f"{source}:row {record_offset + i}: field {name!r}: expected a string, got {what}")
        columns[name] = values
    n = table.num_rows
    return Chunk(
        record_offset,
        list(range(record_offset, record_offset + n)),
        columns,
        [],
        record_offset + n,
        list(range(record_offset, record_offset + n)),
    )


def lockstep(
    pred_readers: list[Iterator[Chunk]], ref_reader: Iterator[Chunk] | None
) -> Iterator[tuple[list[Chunk | None], Chunk | None]]:
    """Chunk k of every file together, until every file is exhausted."""
    while True:
        p_chunks = [next(r, None) for r in pred_readers]
        r_chunk = next(ref_reader, None) if ref_reader is not None else None
        if all(c is None for c in p_chunks) and r_chunk is None:
            return
        yield p_chunks, r_chunk


def describe(e: dict[str, Any]) -> str:
    return f"[{e['system']}] {e['reason']}" if e.get("system") else e["reason"]


def check_lockstep(inputs: Inputs, p_chunks: list[Chunk | None], r_chunk: Chunk | None) -> None:
    """Every file must have the same number of records: name the short one."""
    ends = {p: (c.end_row if c is not None else None) for p, c in zip(inputs.preds, p_chunks)}
    if inputs.ref is not None:
        ends[inputs.ref] = r_chunk.end_row if r_chunk is not None else None
    known = {p: e for p, e in ends.items() if e is not None}
    if len(set(known.values())) > 1 or len(known) != len(ends):
        longest = max(known, key=lambda p: known[p])
        for p, e in ends.items():
            if e is None or e < known[longest]:
                raise InputError(
                    f"{longest} has more rows than {p} ({p} ends before row {known[longest]}): "
                    "predictions and references must pair up row by row"
                )


@dataclass
class SystemRows:
    """One system's good rows of a chunk, column-wise."""

    records: list[int] = field(default_factory=list)
    preds: list[str] = field(default_factory=list)
    refs: list[Any] = field(default_factory=list)
    ids: list[Any] = field(default_factory=list)
    groups: list[Any] = field(default_factory=list)


def chunk_rows(
    inputs: Inputs,
    file_name: str,
    chunk: Chunk,
    r_chunk: Chunk | None,
    refs_by_record: dict[int, Any] | None,
    rows: dict[str, SystemRows],
) -> None:
    """Sort a chunk's good rows by system.  The common case (one system per file,
    no bad row, the reference file in step) takes whole columns without a row loop."""
    cols = chunk.columns
    ids = cols.get(inputs.id_field) if inputs.id_field else None
    groups = cols.get(inputs.group_field) if inputs.group_field else None
    aligned = r_chunk is None or (not r_chunk.errors and r_chunk.records == chunk.records)
    if not inputs.system_field and not chunk.errors and aligned:
        refs = cols[inputs.ref_field] if r_chunk is None else r_chunk.columns[inputs.ref_field]
        rows[file_name] = SystemRows(chunk.records, cols[inputs.pred_field], refs, ids or [], groups or [])
        return
    if refs_by_record is None and r_chunk is not None:
        refs_by_record = dict(zip(r_chunk.records, r_chunk.columns[inputs.ref_field]))
    systems = cols.get(inputs.system_field) if inputs.system_field else None
    for i, record in enumerate(chunk.records):
        if r_chunk is None:
            ref = cols[inputs.ref_field][i]
        elif record in refs_by_record:
            ref = refs_by_record[record]
        else:
            continue  # its reference record is bad: reported by the caller
        into = rows.get(systems[i] if systems is not None else file_name)
        if into is None:
            into = rows[systems[i] if systems is not None else file_name] = SystemRows()
        into.records.append(record)
        into.preds.append(cols[inputs.pred_field][i])
        into.refs.append(ref)
        if ids is not None:
            into.ids.append(ids[i])
        if groups is not None:
            into.groups.append(groups[i])


def score_chunk(
    inputs: Inputs,
    system_names: list[str],
    families: Sequence[MetricFamily],
    p_chunks: list[Chunk],
    r_chunk: Chunk | None,
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], ChunkStats]:
    """Score one chunk for every system: result table, error rows, statistics.

    A row fails for a system when its prediction record or its reference record
    is bad; it is reported once per system, with every reason.
    """
    errors: list[dict[str, Any]] = []
    ref_bad: dict[int, RowError] = bad_records(r_chunk) if r_chunk is not None and r_chunk.errors else {}
    refs_by_record = None
    rows: dict[str, SystemRows] = {}
    for file_name, chunk in zip(system_names, p_chunks):
        pred_bad = bad_records(chunk) if chunk.errors else {}
        # with --system-field, a bad record's system cannot be trusted: "" names it
        owner = "" if inputs.system_field else file_name
        for record in sorted(set(pred_bad) | set(ref_bad)):
            errs = [e for e in (pred_bad.get(record), ref_bad.get(record)) if e is not None]
            errors.append(error_row(owner, record, errs))
        chunk_rows(inputs, file_name, chunk, r_chunk, refs_by_record, rows)
    stats = ChunkStats()
    table_parts: list[dict[str, Any]] = []
    multi = len(p_chunks) > 1 or bool(inputs.system_field)
    # systems that share the very same reference list (every --pred file against
    # one --ref file) share one preparation: references are tokenized once
    prepared: dict[tuple[int, str], Any] = {}
    for system, got in rows.items():
        n = len(got.records)
        records = np.array(got.records, np.int64)
        part: dict[str, Any] = {}
        if multi:
            part["system"] = [system] * n
        part["row"] = records
        if inputs.id_field:
            part[inputs.id_field] = got.ids
        if inputs.group_field:
            part[inputs.group_field] = got.groups
        fam_stats: dict[str, np.ndarray] = {}
        for fam in families:
            key = (id(got.refs), fam.name)
            if key not in prepared:
                prepared[key] = fam.prepare(got.refs)
            scored = fam.score(prepared[key], got.preds)
            part.update(scored.columns)
            fam_stats[fam.name] = scored.stats
        table_parts.append(part)
        stats.entries.append((system, None, records, fam_stats))
        if inputs.group_field:
            groups = np.array([str(g) for g in got.groups], dtype=object)
            for g in sorted(set(got.groups), key=str):
                mask = groups == str(g)
                stats.entries.append((system, str(g), records[mask], {name: m[mask] for name, m in fam_stats.items()}))
    table = concat_parts(table_parts) if table_parts else None
    return table, errors, stats


def concat_parts(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in parts[0]:
        values = [p[name] for p in parts]
        if isinstance(values[0], np.ndarray):
            out[name] = np.concatenate(values)
        else:
            out[name] = [v for vs in values for v in vs]
    return out
