"""A headless chromium driven over the DevTools protocol on a pipe, stdlib only.

``--remote-debugging-pipe``: commands on fd 3, answers on fd 4, NUL-separated JSON.  Tests
skip when no chromium is installed (``.ci/install-chromium.sh`` installs it;
``RESPEVAL_CHROMIUM`` names another binary).  :meth:`DevTools.image_stats` decodes a
screenshot in the browser itself (no imaging library needed) to tell a blank page from a
drawn one.
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
from typing import Any

import pytest


def chromium() -> str:
    """The chromium binary, or a clean skip."""
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

    def act(self, session: str, expression: str, timeout: float = 30.0) -> None:
        """Run ``expression`` in the page (a click, a form's submit) and wait for the page it
        loads; the events of the new page replace the old ones."""
        self.events.clear()
        self.call("Runtime.evaluate", {"expression": expression}, session=session)
        self._loaded(timeout)

    def go(self, session: str, url: str) -> None:
        """Load ``url`` in the same page."""
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=session)
        self._loaded(30.0)

    def _loaded(self, timeout: float) -> None:
        """Wait for the page's load event; a JavaScript dialog (which blocks the load) fails at once."""
        deadline = time.monotonic() + timeout
        while True:
            for e in self.events:
                if e.get("method") == "Page.javascriptDialogOpening":
                    raise AssertionError(f"a JavaScript dialog opened: {e.get('params')}")
                if e.get("method") == "Page.loadEventFired":
                    self.settle(0.2)
                    return
            self.events.append(self._message(deadline))

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


_IMAGE_STATS = """(async () => {
  const img = new Image();
  img.src = 'data:image/png;base64,%s';
  await img.decode();
  const c = document.createElement('canvas');
  c.width = img.width; c.height = img.height;
  const g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data;
  const counts = new Map();
  for (let i = 0; i < d.length; i += 4) {
    const key = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2];
    counts.set(key, (counts.get(key) || 0) + 1);
  }
  let top = 0;
  for (const n of counts.values()) top = Math.max(top, n);
  return {width: c.width, height: c.height, colors: counts.size, background: top / (d.length / 4)};
})()"""


def screenshot(devtools: DevTools, session: str, width: int = 1280) -> bytes:
    """A PNG of the whole page (its full height) at ``width`` CSS pixels."""
    height = devtools.evaluate("document.documentElement.scrollHeight", session)
    shot = devtools.call(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
        },
        session=session,
        timeout=60,
    )["data"]
    return base64.b64decode(shot)


def image_stats(devtools: DevTools, png: bytes) -> dict[str, Any]:
    """Width, height, distinct colours and the share of the most common colour (the
    background) of a PNG, decoded by the browser on a blank page."""
    session = devtools.open("about:blank")
    result = devtools.call(
        "Runtime.evaluate",
        {"expression": _IMAGE_STATS % base64.b64encode(png).decode(), "awaitPromise": True, "returnByValue": True},
        session=session,
        timeout=60,
    )
    if "exceptionDetails" in result:
        raise RuntimeError(f"the browser could not decode the PNG: {result['exceptionDetails']}")
    return result["result"]["value"]
