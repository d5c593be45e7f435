"""Results files and their columns: Vertex's naming convention, loading, joining labels."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from respeval.io import format_of, read_columns, read_jsonl
from respeval.io.readers import column_names, read_json
from respeval.validate.resampling import plain_value


@dataclass(frozen=True)
class MetricColumns:
    """Where one judged metric lives in a table (Vertex's naming, or chosen by hand)."""

    name: str
    kind: Literal["pointwise", "pairwise"]
    judge: str
    human: str
    swapped: str | None = None
    scorer: str | None = None  # "judge" or "metric" (ROUGE-2 is no judge); None: :func:`scorer_of`


def scorer_of(name: str, column: str = "", kind: str = "pointwise") -> str:
    """Whether the values validated come from an LLM judge or a metric: a pairwise verdict is a
    judge's; a registry metric's name (``rouge2``, ``bleu``) or a column named like one
    (``scores.rouge_2_f_score``) is a metric's; anything else a judge's."""
    if kind == "pairwise":
        return "judge"
    from respeval.metrics import REGISTRY

    known = set(REGISTRY.names())
    text = f"{name} {column}".lower()
    parts = {p for p in re.split(r"[./ ]", text) if p}
    words = parts | {w for w in re.split(r"[^a-z0-9+]+", text) if w}
    families = ("rouge", "bleu", "chrf", "meteor", "bertscore", "sacrebleu")
    if known & words or any(w.startswith(families) for w in words):
        return "metric"
    return "judge"


def find_metrics(columns: Iterable[str]) -> list[MetricColumns]:
    """Metrics with both a judge and a human column under Vertex's convention, in column order.

    A judge column without its human column (or the reverse) is not a validatable metric and
    is skipped.
    """
    cols = list(columns)
    present = set(cols)
    found: list[MetricColumns] = []
    for col in cols:
        name, _, suffix = col.rpartition("/")
        if not name:
            continue
        if suffix == "score" and f"{name}/human_rating" in present:
            found.append(MetricColumns(name, "pointwise", col, f"{name}/human_rating"))
        elif suffix == "pairwise_choice" and f"{name}/human_pairwise_choice" in present:
            swapped = f"{name}/pairwise_choice_swapped"
            found.append(
                MetricColumns(
                    name, "pairwise", col, f"{name}/human_pairwise_choice", swapped if swapped in present else None
                )
            )
    return found


def load_table(path: str | Path) -> dict[str, list[Any]]:
    """A whole table as columns, read through respeval.io's readers: ``.jsonl``/``.ndjson``
    (one object per line), ``.json`` (a list of objects, or an object of equal-length lists),
    ``.csv`` (numbers parsed, empty cells missing) or ``.parquet``.  Rows lacking a column
    hold ``None`` there; blank lines are no rows."""
    p = Path(path)
    fmt = format_of(p)
    if fmt == "jsonl":
        return _rows_to_columns([record for _, record in read_jsonl(p)], p)
    if fmt == "json":
        return _json_table(p)
    if fmt == "csv":
        columns = _read_columns(p, "csv")
        return {name: _parse_csv_column(values) for name, values in columns.items()}
    if fmt == "parquet":
        return _read_columns(p, "parquet")
    raise ValueError(f"{p}: unknown table format {p.suffix.lower()!r} (expected .jsonl, .json, .csv or .parquet)")


def _read_columns(p: Path, fmt: str) -> dict[str, list[Any]]:
    """Every column of a CSV (text) or Parquet (as stored) file, whole."""
    import pyarrow as pa

    parquet = fmt == "parquet"
    names = column_names(p, fmt) or []
    with read_columns(p, None, fmt=fmt, skip_blank=True, arrow_table=parquet) as reader:
        chunks = list(reader)
    if parquet:
        return pa.concat_tables([c.table for c in chunks]).to_pydict() if chunks else {n: [] for n in names}
    return {name: [v for c in chunks for v in c.columns[name]] for name in names}


def _json_table(p: Path) -> dict[str, list[Any]]:
    data = read_json(p)
    if isinstance(data, list):
        return _rows_to_columns(data, p)
    if isinstance(data, dict) and all(isinstance(v, list) for v in data.values()):
        lengths = {len(v) for v in data.values()}
        if len(lengths) > 1:
            raise ValueError(f"{p}: columns have different lengths {sorted(lengths)}")
        return {str(k): list(v) for k, v in data.items()}
    raise ValueError(f"{p}: expected a list of objects or an object of columns")


def _rows_to_columns(rows: Sequence[Any], p: Path) -> dict[str, list[Any]]:
    names: dict[str, None] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ValueError(f"{p}: row {i} is {type(row).__name__}, expected an object")
        names.update(dict.fromkeys(row))
    return {name: [row.get(name) for row in rows] for name in names}


def _parse_csv_column(cells: list[str | None]) -> list[Any]:
    values: list[Any] = [None if c is None or not c.strip() else c for c in cells]
    for cast in (int, float):
        try:
            return [None if v is None else cast(v) for v in values]
        except ValueError:
            continue
    return values


def join_tables(
    results: Mapping[str, list[Any]], labels: Mapping[str, list[Any]], *, id_field: str | None = None
) -> dict[str, list[Any]]:
    """Columns of ``results`` and ``labels`` side by side, row by row, or matched on
    ``id_field`` (every results row keeps its place; a row with no label gets ``None``, which
    validation then drops and counts).  A column in both tables keeps the results' values."""
    n_res = _n_rows(results)
    if id_field is None:
        if n_res != _n_rows(labels):
            raise ValueError(
                f"results has {n_res} rows but labels has {_n_rows(labels)}; give an id field to match them"
            )
        order: list[int | None] = list(range(n_res))
    else:
        for name, table in (("results", results), ("labels", labels)):
            if id_field not in table:
                raise ValueError(f"{name} has no id field {id_field!r}")
        where = _id_index(labels[id_field], "labels", id_field)
        _id_index(results[id_field], "results", id_field)  # one label must never serve two rows
        order = [where.get(plain_value(key)) for key in results[id_field]]
    joined = dict(results)
    for name, column in labels.items():
        if name not in joined:
            joined[name] = [None if i is None else column[i] for i in order]
    return joined


def _id_index(ids: list[Any], table: str, id_field: str) -> dict[Any, int]:
    index: dict[Any, int] = {}
    repeated: dict[Any, None] = {}
    for i, key in enumerate(ids):
        key = plain_value(key)
        if key in index:
            repeated[key] = None
        index.setdefault(key, i)
    if repeated:
        shown = ", ".join(repr(k) for k in list(repeated)[:10]) + (" ..." if len(repeated) > 10 else "")
        raise ValueError(f"{table}: {len(repeated)} {id_field!r} value(s) appear more than once: {shown}")
    return index


def _n_rows(table: Mapping[str, list[Any]]) -> int:
    return len(next(iter(table.values()))) if table else 0


def table_column(table: Mapping[str, list[Any]], name: str) -> list[Any]:
    """A column by name, or by a dotted path into nested objects (``scores.litepyramid``)."""
    if name in table:
        return list(table[name])
    head, _, rest = name.partition(".")
    if rest and head in table:
        out = []
        for value in table[head]:
            for part in rest.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            out.append(value)
        return out
    raise ValueError(f"no column {name!r} (columns: {', '.join(list(table)[:20])})")
