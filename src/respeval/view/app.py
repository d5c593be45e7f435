"""The viewer as a minimal ASGI application: read-only (GET and HEAD only), every page
rendered on the server with no script, sent with a Content-Security-Policy that forbids
scripts, frames and every load from elsewhere, and answered only for the host it is bound to
(a page of another site cannot reach it through DNS rebinding).

``Viewer(runs)`` is the application (``await app(scope, receive, send)``); any ASGI server
runs it (``respeval view`` uses uvicorn); tests call it directly.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any
from urllib.parse import parse_qs

from respeval.errors import RespevalError
from respeval.view import pages
from respeval.view.runs import Run
from respeval.view.store import ROW, Columns, Page, Query, Store

__all__ = ["SECURITY_HEADERS", "Viewer"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


class HTTPError(RespevalError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _one(params: Mapping[str, list[str]], name: str) -> str | None:
    values = params.get(name)
    return values[-1].strip() if values and values[-1].strip() else None


def _number(params: Mapping[str, list[str]], name: str) -> float | None:
    text = _one(params, name)
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise HTTPError(400, f"{name}={text!r} is not a number") from None
    if not math.isfinite(value):
        raise HTTPError(400, f"{name} must be a finite number")
    return value


def _page_number(params: Mapping[str, list[str]]) -> int:
    text = _one(params, "page") or "0"
    if not text.isdigit():
        raise HTTPError(400, f"page={text!r} is not a page number")
    return min(int(text), 10**9)


class Viewer:
    """The viewer over ``runs`` (see :func:`respeval.view.runs.find_runs`).  ``hosts``: the
    Host header values it answers (None: any, for a server bound to every interface)."""

    def __init__(self, runs: Iterable[Run], *, hosts: Iterable[str] | None = None) -> None:
        self.runs = list(runs)
        self.by_id = {r.id: r for r in self.runs}
        self.hosts = None if hosts is None else {h.lower() for h in hosts}
        self.store = Store()
        self._tables: dict[str, str] = {}

    # ------------------------------------------------------------------ ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        status, body, extra = self.respond(scope)
        headers = [
            (b"content-type", b"text/html; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            *SECURITY_HEADERS,
            *extra,
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body})

    def respond(self, scope: Scope) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        """(status, HTML, extra headers) for one request."""
        try:
            if self.hosts is not None:
                host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1").lower()
                if host not in self.hosts:
                    raise HTTPError(421, f"this viewer answers only for {', '.join(sorted(self.hosts))}")
            if scope.get("method") not in ("GET", "HEAD"):
                return (
                    405,
                    pages.error_page(405, "the viewer is read-only", self.runs).encode(),
                    [(b"allow", b"GET, HEAD")],
                )
            params = parse_qs(scope.get("query_string", b"").decode("utf-8", "replace"), keep_blank_values=False)
            html = self.route(str(scope.get("path") or "/"), params)
            return 200, html.encode("utf-8"), []
        except HTTPError as exc:
            return exc.status, pages.error_page(exc.status, str(exc), self.runs).encode("utf-8"), []
        except ValueError as exc:  # a run's file cannot be read as it claims to be
            return 500, pages.error_page(500, str(exc), self.runs).encode("utf-8"), []

    # ------------------------------------------------------------------ routes

    def route(self, path: str, params: Mapping[str, list[str]]) -> str:
        parts = [p for p in path.split("/") if p]
        if not parts:
            return self.run_page(self.runs[0]) if len(self.runs) == 1 else self.run_list()
        if parts == ["runs"]:
            return self.run_list()
        if parts == ["compare"]:
            return self.compare(params)
        if parts[0] == "runs" and len(parts) >= 2:
            run = self.by_id.get(parts[1])
            if run is None:
                raise HTTPError(404, f"no run {parts[1]!r} (runs: 1 to {len(self.runs)})")
            if len(parts) == 2:
                return self.run_page(run)
            if parts[2] == "rows" and len(parts) == 3:
                return self.rows(run, params)
            if parts[2] == "rows" and len(parts) == 4 and parts[3].isdigit():
                return self.row(run, int(parts[3]))
        raise HTTPError(404, f"no page {path}")

    def _table(self, run: Run) -> str | None:
        """The run's rows as a DuckDB table (made on first use), or None when it has none."""
        if run.id in self._tables:
            return self._tables[run.id]
        if not run.has_rows:
            return None
        name = f"run_{run.id}"
        try:
            if run.records is not None:
                self.store.add_records(name, run.records)
            else:
                assert run.rows_path is not None and run.rows_format is not None
                method = (run.summary.get("meta") or {}).get("method")
                self.store.add_file(name, run.rows_path, run.rows_format, method)
        except Exception as exc:  # noqa: BLE001 - duckdb's own errors: the file is not what it claims
            raise ValueError(f"cannot read the rows of run {run.id} ({run.rows_path}): {exc}") from None
        self._tables[run.id] = name
        return name

    def _columns(self, run: Run) -> tuple[str, Columns] | None:
        name = self._table(run)
        return None if name is None else (name, self.store.columns(name))

    def run_list(self) -> str:
        counts = {}
        for r in self.runs:
            table = self._table(r) if r.has_rows else None
            counts[r.id] = self.store.count(table) if table else None
        return pages.run_list_page(self.runs, counts)

    def _query(self, params: Mapping[str, list[str]], columns: Columns) -> Query:
        metric = _one(params, "metric")
        if metric is not None and columns.metric(metric) is None:
            raise HTTPError(400, f"no metric {metric!r} in this run")
        sort = _one(params, "sort")
        if sort is not None and sort not in columns.types:
            raise HTTPError(400, f"no column {sort!r} to sort by")
        return Query(
            metric=metric,
            status=_one(params, "status"),
            system=_one(params, "system"),
            text=_one(params, "q"),
            low=_number(params, "min"),
            high=_number(params, "max"),
            sort=sort,
            descending=_one(params, "desc") in ("1", "true", "yes"),
            page=_page_number(params),
        )

    def _page(self, run: Run, q: Query) -> tuple[Page, Columns, list[str]]:
        got = self._columns(run)
        assert got is not None
        name, columns = got
        shown, _ = pages.shown_columns(columns, q)
        systems = self.store.distinct(name, "system") if "system" in columns.keys else []
        return self.store.page(name, q, shown), columns, systems

    def run_page(self, run: Run) -> str:
        if self._table(run) is None:
            return pages.run_page(run, self.runs, None, None, [])
        rows, columns, systems = self._page(run, Query())
        return pages.run_page(run, self.runs, rows, columns, systems)

    def rows(self, run: Run, params: Mapping[str, list[str]]) -> str:
        got = self._columns(run)
        if got is None:
            raise HTTPError(404, f"run {run.id} has no per-row file")
        rows, columns, systems = self._page(run, self._query(params, got[1]))
        return pages.rows_page(run, self.runs, rows, columns, systems)

    def row(self, run: Run, position: int) -> str:
        got = self._columns(run)
        if got is None:
            raise HTTPError(404, f"run {run.id} has no per-row file")
        name, columns = got
        row = self.store.row(name, position)
        if row is None:
            raise HTTPError(404, f"run {run.id} has no row {position}")
        return pages.row_page(
            run, self.runs, row, columns, self.store.neighbours(name, position), self._texts(run, row)
        )

    def _texts(self, run: Run, row: Mapping[str, Any]) -> dict[str, Any]:
        """A score run's texts of a row (prediction, reference), read from its input files."""
        inputs = run.summary.get("inputs")
        if not isinstance(inputs, Mapping) or not isinstance(row.get("row"), int):
            return {}
        from respeval.report.runs import score_texts

        preds = dict(inputs.get("pred") or {})
        system = row.get("system")
        if system is None and len(preds) == 1:
            system = next(iter(preds))
        return score_texts(inputs, [(str(system), int(row["row"]))]).get((str(system), int(row["row"])), {})

    def compare(self, params: Mapping[str, list[str]]) -> str:
        a, b = (self.by_id.get(_one(params, side) or "") for side in ("a", "b"))
        metric = _one(params, "metric")
        page_no = _page_number(params)
        if a is None or b is None:
            return pages.compare_page(self.runs, a, b, metric, self._metric_names(a, b), [], None, [], page_no)
        if a is b:
            raise HTTPError(400, "choose two different runs")
        got_a, got_b = self._columns(a), self._columns(b)
        if got_a is None or got_b is None:
            raise HTTPError(400, "both runs need per-row files to be compared row by row")
        (ta, ca), (tb, cb) = got_a, got_b
        metrics = self._metric_names(a, b)
        message = None
        if not metrics:
            message = "these runs share no metric"
        metric = metric if metric in metrics else (metrics[0] if metrics else None)
        keys = _pair_keys(ca, cb)
        texts = [t for t in ("response", "prediction", "text") if t in ca.types and t in cb.types][:1]
        result = self.store.compare(ta, tb, metric, keys, texts, page_no) if metric else None
        return pages.compare_page(self.runs, a, b, metric, metrics, keys, result, texts, page_no, message)

    def _metric_names(self, a: Run | None, b: Run | None) -> list[str]:
        """The metrics both runs have; before two are chosen, every run's (for the form)."""
        if a is None and b is None:
            every: list[str] = []
            for each in self.runs:
                found = self._columns(each) if each.has_rows else None
                every += [m.name for m in found[1].metrics if m.score] if found else []
            return list(dict.fromkeys(every))
        names: list[list[str]] = []
        for run in (a, b):
            got = self._columns(run) if run is not None else None
            if got is not None:
                names.append([m.name for m in got[1].metrics if m.score])
        if len(names) == 2:
            return [m for m in names[0] if m in names[1]]
        return names[0] if names else []


def _pair_keys(a: Columns, b: Columns) -> list[str]:
    """What pairs two runs' rows: their ids, else (system, row), (run, case), row, position."""
    for keys in (["id"], ["system", "row"], ["run", "eval_id"], ["eval_id"], ["row"]):
        if all(k in a.types and k in b.types for k in keys):
            return keys
    return [ROW]
