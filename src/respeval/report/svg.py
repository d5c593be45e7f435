"""The report's plots, as inline SVG: heatmaps, bars, the gate funnel, forests, scatters."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from respeval.report.format import (
    escape,
    fmt,
    nice_ticks,
    pct,
    plain_text,
    short_label,
    svg_element,
    svg_text,
    tick_label,
)

PALETTE = ("#2563eb", "#f59e0b", "#10b981", "#ef4444", "#8b5cf6", "#0ea5e9")


def _mix(share: float) -> str:
    """Colour from near-white (0) to deep blue (1)."""
    share = min(1.0, max(0.0, share))
    lo, hi = (241, 245, 249), (29, 78, 216)
    r, g, b = (round(a + (c - a) * share) for a, c in zip(lo, hi))
    return f"#{r:02x}{g:02x}{b:02x}"


def svg_heatmap(labels: Sequence[Any], matrix: Sequence[Sequence[float]], title: str, scorer: str = "judge") -> str:
    """Confusion matrix: colour = share of the human row (the ``scorer``'s recall per class)."""
    k = len(labels)
    cell = max(34, min(64, 360 // max(k, 1)))
    left, top = 40 + 7 * max((len(short_label(x, 12)) for x in labels), default=1), 58
    width, height = left + cell * k + 20, top + cell * k + 8
    parts = [
        svg_text(left + cell * k / 2, 16, f"{scorer} label", "middle", "axis-title"),
        svg_text(
            14,
            top + cell * k / 2,
            "human label",
            "middle",
            "axis-title",
            f'transform="rotate(-90 14 {top + cell * k / 2:.1f})"',
        ),
    ]
    for j, lab in enumerate(labels):
        parts.append(svg_text(left + cell * (j + 0.5), top - 10, short_label(lab, 8), "middle", "tick"))
    for i, row in enumerate(matrix):
        total = sum(row) or 1
        parts.append(svg_text(left - 8, top + cell * (i + 0.5) + 4, short_label(labels[i], 12), "end", "tick"))
        for j, count in enumerate(row):
            share = count / total
            x, y = left + cell * j, top + cell * i
            stroke = ' stroke="#0f172a" stroke-width="1.5"' if i == j else ' stroke="#fff"'
            tip = f"human {escape(labels[i])}, {escape(scorer)} {escape(labels[j])}: {count} ({pct(share)} of the row)"
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{_mix(share)}"{stroke}>'
                f"<title>{tip}</title></rect>"
            )
            colour = "#fff" if share > 0.55 else "#0f172a"
            parts.append(svg_text(x + cell / 2, y + cell / 2 + 4, f"{count:g}", "middle", "cell", f'fill="{colour}"'))
    return svg_element(width, height, "".join(parts), title)


def svg_bars(
    categories: Sequence[Any],
    series: Sequence[Mapping[str, Any]],
    title: str,
    numeric_edges: Sequence[float] | None = None,
) -> str:
    """Grouped vertical bars: one group per category (or histogram bin), one bar per series."""
    n_cat, n_ser = max(len(categories), 1), max(len(series), 1)
    # one series needs no legend: the caption names it
    left, right, top, bottom = 48, 12, 26 if n_ser > 1 else 12, 46
    group = max(18, min(96 if n_cat <= 6 else 64, 520 // n_cat))
    # never narrower than its legend or 180 px: the bars are centred in the plot
    plot_w = max(group * n_cat, 180, _legend_width(series) if n_ser > 1 else 0)
    offset = (plot_w - group * n_cat) / 2
    width, height = left + plot_w + right, 220
    plot_h = height - top - bottom
    vmax = max([max(s["counts"], default=0) for s in series] + [1])
    ticks = nice_ticks(0, vmax, 4)
    scale = plot_h / ticks[-1]
    parts = [_legend(series, left, 14)] if n_ser > 1 else []
    left_bars = left + offset
    for t in ticks:
        y = top + plot_h - t * scale
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        parts.append(svg_text(left - 6, y + 4, tick_label(t), "end", "tick"))
    bar = (group - 6) / n_ser
    for c, cat in enumerate(categories):
        for s_i, s in enumerate(series):
            count = s["counts"][c]
            h = count * scale
            x = left_bars + group * c + 3 + bar * s_i
            parts.append(
                f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{max(bar - 1, 1):.1f}" '
                f'height="{h:.1f}" fill="{PALETTE[s_i % len(PALETTE)]}">'
                f"<title>{escape(s['name'])}, {escape(cat)}: {count:g}</title></rect>"
            )
        if numeric_edges is None and (n_cat <= 12 or c % max(1, n_cat // 12) == 0):
            parts.append(
                svg_text(
                    left_bars + group * (c + 0.5), height - bottom + 16, short_label(cat, group // 7), "middle", "tick"
                )
            )
    if numeric_edges is not None:
        for t in nice_ticks(numeric_edges[0], numeric_edges[-1], 5):
            if numeric_edges[0] - 1e-12 <= t <= numeric_edges[-1] + 1e-12:
                x = left_bars + group * n_cat * (t - numeric_edges[0]) / ((numeric_edges[-1] - numeric_edges[0]) or 1)
                parts.append(svg_text(x, height - bottom + 16, tick_label(t), "middle", "tick"))
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" class="axis"/>')
    return svg_element(width, height, "".join(parts), title)


def _legend_width(series: Sequence[Mapping[str, Any]]) -> int:
    return sum(24 + 7 * len(str(s["name"])) for s in series)


def _legend(series: Sequence[Mapping[str, Any]], x: float, y: float) -> str:
    parts = []
    for i, s in enumerate(series):
        parts.append(f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{PALETTE[i % len(PALETTE)]}"/>')
        parts.append(svg_text(x + 14, y, s["name"], "start", "tick"))
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
        parts.append(
            svg_text(label_w - 10, y + 20, short_label(stage.get("stage", f"stage {i + 1}"), 18), "end", "label")
        )
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
            svg_text(
                label_w + remaining * scale + 8,
                y + 20,
                f"{settled:,} settled of {remaining:,} ({pct(share)} of all)",
                "start",
                "tick",
            )
        )
        remaining -= settled
    y = top + row_h * len(stages)
    parts.append(svg_text(label_w - 10, y + 20, "unsettled", "end", "label"))
    parts.append(
        f'<rect x="{label_w}" y="{y + 4}" width="{max(remaining, 0) * scale:.1f}" height="{row_h - 10}" '
        f'fill="#94a3b8"><title>{remaining} rows not settled</title></rect>'
    )
    parts.append(
        svg_text(
            label_w + max(remaining, 0) * scale + 8,
            y + 20,
            f"{remaining:,} ({pct(remaining / total if total else 0)})",
            "start",
            "tick",
        )
    )
    return svg_element(width, height, "".join(parts), title)


_LINE_CHARS = 36  # characters per line of a forest plot's label (12 px text)
_BREAKS = re.compile(r"[^.\-_/ ]*[.\-_/ ]?")


def wrap_label(label: Any, width: int = _LINE_CHARS) -> list[str]:
    """A label as lines of at most ``width`` characters, broken after ``.``, ``-``, ``_``,
    ``/`` or a space where it can be (a longer run is split): nothing is cut, so 16 systems
    named ``newstest2017.<system>.<id>.en-de`` stay told apart."""
    lines: list[str] = []
    current = ""
    for token in (t for t in _BREAKS.findall(plain_text(label)) if t):
        while len(token) > width:
            if current:
                lines.append(current)
                current = ""
            lines.append(token[:width])
            token = token[width:]
        if current and len(current) + len(token) > width:
            lines.append(current)
            current = token
        else:
            current += token
    if current or not lines:
        lines.append(current)
    return lines


def _label_text(x: float, y: float, lines: Sequence[str], full: Any) -> str:
    """Right-aligned lines ending at ``x``, the first at baseline ``y``; hover: the full label."""
    spans = "".join(
        f'<tspan x="{x:.1f}" dy="{0 if i == 0 else 14}">{escape(line)}</tspan>' for i, line in enumerate(lines)
    )
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="end" class="label"><title>{escape(full)}</title>{spans}</text>'


def svg_forest(rows: Sequence[Mapping[str, Any]], title: str, *, reference: float | None = None) -> str:
    """Each row's value (dot, ``mean``) and interval (line), labelled by ``system`` (wrapped,
    never cut), in the order given; ``reference`` draws a dashed line there (0 for
    differences), and a row's ``colour`` overrides the palette."""
    labels = [wrap_label(r.get("system")) for r in rows]
    longest = max((len(line) for lines in labels for line in lines), default=8)
    label_w, plot_w, top = max(80, round(longest * 7.4) + 18), 320, 10
    heights = [max(24, 14 * len(lines) + 10) for lines in labels]
    offsets = [top + sum(heights[:i]) for i in range(len(rows))]
    height = top + sum(heights) + 34
    width = label_w + plot_w + 60
    values = [v for r in rows for v in (r.get("low"), r.get("mean"), r.get("high")) if v is not None]
    if reference is not None:
        values.append(reference)
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    pad = (hi - lo) * 0.05 or 0.05
    ticks = nice_ticks(lo - pad, hi + pad, 5)
    x0, x1 = ticks[0], ticks[-1]

    def sx(v: float) -> float:
        return label_w + plot_w * (v - x0) / ((x1 - x0) or 1)

    axis_y = top + sum(heights) + 4
    parts = []
    for t in ticks:
        parts.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{top}" y2="{axis_y}" class="grid"/>')
        parts.append(svg_text(sx(t), axis_y + 16, tick_label(t), "middle", "tick"))
    if reference is not None:
        parts.append(
            f'<line x1="{sx(reference):.1f}" x2="{sx(reference):.1f}" y1="{top}" y2="{axis_y}" '
            'stroke="#0f172a" stroke-width="1" stroke-dasharray="4 3"/>'
        )
    for i, r in enumerate(rows):
        y = offsets[i] + heights[i] / 2
        colour = str(r.get("colour") or PALETTE[0])
        parts.append(_label_text(label_w - 10, y + 4 - 7 * (len(labels[i]) - 1), labels[i], r.get("system")))
        if r.get("low") is not None and r.get("high") is not None:
            parts.append(
                f'<line x1="{sx(r["low"]):.1f}" x2="{sx(r["high"]):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                f'stroke="{colour}" stroke-width="2.5" stroke-linecap="round"/>'
            )
        if r.get("mean") is None:  # nothing of this system was scored: no dot, a dash
            parts.append(svg_text(width - 6, y + 4, "-", "end", "tick"))
            continue
        parts.append(
            f'<circle cx="{sx(r["mean"]):.1f}" cy="{y:.1f}" r="5" fill="{colour}" stroke="#fff">'
            f"<title>{escape(r.get('system'))}: {fmt(r['mean'])}</title></circle>"
        )
        parts.append(svg_text(width - 6, y + 4, fmt(r["mean"], 3), "end", "tick"))
    return svg_element(width, height, "".join(parts), title)


def svg_scatter(points: Sequence[Mapping[str, Any]], x_label: str, y_label: str, title: str) -> str:
    """Scatter of (metric, human) points with their unit names on hover."""
    left, top, plot_w, plot_h = 62, 12, 360, 240
    width, height = left + plot_w + 16, top + plot_h + 48
    xs = [float(p["x"]) for p in points]
    ys = [float(p["y"]) for p in points]
    tx = nice_ticks(min(xs), max(xs), 5)
    ty = nice_ticks(min(ys), max(ys), 5)

    def sx(v: float) -> float:
        return left + plot_w * (v - tx[0]) / ((tx[-1] - tx[0]) or 1)

    def sy(v: float) -> float:
        return top + plot_h - plot_h * (v - ty[0]) / ((ty[-1] - ty[0]) or 1)

    parts = []
    for t in tx:
        parts.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{top}" y2="{top + plot_h}" class="grid"/>')
        parts.append(svg_text(sx(t), top + plot_h + 16, tick_label(t), "middle", "tick"))
    for t in ty:
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" class="grid"/>')
        parts.append(svg_text(left - 6, sy(t) + 4, tick_label(t), "end", "tick"))
    parts.append(svg_text(left + plot_w / 2, height - 6, x_label, "middle", "axis-title"))
    parts.append(
        svg_text(
            14, top + plot_h / 2, y_label, "middle", "axis-title", f'transform="rotate(-90 14 {top + plot_h / 2:.1f})"'
        )
    )
    for p, x, y in zip(points, xs, ys):
        parts.append(
            f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="5" fill="{PALETTE[0]}" opacity="0.8">'
            f"<title>{escape(p.get('unit', ''))}: {fmt(x)}, {fmt(y)}</title></circle>"
        )
    return svg_element(width, height, "".join(parts), title)


def svg_trend(
    points: Sequence[Mapping[str, Any]], title: str, *, reference: float | None = None, y_label: str = ""
) -> str:
    """A metric over time windows: the value (line and dots), its interval (a band), the
    reference (a dashed line); a point whose ``status`` is ``regressed`` is drawn red, the
    reference windows hollow.  Points are ``{label, value, low, high, status}``."""
    left, top, plot_w, plot_h = 62, 14, max(360, min(760, 40 * len(points))), 200
    width, height = left + plot_w + 16, top + plot_h + 58
    values = [v for p in points for v in (p.get("low"), p.get("value"), p.get("high")) if v is not None]
    if reference is not None:
        values.append(reference)
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    pad = (hi - lo) * 0.05 or 0.05
    ty = nice_ticks(lo - pad, hi + pad, 5)
    n = max(len(points), 1)

    def sx(i: int) -> float:
        return left + plot_w * (i + 0.5) / n

    def sy(v: float) -> float:
        return top + plot_h - plot_h * (v - ty[0]) / ((ty[-1] - ty[0]) or 1)

    parts = []
    for t in ty:
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" class="grid"/>')
        parts.append(svg_text(left - 6, sy(t) + 4, tick_label(t), "end", "tick"))
    if y_label:
        parts.append(
            svg_text(
                14,
                top + plot_h / 2,
                y_label,
                "middle",
                "axis-title",
                f'transform="rotate(-90 14 {top + plot_h / 2:.1f})"',
            )
        )
    labels = [short_label(p.get("label", i), 16) for i, p in enumerate(points)]
    widest = 6.5 * max((len(x) for x in labels), default=1) + 8  # px of an 11px label, and a gap
    step = max(1, math.ceil(widest / (plot_w / n)))
    for i, label in enumerate(labels):
        if i % step == 0:
            parts.append(svg_text(sx(i), top + plot_h + 16, label, "middle", "tick"))
    band = [(i, p) for i, p in enumerate(points) if p.get("low") is not None and p.get("high") is not None]
    if band:
        upper = " ".join(f"{sx(i):.1f},{sy(p['high']):.1f}" for i, p in band)
        lower = " ".join(f"{sx(i):.1f},{sy(p['low']):.1f}" for i, p in reversed(band))
        parts.append(f'<polygon points="{upper} {lower}" fill="{PALETTE[0]}" opacity="0.15" class="band"/>')
    if reference is not None:
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{sy(reference):.1f}" y2="{sy(reference):.1f}" '
            'stroke="#0f172a" stroke-width="1" stroke-dasharray="4 3" class="reference"/>'
        )
    line = [(i, p) for i, p in enumerate(points) if p.get("value") is not None]
    if len(line) > 1:
        path = " ".join(f"{sx(i):.1f},{sy(p['value']):.1f}" for i, p in line)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{PALETTE[0]}" stroke-width="2"/>')
    for i, p in line:
        status = str(p.get("status") or "")
        colour = PALETTE[3] if status == "regressed" else PALETTE[0]
        fill = "#fff" if status == "reference" else colour
        tip = f"{escape(p.get('label', i))}: {fmt(p['value'])} [{fmt(p.get('low'))}, {fmt(p.get('high'))}] {escape(status)}"
        parts.append(
            f'<circle cx="{sx(i):.1f}" cy="{sy(p["value"]):.1f}" r="4.5" fill="{fill}" stroke="{colour}" '
            f'stroke-width="2" class="point {escape(status)}"><title>{tip}</title></circle>'
        )
    return svg_element(width, height, "".join(parts), title)
