"""The viewer's rows, queried through DuckDB: one view (Parquet, read in place) or table
(JSONL, CSV, an agent run's cases: loaded once) per run, paged, filtered, sorted and
searched in SQL, so a million-row run pages as fast as a small one.

Every value a user can choose reaches SQL as a bound parameter; every column name is checked
against the table's own columns and quoted; nothing of a request is ever spliced into SQL.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Columns", "Metric", "Page", "Query", "Store", "quote"]

ROW = "__row"  # the 0-based position of a row in its file (the viewer's row key)
PAGE_SIZE = 50
TEXT_NAMES = (
    "prompt",
    "response",
    "prediction",
    "reference",
    "context",
    "baseline_model_response",
    "text",
    "instruction",
    "input",
    "output",
    "user",
    "expected_response",
    "actual_response",
)
KEY_NAMES = ("id", "system", "row", "run", "eval_id", "status")
_NUMERIC = ("DOUBLE", "FLOAT", "REAL", "DECIMAL", "INTEGER", "BIGINT", "SMALLINT", "TINYINT", "HUGEINT", "UBIGINT")
_NOT_METRICS = {
    ROW,
    "row",
    "tokens_in",
    "tokens_out",
    "cost",
    "attempts",
    "run",
    "invocation",
    "samples",
    "scored_samples",
    "position",
}


def quote(name: str) -> str:
    """A SQL identifier, quoted (``"`` doubled inside)."""
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    """A SQL string literal (``'`` doubled inside): only for file paths given on the command line."""
    return "'" + text.replace("'", "''") + "'"


@dataclass
class Metric:
    """One metric's columns in a run's rows: ``fields`` maps a role (score, status, pass,
    explanation, unscored_reason, judge_calls, pairwise_choice, ...) to its column."""

    name: str
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def score(self) -> str | None:
        return self.fields.get("score")

    @property
    def status(self) -> str | None:
        return self.fields.get("status")

    @property
    def passed(self) -> str | None:
        return self.fields.get("pass")


@dataclass
class Columns:
    """What a run's rows hold: every column and its type, the key columns (id, system, row),
    the text columns, and the metrics."""

    types: dict[str, str]
    metrics: list[Metric]
    keys: list[str]
    texts: list[str]

    def metric(self, name: str | None) -> Metric | None:
        return next((m for m in self.metrics if m.name == name), None)

    def numeric(self, column: str) -> bool:
        return self.types.get(column, "").upper().startswith(_NUMERIC)


def describe(types: Mapping[str, str], default_metric: str | None = None) -> Columns:
    """Metrics, keys and texts from a table's columns: ``{metric}/{field}`` columns (evaluate,
    agent cases), a judge's verdict columns (``score``, ``pass``, ``status``: one metric named
    ``default_metric``), else every numeric column (a score run's ``bleu``, ``ter``)."""
    metrics: dict[str, Metric] = {}
    owned: set[str] = set()
    for column in types:
        name, slash, role = column.rpartition("/")
        if slash and name:
            metrics.setdefault(name, Metric(name)).fields[role] = column
            owned.add(column)
    if not metrics and ("score" in types or "winner" in types) and "status" in types:
        judge = Metric(default_metric or "judge")
        for role, column in (
            ("score", "score"),
            ("pass", "pass"),
            ("status", "status"),
            ("explanation", "reasoning"),
            ("unscored_reason", "unscored_reason"),
            ("label", "label"),
            ("winner", "winner"),
            ("judge_calls", "judge_calls"),
        ):
            if column in types:
                judge.fields[role] = column
                owned.add(column)
        metrics[judge.name] = judge
    if not metrics:
        for column, kind in types.items():
            if column not in _NOT_METRICS and kind.upper().startswith(_NUMERIC):
                metrics[column] = Metric(column, {"score": column})
                owned.add(column)
    keys = [c for c in KEY_NAMES if c in types and c not in owned]
    texts = [c for c in types if c in TEXT_NAMES and c not in owned]
    texts += [
        c
        for c, kind in types.items()
        if c not in owned and c not in texts and c not in keys and c != ROW and kind.upper() == "VARCHAR"
    ]
    return Columns(dict(types), list(metrics.values()), keys, texts)


@dataclass
class Query:
    """A rows request: a metric to show and sort by, a status (``scored``, ``unscored``,
    ``pass``, ``fail``) of that metric (or of any), a system, text to search for, a score
    range, a sort column and direction, and a page."""

    metric: str | None = None
    status: str | None = None
    system: str | None = None
    text: str | None = None
    low: float | None = None
    high: float | None = None
    sort: str | None = None
    descending: bool = False
    page: int = 0
    size: int = PAGE_SIZE


@dataclass
class Page:
    total: int  # rows matching the filters
    rows: list[dict[str, Any]]
    query: Query
    columns: list[str]  # the columns of ``rows``, in order


class Store:
    """One DuckDB connection holding every run's rows (``add_*``), queried under a lock."""

    def __init__(self) -> None:
        import duckdb

        self._db = duckdb.connect(":memory:")
        self._lock = threading.Lock()
        self._columns: dict[str, Columns] = {}

    def _sql(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self._lock:
            return self._db.execute(sql, list(params))

    def _fetch(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], list[tuple[Any, ...]]]:
        with self._lock:
            cursor = self._db.execute(sql, list(params))
            names = [d[0] for d in cursor.description]
            return names, cursor.fetchall()

    # ------------------------------------------------------------------ tables

    def add_file(self, name: str, path: str, fmt: str, default_metric: str | None = None) -> Columns:
        """A run's per-row file: Parquet as a view (read in place, paged by DuckDB), JSONL
        and CSV loaded once into a table."""
        if fmt == "parquet":
            source = f"read_parquet({_literal(path)}, file_row_number = true)"
            self._sql(
                f"CREATE VIEW {quote(name)} AS SELECT file_row_number AS {ROW}, * EXCLUDE (file_row_number) FROM {source}"
            )
        else:
            reader = (
                f"read_json_auto({_literal(path)}, format = 'newline_delimited')"
                if fmt == "jsonl"
                else f"read_csv_auto({_literal(path)})"
            )
            self._sql(f"CREATE TABLE {quote(name)} AS SELECT (row_number() OVER ()) - 1 AS {ROW}, * FROM {reader}")
        return self._describe(name, default_metric)

    def add_records(self, name: str, records: Sequence[Mapping[str, Any]]) -> Columns:
        """Rows given as records (an agent run's cases)."""
        import pyarrow as pa

        table = pa.Table.from_pylist([{ROW: i, **r} for i, r in enumerate(records)])
        with self._lock:
            self._db.register(f"{name}_arrow", table)
            self._db.execute(f"CREATE TABLE {quote(name)} AS SELECT * FROM {quote(name + '_arrow')}")
            self._db.unregister(f"{name}_arrow")
        return self._describe(name)

    def _describe(self, name: str, default_metric: str | None = None) -> Columns:
        _, rows = self._fetch(f"DESCRIBE SELECT * FROM {quote(name)}")
        columns = describe({r[0]: str(r[1]) for r in rows}, default_metric)
        self._columns[name] = columns
        return columns

    def columns(self, name: str) -> Columns:
        return self._columns[name]

    # ------------------------------------------------------------------ queries

    def _where(self, name: str, q: Query) -> tuple[str, list[Any]]:
        cols = self._columns[name]
        clauses: list[str] = []
        params: list[Any] = []
        metric = cols.metric(q.metric)
        if q.system and "system" in cols.types:
            clauses.append('CAST("system" AS VARCHAR) = ?')
            params.append(q.system)
        if q.status:
            status_cols = [metric.status] if metric and metric.status else [m.status for m in cols.metrics if m.status]
            pass_cols = [metric.passed] if metric and metric.passed else [m.passed for m in cols.metrics if m.passed]
            if q.status in ("scored", "unscored") and status_cols:
                op = "=" if q.status == "scored" else "<>"
                joined = " AND " if q.status == "scored" else " OR "
                clauses.append(
                    "("
                    + joined.join(f"coalesce(CAST({quote(c)} AS VARCHAR), '') {op} 'scored'" for c in status_cols)
                    + ")"
                )
            elif q.status in ("pass", "fail") and pass_cols:
                want = "true" if q.status == "pass" else "false"
                joined = " AND " if q.status == "pass" else " OR "
                clauses.append("(" + joined.join(f"{quote(c)} IS NOT DISTINCT FROM {want}" for c in pass_cols) + ")")
            elif q.status not in ("scored", "unscored", "pass", "fail") and status_cols:
                clauses.append("(" + " OR ".join(f"CAST({quote(c)} AS VARCHAR) = ?" for c in status_cols) + ")")
                params.extend([q.status] * len(status_cols))
        if metric and metric.score and cols.numeric(metric.score):
            if q.low is not None:
                clauses.append(f"{quote(metric.score)} >= ?")
                params.append(q.low)
            if q.high is not None:
                clauses.append(f"{quote(metric.score)} <= ?")
                params.append(q.high)
        if q.text:
            searched = [*cols.keys, *cols.texts]
            searched += [
                c for m in cols.metrics for r, c in m.fields.items() if r in ("explanation", "unscored_reason")
            ]
            if searched:
                clauses.append(
                    "(" + " OR ".join(f"CAST({quote(c)} AS VARCHAR) ILIKE ? ESCAPE '\\'" for c in searched) + ")"
                )
                pattern = "%" + q.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
                params.extend([pattern] * len(searched))
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    def page(self, name: str, q: Query, shown: Iterable[str]) -> Page:
        """The rows of ``name`` matching ``q``: their ``shown`` columns (and the row key),
        sorted and paged; ``total`` counts every match."""
        cols = self._columns[name]
        where, params = self._where(name, q)
        total = self._fetch(f"SELECT count(*) FROM {quote(name)}{where}", params)[1][0][0]
        wanted = [ROW, *[c for c in dict.fromkeys(shown) if c in cols.types and c != ROW]]
        sort = q.sort if q.sort in cols.types else None
        if sort is None and q.metric and (m := cols.metric(q.metric)) and m.score:
            sort = m.score
        order = f"{quote(sort)} {'DESC' if q.descending else 'ASC'} NULLS LAST, {ROW}" if sort else ROW
        size = max(1, min(q.size, 500))
        offset = max(0, q.page) * size
        select = ", ".join(quote(c) for c in wanted)
        names, rows = self._fetch(
            f"SELECT {select} FROM {quote(name)}{where} ORDER BY {order} LIMIT {size} OFFSET {offset}", params
        )
        return Page(int(total), [dict(zip(names, r)) for r in rows], q, names)

    def row(self, name: str, position: int) -> dict[str, Any] | None:
        """One whole row by its position in the file."""
        names, rows = self._fetch(f"SELECT * FROM {quote(name)} WHERE {ROW} = ?", [position])
        return dict(zip(names, rows[0])) if rows else None

    def neighbours(self, name: str, position: int) -> tuple[int | None, int | None]:
        """The positions before and after ``position`` (file order)."""
        _, rows = self._fetch(
            f"SELECT max({ROW}) FILTER (WHERE {ROW} < ?), min({ROW}) FILTER (WHERE {ROW} > ?) FROM {quote(name)}",
            [position, position],
        )
        return rows[0][0], rows[0][1]

    def distinct(self, name: str, column: str, limit: int = 200) -> list[str]:
        """A column's distinct values (for the system filter), at most ``limit``."""
        if column not in self._columns[name].types:
            return []
        _, rows = self._fetch(
            f"SELECT DISTINCT CAST({quote(column)} AS VARCHAR) AS v FROM {quote(name)} WHERE {quote(column)} IS NOT NULL "
            f"ORDER BY v LIMIT {int(limit)}"
        )
        return [r[0] for r in rows]

    def count(self, name: str) -> int:
        return int(self._fetch(f"SELECT count(*) FROM {quote(name)}")[1][0][0])

    # ------------------------------------------------------------------ two runs

    def compare(
        self,
        a: str,
        b: str,
        metric: str,
        keys: Sequence[str],
        texts: Sequence[str],
        page: int = 0,
        size: int = PAGE_SIZE,
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Two runs' rows paired on ``keys``, for one ``metric`` both have: flipped rows
        first (pass/fail, or a 0/1 score, or the status differs), then by the largest
        difference.  Returns counts and means, and the page of pairs."""
        ca, cb = self._columns[a], self._columns[b]
        ma, mb = ca.metric(metric), cb.metric(metric)
        if ma is None or mb is None or not ma.score or not mb.score:
            raise ValueError(f"metric {metric!r} is not in both runs")
        on = " AND ".join(f"CAST(a.{quote(k)} AS VARCHAR) = CAST(b.{quote(k)} AS VARCHAR)" for k in keys)
        score_a, score_b = f"a.{quote(ma.score)}", f"b.{quote(mb.score)}"
        if ma.passed and mb.passed:
            flip = f"(a.{quote(ma.passed)} IS DISTINCT FROM b.{quote(mb.passed)})"
        elif ma.status and mb.status:
            flip = (
                f"(a.{quote(ma.status)} IS DISTINCT FROM b.{quote(mb.status)} OR "
                f"({score_a} IN (0, 1) AND {score_b} IN (0, 1) AND {score_a} <> {score_b}))"
            )
        else:
            flip = f"({score_a} IN (0, 1) AND {score_b} IN (0, 1) AND {score_a} <> {score_b})"
        numeric = ca.numeric(ma.score) and cb.numeric(mb.score)
        diff = f"({score_b} - {score_a})" if numeric else "NULL"
        key_cols = ", ".join(f"a.{quote(k)} AS {quote(k)}" for k in keys)
        text_cols = "".join(
            f", a.{quote(t)} AS {quote('a:' + t)}, b.{quote(t)} AS {quote('b:' + t)}"
            for t in texts
            if t in ca.types and t in cb.types and t not in keys
        )
        base = f"FROM {quote(a)} a JOIN {quote(b)} b ON {on}"
        _, stats = self._fetch(
            f"SELECT count(*), count(*) FILTER (WHERE {flip}), "
            + (f"avg({score_a}), avg({score_b}) " if numeric else "NULL, NULL ")
            + base
        )
        pairs, flipped, mean_a, mean_b = stats[0]
        size = max(1, min(size, 500))
        names, rows = self._fetch(
            f"SELECT a.{ROW} AS {quote('a:' + ROW)}, b.{ROW} AS {quote('b:' + ROW)}, {key_cols}, "
            f"{score_a} AS {quote('a:score')}, {score_b} AS {quote('b:score')}, {diff} AS difference, "
            f"{flip} AS flipped{text_cols} {base} "
            f"ORDER BY flipped DESC, abs(difference) DESC NULLS LAST, a.{ROW} LIMIT {size} OFFSET {max(0, page) * size}"
        )
        counts = {"pairs": int(pairs), "flipped": int(flipped), "mean_a": mean_a, "mean_b": mean_b}
        return counts, [dict(zip(names, r)) for r in rows]
