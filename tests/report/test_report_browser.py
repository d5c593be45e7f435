"""The report in a real headless browser: it loads with no console error, no blocked request and
no exception, every section is laid out and every plot has a size.

Drives Debian's chromium over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
commands on fd 3, answers on fd 4, NUL-separated JSON), stdlib only.  Skipped only when no
chromium is installed (``.ci/install-chromium.sh`` installs it; ``RESPEVAL_CHROMIUM`` names
another binary).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from test_report import SECTION_IDS, full_summary

from respeval import report as rep


def _chromium() -> str:
    exe = os.environ.get("RESPEVAL_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium is not installed (run .ci/install-chromium.sh, or set RESPEVAL_CHROMIUM)")
    return exe


def _high_fd(fd: int) -> int:
    """The same pipe end on a descriptor number of at least 10."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class DevTools:
    """A headless chromium and a minimal DevTools-protocol client over its pipe."""

    def __init__(self, exe: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="respeval-chromium-")
        self._log = open(os.path.join(self.profile, "stderr.log"), "wb")  # noqa: SIM115 (closed in close())
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # far above 3 and 4, so the redirections below cannot overwrite one pipe with the other
        to_browser_r, from_browser_w = _high_fd(to_browser_r), _high_fd(from_browser_w)
        args = [
            exe,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--remote-debugging-pipe",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            f"--user-data-dir={self.profile}",
            "about:blank",
        ]
        # the browser reads commands on fd 3 and writes on fd 4: bash puts the pipes there
        # (dash cannot redirect descriptors above 9)
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{to_browser_r} 4>&{from_browser_w}', "bash", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
            pass_fds=(to_browser_r, from_browser_w),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            if select.select([self._from_browser], [], [], left)[0]:
                chunk = os.read(self._from_browser, 1 << 16)
                if not chunk:
                    raise RuntimeError(f"chromium exited: {self._stderr()[-2000:]}")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def _stderr(self) -> str:
        self._log.flush()
        with open(self._log.name, "rb") as fh:
            return fh.read().decode(errors="replace")

    def call(
        self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Send a command and wait for its answer, keeping the events that arrive meanwhile."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._message(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_for(self, method: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._message(deadline))

    def settle(self, seconds: float) -> None:
        """Collect events for a moment (late console messages)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._message(deadline))
        except TimeoutError:
            pass

    def open(self, url: str) -> str:
        """A new page with Runtime, Log and Page events on, loaded with ``url``; its session."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=session)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired")
        self.settle(0.3)
        return session

    def evaluate(self, expression: str, session: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=session)
        return result["result"].get("value")

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.call("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)


def console_problems(events: list[dict[str, Any]]) -> list[str]:
    """Uncaught exceptions, console errors and warnings, and browser log errors (blocked or
    failed loads, Content-Security-Policy violations)."""
    problems = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            problems.append(f"uncaught: {details.get('exception', {}).get('description') or details.get('text')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert", "warning"):
            problems.append(f"console.{params['type']}: {[a.get('value') for a in params.get('args', [])]}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
            entry = params["entry"]
            problems.append(f"{entry['level']} ({entry.get('source')}): {entry.get('text')}")
    return problems


@pytest.fixture(scope="module")
def browser():
    devtools = DevTools(_chromium())
    try:
        yield devtools
    finally:
        devtools.close()


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
    assert [sid for sid, _ in layout["sections"]] == SECTION_IDS
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
