"""One self-contained HTML report of a run: tables, and plots as inline SVG.

The report is rendered from a **run summary**: a plain JSON-ready dict that any part of
respeval (scoring, judge, gate, validation) can write, and that several runs can merge
(:func:`merge_summaries` concatenates the lists).  The HTML needs no network and no JavaScript:
styles are inline, plots are inline ``<svg>``, and a Content-Security-Policy forbids loading
anything at all.

Run summary schema (``"schema": "respeval.run-summary/1"``; every other key is optional)::

    {
      "schema": "respeval.run-summary/1",
      "title": "Release 1.4 judge check",          # page title
      "created": "2026-11-29T12:00:00Z",           # free text
      "meta": {"judge": "gpt-4o", "signature": "..."},   # shown as a key/value table
      "scores": [                                  # corpus scores (summary table)
        {"metric": "rouge2_f", "mean": 0.21, "low": 0.19, "high": 0.23, "n": 500,
         "confidence": 0.95}                       # low/high/confidence may be null/absent
      ],
      "validation": [ ... ],                       # respeval.validate.MetricValidation.to_dict()
      "correlations": [                            # metric vs human (e.g. ROUGE-2 vs LitePyramid)
        {"name": "REALSumm abstractive", "metric": "ROUGE-2 F", "human": "LitePyramid recall",
         "level": "system", "n": 14, "pearson": 0.9, "spearman": 0.9, "kendall_tau_b": 0.8,
         "intervals": {"kendall_tau_b": {"estimate": 0.8, "low": 0.6, "high": 0.95}},
         "points": [{"unit": "bart", "x": 0.21, "y": 0.45}]}     # optional scatter plot
      ],
      "distributions": [                           # histograms / label counts
        {"name": "judge score", "kind": "numeric", "edges": [0, 0.5, 1],
         "series": [{"name": "judge", "counts": [3, 7]}]},
        {"name": "verdicts", "kind": "categorical", "labels": ["A", "B", "TIE"],
         "series": [{"name": "judge", "counts": [40, 50, 10]}]},
        {"name": "latency (s)", "values": [0.4, 1.2, 0.9]}      # binned by the report
      ],
      "gate": [                                    # the escalation funnel
        {"name": "gate", "total": 1000,
         "stages": [{"stage": "exact", "settled": 420}, {"stage": "lexical", "settled": 300},
                    {"stage": "judge", "settled": 250}]}          # the rest: unsettled
      ],
      "systems": [                                 # per-system comparison with intervals
        {"metric": "rouge2_f", "confidence": 0.95, "higher_is_better": true,
         "rows": [{"system": "bart", "mean": 0.21, "low": 0.19, "high": 0.23, "n": 100}]}
      ],
      "disagreements": [                           # besides those inside "validation" entries
        {"metric": "helpfulness", "row": 17, "judge": 5, "human": 1, "gap": 4,
         "texts": {"prompt": "...", "response": "..."}}
      ]
    }

Validation entries carry their own distributions and disagreements; the report shows them in
the same sections as the top-level lists.  Builders: :func:`new_summary`,
:func:`validation_summary`, :func:`system_table`, :func:`correlation_entry`.
"""

from __future__ import annotations

import html
import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from respeval._version import __version__
from respeval.redact import redact
from respeval.stats import DEFAULT_SEED, bootstrap_means, percentile_interval

__all__ = [
    "SCHEMA",
    "check_summary",
    "correlation_entry",
    "load_summaries",
    "merge_summaries",
    "new_summary",
    "render_html",
    "system_table",
    "validation_summary",
    "write_report",
]

SCHEMA = "respeval.run-summary/1"
LIST_KEYS = ("scores", "validation", "correlations", "distributions", "gate", "systems", "disagreements")
# Section id, navigation title: the report always has all of them, in this order.
SECTIONS = (
    ("summary", "Summary"),
    ("agreement", "Judge vs human"),
    ("confusion", "Confusion matrices"),
    ("correlations", "Metric vs human"),
    ("distributions", "Score distributions"),
    ("gate", "Gate funnel"),
    ("systems", "Systems"),
    ("disagreements", "Worst disagreements"),
)

PALETTE = ("#2563eb", "#f59e0b", "#10b981", "#ef4444", "#8b5cf6", "#0ea5e9")
_MAX_DISAGREEMENTS = 10  # per metric


# --------------------------------------------------------------------------- building summaries


def new_summary(title: str | None = None, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An empty run summary with a title and ``meta`` key/values (plus respeval's version)."""
    summary: dict[str, Any] = {"schema": SCHEMA, "meta": {"respeval": __version__, **(meta or {})}}
    if title:
        summary["title"] = title
    return summary


def validation_summary(
    results: Iterable[Any], title: str | None = None, meta: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A run summary holding :class:`respeval.validate.MetricValidation` results."""
    summary = new_summary(title, meta)
    summary["validation"] = [r.to_dict() for r in results]
    return summary


def system_table(
    metric: str,
    values: Sequence[float],
    systems: Sequence[Any],
    *,
    n_boot: int = 1000,
    seed: int | None = DEFAULT_SEED,
    confidence: float = 0.95,
    higher_is_better: bool = True,
) -> dict[str, Any]:
    """Per-system means of ``values`` with seeded bootstrap intervals (rows resampled within
    each system), as a ``systems`` entry of a run summary."""
    vals = np.asarray(values, dtype=np.float64)
    names = [str(s) for s in systems]
    if vals.shape != (len(names),):
        raise ValueError(f"values has {vals.size} rows but systems has {len(names)}")
    rows = []
    for name in dict.fromkeys(names):
        mine = vals[[i for i, s in enumerate(names) if s == name]]
        row: dict[str, Any] = {
            "system": name,
            "mean": float(mine.mean()),
            "n": int(mine.size),
            "low": None,
            "high": None,
        }
        if n_boot and mine.size > 1:
            low, _, high = percentile_interval(bootstrap_means(mine[:, None], n_boot, seed), confidence)[:, 0]
            row.update(low=float(low), high=float(high))
        rows.append(row)
    return {"metric": metric, "confidence": confidence, "higher_is_better": higher_is_better, "rows": rows}


def correlation_entry(
    name: str, correlation: Any, *, metric: str, human: str, intervals: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A ``correlations`` entry from a :class:`respeval.validate.Correlation` (system-level
    correlations keep their points for a scatter plot)."""
    entry = {"name": name, "metric": metric, "human": human, **correlation.to_dict()}
    entry.pop("units", None)
    if intervals:
        entry["intervals"] = {k: v.to_dict() if hasattr(v, "to_dict") else dict(v) for k, v in intervals.items()}
    if correlation.level == "system" and correlation.units:
        entry["points"] = [
            {"unit": u, "x": float(x), "y": float(y)}
            for u, x, y in zip(correlation.units, correlation._x, correlation._y)
        ]
    return entry


# --------------------------------------------------------------------------- loading and checking


def check_summary(summary: Any, source: str = "summary") -> None:
    """Raise ``ValueError`` naming the first problem if ``summary`` is not a run summary."""
    if not isinstance(summary, Mapping):
        raise ValueError(f"{source}: a run summary is a JSON object, got {type(summary).__name__}")
    if summary.get("schema") != SCHEMA:
        raise ValueError(f"{source}: 'schema' must be {SCHEMA!r}, got {summary.get('schema')!r}")
    for key in LIST_KEYS:
        value = summary.get(key, [])
        if not isinstance(value, list):
            raise ValueError(f"{source}: {key!r} must be a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise ValueError(f"{source}: {key}[{i}] must be an object")
    for i, table in enumerate(summary.get("systems", [])):
        if not isinstance(table.get("rows"), list):
            raise ValueError(f"{source}: systems[{i}] needs a 'rows' list")
    for i, funnel in enumerate(summary.get("gate", [])):
        if not isinstance(funnel.get("stages"), list) or "total" not in funnel:
            raise ValueError(f"{source}: gate[{i}] needs 'total' and a 'stages' list")
    if not isinstance(summary.get("meta", {}), Mapping):
        raise ValueError(f"{source}: 'meta' must be an object")


def load_summaries(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Run summaries from JSON files, or from every ``*.json`` run summary in a directory
    (other JSON files there are ignored)."""
    out: list[dict[str, Any]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = [
                s
                for f in sorted(path.glob("*.json"))
                if (s := _read_json(f)) is not None and isinstance(s, dict) and s.get("schema") == SCHEMA
            ]
            if not found:
                raise ValueError(f'{path}: no run summary (*.json with "schema": "{SCHEMA}")')
            out.extend(found)
            continue
        summary = _read_json(path)
        check_summary(summary, str(path))
        out.append(summary)
    for s in out:
        check_summary(s)
    return out


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None


def merge_summaries(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One summary: lists concatenated, ``meta`` merged (later wins), the first title kept."""
    if len(summaries) == 1:
        return dict(summaries[0])
    merged: dict[str, Any] = {"schema": SCHEMA, "meta": {}}
    for s in summaries:
        check_summary(s)
        merged["meta"].update(s.get("meta", {}))
        for key in ("title", "created"):
            if key in s and key not in merged:
                merged[key] = s[key]
        for key in LIST_KEYS:
            merged.setdefault(key, []).extend(s.get(key, []))
    return merged


def write_report(summary: Mapping[str, Any] | Sequence[Mapping[str, Any]], out: str | Path) -> Path:
    """Render one summary (or merge several) to ``out``; returns the absolute path."""
    if not isinstance(summary, Mapping):
        summary = merge_summaries(list(summary))
    check_summary(summary)
    path = Path(out).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(summary), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- formatting helpers


def _e(value: Any) -> str:
    """Escaped text of any value, scrubbed of secrets (every text of the report passes here)."""
    return html.escape(redact(value if isinstance(value, str) else _plain_text(value)), quote=True)


def _plain_text(value: Any) -> str:
    if isinstance(value, float):
        return _fmt(value)
    if value is None:
        return "–"
    return str(value)


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return f"{int(value):,}"
    return f"{float(value):.{digits}f}"


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * float(value):.1f}%"


def _ci(interval: Mapping[str, Any] | None) -> str:
    if not interval or interval.get("low") is None:
        return ""
    return f'<span class="ci">[{_fmt(interval["low"])}, {_fmt(interval["high"])}]</span>'


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _empty(what: str) -> str:
    return f'<p class="empty">{_e(what)}</p>'


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering ``[lo, hi]``."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0]
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / count
    step = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 2.5, 5, 10):
        if raw <= step * mult:
            step *= mult
            break
    first = math.floor(lo / step) * step
    ticks = []
    t = first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    if ticks[-1] < hi:
        ticks.append(round(t, 12))
    return ticks


def _tick_label(t: float) -> str:
    return f"{t:g}" if abs(t) >= 1e-4 or t == 0 else f"{t:.1e}"


def _svg(width: float, height: float, body: str, label: str) -> str:
    return (
        f'<svg class="plot" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
        f'height="{height:.0f}" role="img" aria-label="{_e(label)}">{body}</svg>'
    )


def _text(x: float, y: float, s: Any, anchor: str = "start", cls: str = "", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" class="{cls}" {extra}>{_e(s)}</text>'


def _short(label: Any, limit: int = 22) -> str:
    s = _plain_text(label)
    return s if len(s) <= limit else s[: limit - 1] + "…"


# --------------------------------------------------------------------------- plots


def _mix(share: float) -> str:
    """Colour from near-white (0) to deep blue (1)."""
    share = min(1.0, max(0.0, share))
    lo, hi = (241, 245, 249), (29, 78, 216)
    r, g, b = (round(a + (c - a) * share) for a, c in zip(lo, hi))
    return f"#{r:02x}{g:02x}{b:02x}"


def svg_heatmap(labels: Sequence[Any], matrix: Sequence[Sequence[float]], title: str) -> str:
    """Confusion matrix: colour = share of the human row (the judge's recall per class)."""
    k = len(labels)
    cell = max(34, min(64, 360 // max(k, 1)))
    left, top = 40 + 7 * max((len(_short(x, 12)) for x in labels), default=1), 58
    width, height = left + cell * k + 20, top + cell * k + 8
    parts = [
        _text(left + cell * k / 2, 16, "judge label", "middle", "axis-title"),
        _text(
            14,
            top + cell * k / 2,
            "human label",
            "middle",
            "axis-title",
            f'transform="rotate(-90 14 {top + cell * k / 2:.1f})"',
        ),
    ]
    for j, lab in enumerate(labels):
        parts.append(_text(left + cell * (j + 0.5), top - 10, _short(lab, 8), "middle", "tick"))
    for i, row in enumerate(matrix):
        total = sum(row) or 1
        parts.append(_text(left - 8, top + cell * (i + 0.5) + 4, _short(labels[i], 12), "end", "tick"))
        for j, count in enumerate(row):
            share = count / total
            x, y = left + cell * j, top + cell * i
            stroke = ' stroke="#0f172a" stroke-width="1.5"' if i == j else ' stroke="#fff"'
            tip = f"human {_e(labels[i])}, judge {_e(labels[j])}: {count} ({_pct(share)} of the row)"
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{_mix(share)}"{stroke}>'
                f"<title>{tip}</title></rect>"
            )
            colour = "#fff" if share > 0.55 else "#0f172a"
            parts.append(_text(x + cell / 2, y + cell / 2 + 4, f"{count:g}", "middle", "cell", f'fill="{colour}"'))
    return _svg(width, height, "".join(parts), title)


def svg_bars(
    categories: Sequence[Any],
    series: Sequence[Mapping[str, Any]],
    title: str,
    numeric_edges: Sequence[float] | None = None,
) -> str:
    """Grouped vertical bars: one group per category (or histogram bin), one bar per series."""
    n_cat, n_ser = max(len(categories), 1), max(len(series), 1)
    left, right, top, bottom = 48, 12, 26, 46
    group = max(18, min(64, 520 // n_cat))
    width, height = left + group * n_cat + right, 220
    plot_h = height - top - bottom
    vmax = max([max(s["counts"], default=0) for s in series] + [1])
    ticks = _ticks(0, vmax, 4)
    scale = plot_h / ticks[-1]
    parts = [_legend(series, left, 14)]
    for t in ticks:
        y = top + plot_h - t * scale
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        parts.append(_text(left - 6, y + 4, _tick_label(t), "end", "tick"))
    bar = (group - 6) / n_ser
    for c, cat in enumerate(categories):
        for s_i, s in enumerate(series):
            count = s["counts"][c]
            h = count * scale
            x = left + group * c + 3 + bar * s_i
            parts.append(
                f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{max(bar - 1, 1):.1f}" '
                f'height="{h:.1f}" fill="{PALETTE[s_i % len(PALETTE)]}">'
                f"<title>{_e(s['name'])}, {_e(cat)}: {count:g}</title></rect>"
            )
        if numeric_edges is None and (n_cat <= 12 or c % max(1, n_cat // 12) == 0):
            parts.append(_text(left + group * (c + 0.5), height - bottom + 16, _short(cat, 10), "middle", "tick"))
    if numeric_edges is not None:
        for t in _ticks(numeric_edges[0], numeric_edges[-1], 5):
            if numeric_edges[0] - 1e-12 <= t <= numeric_edges[-1] + 1e-12:
                x = left + group * n_cat * (t - numeric_edges[0]) / ((numeric_edges[-1] - numeric_edges[0]) or 1)
                parts.append(_text(x, height - bottom + 16, _tick_label(t), "middle", "tick"))
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" class="axis"/>')
    return _svg(width, height, "".join(parts), title)


def _legend(series: Sequence[Mapping[str, Any]], x: float, y: float) -> str:
    parts = []
    for i, s in enumerate(series):
        parts.append(f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{PALETTE[i % len(PALETTE)]}"/>')
        parts.append(_text(x + 14, y, s["name"], "start", "tick"))
        x += 24 + 7 * len(str(s["name"]))
    return "".join(parts)


def svg_funnel(total: int, stages: Sequence[Mapping[str, Any]], title: str) -> str:
    """Rows entering each stage (light bar) and settled there (dark bar), then the rest."""
    label_w, bar_w, row_h, top = 130, 460, 34, 8
    height = top + row_h * (len(stages) + 1) + 8
    width = label_w + bar_w + 190
    parts = []
    remaining = total
    scale = bar_w / (total or 1)
    for i, stage in enumerate(stages):
        settled = int(stage.get("settled", 0))
        y = top + row_h * i
        colour = PALETTE[i % len(PALETTE)]
        parts.append(_text(label_w - 10, y + 20, _short(stage.get("stage", f"stage {i + 1}"), 18), "end", "label"))
        parts.append(
            f'<rect x="{label_w}" y="{y + 4}" width="{remaining * scale:.1f}" height="{row_h - 10}" '
            f'fill="{colour}" opacity="0.18"><title>{remaining} rows reach this stage</title></rect>'
        )
        parts.append(
            f'<rect x="{label_w}" y="{y + 4}" width="{settled * scale:.1f}" height="{row_h - 10}" '
            f'fill="{colour}"><title>{settled} rows settled here</title></rect>'
        )
        share = settled / total if total else 0
        parts.append(
            _text(
                label_w + remaining * scale + 8,
                y + 20,
                f"{settled:,} settled of {remaining:,} ({_pct(share)} of all)",
                "start",
                "tick",
            )
        )
        remaining -= settled
    y = top + row_h * len(stages)
    parts.append(_text(label_w - 10, y + 20, "unsettled", "end", "label"))
    parts.append(
        f'<rect x="{label_w}" y="{y + 4}" width="{max(remaining, 0) * scale:.1f}" height="{row_h - 10}" '
        f'fill="#94a3b8"><title>{remaining} rows not settled</title></rect>'
    )
    parts.append(
        _text(
            label_w + max(remaining, 0) * scale + 8,
            y + 20,
            f"{remaining:,} ({_pct(remaining / total if total else 0)})",
            "start",
            "tick",
        )
    )
    return _svg(width, height, "".join(parts), title)


def svg_forest(rows: Sequence[Mapping[str, Any]], title: str) -> str:
    """Each system's mean (dot) and interval (line), best first."""
    label_w, plot_w, row_h, top = 170, 320, 24, 10
    height = top + row_h * len(rows) + 34
    width = label_w + plot_w + 60
    values = [v for r in rows for v in (r.get("low"), r.get("mean"), r.get("high")) if v is not None]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    pad = (hi - lo) * 0.05 or 0.05
    ticks = _ticks(lo - pad, hi + pad, 5)
    x0, x1 = ticks[0], ticks[-1]

    def sx(v: float) -> float:
        return label_w + plot_w * (v - x0) / ((x1 - x0) or 1)

    axis_y = top + row_h * len(rows) + 4
    parts = []
    for t in ticks:
        parts.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{top}" y2="{axis_y}" class="grid"/>')
        parts.append(_text(sx(t), axis_y + 16, _tick_label(t), "middle", "tick"))
    for i, r in enumerate(rows):
        y = top + row_h * i + row_h / 2
        parts.append(_text(label_w - 10, y + 4, _short(r.get("system"), 22), "end", "label"))
        if r.get("low") is not None and r.get("high") is not None:
            parts.append(
                f'<line x1="{sx(r["low"]):.1f}" x2="{sx(r["high"]):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                f'stroke="{PALETTE[0]}" stroke-width="2.5" stroke-linecap="round"/>'
            )
        parts.append(
            f'<circle cx="{sx(r["mean"]):.1f}" cy="{y:.1f}" r="5" fill="{PALETTE[0]}" stroke="#fff">'
            f"<title>{_e(r.get('system'))}: {_fmt(r['mean'])}</title></circle>"
        )
        parts.append(_text(width - 6, y + 4, _fmt(r["mean"], 3), "end", "tick"))
    return _svg(width, height, "".join(parts), title)


def svg_scatter(points: Sequence[Mapping[str, Any]], x_label: str, y_label: str, title: str) -> str:
    """Scatter of (metric, human) points with their unit names on hover."""
    left, top, plot_w, plot_h = 62, 12, 360, 240
    width, height = left + plot_w + 16, top + plot_h + 48
    xs = [float(p["x"]) for p in points]
    ys = [float(p["y"]) for p in points]
    tx = _ticks(min(xs), max(xs), 5)
    ty = _ticks(min(ys), max(ys), 5)

    def sx(v: float) -> float:
        return left + plot_w * (v - tx[0]) / ((tx[-1] - tx[0]) or 1)

    def sy(v: float) -> float:
        return top + plot_h - plot_h * (v - ty[0]) / ((ty[-1] - ty[0]) or 1)

    parts = []
    for t in tx:
        parts.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{top}" y2="{top + plot_h}" class="grid"/>')
        parts.append(_text(sx(t), top + plot_h + 16, _tick_label(t), "middle", "tick"))
    for t in ty:
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" class="grid"/>')
        parts.append(_text(left - 6, sy(t) + 4, _tick_label(t), "end", "tick"))
    parts.append(_text(left + plot_w / 2, height - 6, x_label, "middle", "axis-title"))
    parts.append(
        _text(
            14, top + plot_h / 2, y_label, "middle", "axis-title", f'transform="rotate(-90 14 {top + plot_h / 2:.1f})"'
        )
    )
    for p, x, y in zip(points, xs, ys):
        parts.append(
            f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="5" fill="{PALETTE[0]}" opacity="0.8">'
            f"<title>{_e(p.get('unit', ''))}: {_fmt(x)}, {_fmt(y)}</title></circle>"
        )
    return _svg(width, height, "".join(parts), title)


# --------------------------------------------------------------------------- sections


def _section_summary(s: Mapping[str, Any]) -> str:
    parts = []
    meta = s.get("meta", {})
    if meta:
        parts.append(_table(["", ""], ([_e(k), _e(v)] for k, v in meta.items()), "meta"))
    headline = [_headline_row(v) for v in s.get("validation", [])]
    if headline:
        parts.append("<h3>Judges against human labels</h3>")
        parts.append(
            _table(
                ["metric", "rows used", "dropped", "accuracy", "macro F1", "Cohen's kappa", "Kendall tau-b"], headline
            )
        )
    corr = [
        [
            _e(c.get("name") or c.get("metric")),
            _e(c.get("level", "")),
            _fmt(c.get("n")),
            _fmt(c.get("kendall_tau_b")) + _ci((c.get("intervals") or {}).get("kendall_tau_b")),
        ]
        for c in s.get("correlations", [])
    ]
    if corr:
        parts.append("<h3>Metrics against human scores</h3>")
        parts.append(_table(["comparison", "level", "n", "Kendall tau-b"], corr))
    if s.get("scores"):
        parts.append("<h3>Scores</h3>")
        parts.append(
            _table(
                ["metric", "mean", "interval", "n"],
                ([_e(r.get("metric")), _fmt(r.get("mean")), _ci(r), _fmt(r.get("n"))] for r in s["scores"]),
            )
        )
    return "".join(parts) or _empty("This run summary holds no scores, validation or correlations.")


def _headline_row(v: Mapping[str, Any]) -> list[str]:
    ag = v.get("agreement") or {}
    iv = ag.get("intervals", {})
    corr = v.get("correlation") or {}
    return [
        _e(v.get("metric")),
        _fmt(v.get("used")),
        _fmt((v.get("dropped") or {}).get("total", 0)),
        _fmt(ag.get("accuracy")) + _ci(iv.get("accuracy")),
        _fmt(ag.get("macro_f1")) + _ci(iv.get("macro_f1")),
        _fmt(ag.get("cohen_kappa")) + _ci(iv.get("cohen_kappa")),
        _fmt(corr.get("kendall_tau_b")) + _ci(corr.get("intervals", {}).get("kendall_tau_b")),
    ]


_AGREEMENT_ROWS = (
    ("accuracy", "accuracy", "share of rows where judge and human agree"),
    ("balanced_accuracy", "balanced accuracy", "mean per-class recall over the labels humans used"),
    ("macro_precision", "macro precision", "unweighted mean over labels"),
    ("macro_recall", "macro recall", "unweighted mean over labels"),
    ("macro_f1", "macro F1", "unweighted mean of per-class F1"),
    ("weighted_f1", "support-weighted F1", "per-class F1 weighted by human label counts (not “balanced”)"),
    ("cohen_kappa", "Cohen's kappa", "agreement beyond chance"),
    ("cohen_kappa_linear", "Cohen's kappa (linear)", "partial credit for near misses, label order as ordinal"),
    ("cohen_kappa_quadratic", "Cohen's kappa (quadratic)", "more partial credit for near misses"),
)


def _section_agreement(s: Mapping[str, Any]) -> str:
    items = s.get("validation", [])
    if not items:
        return _empty("No judge was validated against human labels in this run.")
    return "".join(_validation_card(v) for v in items)


def _validation_card(v: Mapping[str, Any]) -> str:
    dropped = v.get("dropped") or {}
    head = (
        f'<h3>{_e(v.get("metric"))} <span class="tag">{_e(v.get("kind"))}</span></h3>'
        f'<p class="note">{_fmt(v.get("used"))} of {_fmt(v.get("rows"))} rows used; '
        f"{_fmt(dropped.get('total', 0))} dropped (judge missing {_fmt(dropped.get('judge_missing', 0))}, "
        f"human missing {_fmt(dropped.get('human_missing', 0))}, both {_fmt(dropped.get('both_missing', 0))}). "
        f"Columns: <code>{_e(v.get('judge_column'))}</code> vs <code>{_e(v.get('human_column'))}</code>.</p>"
    )
    right = [
        _per_class_block(v.get("agreement")),
        _correlation_block(v.get("correlation")),
        _pairwise_block(v.get("pairwise"), v.get("pairwise_note")),
        _verbosity_block(v.get("verbosity")),
    ]
    return (
        f'<div class="card">{head}<div class="cols"><div>{_agreement_block(v)}</div>'
        f"<div>{''.join(b for b in right if b)}</div></div></div>"
    )


def _agreement_block(v: Mapping[str, Any]) -> str:
    ag = v.get("agreement")
    if not ag:
        return f"<div>{_empty(v.get('agreement_note') or 'No agreement statistics.')}</div>"
    iv = ag.get("intervals", {})
    rows = [
        [f'<span title="{_e(help_)}">{name}</span>', f"<b>{_fmt(ag.get(key))}</b>", _ci(iv.get(key))]
        for key, name, help_ in _AGREEMENT_ROWS
    ]
    conf = next(iter(iv.values())).get("confidence") if iv else None
    ci_head = f"{round(100 * conf)}% interval" if conf else "interval"
    return (
        f"<h4>Agreement with the human labels</h4>{_table(['statistic', 'value', ci_head], rows, 'compact')}"
        '<p class="muted">Balanced accuracy is the mean recall over the labels humans used. '
        "Macro averages weigh every label equally; the support-weighted F1 weighs each label's F1 "
        "by how often humans used it (the figure some tools call “balanced F1”). Linear and "
        "quadratic kappa treat the label order as ordinal.</p>"
    )


def _per_class_block(ag: Mapping[str, Any] | None) -> str:
    if not ag:
        return ""
    table = _table(
        ["label", "precision", "recall", "F1", "human used", "judge used"],
        (
            [
                _e(c["label"]),
                _fmt(c["precision"]),
                _fmt(c["recall"]),
                _fmt(c["f1"]),
                _fmt(c["support"]),
                _fmt(c.get("predicted")),
            ]
            for c in ag.get("per_class", [])
        ),
        "compact",
    )
    return f"<h4>Per label</h4>{table}"


def _correlation_block(c: Mapping[str, Any] | None) -> str:
    if not c:
        return ""
    iv = c.get("intervals", {})
    rows = [
        [name, f"<b>{_fmt(c.get(key))}</b>", _ci(iv.get(key))]
        for key, name in (("pearson", "Pearson r"), ("spearman", "Spearman rho"), ("kendall_tau_b", "Kendall tau-b"))
    ]
    return (
        f"<h4>Correlation with human ratings ({_fmt(c.get('n'))} rows)</h4>"
        f"{_table(['statistic', 'value', 'interval'], rows, 'compact')}"
    )


def _pairwise_block(p: Mapping[str, Any] | None, note: str | None) -> str:
    if not p:
        return f"<h4>Position consistency</h4>{_empty(note)}" if note else ""
    iv = p.get("intervals", {})
    rows = [
        [f'<span title="{_e(h)}">{name}</span>', f"<b>{_fmt(p.get(key))}</b>", _ci(iv.get(key))]
        for key, name, h in (
            ("consistency", "position consistency", "same verdict in both orders"),
            ("flip_rate", "flip rate", "winner changes with the order"),
            ("tie_rate", "tie rate", "share of verdicts that are ties"),
            ("consistency_kappa", "kappa between orders", "agreement of the two orders beyond chance"),
            ("first_position_rate", "picks the first shown", "of decisive verdicts; 50% = no bias"),
        )
    ]
    extra = f'<p class="note">{_e(note)}</p>' if note else ""
    return (
        f"<h4>Position consistency ({_fmt(p.get('n'))} items, asked in both orders)</h4>"
        f"{_table(['statistic', 'value', 'interval'], rows, 'compact')}"
        '<p class="muted">Flips: the winner changes with the order. Ties: share of all verdicts. '
        "First shown: share of decisive verdicts for whichever response came first (0.5 = no "
        f"position bias).</p>{extra}"
    )


def _verbosity_block(vb: Mapping[str, Any] | None) -> str:
    if not vb:
        return ""
    iv = vb.get("intervals", {})
    if vb.get("kind") == "pairwise":
        what = "share of decisive verdicts picking the longer response"
    else:
        what = "Spearman correlation of the score with the response length in words"
    judge, human, excess = _fmt(vb.get("judge")), _fmt(vb.get("human")), vb.get("excess")
    excess_s = "–" if excess is None else f"{excess:+.4f}"
    verdict = ""
    ex_iv = iv.get("excess")
    if ex_iv and ex_iv.get("low") is not None:
        if ex_iv["low"] > 0:
            verdict = '<p class="warn">The judge favours longer responses more than humans do.</p>'
        elif ex_iv["high"] < 0:
            verdict = '<p class="ok">The judge favours longer responses less than humans do.</p>'
        else:
            verdict = '<p class="ok">No length preference beyond the humans\' (the interval covers 0).</p>'
    rows = [
        ["judge", f"<b>{judge}</b>", _ci(iv.get("judge"))],
        ["human", human, ""],
        ["judge − human", f"<b>{excess_s}</b>", _ci(ex_iv)],
    ]
    return (
        f'<h4>Verbosity probe ({_fmt(vb.get("n"))} rows)</h4><p class="muted">{_e(what)}</p>'
        f"{_table(['', 'value', 'interval'], rows, 'compact')}{verdict}"
    )


def _section_confusion(s: Mapping[str, Any]) -> str:
    cards = []
    for v in s.get("validation", []):
        conf = (v.get("agreement") or {}).get("confusion")
        if not conf:
            continue
        plot = svg_heatmap(conf["labels"], conf["matrix"], f"confusion matrix of {v.get('metric')}")
        cards.append(
            f'<figure class="card fig"><figcaption><b>{_e(v.get("metric"))}</b> · '
            f"{_fmt(v.get('used'))} rows</figcaption>{plot}</figure>"
        )
    if not cards:
        return _empty("No confusion matrix: no judge labels were compared with human labels.")
    return (
        '<p class="note">Rows are the human label, columns the judge\'s; the colour is the share '
        "of the row (how the judge labelled what humans called that label); the diagonal is "
        f'outlined.</p><div class="figs">{"".join(cards)}</div>'
    )


def _section_correlations(s: Mapping[str, Any]) -> str:
    items = s.get("correlations", [])
    cards = [_correlation_card(c) for c in items]
    cards += [
        _correlation_card(
            {"name": f"{v.get('metric')} (judge)", "metric": "judge score", "human": "human rating", **v["correlation"]}
        )
        for v in s.get("validation", [])
        if v.get("correlation")
    ]
    if not cards:
        return _empty("No metric was correlated with human scores in this run.")
    return f'<div class="figs">{"".join(cards)}</div>'


def _correlation_card(c: Mapping[str, Any]) -> str:
    iv = c.get("intervals") or {}
    rows = [
        [name, f"<b>{_fmt(c.get(key))}</b>", _ci(iv.get(key))]
        for key, name in (("pearson", "Pearson r"), ("spearman", "Spearman rho"), ("kendall_tau_b", "Kendall tau-b"))
    ]
    plot = ""
    if c.get("points"):
        plot = svg_scatter(
            c["points"],
            str(c.get("metric", "metric")),
            str(c.get("human", "human")),
            f"{c.get('metric')} against {c.get('human')}",
        )
    return (
        f'<div class="card fig"><h3>{_e(c.get("name") or c.get("metric"))}</h3>'
        f'<p class="note">{_e(c.get("metric"))} vs {_e(c.get("human"))}, {_e(c.get("level", "segment"))} '
        f"level, n = {_fmt(c.get('n'))}</p>{_table(['statistic', 'value', 'interval'], rows, 'compact')}"
        f"{plot}</div>"
    )


def _distribution_plot(d: Mapping[str, Any]) -> str | None:
    name = str(d.get("name", "distribution"))
    if "values" in d and "series" not in d:
        values = np.asarray([v for v in d["values"] if v is not None], dtype=np.float64)
        if values.size == 0:
            return None
        edges = np.histogram_bin_edges(values, bins=min(30, max(5, int(math.sqrt(values.size)))))
        d = {
            "kind": "numeric",
            "edges": edges.tolist(),
            "series": [{"name": name, "counts": np.histogram(values, bins=edges)[0].tolist()}],
        }
    series = d.get("series") or []
    if not series:
        return None
    if d.get("kind") == "categorical":
        return svg_bars(d.get("labels", []), series, name)
    if d.get("kind") == "numeric":
        edges = d["edges"]
        centres = [(a + b) / 2 for a, b in itertools.pairwise(edges)]
        return svg_bars(centres, series, name, numeric_edges=edges)
    return None


def _section_distributions(s: Mapping[str, Any]) -> str:
    entries = [
        (f"{v.get('metric')}: judge and human", v["distribution"])
        for v in s.get("validation", [])
        if v.get("distribution")
    ]
    entries += [(str(d.get("name", "distribution")), d) for d in s.get("distributions", [])]
    cards = []
    for caption, d in entries:
        plot = _distribution_plot({"name": caption, **d})
        if plot:
            cards.append(f'<figure class="card fig"><figcaption>{_e(caption)}</figcaption>{plot}</figure>')
    if not cards:
        return _empty("No score distributions in this run.")
    return f'<div class="figs">{"".join(cards)}</div>'


def _section_gate(s: Mapping[str, Any]) -> str:
    funnels = s.get("gate", [])
    if not funnels:
        return _empty("No gate ran in this run: every row was scored the same way.")
    cards = []
    for f in funnels:
        total = int(f.get("total", 0))
        stages = f.get("stages", [])
        settled = sum(int(st.get("settled", 0)) for st in stages)
        cards.append(
            f'<div class="card"><h3>{_e(f.get("name", "gate"))}</h3>'
            f'<p class="note">{total:,} rows; {settled:,} settled ({_pct(settled / total if total else 0)}). '
            f"Each row stops at the first stage that can settle it; only the rest go on.</p>"
            f"{svg_funnel(total, stages, 'gate funnel')}</div>"
        )
    return "".join(cards)


def _section_systems(s: Mapping[str, Any]) -> str:
    tables = s.get("systems", [])
    if not tables:
        return _empty("No per-system comparison in this run.")
    cards = []
    for t in tables:
        rows = sorted(
            t.get("rows", []),
            key=lambda r: -(r.get("mean") or 0) if t.get("higher_is_better", True) else (r.get("mean") or 0),
        )
        conf = t.get("confidence")
        head = f"{round(100 * conf)}% interval" if conf else "interval"
        table = _table(
            ["system", "mean", head, "n"],
            ([_e(r.get("system")), f"<b>{_fmt(r.get('mean'))}</b>", _ci(r), _fmt(r.get("n"))] for r in rows),
            "compact",
        )
        cards.append(
            f'<div class="card"><h3>{_e(t.get("metric"))}</h3><div class="side">'
            f"<div>{svg_forest(rows, str(t.get('metric')))}</div><div>{table}</div></div></div>"
        )
    return "".join(cards)


def _section_disagreements(s: Mapping[str, Any]) -> str:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for v in s.get("validation", []):
        groups.setdefault(str(v.get("metric")), []).extend(v.get("disagreements", []))
    for d in s.get("disagreements", []):
        groups.setdefault(str(d.get("metric", "")), []).append(d)
    groups = {k: v for k, v in groups.items() if v}
    if not groups:
        return _empty(
            "No disagreements to show: the judge agreed with every human label, or no human labels were given."
        )
    parts = [
        '<p class="note">Per metric, the rows where judge and human differ most: the largest '
        "score gap, or for pairwise verdicts opposite winners (gap 2) before a tie against a "
        "winner (gap 1).</p>"
    ]
    for metric, items in groups.items():
        worst = sorted(items, key=lambda d: -(d.get("gap") or 0))[:_MAX_DISAGREEMENTS]
        parts.append(f"<h3>{_e(metric)}</h3>")
        parts.extend(_disagreement_card(d) for d in worst)
    return "".join(parts)


_CONTEXT_TEXTS = ("prompt", "instruction", "input", "reference")


def _text_block(name: str, text: Any) -> str:
    return (
        f'<div class="text"><div class="text-name">{_e(name)} '
        f'<span class="muted">({len(str(text).split()):,} words)</span></div>'
        f'<div class="text-body">{_e(text)}</div></div>'
    )


def _disagreement_card(d: Mapping[str, Any]) -> str:
    """Judge and human verdicts, then the context, the responses side by side, the explanation."""
    texts = dict(d.get("texts") or {})
    context = [(k, texts.pop(k)) for k in _CONTEXT_TEXTS if k in texts]
    explanation = [(k, texts.pop(k)) for k in ("explanation",) if k in texts]
    rows = [items for items in (context, list(texts.items()), explanation) if items]
    body = "".join('<div class="texts">' + "".join(_text_block(k, v) for k, v in items) + "</div>" for items in rows)
    return (
        f'<div class="card dis"><div class="dis-head">row {_e(d.get("row"))} · judge '
        f"<b>{_e(d.get('judge'))}</b> · human <b>{_e(d.get('human'))}</b> · gap {_fmt(d.get('gap'), 2)}"
        f"</div>{body or _empty('no texts')}</div>"
    )


# --------------------------------------------------------------------------- page


_CSS = """
:root { --ink:#0f172a; --muted:#64748b; --line:#e2e8f0; --bg:#f8fafc; --card:#fff; --accent:#2563eb; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
       color:var(--ink); background:var(--bg); }
header { background:#0f172a; color:#fff; padding:22px 32px 14px; }
header h1 { margin:0 0 4px; font-size:22px; font-weight:650; }
header .sub { color:#cbd5e1; font-size:13px; }
nav { position:sticky; top:0; z-index:1; background:#fff; border-bottom:1px solid var(--line);
      padding:8px 32px; display:flex; flex-wrap:wrap; gap:6px 18px; }
nav a { color:var(--accent); text-decoration:none; font-weight:550; font-size:13px; }
main { max-width:1180px; margin:0 auto; padding:8px 32px 48px; }
section { margin-top:28px; }
h2 { font-size:18px; border-bottom:2px solid var(--ink); padding-bottom:4px; }
h3 { font-size:15px; margin:4px 0 8px; }
h4 { font-size:13px; margin:10px 0 6px; color:#334155; text-transform:uppercase; letter-spacing:.03em; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:14px 18px;
        margin:12px 0; box-shadow:0 1px 2px rgba(15,23,42,.04); }
.cols { display:grid; grid-template-columns:minmax(0,1fr) minmax(0,1fr); gap:4px 32px; }
@media (max-width: 900px) { .cols { grid-template-columns:minmax(0,1fr); } }
.figs { display:flex; flex-wrap:wrap; gap:14px; align-items:flex-start; }
.side { display:flex; flex-wrap:wrap; gap:8px 28px; align-items:flex-start; }
.fig { margin:0; }
figcaption { font-size:12px; color:var(--muted); margin-bottom:6px; max-width:520px; }
table { border-collapse:collapse; margin:6px 0 10px; font-variant-numeric:tabular-nums; }
th, td { padding:4px 10px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
th { font-size:12px; color:var(--muted); font-weight:600; }
tbody tr:nth-child(even) { background:#f8fafc; }
table.compact td, table.compact th { padding:3px 8px; }
table.meta td:first-child { color:var(--muted); }
.ci { color:var(--muted); font-size:12px; margin-left:6px; white-space:nowrap; }
.muted { color:var(--muted); font-size:12px; }
.note { color:#475569; font-size:13px; margin:4px 0 8px; }
.empty { color:var(--muted); font-style:italic; }
.tag { display:inline-block; background:#e0e7ff; color:#3730a3; border-radius:999px; padding:0 8px;
       font-size:12px; font-weight:600; vertical-align:middle; }
.warn { color:#b45309; font-weight:600; } .ok { color:#047857; }
code { background:#f1f5f9; padding:1px 4px; border-radius:4px; font-size:12px; }
svg.plot { max-width:100%; height:auto; font-family:inherit; }
svg .tick { font-size:11px; fill:#475569; } svg .label { font-size:12px; fill:var(--ink); }
svg .cell { font-size:12px; font-weight:600; } svg .axis-title { font-size:12px; fill:var(--muted); }
svg .grid { stroke:#e2e8f0; stroke-width:1; } svg .axis { stroke:#94a3b8; stroke-width:1; }
.dis-head { margin-bottom:8px; }
.texts { display:grid; grid-template-columns:repeat(auto-fit,minmax(300px,1fr)); gap:10px; margin-top:10px; }
.text { border:1px solid var(--line); border-radius:8px; overflow:hidden; }
.text-name { background:#f1f5f9; padding:3px 10px; font-weight:600; font-size:12px; }
.text-body { padding:8px 10px; white-space:pre-wrap; word-break:break-word; max-height:15em; overflow:auto;
             font-size:13px; }
footer { color:var(--muted); font-size:12px; text-align:center; padding:16px; }
"""

_RENDERERS = {
    "summary": _section_summary,
    "agreement": _section_agreement,
    "confusion": _section_confusion,
    "correlations": _section_correlations,
    "distributions": _section_distributions,
    "gate": _section_gate,
    "systems": _section_systems,
    "disagreements": _section_disagreements,
}


def render_html(summary: Mapping[str, Any]) -> str:
    """The report page for one run summary, as a string (every section is always present)."""
    check_summary(summary)
    title = str(summary.get("title") or "respeval report")
    nav = "".join(f'<a href="#{sid}">{name}</a>' for sid, name in SECTIONS)
    body = "".join(f'<section id="{sid}"><h2>{name}</h2>{_RENDERERS[sid](summary)}</section>' for sid, name in SECTIONS)
    created = f" · {_e(summary['created'])}" if summary.get("created") else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f'<header><h1>{_e(title)}</h1><div class="sub">respeval {_e(__version__)}{created}</div></header>'
        f"<nav>{nav}</nav><main>{body}</main>"
        "<footer>Self-contained report: no network, no scripts. Intervals are seeded percentile "
        "bootstrap intervals.</footer></body></html>\n"
    )
