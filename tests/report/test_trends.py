"""The report's trend section (respeval monitor): a metric over windows with its band, the
reference dashed, regressed windows marked; labels thinned so they do not overlap."""

from __future__ import annotations

import re

import pytest

from respeval.report import check_summary, new_summary, render_html
from respeval.report.svg import svg_trend


def _points(n: int, regressed_from: int) -> list[dict]:
    return [
        {
            "label": f"05-{1 + i // 24:02d} {i % 24:02d}:00",
            "value": 0.85 if i < regressed_from else 0.6,
            "low": 0.8 if i < regressed_from else 0.55,
            "high": 0.9 if i < regressed_from else 0.65,
            "n": 300,
            "status": "reference" if i == 0 else "regressed" if i >= regressed_from else "ok",
        }
        for i in range(n)
    ]


def test_the_trend_plot_has_the_band_the_reference_and_the_regressed_windows():
    svg = svg_trend(_points(12, 7), "pass_rate", reference=0.85)
    assert svg.count('class="band"') == 1 and 'class="reference"' in svg
    assert svg.count("point regressed") == 5 and svg.count("point reference") == 1
    assert 'fill="#fff"' in svg  # the reference window is hollow


def test_labels_are_thinned_so_they_do_not_overlap():
    svg = svg_trend(_points(40, 30), "pass_rate")
    labels = re.findall(r'class="tick" >(\d\d-\d\d \d\d:\d\d)<', svg)
    assert 5 <= len(labels) < 40
    xs = [float(x) for x in re.findall(r'<text x="([0-9.]+)"[^>]*class="tick" >\d\d-\d\d', svg)]
    assert min(b - a for a, b in zip(xs, xs[1:])) >= 6.5 * 11


def test_the_report_renders_trends_and_the_summary_is_checked():
    summary = new_summary("monitor")
    summary["trends"] = [
        {"metric": "pass_rate", "kind": "pass_rate", "confidence": 0.95, "alpha": 0.05, "method": "m", "reference": 0.85,
         "points": _points(12, 7)}
    ]  # fmt: skip
    html = render_html(summary)
    assert 'id="trends"' in html and "5 regressed" in html and "<polygon" in html
    # a run without a monitor has no trends section at all (a report shows only the sections a run fills)
    assert "Trends over windows" not in render_html(new_summary("x"))
    with pytest.raises(ValueError, match=r"trends\[0\] needs a 'points' list"):
        check_summary({"schema": "respeval.run-summary/1", "trends": [{"metric": "x"}]})
