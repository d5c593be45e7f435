"""Issue 32, acceptance 1: ``respeval view`` in a real browser (Debian's chromium over the
DevTools protocol) over a score run of the 16 WMT17 en-de systems, an evaluate run with a
judge and a pairwise metric (and a second one to compare it with), an agent run, and a score
run with a system named like a script: filter a metric, open a row, compare two runs.  A script
planted in a response, a system name and a metric name never runs: no dialog, no window flag,
no script element or event handler in any page, no console error or blocked load.

The screenshots are kept as test artifacts under the test's temporary directory (or
``RESPEVAL_SCREENSHOTS=DIR``); their paths are printed (``pytest -s`` shows them).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from _helpers.browser import DevTools, console_problems, screenshot
from _helpers.paths import ROOT, shared_data
from _helpers.view_runs import HOSTILE_NAME, PAYLOAD
from respeval.cli import main

pytest.importorskip("uvicorn", reason="respeval view needs uvicorn (pip install 'respeval[view]')")

# What could run in a page: script elements, event handlers, javascript: links; and what ran.
_SAFE = """(() => ({
  scripts: document.querySelectorAll('script, iframe, object, embed').length,
  handlers: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes].map(a => a.name))
            .filter(n => n.startsWith('on')).length,
  js_links: [...document.querySelectorAll('[href], [src], [action]')]
            .filter(e => /^\\s*javascript:/i.test(e.getAttribute('href') || e.getAttribute('src') || e.getAttribute('action') || '')).length,
  pwned: typeof window.__pwned === 'undefined' ? null : window.__pwned,
  text: document.body.innerText,
}))()"""


def _shots(tmp_path: Path) -> Path:
    keep = os.environ.get("RESPEVAL_SCREENSHOTS")
    path = Path(keep) if keep else tmp_path / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def viewer(*paths: Path):
    """``respeval view PATHS --port 0`` in its own process; yields its address."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    with subprocess.Popen(
        [sys.executable, "-m", "respeval", "view", *map(str, paths), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as proc:  # leaving closes its pipes
        try:
            deadline = time.monotonic() + 60
            line = b""
            while not line.endswith(b"\n"):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"respeval view did not start: {proc.stderr.read().decode(errors='replace')}")
                if select.select([proc.stdout], [], [], 1.0)[0]:
                    line += os.read(proc.stdout.fileno(), 4096)
            text = line.decode()
            assert text.startswith("respeval view: http://127.0.0.1:"), text
            yield text.split()[2]
        finally:
            proc.send_signal(signal.SIGINT)  # the viewer stops on Ctrl-C, cleanly
            try:
                code = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise AssertionError("respeval view did not stop on SIGINT") from None
            assert code == 0, proc.stderr.read().decode(errors="replace")


class Tour:
    """One browser page going through the viewer, checking every page it loads."""

    def __init__(self, browser: DevTools, url: str, shots: Path) -> None:
        self.browser, self.base, self.shots = browser, url, shots
        self.session = browser.open(url)
        self.saved: list[Path] = []
        self.page = self.check()

    def check(self) -> dict[str, Any]:
        """What every page must satisfy: nothing that could run, nothing that ran."""
        problems = console_problems(self.browser.events)
        dialogs = [e for e in self.browser.events if e.get("method") == "Page.javascriptDialogOpening"]
        page = self.browser.evaluate(_SAFE, self.session)
        where = self.browser.evaluate("location.href", self.session)
        assert problems == [] and dialogs == [], (where, problems, dialogs)
        assert (page["scripts"], page["handlers"], page["js_links"], page["pwned"]) == (0, 0, 0, None), where
        return page

    def go(self, path: str) -> dict[str, Any]:
        self.browser.go(self.session, self.base.rstrip("/") + path)
        self.page = self.check()
        return self.page

    def act(self, expression: str) -> dict[str, Any]:
        self.browser.act(self.session, expression)
        self.page = self.check()
        return self.page

    def url(self) -> str:
        return self.browser.evaluate("location.pathname + location.search", self.session)

    def shot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        path.write_bytes(screenshot(self.browser, self.session))
        self.saved.append(path)
        return path


def _wmt17_score_run(root: Path) -> Path:
    systems = shared_data("wmt17_en_de", "systems")
    ref = shared_data("wmt17_en_de", "newstest2017-ende-ref.de")
    folder = root / "wmt17"
    folder.mkdir()
    preds = [a for p in sorted(systems.glob("newstest2017.*.en-de.txt")) for a in ("--pred", str(p))]
    assert len(preds) == 32
    args = ["score", *preds, "--ref", str(ref), "--metrics", "bleu,chrf,ter", "--bootstrap", "100", "--quiet"]
    args += ["--compare", "newstest2017.uedin-nmt.4722.en-de"]
    args += ["--out", str(folder / "rows.parquet"), "--summary-out", str(folder / "summary.json")]
    assert main(args) == 0
    return folder


def _find_run(tour: Tour, title_part: str, nth: int = 0) -> str:
    """The /runs/N path of the nth run whose list entry holds ``title_part``."""
    links = tour.browser.evaluate(
        "[...document.querySelectorAll('main table a')].map(a => [a.textContent, a.getAttribute('href')])",
        tour.session,
    )
    found = [href for text, href in links if title_part in text and href.startswith("/runs/")]
    return found[nth]


def test_view_in_a_real_browser(browser, runs, tmp_path, capsys):
    wmt = _wmt17_score_run(tmp_path)
    capsys.readouterr()
    shots = _shots(tmp_path)
    with viewer(wmt, runs["eval_a"], runs["eval_b"], runs["agent"], runs["score"]) as url:
        tour = Tour(browser, url, shots)
        # the run list: every run, each a link
        text = tour.page["text"]
        assert "Runs" in text and text.count("respeval evaluate") >= 2 and "Agent eval set weather_assistant" in text
        assert "48,064" in text  # the WMT17 run's rows
        tour.shot("1-runs")

        # the WMT17 score run: its summary (16 systems with intervals) and its first rows with their ids
        wmt_path = _find_run(tour, "respeval score", 0)
        page = tour.go(wmt_path)
        assert "newstest2017.uedin-nmt.4722.en-de" in page["text"] and "95% interval" in page["text"]
        assert "rows 1–50 of 48,064" in page["text"]
        first_rows = tour.browser.evaluate(
            "[...document.querySelectorAll('#rows tbody tr')].slice(0, 3).map(r => r.innerText)", tour.session
        )
        assert [r.split("\t")[:3] for r in first_rows] == [
            ["0", "newstest2017.C-3MA.4959.en-de", "0"],
            ["1", "newstest2017.C-3MA.4959.en-de", "1"],
            ["2", "newstest2017.C-3MA.4959.en-de", "2"],
        ]
        tour.shot("2-score-wmt17")
        # filter: one system, the worst TER first
        page = tour.act(
            "const f = document.querySelector('form.bar');"
            "f.system.value = 'newstest2017.online-F.0.en-de'; f.metric.value = 'ter';"
            "const d = document.createElement('input'); d.type = 'hidden'; d.name = 'desc'; d.value = '1';"
            "f.appendChild(d); f.submit()"
        )
        assert "rows 1–50 of 3,004" in page["text"] and "ter: score" in page["text"]
        ter = tour.browser.evaluate(
            "[...document.querySelectorAll('#rows tbody tr')].map(r => parseFloat(r.cells[r.cells.length - 1].innerText))",
            tour.session,
        )
        assert ter == sorted(ter, reverse=True) and len(ter) == 50
        # a row: the prediction and the reference, read from the run's inputs
        page = tour.act("document.querySelector('a.row-link').click()")
        assert "prediction" in page["text"] and "reference" in page["text"] and "newstest2017.online-F" in page["text"]
        tour.shot("3-score-row")

        # the evaluate run: filter a metric, then open a row
        tour.go("/runs")
        eval_path = _find_run(tour, "respeval evaluate", 0)
        page = tour.go(eval_path)
        assert "GROUNDING" in page["text"] and "preference" in page["text"]
        page = tour.act(
            "const f = document.querySelector('form.bar'); f.metric.value = 'GROUNDING'; f.status.value = 'pass';"
            "f.submit()"
        )
        assert "metric=GROUNDING" in tour.url() and "GROUNDING: score" in page["text"]
        passes = tour.browser.evaluate(
            "[...document.querySelectorAll('#rows tbody tr')].map(r => r.innerText.includes('pass'))", tour.session
        )
        assert passes and all(passes)
        tour.shot("4-evaluate-filtered")
        page = tour.act("document.querySelector('a.row-link').click()")
        for what in ("prompt", "response", "reference", "Parsed verdict", "judge prompt: system", "raw reply"):
            assert what in page["text"], what
        tour.shot("5-evaluate-row")
        # the row with the planted script: shown as text, never run
        page = tour.go(f"{eval_path}/rows/1")
        assert PAYLOAD in page["text"]
        assert "order A = baseline, B = candidate" in page["text"] and "order swapped" in page["text"]
        tour.shot("6-evaluate-row-with-payload")
        # the metric with a script for a name: on the run page, as text
        page = tour.go(eval_path)
        assert HOSTILE_NAME in page["text"]

        # two runs side by side, flipped rows first
        other = eval_path.rsplit("/", 1)[0] + "/" + str(int(eval_path.rsplit("/", 1)[1]) + 1)
        page = tour.go("/compare")
        page = tour.act(
            "const f = document.querySelector('form.bar');"
            f"f.a.value = '{eval_path.rsplit('/', 1)[1]}'; f.b.value = '{other.rsplit('/', 1)[1]}';"
            "f.metric.value = 'GROUNDING'; f.submit()"
        )
        assert "rows in both runs (paired on id)" in page["text"]
        flipped = tour.browser.evaluate(
            "[...document.querySelectorAll('main tbody tr')].map(r => r.innerText.includes('flipped'))", tour.session
        )
        assert any(flipped) and flipped == sorted(flipped, reverse=True), page["text"][:3000]  # flipped first
        tour.shot("7-compare")

        # the agent run: a case with its expected and actual tool calls side by side
        tour.go("/runs")
        agent_path = _find_run(tour, "Agent eval set")
        tour.go(f"{agent_path}/rows")
        page = tour.act(
            "[...document.querySelectorAll('#rows tbody tr')].find(r => r.innerText.includes('weekend_trip'))"
            ".querySelector('a.row-link').click()"
        )
        assert "expected" in page["text"] and "actual" in page["text"]
        assert 'get_forecast({"city": "Oslo", "days": 3})' in page["text"]
        assert 'get_forecast({"city": "Oslo", "days": 2})' in page["text"]
        tour.shot("8-agent-case")

        # the score run whose system is named like a script: its name is text, in the summary and the rows
        tour.go("/runs")
        hostile = _find_run(tour, "respeval score", 1)
        page = tour.go(hostile)
        assert HOSTILE_NAME in page["text"]
        page = tour.go(f"{hostile}/rows?system={HOSTILE_NAME}")
        assert HOSTILE_NAME in page["text"] and "rows 1–20 of 20" in page["text"]
        page = tour.act("document.querySelector('a.row-link').click()")
        assert PAYLOAD in page["text"]
        tour.shot("9-hostile-system")

    for path in tour.saved:
        assert path.stat().st_size > 20_000
    with capsys.disabled():
        print("\nrespeval view screenshots:\n" + "\n".join(f"  {p}" for p in tour.saved))


def test_the_checks_see_a_script_that_runs(browser, tmp_path):
    """The negative control: the same checks flag a page whose script runs, and a dialog."""
    page = tmp_path / "ran.html"
    page.write_text("<!DOCTYPE html><p>x</p><script>window.__pwned = 1</script>", encoding="utf-8")
    with pytest.raises(AssertionError):
        Tour(browser, page.as_uri(), tmp_path)
    dialog = tmp_path / "dialog.html"
    dialog.write_text("<!DOCTYPE html><p>x</p><script>alert(1)</script>", encoding="utf-8")
    with pytest.raises(AssertionError, match="dialog"):
        browser.go(browser.open("about:blank"), dialog.as_uri())
