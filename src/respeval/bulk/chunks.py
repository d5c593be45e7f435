"""One chunk of a run: the rows of every input file together, scored for every system.

The inputs are read in lockstep (chunk ``k`` of every file covers the same source
records); a chunk's good rows are sorted by system, each family scores them, and the
result is a table of per-row results, the bad rows with their reasons, and the
statistics the corpus sums are made of (:class:`ChunkStats`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from respeval.io import Chunk, InputError, RowError, input_format
from respeval.io.nested import describe_repeated_field, raw_values
from respeval.io.readers import (
    KEY,
    NESTED_TOO_DEEPLY,
    RAW,
    TEXT,
    TEXT_LIST,
    TEXT_LIST_OR_EMPTY,
    as_list,
    convert_value,
    is_arrow,
)
from respeval.io.writers import arrow_array
from respeval.metrics.base import ChunkScores, MetricFamily, RowValueError


def name_systems(preds: Sequence[str], names: Sequence[str | None] = ()) -> list[str]:
    """One name per predictions file: the one given with it (``names``: NAME=FILE), else its
    stem, or (when the stems of the unnamed files collide) the shortest tail of its absolute
    path that tells them apart, so a name does not depend on how a path was spelled."""
    given = list(names) + [None] * (len(preds) - len(names))
    unnamed = [p for p, name in zip(preds, given) if name is None]
    stems = iter(_stem_names(unnamed) if unnamed else [])
    chosen = [name if name is not None else next(stems) for name in given]
    twice = sorted({n for n in chosen if chosen.count(n) > 1})
    if twice:
        raise ValueError(f"two systems are named {twice[0]!r}: give each --input its own name (--input NAME=FILE)")
    return chosen


def _stem_names(preds: list[str]) -> list[str]:
    names = [Path(p).stem for p in preds]
    if len(set(names)) == len(names):
        return names
    parts = [Path(os.path.abspath(p)).with_suffix("").parts for p in preds]
    for depth in range(2, max(len(x) for x in parts) + 1):
        names = ["/".join(x[-depth:]) for x in parts]
        if len(set(names)) == len(names):
            return names
    return [os.path.abspath(p) for p in preds]


@dataclass
class Inputs:
    """The files of a run and the fields read from them."""

    preds: list[str]  # prediction files (one per system, or one with system_field)
    ref: str | None  # separate reference file, or None (the same file as each pred)
    pred_field: str
    ref_field: str
    id_field: str | None
    system_field: str | None
    group_field: str | None
    kinds: frozenset[str] = frozenset({"text"})  # what the families take (metrics.base.INPUT_KINDS)
    json_text: bool = False  # every family reads a JSON array or object given as its JSON text
    tables: bool = False  # in-memory Arrow tables: rows are numbered 0, 1, ... (not lines)
    empty_references: bool = False  # every family takes an empty list of references (SQuAD v2)
    # {id: answer} prediction files lined up with the references by id: path -> (rows, digest)
    joined: dict[str, tuple[list[Any], str]] = field(default_factory=dict)
    unnamed_format: str | None = None  # the format of an input whose extension names none (--input-format)
    arrow_text: bool = False  # every family reads text fields given as Arrow string arrays
    names: tuple[str | None, ...] = ()  # a system's name given with its file (NAME=FILE); None: by its stem

    def format(self, path: str) -> str:
        """The format a file is read in: by its extension, else ``unnamed_format``, else text."""
        return input_format(path, self.unnamed_format)

    def unit(self, path: str) -> str:
        """How a file numbers its records in messages: "row" (Parquet, JSON, tables) or "line"."""
        return "row" if self.tables or self.format(path) in ("parquet", "json") else "line"

    def list_kind(self) -> str:
        """What a reference list may be: non-empty, or (every family taking it) empty too."""
        return TEXT_LIST_OR_EMPTY if self.empty_references else TEXT_LIST

    def _lists(self, names: list[str]) -> dict[str, list[str]]:
        key = "empty_list_fields" if self.empty_references else "allow_list_fields"
        return {key: names}

    def files(self) -> list[str]:
        """Every file read, in reader order: the predictions, then the references."""
        return [*self.preds, *([self.ref] if self.ref else [])]

    def system_names(self) -> list[str]:
        """One name per predictions file (:func:`name_systems`)."""
        return name_systems(self.preds, self.names)

    def pred_fields(self) -> list[str]:
        fields = [self.pred_field]
        if self.ref is None and self.ref_field != self.pred_field:
            fields.append(self.ref_field)
        for extra in (self.id_field, self.system_field, self.group_field):
            if extra and extra not in fields:
                fields.append(extra)
        return fields

    def _text_kind(self) -> bool:
        return self.kinds == {"text"}

    def pred_kinds(self) -> dict[str, Any]:
        """``read_columns`` keyword arguments for a predictions file."""
        keys = [f for f in (self.id_field, self.system_field, self.group_field) if f]
        keys = [f for f in dict.fromkeys(keys) if f not in (self.pred_field, self.ref_field)]
        if not self._text_kind():
            raw = [self.pred_field] + (
                [self.ref_field] if self.ref is None and self.ref_field != self.pred_field else []
            )
            return {
                "raw_fields": raw,
                "key_fields": keys,
                "whole_records": "row" in self.kinds,
                "raw_as_json_text": self.json_text,
            }
        lists = [self.ref_field] if self.ref is None and self.ref_field != self.pred_field else []
        return {**self._lists(lists), "key_fields": keys, "arrow_text": self.arrow_text}

    def ref_kinds(self) -> dict[str, Any]:
        """``read_columns`` keyword arguments for the references file."""
        if not self._text_kind():
            return {"raw_fields": [self.ref_field], "raw_as_json_text": self.json_text}
        return {**self._lists([self.ref_field]), "arrow_text": self.arrow_text}


@dataclass
class ChunkStats:
    """Per (system, group): the scored rows' record indices and each family's statistics."""

    entries: list[tuple[str, str | None, np.ndarray, dict[str, np.ndarray]]] = field(default_factory=list)
    # how many references the scored rows had (1 for a str): the signatures' nrefs
    nrefs: set[int] = field(default_factory=set)

    def to_arrays(self) -> dict[str, np.ndarray]:
        arrays: dict[str, np.ndarray] = {"nrefs": np.array(sorted(self.nrefs), dtype=np.int64)}
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
        if "nrefs" in arrays:
            out.nrefs = {int(n) for n in np.asarray(arrays["nrefs"]).tolist()}
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


def table_chunk(table: Any, inputs: Inputs, source: str, record_offset: int = 0) -> Chunk:
    """An Arrow table as one Chunk, every value checked as the file readers check it (a null
    or a value of the wrong kind names its row)."""
    import pyarrow as pa

    fields = inputs.pred_fields()
    missing = [f for f in fields if f not in table.column_names]
    if missing:
        raise InputError(
            f"{source}: missing column {missing[0]!r}; available columns: {', '.join(map(repr, table.column_names))}"
        )
    options = inputs.pred_kinds()
    kinds = {
        name: kind
        for key, kind in (
            ("allow_list_fields", TEXT_LIST),
            ("empty_list_fields", TEXT_LIST_OR_EMPTY),
            ("key_fields", KEY),
            ("raw_fields", RAW),
        )
        for name in options.get(key, ())
    }
    columns: dict[str, list[Any]] = {}
    text_fields = set()
    for name in fields:
        column = table.column(name)
        kind = kinds.get(name, TEXT)
        problem = describe_repeated_field(column.type)
        if problem is not None:
            raise InputError(f"{source}: column {name!r} cannot be read: {problem}")
        # nested values as the JSON they were written from (struct nulls that Arrow added)
        values = raw_values(column, options.get("raw_as_json_text", False)) if kind == RAW else column.to_pylist()
        is_text = pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
        if is_text:
            text_fields.add(name)
        if kind == RAW or (is_text and column.null_count == 0):
            columns[name] = values  # nothing to check row by row
            continue
        for i, v in enumerate(values):
            converted, reason = convert_value(v, kind)
            if reason is not None:
                raise InputError(f"{source}:row {record_offset + i}: field {name!r}: {reason}")
            values[i] = converted
        columns[name] = values
    n = table.num_rows
    numbers = list(range(record_offset, record_offset + n))
    rows = table.to_pylist() if options.get("whole_records") else None
    return Chunk(
        record_offset, numbers, columns, [], record_offset + n, list(numbers), "", frozenset(text_fields), rows
    )


def lockstep(
    pred_readers: Sequence[Iterator[Chunk]], ref_reader: Iterator[Chunk] | None
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
    """One system's good rows of a chunk, column-wise, with where each row came from."""

    pred_path: str
    ref_path: str
    pred_text: bool = False  # the prediction field came from a text column (CSV, text, Arrow string)
    ref_text: bool = False
    records: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # line (or Parquet row) of each prediction
    ref_lines: list[int] = field(default_factory=list)
    preds: list[Any] = field(default_factory=list)
    refs: list[Any] = field(default_factory=list)
    ids: list[Any] = field(default_factory=list)
    groups: list[Any] = field(default_factory=list)
    rows: list[dict[str, Any]] | None = None  # whole records, for "row" families


def chunk_rows(
    inputs: Inputs,
    file_name: str,
    pred_path: str,
    chunk: Chunk,
    r_chunk: Chunk | None,
    rows: dict[str, SystemRows],
) -> None:
    """Sort a chunk's good rows by system.  The common case (one system per file,
    no bad row, the reference file in step) takes whole columns without a row loop."""
    cols = chunk.columns
    ids = cols.get(inputs.id_field) if inputs.id_field else None
    groups = cols.get(inputs.group_field) if inputs.group_field else None
    ref_path = inputs.ref or pred_path
    ref_source = chunk if r_chunk is None else r_chunk
    pred_text = inputs.pred_field in chunk.text_fields
    ref_text = inputs.ref_field in ref_source.text_fields
    whole = chunk.rows is not None

    def new_rows() -> SystemRows:
        return SystemRows(pred_path, ref_path, pred_text, ref_text, rows=[] if whole else None)

    aligned = r_chunk is None or (not r_chunk.errors and r_chunk.records == chunk.records)
    if not inputs.system_field and not chunk.errors and aligned:
        refs = cols[inputs.ref_field] if r_chunk is None else r_chunk.columns[inputs.ref_field]
        got = rows[file_name] = new_rows()
        got.records, got.lines, got.preds, got.refs = chunk.records, chunk.row_numbers, cols[inputs.pred_field], refs
        got.ref_lines = chunk.row_numbers if r_chunk is None else r_chunk.row_numbers
        got.ids, got.groups = ids or [], groups or []
        if whole:
            got.rows = _whole_rows(inputs, chunk.rows, refs if r_chunk is not None else None)
        return
    ref_at: dict[int, int] = {}
    cols = {name: as_list(values) for name, values in cols.items()}  # rows taken one by one
    ref_column: list[Any] = []
    if r_chunk is not None:
        ref_at = {record: i for i, record in enumerate(r_chunk.records)}
        ref_column = as_list(r_chunk.columns[inputs.ref_field])
    systems = cols.get(inputs.system_field) if inputs.system_field else None
    for i, record in enumerate(chunk.records):
        if r_chunk is None:
            ref, ref_line = cols[inputs.ref_field][i], chunk.row_numbers[i]
        elif record in ref_at:
            j = ref_at[record]
            ref, ref_line = ref_column[j], r_chunk.row_numbers[j]
        else:
            continue  # its reference record is bad: reported by the caller
        name = systems[i] if systems is not None else file_name
        into = rows.get(name)
        if into is None:
            into = rows[name] = new_rows()
        into.records.append(record)
        into.lines.append(chunk.row_numbers[i])
        into.ref_lines.append(ref_line)
        into.preds.append(cols[inputs.pred_field][i])
        into.refs.append(ref)
        if ids is not None:
            into.ids.append(ids[i])
        if groups is not None:
            into.groups.append(groups[i])
        if into.rows is not None and chunk.rows is not None:
            into.rows.extend(_whole_rows(inputs, [chunk.rows[i]], [ref] if r_chunk is not None else None))


def _whole_rows(inputs: Inputs, records: list[dict[str, Any]] | None, refs: list[Any] | None) -> list[dict[str, Any]]:
    """The records a "row" family gets: the prediction record, plus the reference under
    "reference" when it comes from a separate file (unless the record has that key)."""
    if records is None:
        return []
    if refs is None:
        return records
    return [r if "reference" in r else {**r, "reference": ref} for r, ref in zip(records, refs)]


def _family_inputs(inputs: Inputs, kind: str, got: SystemRows) -> tuple[list[Any], list[Any], dict[int, RowError]]:
    """What a family of ``kind`` gets for this system's rows, and the rows that cannot give it."""
    bad: dict[int, RowError] = {}
    if kind == "row":
        rows = got.rows or []
        return rows, rows, bad
    if kind == "text":
        if inputs.kinds == {"text"}:
            return got.preds, got.refs, bad  # the readers checked them already
        for i, (pred, ref) in enumerate(zip(got.preds, got.refs)):
            _, reason = convert_value(pred, TEXT)
            if reason is not None:
                bad[i] = RowError(got.pred_path, got.lines[i], inputs.pred_field, reason, inputs.unit(got.pred_path))
                continue
            _, reason = convert_value(ref, inputs.list_kind())
            if reason is not None:
                bad[i] = RowError(got.ref_path, got.ref_lines[i], inputs.ref_field, reason, inputs.unit(got.ref_path))
        return got.preds, got.refs, bad
    if inputs.json_text:
        # every family reads JSON text itself (natively, faster than json.loads here), and
        # reports a value that is not JSON as its row's error
        return got.preds, got.refs, bad
    preds = _json_values(got.preds, got.pred_text, got.pred_path, got.lines, inputs.pred_field, inputs, bad)
    refs = _json_values(got.refs, got.ref_text, got.ref_path, got.ref_lines, inputs.ref_field, inputs, bad)
    return preds, refs, bad


def _json_values(
    values: list[Any], from_text: bool, path: str, lines: list[int], name: str, inputs: Inputs, bad: dict[int, RowError]
) -> list[Any]:
    """JSON values as Python objects: JSON text from a text column is decoded."""
    if not from_text:
        return values
    out: list[Any] = []
    for i, value in enumerate(values):
        try:
            out.append(json.loads(value) if isinstance(value, str) else value)
        except (json.JSONDecodeError, RecursionError) as exc:
            out.append(None)
            if i not in bad:
                reason = (
                    f"not JSON text: {exc.msg} (column {exc.colno})"
                    if isinstance(exc, json.JSONDecodeError)
                    else f"not JSON text: {NESTED_TOO_DEEPLY}"
                )
                bad[i] = RowError(path, lines[i], name, reason, inputs.unit(path))
    return out


def _subset(values: Any, keep: list[int] | None) -> Any:
    if keep is None:
        return values
    if is_arrow(values):
        return values.take(np.array(keep, dtype=np.int64))
    return [values[i] for i in keep]


class _FamilyRowError(Exception):
    """A family refused a row (RowValueError): the row index within the scored subset."""

    def __init__(self, row: int, reason: str) -> None:
        self.row, self.reason = row, reason


def _score_family(fam: MetricFamily, prepared: Any, preds: list[Any]) -> ChunkScores:
    try:
        return fam.score(prepared, preds)
    except RowValueError as exc:
        raise _FamilyRowError(exc.row, exc.reason) from exc


def _score_system(
    inputs: Inputs,
    families: Sequence[MetricFamily],
    got: SystemRows,
    prepared: dict[tuple[int, str], Any],
    on_error: str,
) -> tuple[list[int], dict[str, dict[str, np.ndarray]], dict[str, np.ndarray], dict[int, RowError]]:
    """Score one system's rows with every family.

    Returns the kept rows (indices into ``got``), each family's columns and statistics over
    the kept rows, and the rows that could not be scored, with why.  A row is bad for every
    family when one family cannot score it: an unreadable value for its input kind, an entry
    of ``ChunkScores.errors``, or a ``RowValueError`` (the chunk is then scored again without
    that row).
    """
    n = len(got.records)
    bad: dict[int, RowError] = {}
    views: dict[str, tuple[list[Any], list[Any]]] = {}
    for kind in sorted({fam.inputs for fam in families}):
        preds, refs, why = _family_inputs(inputs, kind, got)
        views[kind] = (preds, refs)
        for i, err in why.items():
            bad.setdefault(i, err)
    while True:
        _stop_on(bad, on_error)
        keep = None if not bad else [i for i in range(n) if i not in bad]
        try:
            columns: dict[str, dict[str, np.ndarray]] = {}
            stats: dict[str, np.ndarray] = {}
            flagged: dict[int, RowError] = {}
            for fam in families:
                preds, refs = views[fam.inputs]
                key = (id(refs) if keep is None else -1, fam.name)
                ready = prepared.get(key)
                if ready is None:
                    ready = fam.prepare(_subset(refs, keep))
                    if keep is None:
                        prepared[key] = ready  # systems sharing one reference list share it
                scored = _score_family(fam, ready, _subset(preds, keep))
                columns[fam.name] = scored.columns
                stats[fam.name] = scored.stats
                for row, reason in scored.errors.items():
                    i = row if keep is None else keep[row]
                    flagged.setdefault(i, _family_error(inputs, fam, got, i, reason, scored.error_sides.get(row)))
        except _FamilyRowError as exc:
            i = exc.row if keep is None else keep[exc.row]
            bad[i] = _family_error(inputs, fam, got, i, exc.reason)
            continue
        if not flagged:
            return keep if keep is not None else list(range(n)), columns, stats, bad
        # rows a family scored as unscorable: out of every family's columns and sums
        bad.update(flagged)
        _stop_on(bad, on_error)
        kept = keep if keep is not None else list(range(n))
        mask = np.array([i not in flagged for i in kept], dtype=bool)
        columns = {f: {c: v[mask] for c, v in cols.items()} for f, cols in columns.items()}
        stats = {f: m[mask] for f, m in stats.items()}
        return [i for i in kept if i not in flagged], columns, stats, bad


def _family_error(
    inputs: Inputs, fam: MetricFamily, got: SystemRows, i: int, reason: str, side: str | None = None
) -> RowError:
    """A family's error for row ``i``, naming the input it concerns when the family says
    which (``ChunkScores.error_sides``), else the prediction's line."""
    if side == "reference":
        return RowError(
            got.ref_path, got.ref_lines[i], inputs.ref_field, f"{fam.name}: {reason}", inputs.unit(got.ref_path)
        )
    field = inputs.pred_field if side == "prediction" else None
    return RowError(got.pred_path, got.lines[i], field, f"{fam.name}: {reason}", inputs.unit(got.pred_path))


def _stop_on(bad: dict[int, RowError], on_error: str) -> None:
    if bad and on_error == "fail":
        first = bad[min(bad)]
        raise InputError(str(first), first)


def score_chunk(
    inputs: Inputs,
    system_names: list[str],
    families: Sequence[MetricFamily],
    p_chunks: list[Chunk],
    r_chunk: Chunk | None,
    on_error: str = "record",
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], ChunkStats]:
    """Score one chunk for every system: result table, error rows, statistics.

    A row fails for a system when its prediction record or its reference record is bad,
    or when a family cannot score it; it is reported once per system, with every reason,
    in record order.  With ``on_error="fail"`` the first such row raises InputError.
    """
    errors: dict[str, dict[int, dict[str, Any]]] = {}
    ref_bad: dict[int, RowError] = bad_records(r_chunk) if r_chunk is not None and r_chunk.errors else {}
    rows: dict[str, SystemRows] = {}
    for file_name, path, chunk in zip(system_names, inputs.preds, p_chunks):
        pred_bad = bad_records(chunk) if chunk.errors else {}
        # with --system-field, a bad record's system cannot be trusted: "" names it
        owner = "" if inputs.system_field else file_name
        for record in sorted(set(pred_bad) | set(ref_bad)):
            errs = [e for e in (pred_bad.get(record), ref_bad.get(record)) if e is not None]
            errors.setdefault(owner, {})[record] = error_row(owner, record, errs)
        chunk_rows(inputs, file_name, path, chunk, r_chunk, rows)
    stats = ChunkStats()
    table_parts: list[dict[str, Any]] = []
    multi = len(p_chunks) > 1 or bool(inputs.system_field)
    # systems that share the very same reference list (every --pred file against
    # one --ref file) share one preparation: references are tokenized once
    prepared: dict[tuple[int, str], Any] = {}
    for system, got in rows.items():
        keep, columns, fam_stats, bad = _score_system(inputs, families, got, prepared, on_error)
        for i, err in bad.items():
            errors.setdefault(system, {})[got.records[i]] = error_row(system, got.records[i], [err])
        n = len(keep)
        everything = n == len(got.records)
        records = np.array(got.records if everything else [got.records[i] for i in keep], np.int64)
        part: dict[str, Any] = {}
        if multi:
            part["system"] = [system] * n
        part["row"] = records
        if inputs.id_field:
            part[inputs.id_field] = got.ids if everything else [got.ids[i] for i in keep]
        group_values = got.groups if everything or not inputs.group_field else [got.groups[i] for i in keep]
        if inputs.group_field:
            part[inputs.group_field] = group_values
        for fam in families:
            part.update(columns[fam.name])
        table_parts.append(part)
        stats.entries.append((system, None, records, fam_stats))
        if "text" in inputs.kinds:
            refs = got.refs if everything else _subset(got.refs, keep)
            if is_arrow(refs):  # strings: one reference a row
                stats.nrefs.update([1] if len(refs) else [])
            else:
                stats.nrefs.update(len(r) if isinstance(r, list) else 1 for r in refs)
        if inputs.group_field:
            groups = np.array([str(g) for g in group_values], dtype=object)
            for g in sorted(set(group_values), key=str):
                mask = groups == str(g)
                stats.entries.append((system, str(g), records[mask], {name: m[mask] for name, m in fam_stats.items()}))
    table = concat_parts(table_parts) if table_parts else None
    ordered: list[dict[str, Any]] = []
    for owner in dict.fromkeys(["", *system_names, *rows]):
        by_record = errors.get(owner, {})
        ordered.extend(by_record[r] for r in sorted(by_record))
    return table, ordered, stats


def empty_results(inputs: Inputs, families: Sequence[MetricFamily]) -> dict[str, Any]:
    """The columns of a results file without rows, typed as a file with rows has them."""
    import pyarrow as pa

    columns: dict[str, Any] = {}
    if len(inputs.preds) > 1 or inputs.system_field:
        columns["system"] = arrow_array([], pa.string())
    columns["row"] = arrow_array(np.zeros(0, dtype=np.int64))
    for name in (inputs.id_field, inputs.group_field):
        if name:
            columns[name] = arrow_array([], pa.string())
    for fam in families:
        view: list[Any] = []
        scored = fam.score(fam.prepare(view), view)
        columns.update({name: arrow_array(values) for name, values in scored.columns.items()})
    return columns


def concat_parts(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in parts[0]:
        values = [p[name] for p in parts]
        if isinstance(values[0], np.ndarray):
            out[name] = np.concatenate(values)
        else:
            out[name] = [v for vs in values for v in vs]
    return out
