"""respeval.report: a self-contained HTML page with every section, from a run summary."""

from __future__ import annotations

import functools
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from respeval import report as rep
from respeval import validate as val
from respeval.cli import main

SECTION_IDS = [sid for sid, _ in rep.SECTIONS]
HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)> "quoted"'


def full_summary() -> dict:
    """A run summary with every kind of content: judges (pointwise with numbers, pairwise with
    both orders), metric correlations, distributions, a gate funnel, systems, disagreements.
    A fresh copy each call (built once)."""
    return json.loads(_full_summary_json())


@functools.lru_cache(maxsize=1)
def _full_summary_json() -> str:
    rng = np.random.default_rng(7)
    human = rng.integers(1, 6, 240)
    judge = np.clip(human + rng.integers(-1, 2, 240), 1, 5)
    responses = ["word " * int(n) for n in rng.integers(3, 120, 240)]
    pointwise = val.validate_pair(
        judge.tolist(),
        human.tolist(),
        name="helpfulness",
        judge_column="helpfulness/score",
        human_column="helpfulness/human_rating",
        texts={"prompt": [HOSTILE] * 240, "response": responses},
        n_boot=200,
        seed=1,
    )
    choices = np.array(["A", "B", "TIE"])
    h = choices[rng.integers(0, 3, 150)]
    j1 = np.where(rng.random(150) < 0.7, h, choices[rng.integers(0, 3, 150)])
    j2 = np.where(rng.random(150) < 0.8, j1, choices[rng.integers(0, 3, 150)])
    pairwise = val.validate_pair(
        j1.tolist(),
        h.tolist(),
        name="preference",
        kind="pairwise",
        swapped=j2.tolist(),
        texts={"response_a": responses[:150], "response_b": responses[90:240]},
        n_boot=200,
        seed=1,
    )
    metric = rng.random(60)
    systems = [f"system-{i % 6}" for i in range(60)]
    corr = val.metric_human_correlation(metric, metric + rng.random(60), systems=systems, level="system")
    summary = rep.validation_summary(
        [pointwise, pairwise], title="Release <1.4> check", meta={"judge": "scripted-fake", "note": HOSTILE}
    )
    summary["created"] = "2026-11-29"
    summary["scores"] = [
        {"metric": "rouge2_f", "mean": 0.21, "low": 0.19, "high": 0.23, "n": 60},
        {"metric": "bleu", "mean": 23.4, "n": 60},
    ]
    summary["correlations"] = [
        rep.correlation_entry(
            "toy system level", corr, metric="ROUGE-2", human="LitePyramid", intervals=corr.bootstrap(50, seed=1)
        )
    ]
    summary["distributions"] = [
        {"name": "judge latency (s)", "values": rng.gamma(2, 0.5, 300).tolist()},
        {
            "name": "verdicts",
            "kind": "categorical",
            "labels": ["A", "B", "TIE"],
            "series": [{"name": "judge", "counts": [40, 50, 10]}],
        },
    ]
    summary["gate"] = [
        {
            "name": "release gate",
            "total": 1000,
            "stages": [
                {"stage": "exact", "settled": 420},
                {"stage": "lexical", "settled": 300},
                {"stage": "judge", "settled": 250},
            ],
        }
    ]
    summary["systems"] = [rep.system_table("rouge2_f", metric, systems, n_boot=200, seed=1)]
    summary["disagreements"] = [
        {"metric": "extra", "row": 3, "judge": "pass", "human": "fail", "gap": 1, "texts": {"response": HOSTILE}}
    ]
    return json.dumps(summary, allow_nan=False)


class _Resources(HTMLParser):
    """Every attribute that could make a browser load something, and every script tag."""

    ATTRS = frozenset({"src", "href", "srcset", "action", "poster", "data", "xlink:href", "formaction", "background"})

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.scripts = 0
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.scripts += tag == "script"
        self._in_style = tag == "style"
        self.refs += [v or "" for k, v in attrs if k in self.ATTRS]

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


def external_references(page: str) -> list[str]:
    """References that would leave the file: anything but in-page anchors and data: URLs."""
    parser = _Resources()
    parser.feed(page)
    refs = [r for r in parser.refs if not (r.startswith("#") or r.startswith("data:"))]
    css = " ".join(parser.styles)
    refs += re.findall(r"url\(([^)]*)\)", css) + re.findall(r"@import[^;]*", css)
    return refs + ["<script>"] * parser.scripts


@pytest.fixture(scope="module")
def page() -> str:
    """The rendered page of :func:`full_summary`."""
    return rep.render_html(full_summary())


def test_page_is_self_contained(page):
    assert external_references(page) == []
    assert "http://" not in page and "https://" not in page and "//" not in page.replace("<!DOCTYPE", "")
    assert "default-src 'none'" in page  # the browser is told to load nothing either


# the sections full_summary() fills (no command: the default order, the run details last)
FILLED = [
    "summary",
    "systems",
    "agreement",
    "confusion",
    "correlations",
    "gate",
    "distributions",
    "disagreements",
    "run",
]


def section_ids(page: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)">', page)


def test_page_holds_only_the_filled_sections_in_order(page):
    assert section_ids(page) == FILLED
    nav = page.split("<nav>", 1)[1].split("</nav>", 1)[0]
    assert re.findall(r'href="#([^"]+)"', nav) == FILLED  # no link to a section the run lacks
    assert "No agent evaluation" not in page and "No per-row scores" not in page and 'class="empty"' not in page


def test_each_command_puts_its_result_first():
    for command, order in rep.ORDERS.items():
        summary = full_summary()
        summary["meta"]["command"] = command
        ids = section_ids(rep.render_html(summary))
        assert ids[-1] == "run" and sorted(ids) == sorted(FILLED)
        listed = [sid for sid in order if sid in ids and sid != "run"]
        assert ids[: len(listed)] == listed, (command, ids)  # the command's own sections first, in its order


def test_page_content(page):
    assert "<title>Release &lt;1.4&gt; check</title>" in page
    assert page.count("<svg") >= 8  # 2 heatmaps, 4 histograms, scatter, funnel, forest
    for text in (
        "support-weighted F1",
        "balanced accuracy",
        "Cohen's kappa (quadratic)",
        "Kendall tau-b",
        "position consistency",
        "flip rate",
        "tie rate",
        "Verbosity probe",
        "release gate",
        "unsettled",
        "system-5",
        "judge latency (s)",
        "toy system level",
        "rouge2_f",
    ):
        assert text in page, text
    assert "balanced F1" not in page.replace("“balanced F1”", "")  # only ever named as a misnomer


def test_untrusted_text_is_escaped(page):
    assert '<script>alert("x")</script>' not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page


def test_empty_summary_shows_only_what_ran():
    page = rep.render_html(rep.new_summary())
    assert section_ids(page) == ["run"]  # the meta table: respeval's version
    assert "respeval" in page.split('<section id="run">')[1].split("</section>")[0]
    assert external_references(page) == []
    nothing = rep.render_html({"schema": rep.SCHEMA})
    assert section_ids(nothing) == ["summary"] and "holds no results" in nothing


def test_check_summary_names_the_problem():
    with pytest.raises(ValueError, match="'schema' must be"):
        rep.check_summary({"schema": "other"})
    with pytest.raises(ValueError, match="'gate' must be a list"):
        rep.check_summary({"schema": rep.SCHEMA, "gate": {"total": 3}})
    with pytest.raises(ValueError, match=r"systems\[0\] needs a 'rows' list"):
        rep.check_summary({"schema": rep.SCHEMA, "systems": [{"metric": "x"}]})
    with pytest.raises(ValueError, match=r"gate\[0\] needs 'total'"):
        rep.check_summary({"schema": rep.SCHEMA, "gate": [{"stages": []}]})


def test_merge_and_load_summaries(tmp_path):
    a, b = full_summary(), rep.new_summary("second", {"run": "b"})
    b["gate"] = [{"name": "second gate", "total": 10, "stages": [{"stage": "exact", "settled": 10}]}]
    merged = rep.merge_summaries([a, b])
    # several runs stay several runs: nothing of one is mixed into, or overwritten by, another
    assert [r["title"] for r in merged["runs"]] == [a["title"], "second"]
    assert len(merged["runs"][0]["gate"]) == 1 and merged["runs"][1]["meta"]["run"] == "b"
    assert "run" not in merged["runs"][0]["meta"]
    assert rep.runs_of(rep.merge_summaries([merged, b]))[2]["title"] == "second"  # collections flatten
    assert rep.merge_summaries([b]) == b
    run = tmp_path / "run"
    run.mkdir()
    (run / "a.json").write_text(json.dumps(a), encoding="utf-8")
    (run / "b.json").write_text(json.dumps(b), encoding="utf-8")
    (run / "other.json").write_text('{"not": "a summary"}', encoding="utf-8")
    assert [s.get("title") for s in rep.load_summaries([run])] == [a["title"], "second"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no run summary"):
        rep.load_summaries([empty])
    with pytest.raises(ValueError, match=r"runs\[1\]: 'schema' must be"):
        rep.check_summary({"schema": rep.SCHEMA, "runs": [a, {"schema": "x"}]})


def test_system_table_intervals():
    table = rep.system_table(
        "m", [1.0, 2.0, 3.0, 10.0, 10.0, 10.0, 5.0], ["a", "a", "a", "b", "b", "b", "c"], n_boot=300, seed=2
    )
    rows = {r["system"]: r for r in table["rows"]}
    assert rows["a"]["mean"] == 2.0 and rows["a"]["low"] < 2.0 < rows["a"]["high"]
    assert rows["b"]["low"] == rows["b"]["high"] == 10.0
    assert rows["c"]["low"] is None and rows["c"]["n"] == 1  # one row: no interval


def test_report_command_prints_where_the_report_is(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps(full_summary()), encoding="utf-8")
    table = tmp_path / "judged.jsonl"
    table.write_text(
        "".join(json.dumps({"q/score": s, "q/human_rating": h}) + "\n" for s, h in [(1, 1), (2, 3), (3, 3), (5, 4)]),
        encoding="utf-8",
    )
    out = tmp_path / "out" / "report.html"
    assert main(["report", str(run), str(table), "--out", str(out), "--title", "Two inputs", "--bootstrap", "50"]) == 0
    printed = capsys.readouterr().out
    assert printed == f"report: {out.resolve()}\n"
    page = out.read_text(encoding="utf-8")
    assert "<title>Two inputs</title>" in page and ">q <span" in page and ">helpfulness <span" in page
    assert main(["report", str(tmp_path / "absent.json"), "--out", str(out)]) == 1
    assert "no such file or directory" in capsys.readouterr().err.lower()


def test_write_report_returns_the_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = rep.write_report([rep.new_summary("a"), rep.new_summary("b")], Path("r.html"))
    assert path == tmp_path / "r.html" and path.is_absolute()
