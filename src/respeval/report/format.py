"""Text and number formatting shared by the report's tables and plots (escaped for HTML)."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from respeval.redact import redact


def escape(value: Any) -> str:
    """Escaped text of any value, scrubbed of secrets (every text of the report passes here)."""
    return html.escape(redact(value if isinstance(value, str) else plain_text(value)), quote=True)


def plain_text(value: Any) -> str:
    if isinstance(value, float):
        return fmt(value)
    if value is None:
        return "–"
    return str(value)


def fmt(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return f"{int(value):,}"
    return f"{float(value):.{digits}f}"


def pct(value: Any) -> str:
    return "–" if value is None else f"{100 * float(value):.1f}%"


def ci_span(interval: Mapping[str, Any] | None) -> str:
    if not interval or interval.get("low") is None:
        return ""
    return f'<span class="ci">[{fmt(interval["low"])}, {fmt(interval["high"])}]</span>'


def html_table(headers: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def empty_note(what: str) -> str:
    return f'<p class="empty">{escape(what)}</p>'


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
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


def tick_label(t: float) -> str:
    return f"{t:g}" if abs(t) >= 1e-4 or t == 0 else f"{t:.1e}"


def svg_element(width: float, height: float, body: str, label: str) -> str:
    return (
        f'<svg class="plot" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
        f'height="{height:.0f}" role="img" aria-label="{escape(label)}">{body}</svg>'
    )


def svg_text(x: float, y: float, s: Any, anchor: str = "start", cls: str = "", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" class="{cls}" {extra}>{escape(s)}</text>'


def short_label(label: Any, limit: int = 22) -> str:
    s = plain_text(label)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def words(text: Any) -> str:
    n = len(str(text).split())
    return f"{n:,} word" + ("" if n == 1 else "s")


def text_block(name: str, text: Any) -> str:
    """A named text in a box (the rows and cases the report shows side by side)."""
    return (
        f'<div class="text"><div class="text-name">{escape(name)} '
        f'<span class="muted">({words(text)})</span></div>'
        f'<div class="text-body">{escape(text)}</div></div>'
    )
