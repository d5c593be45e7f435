"""The reports of real runs, looked at in headless chromium: a ``score`` run of the 16 WMT17
en-de systems with ``--compare``, a ``gate`` run and an ``evaluate`` run, each written by the
command's own ``--report``.  For each page: no console error or blocked load, only the sections
the run fills (no "No ... in this run"), each filled (the expected tables, rows and plots),
nothing spills sideways at a laptop width, and the full-page screenshot is a drawn image (the
browser decodes it: many colours, not one background).

Set ``RESPEVAL_SCREENSHOTS=DIR`` to keep the PNGs and the pages (to look at them); otherwise
they go to the test's temporary directory.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from _helpers.browser import DevTools, console_problems, image_stats, screenshot
from _helpers.judge_server import JudgeServer, evaluate_responder
from _helpers.paths import ROOT, shared_data
from respeval import report as rep
from respeval.cli import main

_PAGE = """(() => {
  const box = e => e.getBoundingClientRect();
  const width = document.documentElement.clientWidth;
  const sections = {};
  for (const s of document.querySelectorAll('main > section')) {
    sections[s.id] = {
      heading: (s.querySelector(':scope > h2') || {}).textContent || null,
      height: box(s).height,
      empty: !!s.querySelector(':scope > .empty'),
      tables: [...s.querySelectorAll('table')].map(t => t.tBodies.length ? t.tBodies[0].rows.length : 0),
      svgs: [...s.querySelectorAll('svg')].map(v => [Math.round(box(v).width), Math.round(box(v).height)]),
      cards: s.querySelectorAll('.card').length,
      text: s.innerText,
      labels: [...s.querySelectorAll('svg text.label')].map(t => [...t.querySelectorAll('tspan')].map(x => x.textContent).join('')),
    };
  }
  // content wider than its card, or anything reaching past the page's right edge
  const spilled = [...document.querySelectorAll('.card, table, svg, figure')]
    .filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'visible'
                 || box(e).right > width + 0.5)
    .map(e => e.tagName + '.' + e.className + ' in #' + (e.closest('section') || {}).id);
  return {sections, spilled, scrollWidth: document.documentElement.scrollWidth, width};
})()"""


def _shots_dir(tmp_path: Path) -> Path:
    keep = os.environ.get("RESPEVAL_SCREENSHOTS")
    path = Path(keep) if keep else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path


def look_at(browser: DevTools, report: Path, png_path: Path, summary_path: Path | None = None) -> dict[str, Any]:
    """Open the report, check what every report must satisfy, save the screenshot; returns
    the page's sections for the run-specific checks."""
    session = browser.open(report.resolve().as_uri())
    assert console_problems(browser.events) == []
    page = browser.evaluate(_PAGE, session)
    summary = json.loads(summary_path.read_text()) if summary_path else None
    if summary is not None:  # the sections the run fills, and only those, in its command's order
        expected = [name for _, name, _ in rep.present_sections(summary)]
        assert [s["heading"] for s in page["sections"].values()] == expected
        assert list(page["sections"])[0] == rep.ORDERS[summary["meta"]["command"]][0]
    assert all(s["height"] > 30 and not s["empty"] for s in page["sections"].values())
    assert page["width"] > 1200 and page["scrollWidth"] <= page["width"], "the page scrolls sideways"
    assert page["spilled"] == [], page["spilled"]
    png = screenshot(browser, session)
    png_path.write_bytes(png)
    if png_path.parent != report.parent:
        shutil.copyfile(report, png_path.with_suffix(".html"))
    stats = image_stats(browser, png)
    assert stats["width"] == 1280 and stats["height"] >= 900
    assert stats["colors"] > 200  # text, plots, tables: not a blank or single-colour page
    assert stats["background"] < 0.95
    return page["sections"]


def _filled(section: dict[str, Any]) -> bool:
    return not section["empty"] and section["height"] > 60


def test_score_report_16_systems_with_compare(browser, tmp_path):
    """The 16 systems named by their file stems, as a user who passes the files gets them."""
    systems = shared_data("wmt17_en_de", "systems")
    ref = shared_data("wmt17_en_de", "newstest2017-ende-ref.de")
    files = sorted(systems.glob("newstest2017.*.en-de.txt"))
    preds = [arg for path in files for arg in ("--pred", str(path))]
    assert len(preds) == 32
    names = [path.stem for path in files]  # newstest2017.uedin-nmt.4722.en-de, ...
    report, summary = tmp_path / "score.html", tmp_path / "score.json"
    args = ["score", *preds, "--ref", str(ref), "--metrics", "bleu,chrf,ter"]
    args += ["--compare", "newstest2017.uedin-nmt.4722.en-de", "--out", str(tmp_path / "rows.parquet")]
    args += ["--bootstrap", "100", "--quiet", "--report", str(report), "--summary-out", str(summary)]
    assert main(args) == 0
    sections = look_at(browser, report, _shots_dir(tmp_path) / "score_16_systems.png", summary)
    assert list(sections) == ["systems", "distributions", "worst", "run"]  # the result first
    systems_section = sections["systems"]
    assert _filled(systems_section) and systems_section["cards"] == 3  # bleu, chrf, ter
    # per metric a 16-row table beside its forest plot, then 15 paired comparisons (every metric)
    assert systems_section["tables"] == [16, 16, 16, 15]
    assert len(systems_section["svgs"]) == 3 and all(w > 300 and h > 300 for w, h in systems_section["svgs"])
    # every forest label is the whole system name (wrapped, never cut): 16 names told apart
    assert systems_section["labels"] == [] or all(
        sorted(labels) == sorted(names)
        for labels in [systems_section["labels"][i * 16 : (i + 1) * 16] for i in range(3)]
    )
    assert len(systems_section["labels"]) == 48 and "…" not in "".join(systems_section["labels"])
    text = systems_section["text"]
    # corpus BLEU/chrF/TER are corpus values, not means; TER is better low
    assert "corpus" in text and "\tmean\t" not in text and "lower is better" in text
    # one baseline: named once, in the heading, not in every row
    assert "Paired comparisons against newstest2017.uedin-nmt.4722.en-de" in text
    paired = text.split("Paired comparisons against ", 1)[1]
    assert paired.count("newstest2017.uedin-nmt.4722.en-de") == 1 and "baseline" not in paired.splitlines()[1]
    # a TER increase is worse, a BLEU decrease is worse: every other system is worse than uedin on TER but SYSTRAN
    online_f = next(line for line in text.splitlines() if line.startswith("newstest2017.online-F.0.en-de\t-"))
    assert online_f.count("worse") == 3 and "+14.3849" in online_f
    # the per-row scores the run wrote: their distributions and the worst rows with both texts
    assert _filled(sections["distributions"]) and len(sections["distributions"]["svgs"]) == 3
    worst = sections["worst"]["text"]
    assert "No per-row scores" not in worst and "prediction" in worst and "reference" in worst
    data = json.loads(summary.read_text())
    assert {r["system"] for r in data["systems"][0]["rows"]} == set(names)
    assert [t["statistic"] for t in data["systems"]] == ["corpus"] * 3


def test_gate_report(browser, tmp_path, monkeypatch):
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    report = tmp_path / "gate.html"
    args = ["gate", "--input", "docs/examples/gate_rows.jsonl", "--lexical-accept", "0.6", "--lexical-reject", "0.1"]
    args += ["--model", "python:docs.examples.scripted_judge:judge", "--report", str(report)]
    assert main(args) == 0
    sections = look_at(browser, report, _shots_dir(tmp_path) / "gate.png")
    assert list(sections)[:2] == ["summary", "gate"]  # the pass rate, then the funnel
    gate = sections["gate"]
    assert _filled(gate) and len(gate["svgs"]) == 1 and gate["svgs"][0][1] > 100  # the funnel
    assert "16 rows" in gate["text"]
    assert _filled(sections["judges"]) and sections["judges"]["tables"][0] == 1
    assert _filled(sections["distributions"]) and len(sections["distributions"]["svgs"]) >= 1


def _evaluate_rows(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            answer = f"city {i % 9}"
            fh.write(
                json.dumps(
                    {
                        "id": f"q{i}",
                        "prompt": f"Which city is number {i % 9}?",
                        "response": json.dumps({"answer": answer}) if i % 3 == 0 else f"It is {answer}, I think.",
                        "reference": answer,
                        "context": f"Policy {i % 4}: city number {i % 9} is {answer}.",
                        "baseline_model_response": f"Maybe {answer}.",
                    }
                )
                + "\n"
            )


def test_evaluate_report(browser, tmp_path):
    _evaluate_rows(tmp_path / "rows.jsonl", 60)
    (tmp_path / "spec.yaml").write_text(
        "metrics:\n"
        "  - exact_match\n  - bleu\n  - rougeLsum\n"
        "  - {metric: json_valid, name: answer_json, schema: {type: object, required: [answer]}}\n"
        "  - pointwise: claims\n"
        '    template: "Policy: {context}\\nQuestion: {prompt}\\nAnswer: {response}"\n'
        '    system_instruction: "You are an expert claims auditor."\n'
        "  - GROUNDING\n"
        "  - {pairwise: preference, flip: both}\n"
    )
    report = tmp_path / "evaluate.html"
    with JudgeServer(responder=evaluate_responder) as server:
        args = ["evaluate", "--input", str(tmp_path / "rows.jsonl"), "--spec", str(tmp_path / "spec.yaml")]
        args += ["--model", "openai:judge", "--base-url", server.url, "--bootstrap", "100", "--quiet"]
        args += ["--out", str(tmp_path / "rows.parquet"), "--report", str(report)]
        assert main(args) == 0
    sections = look_at(browser, report, _shots_dir(tmp_path) / "evaluate.png")
    assert list(sections)[0] == "summary"
    summary = sections["summary"]
    assert _filled(summary) and 7 in summary["tables"]  # one score row per metric
    distributions = sections["distributions"]
    assert _filled(distributions) and len(distributions["svgs"]) >= 6
    judges = sections["judges"]
    assert _filled(judges) and judges["tables"][0] == 3  # claims, GROUNDING, preference
    assert "calls" in judges["text"]
    worst = sections["worst"]
    assert _filled(worst) and worst["cards"] >= 10 and "explanation" in worst["text"]
