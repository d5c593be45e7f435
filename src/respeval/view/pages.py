"""The viewer's pages, rendered on the server: plain HTML and forms, no script at all.

Every text from a run (responses, system and metric names, judge replies, paths) goes through
:func:`respeval.report.format.escape` (HTML-escaped, secrets scrubbed) before it reaches a page;
URLs are built with :func:`urllib.parse.urlencode` and escaped as attribute values.  The run
summaries are rendered by the report's own sections (:func:`respeval.report.present_sections`),
so ``respeval view`` and ``respeval report`` show the same numbers from the same schema.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote as url_quote
from urllib.parse import urlencode

from respeval._version import __version__
from respeval.report.format import escape, fmt, html_table, text_block
from respeval.report.html import CSS, present_sections
from respeval.view.runs import Run
from respeval.view.store import ROW, TEXT_NAMES, Columns, Metric, Page, Query

__all__ = ["compare_page", "error_page", "row_page", "rows_page", "run_list_page", "run_page"]

_PREVIEW = 120
_MAX_METRICS_SHOWN = 8
_PAGE_CSS = """
.bar { display:flex; flex-wrap:wrap; gap:8px 14px; align-items:flex-end; margin:10px 0; }
.bar label { display:flex; flex-direction:column; font-size:12px; color:var(--muted); gap:2px; }
.bar input, .bar select, .bar button { font:inherit; padding:3px 6px; border:1px solid #cbd5e1; border-radius:6px;
  background:#fff; }
.bar button { background:var(--accent); color:#fff; border-color:var(--accent); cursor:pointer; }
table.rows td { max-width:420px; overflow-wrap:break-word; }
table.rows a.sort { color:inherit; text-decoration:none; }
.pager { margin:8px 0; display:flex; gap:14px; align-items:center; }
.flip { color:#b91c1c; font-weight:700; }
.pass { color:#047857; font-weight:600; } .fail { color:#b91c1c; font-weight:600; }
details.section > summary { cursor:pointer; font-weight:650; font-size:16px; margin:18px 0 6px; }
.path { font-family:ui-monospace,monospace; font-size:12px; color:#cbd5e1; overflow-wrap:anywhere; }
.call { border-left:3px solid var(--accent); padding-left:10px; margin:10px 0; }
.call .text, .metric .text, .turn .text { margin-top:8px; }
.turn { display:grid; grid-template-columns:minmax(0,1fr) minmax(0,1fr); gap:10px; }
.calls { font-family:ui-monospace,monospace; font-size:12px; white-space:pre-wrap; overflow-wrap:anywhere; }
.match { color:#047857; } .miss { color:#b91c1c; }
"""


# --------------------------------------------------------------------------- pieces


def link(path: str, params: Mapping[str, Any] | None = None) -> str:
    """An escaped href: ``path`` (its parts already URL-safe) and the query ``params``
    (None and empty values left out)."""
    query = urlencode({k: v for k, v in (params or {}).items() if v not in (None, "", False)})
    return escape(path + ("?" + query if query else ""))


def run_path(run: Run, *parts: Any) -> str:
    return "/runs/" + "/".join(url_quote(str(p), safe="") for p in (run.id, *parts))


def cell(value: Any, limit: int = _PREVIEW) -> str:
    """A table cell's text: numbers formatted, booleans as pass/fail, long texts cut."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return '<span class="pass">pass</span>' if value else '<span class="fail">fail</span>'
    if isinstance(value, float):
        return fmt(value)
    if isinstance(value, int):
        return escape(str(value))
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return escape(text if len(text) <= limit else text[: limit - 1] + "…")


def page(title: str, body: str, runs: Sequence[Run], current: Run | None = None) -> str:
    nav = "".join(
        f'<a href="{link(run_path(r))}"{" aria-current=page" if r is current else ""}>{escape(r.id)}. '
        f"{escape(r.title)}</a>"
        for r in runs
    )
    nav += f'<a href="{link("/compare")}">Compare two runs</a>' if len(runs) > 1 else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{escape(title)} · respeval view</title><style>{CSS}{_PAGE_CSS}</style></head><body>"
        f'<header><h1>{escape(title)}</h1><div class="sub">respeval view {escape(__version__)} · read-only · '
        f'<a href="{link("/runs")}" style="color:#cbd5e1">all runs</a></div></header>'
        f"<nav>{nav}</nav><main>{body}</main>"
        "<footer>respeval view: read-only, nothing leaves this machine. The summaries are the run summaries "
        "respeval report renders.</footer></body></html>\n"
    )


def error_page(status: int, message: str, runs: Sequence[Run]) -> str:
    return page(f"{status}", f'<p class="warn">{escape(message)}</p>', runs)


# --------------------------------------------------------------------------- runs


def run_list_page(runs: Sequence[Run], counts: Mapping[str, int | None]) -> str:
    rows = [
        [
            escape(r.id),
            f'<a href="{link(run_path(r))}">{escape(r.title)}</a>',
            escape(r.command),
            fmt(counts.get(r.id)) if counts.get(r.id) is not None else "–",
            _headline(r.summary),
            f"<code>{escape(r.source)}</code>",
        ]
        for r in runs
    ]
    body = html_table(["run", "title", "command", "rows", "result", "from"], rows, "rows")
    return page(f"{len(runs)} runs", f"<section><h2>Runs</h2>{body}</section>", runs)


def _headline(summary: Mapping[str, Any]) -> str:
    """The first score of a run summary, as a one-line result."""
    for s in summary.get("scores") or []:
        value = s.get("corpus") if s.get("mean") is None else s.get("mean")
        if value is not None:
            return f"{escape(s.get('metric'))} {fmt(value)}"
    for c in summary.get("compare") or []:
        return f"{escape(c.get('candidate'))} vs {escape(c.get('baseline'))}: {escape(c.get('decision'))}"
    for t in summary.get("systems") or []:
        return f"{escape(t.get('metric'))}: {len(t.get('rows') or [])} systems"
    return "–"


def _sections(sections: Sequence[tuple[str, str, str]], opened: bool) -> str:
    return "".join(
        f'<details class="section" id="summary-{escape(sid)}"{" open" if opened else ""}><summary>{escape(name)}'
        f"</summary>{html}</details>"
        for sid, name, html in sections
    )


def run_page(run: Run, runs: Sequence[Run], rows: Page | None, columns: Columns | None, systems: list[str]) -> str:
    """A run: its result (the summary's first section: scores with intervals, systems, the
    comparison), then its first rows with their ids, then the rest of its summary, folded."""
    sections = present_sections(run.summary)
    jump = ' · <a href="#rows">rows ↓</a>' if rows is not None else ""
    body = f'<p class="note">{escape(run.command)} run from <code>{escape(run.source)}</code>{jump}</p>'
    body += f'<section id="summary">{_sections(sections[:1], True)}</section>'
    if rows is not None and columns is not None:
        body += f'<section id="rows"><h2>Rows</h2>{_rows_block(run, rows, columns, systems)}</section>'
    elif not run.has_rows:
        body += '<p class="note">This run wrote no per-row file (or it is not beside its summary).</p>'
    if sections[1:]:
        body += f'<section id="more"><h2>More about this run</h2>{_sections(sections[1:], False)}</section>'
    return page(run.title, body, runs, run)


def rows_page(run: Run, runs: Sequence[Run], rows: Page, columns: Columns, systems: list[str]) -> str:
    back = f'<p><a href="{link(run_path(run))}">← {escape(run.title)}: summary</a></p>'
    return page(
        f"{run.title}: rows",
        back + f'<section id="rows"><h2>Rows</h2>{_rows_block(run, rows, columns, systems)}</section>',
        runs,
        run,
    )


def _query_params(q: Query) -> dict[str, Any]:
    return {
        "metric": q.metric,
        "status": q.status,
        "system": q.system,
        "q": q.text,
        "min": q.low,
        "max": q.high,
        "sort": q.sort,
        "desc": 1 if q.descending else None,
    }


def _select(name: str, label: str, options: Sequence[tuple[str, str]], chosen: Any) -> str:
    opts = "".join(
        f'<option value="{escape(value)}"{" selected" if str(chosen or "") == value else ""}>{escape(text)}</option>'
        for value, text in options
    )
    return f'<label>{escape(label)}<select name="{escape(name)}">{opts}</select></label>'


def _filters(run: Run, q: Query, columns: Columns, systems: list[str]) -> str:
    metrics = [("", "every metric")] + [(m.name, m.name) for m in columns.metrics]
    statuses = [("", "any"), ("scored", "scored"), ("unscored", "unscored"), ("pass", "pass"), ("fail", "fail")]
    parts = [
        f'<form class="bar" method="get" action="{link(run_path(run, "rows"))}">',
        _select("metric", "metric", metrics, q.metric),
        _select("status", "status", statuses, q.status),
    ]
    if systems:
        parts.append(_select("system", "system", [("", "every system")] + [(s, s) for s in systems], q.system))
    parts.append(
        f'<label>text<input type="search" name="q" value="{escape(q.text or "")}" placeholder="search"></label>'
    )
    for name, value in (("min", q.low), ("max", q.high)):
        shown = "" if value is None else repr(value)
        parts.append(
            f'<label>score {name}<input type="number" step="any" name="{name}" value="{escape(shown)}"></label>'
        )
    if q.sort:
        parts.append(f'<input type="hidden" name="sort" value="{escape(q.sort)}">')
    if q.descending:
        parts.append('<input type="hidden" name="desc" value="1">')
    parts.append('<button type="submit">Apply</button></form>')
    return "".join(parts)


def shown_columns(columns: Columns, q: Query) -> tuple[list[str], list[tuple[str, str]]]:
    """The columns a rows table shows and their headings: the keys, a text preview, then the
    chosen metric's score, status, pass and explanation (or every metric's score)."""
    shown: list[tuple[str, str]] = [(k, k) for k in columns.keys]
    preview: str | None = next((t for t in ("response", "prediction", "text", "output") if t in columns.texts), None)
    if preview is None:
        preview = next((t for t in columns.texts if t not in ("turns", "run_label")), None)
    if preview:
        shown.append((preview, preview))
    metric = columns.metric(q.metric)
    if metric is not None:
        for role in ("score", "pass", "status", "pairwise_choice", "outcome", "explanation", "unscored_reason"):
            if role in metric.fields:
                shown.append((metric.fields[role], f"{metric.name}: {role}"))
    else:
        for m in columns.metrics[:_MAX_METRICS_SHOWN]:
            column = m.score or m.passed or m.status
            if column:
                shown.append((column, m.name))
    return [c for c, _ in shown], shown


def _rows_block(run: Run, rows: Page, columns: Columns, systems: list[str]) -> str:
    q = rows.query
    _, shown = shown_columns(columns, q)
    params = _query_params(q)
    heads = ['<th><a class="sort" href="%s">#</a></th>' % link(run_path(run, "rows"), {**params, "sort": None})]
    for column, title in shown:
        descending = q.sort == column and not q.descending
        mark = " ▲" if q.sort == column and not q.descending else " ▼" if q.sort == column else ""
        href = link(run_path(run, "rows"), {**params, "sort": column, "desc": 1 if descending else None})
        heads.append(f'<th><a class="sort" href="{href}">{escape(title)}{mark}</a></th>')
    body = []
    for r in rows.rows:
        href = link(run_path(run, "rows", r[ROW]))
        cells = [f'<td><a class="row-link" href="{href}">{escape(r[ROW])}</a></td>']
        cells += [f"<td>{cell(r.get(c))}</td>" for c, _ in shown]
        body.append("<tr>" + "".join(cells) + "</tr>")
    first = q.page * q.size
    pager = [f"<span>rows {first + 1 if rows.total else 0:,}–{first + len(rows.rows):,} of {rows.total:,}</span>"]
    if q.page > 0:
        pager.append(f'<a href="{link(run_path(run, "rows"), {**params, "page": q.page - 1})}">← previous</a>')
    if first + len(rows.rows) < rows.total:
        pager.append(f'<a class="next" href="{link(run_path(run, "rows"), {**params, "page": q.page + 1})}">next →</a>')
    table = (
        f'<table class="rows compact"><thead><tr>{"".join(heads)}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        if rows.rows
        else '<p class="empty">No row matches these filters.</p>'
    )
    return _filters(run, q, columns, systems) + f'<div class="pager">{" ".join(pager)}</div>' + table


# --------------------------------------------------------------------------- one row


def _json_value(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _pretty(value: Any) -> str:
    value = _json_value(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    return "–" if value is None else str(value)


def _calls_html(raw: Any) -> str:
    """A judged row's calls: per call the messages sent and the raw reply; the orders of a
    pairwise call side by side."""
    calls = _json_value(raw)
    if not isinstance(calls, list) or not calls:
        return ""
    cards = []
    for i, call in enumerate(calls, 1):
        if not isinstance(call, Mapping):
            continue
        order = call.get("order")
        what = [f"call {i}"]
        if order:
            what.append(
                "order A = baseline, B = candidate" if order == "ab" else "order swapped: A = candidate, B = baseline"
            )
        if call.get("sample"):
            what.append(f"sample {escape(call.get('sample'))}")
        messages = "".join(
            text_block(f"judge prompt: {m.get('role')}", m.get("content"))
            for m in call.get("messages") or []
            if isinstance(m, Mapping)
        )
        reply = text_block("raw reply", call.get("reply"))
        extra = "".join(
            text_block(key, _pretty(call[key])) for key in ("refusal", "structured") if call.get(key) is not None
        )
        cards.append(f'<div class="call"><h4>{escape(" · ".join(what))}</h4>{messages}{reply}{extra}</div>')
    return f'<h4>What the judge was asked and answered</h4><div class="texts">{"".join(cards)}</div>'


_VERDICT_ROLES = (
    "score",
    "pass",
    "label",
    "status",
    "unscored_reason",
    "pairwise_choice",
    "pairwise_choice_swapped",
    "outcome",
    "winner",
    "threshold",
)


def _judged(m: Metric) -> bool:
    """Whether a metric's row holds a judge's verdict (calls, an explanation, a pairwise choice)."""
    return any(r in m.fields for r in ("judge_calls", "explanation", "pairwise_choice", "winner"))


def _scores_table(metrics: Sequence[Metric], row: Mapping[str, Any]) -> str:
    """Computed metrics, one line each: score, pass, status, why unscored, their other fields."""
    lines = []
    for m in metrics:
        other = {r: c for r, c in m.fields.items() if r not in ("score", "pass", "status", "unscored_reason")}
        lines.append(
            [
                escape(m.name),
                cell(row.get(m.score)) if m.score else "–",
                cell(row.get(m.passed)) if m.passed else "",
                cell(row.get(m.status)) if m.status else "",
                cell(row.get(m.fields.get("unscored_reason", "")), 10_000),
                escape("; ".join(f"{r}: {plain(row.get(c))}" for r, c in other.items())),
            ]
        )
    return html_table(["metric", "score", "pass", "status", "unscored reason", "other"], lines, "rows compact")


def plain(value: Any) -> str:
    """A value as plain text (numbers formatted), for a line of several."""
    if isinstance(value, float):
        return fmt(value)
    return "–" if value is None else (value if isinstance(value, str) else json.dumps(value, default=str))


def _metric_card(m: Metric, row: Mapping[str, Any]) -> str:
    fields = dict(m.fields)
    verdict = [
        [escape(role.replace("_", " ")), cell(row.get(fields.pop(role)), 10_000)]
        for role in _VERDICT_ROLES
        if role in fields
    ]
    explanation = row.get(fields.pop("explanation")) if "explanation" in fields else None
    calls = row.get(fields.pop("judge_calls")) if "judge_calls" in fields else None
    others = [
        [escape(role), f'<pre class="calls">{escape(_pretty(row.get(col)))}</pre>'] for role, col in fields.items()
    ]
    parts = [f'<div class="card metric"><h3>{escape(m.name)}</h3>']
    if verdict or others:
        parts.append("<h4>Parsed verdict</h4>" + html_table(["", ""], verdict + others, "meta"))
    if explanation:
        parts.append(text_block("explanation", explanation))
    parts.append(_calls_html(calls))
    parts.append("</div>")
    return "".join(parts)


def _call_line(call: Mapping[str, Any], matched: bool) -> str:
    args = json.dumps(call.get("args"), ensure_ascii=False, sort_keys=True, default=str)
    mark = '<span class="match">✓</span>' if matched else '<span class="miss">✗</span>'
    return f"{mark} {escape(call.get('name'))}({escape(args)})"


def _turns_html(raw: Any) -> str:
    """An agent case's turns: the user's text, then the expected and the actual answer and
    tool calls side by side (✓ a call the other side made too, with the same arguments)."""
    turns = _json_value(raw)
    if not isinstance(turns, list) or not turns:
        return ""

    def key(c: Mapping[str, Any]) -> str:
        return json.dumps([c.get("name"), c.get("args")], sort_keys=True, default=str)

    parts = ["<h3>Turns: expected and actual, side by side</h3>"]
    for t in turns:
        if not isinstance(t, Mapping):
            continue
        expected, actual = t.get("expected_calls") or [], t.get("actual_calls") or []
        ek, ak = [key(c) for c in expected], [key(c) for c in actual]
        sides = []
        for title, answer, calls, other in (
            ("expected", t.get("expected_response"), expected, ak),
            ("actual", t.get("actual_response"), actual, ek),
        ):
            lines = "<br>".join(_call_line(c, key(c) in other) for c in calls) or "<i>no tool calls</i>"
            sides.append(
                f'<div><h4>{title}</h4><div class="calls">{lines}</div>{text_block(f"{title} response", answer)}</div>'
            )
        parts.append(
            f'<div class="card"><h4>turn {escape(t.get("invocation"))}</h4>{text_block("user", t.get("user"))}'
            f'<div class="turn">{"".join(sides)}</div></div>'
        )
    return "".join(parts)


def row_page(
    run: Run,
    runs: Sequence[Run],
    row: Mapping[str, Any],
    columns: Columns,
    neighbours: tuple[int | None, int | None],
    extra_texts: Mapping[str, Any],
) -> str:
    """One row: its keys, its texts (prompt, response, reference, ...), then per metric the
    parsed verdict, the explanation, the judge's prompt and raw reply (both orders of a
    pairwise call); an agent case's turns, expected and actual side by side."""
    position = row[ROW]
    nav = [f'<a href="{link(run_path(run, "rows"))}">← rows of {escape(run.title)}</a>']
    before, after = neighbours
    if before is not None:
        nav.append(f'<a href="{link(run_path(run, "rows", before))}">previous row</a>')
    if after is not None:
        nav.append(f'<a href="{link(run_path(run, "rows", after))}">next row</a>')
    keys = [[escape(k), cell(row.get(k), 10_000)] for k in columns.keys]
    body = [f'<div class="pager">{" · ".join(nav)}</div>', html_table(["", ""], keys, "meta") if keys else ""]
    texts = [(k, v) for k, v in extra_texts.items() if v is not None]
    ordered = [t for t in TEXT_NAMES if t in columns.texts] + [t for t in columns.texts if t not in TEXT_NAMES]
    texts += [(t, row.get(t)) for t in ordered if t not in ("turns",) and row.get(t) not in (None, "")]
    if texts:
        body.append('<h2>Texts</h2><div class="texts">' + "".join(text_block(k, v) for k, v in texts) + "</div>")
    if "turns" in row:
        body.append(_turns_html(row.get("turns")))
    metrics = [m for m in columns.metrics if any(row.get(c) is not None for c in m.fields.values())]
    judged = [m for m in metrics if _judged(m)]
    computed = [m for m in metrics if not _judged(m)]
    if computed:
        body.append("<h2>Scores</h2>" + _scores_table(computed, row))
    if judged:
        body.append("<h2>Judged metrics</h2>" + "".join(_metric_card(m, row) for m in judged))
    title = f"{run.title}: row {position}"
    return page(title, "".join(body), runs, run)


# --------------------------------------------------------------------------- two runs


def compare_page(
    runs: Sequence[Run],
    a: Run | None,
    b: Run | None,
    metric: str | None,
    metrics: Sequence[str],
    keys: Sequence[str],
    result: tuple[dict[str, Any], list[dict[str, Any]]] | None,
    texts: Sequence[str],
    page_no: int,
    message: str | None = None,
) -> str:
    """Two runs side by side on one metric, paired on their keys: the flipped rows first."""
    with_rows = [r for r in runs if r.has_rows]
    choices = [(r.id, f"{r.id}. {r.title}") for r in with_rows]
    form = [
        f'<form class="bar" method="get" action="{link("/compare")}">',
        _select("a", "run A", [("", "choose")] + choices, a.id if a else None),
        _select("b", "run B", [("", "choose")] + choices, b.id if b else None),
        _select("metric", "metric", [("", "choose")] + [(m, m) for m in metrics], metric),
        '<button type="submit">Compare</button></form>',
    ]
    body = ["".join(form)]
    if message:
        body.append(f'<p class="warn">{escape(message)}</p>')
    if a and b and metric and result is not None:
        counts, pairs = result
        body.append(
            f'<p class="note">{counts["pairs"]:,} rows in both runs (paired on {escape(", ".join(keys))}); '
            f'<span class="flip">{counts["flipped"]:,} flipped</span> (shown first), then the largest differences. '
            f"Mean {escape(metric)}: A {fmt(counts['mean_a'])}, B {fmt(counts['mean_b'])}.</p>"
        )
        heads = [*keys, f"A: {metric}", f"B: {metric}", "B − A", "flipped"]
        heads += [f"{side}: {t}" for t in texts for side in ("A", "B")]
        lines = []
        for p in pairs:
            cells = [
                f'<a class="pair" href="{link(run_path(a, "rows", p["a:" + ROW]))}">{cell(p.get(k))}</a>'
                for k in keys[:1]
            ]
            cells += [cell(p.get(k)) for k in keys[1:]]
            diff = p.get("difference")
            cells += [
                f'<a href="{link(run_path(a, "rows", p["a:" + ROW]))}">{cell(p.get("a:score"))}</a>',
                f'<a href="{link(run_path(b, "rows", p["b:" + ROW]))}">{cell(p.get("b:score"))}</a>',
                "–" if diff is None else f"{diff:+.4f}",
                '<span class="flip">⇄ flipped</span>' if p.get("flipped") else "",
            ]
            cells += [cell(p.get(f"{side}:{t}")) for t in texts for side in ("a", "b")]
            lines.append(cells)
        body.append(html_table([escape(h) for h in heads], lines, "rows compact"))
        pager = []
        if page_no > 0:
            pager.append(
                f'<a href="{link("/compare", {"a": a.id, "b": b.id, "metric": metric, "page": page_no - 1})}">← previous</a>'
            )
        if (page_no + 1) * 50 < counts["pairs"]:
            pager.append(
                f'<a href="{link("/compare", {"a": a.id, "b": b.id, "metric": metric, "page": page_no + 1})}">next →</a>'
            )
        body.append(f'<div class="pager">{" ".join(pager)}</div>')
    title = f"Compare: {a.title} and {b.title}" if a and b else "Compare two runs"
    return page(title, "<section><h2>Two runs side by side</h2>" + "".join(body) + "</section>", runs)
