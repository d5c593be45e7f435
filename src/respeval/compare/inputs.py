"""The paired cases of a comparison, read from response files or records.

Two ways in, one result (:class:`Cases`: one entry per case, the two systems' responses
side by side):

* **one table with a system column** (``respeval run``'s output): every row is one
  response of one system to one case, keyed by ``id`` and ``system`` (and ``template`` when
  a run had several).  ``baseline``/``candidate`` name two values of the system column;
  rows are paired on the id and on every other key column the table has (the template,
  or the system when ``system_field="template"`` compares two templates);
* **two tables**, one per system, paired on the id (and the template when both have one).

Files are JSONL, CSV or Parquet, read by :func:`respeval.io.read_columns`; records are
dicts.  Ids are compared as text (``7`` in JSONL and ``"7"`` in CSV are the same case).
A response that is null (a case the system produced nothing for) counts as an empty
response and is reported; a case only one system answered, an id seen twice, or a reference
that differs between the two systems' rows is an error naming the file, row and field.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from respeval.io import read_columns
from respeval.io.errors import InputError

__all__ = ["Cases", "Source", "load_cases"]

Source = Union[str, "os.PathLike[str]", Sequence[Mapping[str, Any]]]

_SHOWN = 5  # ids named in an error message


@dataclass
class _Row:
    where: str  # file:line (or "records[i]") for messages
    key: tuple[str, ...]
    record: Mapping[str, Any]


@dataclass
class Cases:
    """The paired cases, in the order of the baseline's rows.

    ``ids`` label the cases (the id, with the other key values after a ``/`` when rows are
    paired on more than the id); ``baseline``/``candidate`` their responses (``""`` where a
    system produced none: see ``missing``); ``references`` (None when not read), ``prompts``
    (None per case without one) and ``where`` (the baseline row's file:line).
    """

    baseline_name: str
    candidate_name: str
    ids: list[str]
    baseline: list[str]
    candidate: list[str]
    prompts: list[str | None]
    references: list[Any] | None
    where: list[str]
    missing: dict[str, list[str]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    paired_on: tuple[str, ...] = ("id",)

    def __len__(self) -> int:
        return len(self.ids)


def _describe(source: Source) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return "records"


def _iter_rows(source: Source, required: Sequence[str], keys: Sequence[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, record) for every row; ``required`` fields must be present in each, ``keys``
    (ids, systems) must be text or integers and come back as text."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        raw = [f for f in required if f not in keys]
        reader = read_columns(path, list(required), key_fields=list(keys), raw_fields=raw, whole_records=True)
        with reader:
            unit = "row " if reader.format == "parquet" else ""
            for chunk in reader:
                rows = chunk.rows or []
                for i, number in enumerate(chunk.row_numbers):
                    record = dict(rows[i])
                    for name in keys:
                        record[name] = chunk.columns[name][i]
                    yield f"{path}:{unit}{number}", record
        return
    if isinstance(source, Mapping) or isinstance(source, (bytes, str)):
        raise TypeError("records must be a sequence of dicts (or give a file path)")
    for i, item in enumerate(source):
        where = f"records[{i}]"
        if not isinstance(item, Mapping):
            raise InputError(f"{where}: expected a dict, got {type(item).__name__}")
        out = dict(item)
        for name in required:
            if name not in out:
                raise InputError(f"{where}: field {name!r}: missing; the record's fields: {', '.join(map(repr, out))}")
        for name in keys:
            value = out[name]
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise InputError(f"{where}: field {name!r}: expected a string or an integer, got {value!r}")
            out[name] = str(value)
        yield where, out


def _text(value: Any, where: str, name: str, allow_list: bool = False) -> Any:
    if value is None or isinstance(value, str):
        return value
    if allow_list and isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value
    expected = "a string or a list of strings" if allow_list else "a string"
    raise InputError(f"{where}: field {name!r}: expected {expected}, got {type(value).__name__}")


def _index(rows: Iterable[_Row], system: str, source: str) -> dict[tuple[str, ...], _Row]:
    out: dict[tuple[str, ...], _Row] = {}
    for row in rows:
        first = out.get(row.key)
        if first is not None:
            raise InputError(
                f"{row.where}: case {_label(row.key)!r} appears twice for {system!r} (first at {first.where}); "
                "every case needs one response per system"
                + (
                    " (a table of several systems is compared with --input FILE --baseline A --candidate B)"
                    if source
                    else ""
                )
            )
        out[row.key] = row
    return out


def _label(key: tuple[str, ...]) -> str:
    return "/".join(key)


def load_cases(
    data: Source | None = None,
    *,
    baseline: str = "baseline",
    candidate: str = "candidate",
    baseline_file: Source | None = None,
    candidate_file: Source | None = None,
    id_field: str = "id",
    response_field: str = "response",
    reference_field: str | None = None,
    prompt_field: str | None = "prompt",
    system_field: str = "system",
    template_field: str = "template",
) -> Cases:
    """Read and pair the cases (see the module docstring).

    Give ``data`` (one table with a system column) or both ``baseline_file`` and
    ``candidate_file``.  ``reference_field``: read the references (required for every case
    then); None reads none.
    """
    two = baseline_file is not None or candidate_file is not None
    if two and data is not None:
        raise ValueError("give one table with a system column (data) or two tables (baseline_file, candidate_file)")
    if not two and data is None:
        raise ValueError("nothing to compare: give one table with a system column, or a baseline and a candidate file")
    if two and (baseline_file is None or candidate_file is None):
        raise ValueError("two-table mode needs both a baseline file and a candidate file")
    if baseline == candidate:
        raise ValueError(f"the baseline and the candidate are both {baseline!r}: name two different systems")
    required = [id_field, response_field]
    if two:
        assert baseline_file is not None and candidate_file is not None
        sides = []
        for source in (baseline_file, candidate_file):
            records = list(_iter_rows(source, required, [id_field]))
            extra = _extra_keys(records, [template_field], exclude=id_field)
            sides.append((_describe(source), records, extra))
        paired_on = tuple(f for f in sides[0][2] if f in sides[1][2])
        base_rows = _index(_keyed(sides[0][1], id_field, paired_on), baseline, sides[0][0])
        cand_rows = _index(_keyed(sides[1][1], id_field, paired_on), candidate, sides[1][0])
        sources = [sides[0][0], sides[1][0]]
    else:
        assert data is not None
        name = _describe(data)
        records = list(_iter_rows(data, required + [system_field], [id_field, system_field]))
        paired_on = _extra_keys(records, [f for f in ("system", template_field) if f != system_field], id_field)
        by_system: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for where, record in records:
            by_system.setdefault(record[system_field], []).append((where, record))
        for wanted, role in ((baseline, "baseline"), (candidate, "candidate")):
            if wanted not in by_system:
                seen = ", ".join(sorted(by_system)[:20]) or "none"
                raise InputError(
                    f"{name}: no row has {system_field} {wanted!r} (the {role}); the values in the file: {seen}"
                )
        base_rows = _index(_keyed(by_system[baseline], id_field, paired_on), baseline, "")
        cand_rows = _index(_keyed(by_system[candidate], id_field, paired_on), candidate, "")
        sources = [name]
    only_base = [k for k in base_rows if k not in cand_rows]
    only_cand = [k for k in cand_rows if k not in base_rows]
    for missing, have, lack in ((only_base, baseline, candidate), (only_cand, candidate, baseline)):
        if missing:
            shown = ", ".join(repr(_label(k)) for k in missing[:_SHOWN])
            raise InputError(
                f"{len(missing)} case(s) have a {have!r} response but no {lack!r} response (first: {shown}); "
                "a paired comparison needs both systems' responses to the same cases"
            )
    if not base_rows:
        raise InputError(f"{', '.join(sources)}: no cases to compare")
    cases = Cases(baseline, candidate, [], [], [], [], [] if reference_field else None, [], {}, sources)
    cases.paired_on = (id_field, *paired_on)
    missing_by: dict[str, list[str]] = {baseline: [], candidate: []}
    for key, brow in base_rows.items():
        crow = cand_rows[key]
        label = _label(key)
        responses = []
        for row, system in ((brow, baseline), (crow, candidate)):
            text = _text(row.record.get(response_field), row.where, response_field)
            if text is None:
                missing_by[system].append(label)
            responses.append(text or "")
        cases.ids.append(label)
        cases.baseline.append(responses[0])
        cases.candidate.append(responses[1])
        cases.where.append(brow.where)
        prompt = None
        if prompt_field:
            prompt = _text(brow.record.get(prompt_field, crow.record.get(prompt_field)), brow.where, prompt_field)
        cases.prompts.append(prompt)
        if reference_field and cases.references is not None:
            cases.references.append(_reference(brow, crow, reference_field))
    cases.missing = {k: v for k, v in missing_by.items() if v}
    return cases


def _extra_keys(records: Sequence[tuple[str, dict[str, Any]]], names: Sequence[str], exclude: str) -> tuple[str, ...]:
    """The key columns besides the id that the rows carry (a run's template, ...)."""
    return tuple(n for n in names if n != exclude and any(r.get(n) is not None for _, r in records))


def _keyed(records: Iterable[tuple[str, dict[str, Any]]], id_field: str, extra: Sequence[str]) -> Iterator[_Row]:
    for where, record in records:
        key = [record[id_field]]
        for name in extra:
            value = record.get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int))):
                raise InputError(f"{where}: field {name!r}: expected a string or an integer, got {value!r}")
            key.append("" if value is None else str(value))
        yield _Row(where, tuple(key), record)


def _reference(brow: _Row, crow: _Row, name: str) -> Any:
    ref = _text(brow.record.get(name), brow.where, name, allow_list=True)
    other = _text(crow.record.get(name), crow.where, name, allow_list=True)
    if ref is None:
        ref = other
    elif other is not None and other != ref:
        raise InputError(
            f"{crow.where}: field {name!r}: differs from the other system's row for the same case ({brow.where}); "
            "the two systems must be scored against the same reference"
        )
    if ref is None:
        raise InputError(f"{brow.where}: field {name!r}: missing (the metrics compare each response with it)")
    return ref
