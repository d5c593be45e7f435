"""The report in a real headless browser: it loads with no console error, no blocked request and
no exception, every section is laid out and every plot has a size.

Drives Debian's chromium over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
commands on fd 3, answers on fd 4, NUL-separated JSON), stdlib only.  Skipped only when no
chromium is installed (``.ci/install-chromium.sh`` installs it; ``RESPEVAL_CHROMIUM`` names
another binary).
"""

from __future__ import annotations

import base64
from pathlib import Path

from test_report import FILLED, full_summary

from _helpers.browser import console_problems
from respeval import report as rep

_LAYOUT = """(() => {
  const box = e => e.getBoundingClientRect();
  const sections = [...document.querySelectorAll('main > section')].map(s => [s.id, box(s).height]);
  const svgs = [...document.querySelectorAll('svg')].map(s => [box(s).width, box(s).height]);
  return {sections, svgs, width: document.documentElement.scrollWidth,
          resources: performance.getEntriesByType('resource').length};
})()"""


def test_report_renders_without_console_errors(browser, tmp_path):
    path = rep.write_report(full_summary(), tmp_path / "report.html")
    session = browser.open(path.as_uri())
    assert console_problems(browser.events) == []
    layout = browser.evaluate(_LAYOUT, session)
    assert [sid for sid, _ in layout["sections"]] == FILLED
    assert all(height > 40 for _, height in layout["sections"]), layout["sections"]
    assert len(layout["svgs"]) >= 8 and all(w > 50 and h > 50 for w, h in layout["svgs"]), layout["svgs"]
    assert layout["width"] <= 1280  # nothing overflows sideways at a laptop width
    assert layout["resources"] == 0  # the page fetched nothing


def test_the_probe_sees_errors_and_blocked_loads(browser, tmp_path):
    """The negative control: the same probe flags a script error and a blocked external image."""
    page = rep.render_html(rep.new_summary()).replace(
        "</body>", '<img src="https://example.invalid/x.png"><script>undefinedFunction()</script></body>'
    )
    path = tmp_path / "broken.html"
    path.write_text(page, encoding="utf-8")
    browser.open(path.as_uri())
    problems = " | ".join(console_problems(browser.events))
    assert "example.invalid" in problems  # the Content-Security-Policy blocked the load
    assert "script" in problems.lower()  # and the inline script was refused
    path.write_text("<!DOCTYPE html><script>console.error('boom'); undefinedFunction()</script>", encoding="utf-8")
    browser.open(path.as_uri())
    problems = " | ".join(console_problems(browser.events))
    assert "boom" in problems and "undefinedFunction" in problems


def test_screenshot_of_the_report(browser, tmp_path):
    """A full-width screenshot of the top of the page is a real, non-trivial PNG."""
    path = rep.write_report(full_summary(), tmp_path / "report.html")
    session = browser.open(path.as_uri())
    shot = browser.call(
        "Page.captureScreenshot",
        {"format": "png", "clip": {"x": 0, "y": 0, "width": 1280, "height": 900, "scale": 1}},
        session=session,
    )["data"]
    png = base64.b64decode(shot)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    (tmp_path / "report.png").write_bytes(png)
    assert Path(tmp_path / "report.png").stat().st_size == len(png)
