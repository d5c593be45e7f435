"""What a newcomer found wrong in the reports (issue 32 point 2, issue 28 points 24 and 30):
each check here failed on the reports before the fix."""

from __future__ import annotations

import json
import re
import shutil
import sys

import pytest

from _helpers.paths import ROOT
from respeval import report as rep
from respeval.cli import main
from respeval.report.svg import svg_forest, wrap_label

SCRIPTED = "python:docs.examples.scripted_judge:judge"
LONG = [f"newstest2017.{name}.{4700 + i}.en-de" for i, name in enumerate(["uedin-nmt", "uedin-nmt-b", "online-B"])]


def _section(page: str, sid: str) -> str:
    match = re.search(rf'<section id="{sid}">(.*?)</section>', page, re.S)
    assert match, f"no section {sid}"
    return match.group(1)


def _labels(svg: str) -> list[str]:
    """The forest plot's labels as drawn: each label's lines joined."""
    return [
        "".join(re.findall(r"<tspan[^>]*>([^<]*)</tspan>", t))
        for t in re.findall(r'<text [^>]*class="label">(.*?)</text>', svg)
    ]


def _score_data(fields=("bleu", "ter")) -> dict:
    """What ``respeval score --json`` prints for three systems compared against the first."""
    systems = [
        {"system": s, "group": None, "rows": 10, "values": {f: 20.0 + i for f in fields}, "intervals": {}}
        for i, s in enumerate(LONG)
    ]
    comparisons = [
        {
            "system": s,
            "baseline": LONG[0],
            "group": None,
            "rows": 10,
            "delta": {"bleu": -1.5, "ter": 5.68},
            "p_value": {"bleu": 0.001, "ter": 0.001},
            "method": "paired approximate randomization",
        }
        for s in LONG[1:]
    ]
    return {
        "rows_total": 30,
        "rows_scored": 30,
        "rows_failed": 0,
        "fields": list(fields),
        "systems": systems,
        "comparisons": comparisons,
        "confidence": 0.95,
        "signatures": {},
    }


def test_forest_labels_are_never_cut():
    rows = [{"system": name, "mean": 1.0 + i, "low": 0.5 + i, "high": 1.5 + i} for i, name in enumerate(LONG)]
    svg = svg_forest(rows, "bleu")
    assert "…" not in svg and _labels(svg) == LONG  # the whole of each name, told apart
    assert wrap_label("x" * 80, 30) == ["x" * 30, "x" * 30, "x" * 20]
    assert "".join(wrap_label("a.b-c_d/e f" * 9, 12)) == "a.b-c_d/e f" * 9


def test_corpus_values_are_called_corpus_and_ter_is_lower_is_better():
    summary = rep.score_run_summary(_score_data())
    assert [(t["metric"], t["statistic"], t["higher_is_better"]) for t in summary["systems"]] == [
        ("bleu", "corpus", True),
        ("ter", "corpus", False),
    ]
    page = rep.render_html(summary)
    systems = _section(page, "systems")
    assert "<th>corpus</th>" in systems and "<th>mean</th>" not in systems
    assert "lower is better" in systems
    single = rep.score_run_summary({**_score_data(), "systems": _score_data()["systems"][:1], "comparisons": []})
    assert all(s.get("mean") is None and s["corpus"] is not None for s in single["scores"])
    assert "<th>corpus</th>" in _section(rep.render_html(single), "summary")


def test_paired_table_names_one_baseline_once_and_says_which_way_is_worse():
    page = rep.render_html(rep.score_run_summary(_score_data()))
    paired = _section(page, "systems").split("<h3>Paired comparisons", 1)[1]
    assert paired.startswith(f" against {LONG[0]}</h3>")
    table = paired.split("<table", 1)[1].split("</table>", 1)[0]
    assert LONG[0] not in table and "<th>baseline</th>" not in table  # not repeated on each row
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1])
    for row in rows:  # BLEU -1.5 and TER +5.68: both worse
        assert "-1.5000" in row and "+5.6800" in row
        assert re.findall(r">(better|worse)<", row) == ["worse", "worse"]
    assert "ter: difference (lower is better)" in table


def test_numeric_scores_are_binned_not_one_category_per_value():
    """BLEU with two distinct row values is a histogram, a 1-5 judge scale is bars."""
    entry = rep.distribution_entry("bleu/score", "bleu", {3.454: 20, 8.392: 40})
    assert entry["kind"] == "numeric" and sum(entry["series"][0]["counts"]) == 60
    assert entry["edges"][0] == 3.454 and entry["edges"][-1] == 8.392
    scale = rep.distribution_entry("claims/score", "claims", {1.0: 3, 2.0: 1, 5.0: 2})
    assert scale["kind"] == "categorical" and scale["labels"] == ["1", "2", "5"]


def test_evaluate_bins_its_computed_scores(tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    with rows.open("w") as fh:
        for i in range(40):
            response = "the cat sat on the mat" if i % 2 else "a dog ran"
            fh.write(json.dumps({"response": response, "reference": "the cat sat on a mat"}) + "\n")
    summary_path = tmp_path / "summary.json"
    args = ["evaluate", "--input", str(rows), "--metric", "bleu", "--metric", "exact_match", "--quiet"]
    assert main([*args, "--bootstrap", "0", "--summary-out", str(summary_path)]) == 0
    capsys.readouterr()
    kinds = {d["name"]: d["kind"] for d in json.loads(summary_path.read_text())["distributions"]}
    assert kinds == {"bleu/score": "numeric", "exact_match/score": "categorical"}


def test_validate_does_not_call_rouge2_a_judge(tmp_path, capsys):
    rows = [
        {"system": f"s{i % 4}", "scores": {"rouge_2_f_score": 0.1 + i / 100, "litepyramid_recall": (i % 7) / 7}}
        for i in range(40)
    ]
    results = tmp_path / "realsumm.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = tmp_path / "report.html"
    args = ["validate", "--results", str(results), "--judge-field", "scores.rouge_2_f_score"]
    args += ["--human-field", "scores.litepyramid_recall", "--bootstrap", "20", "--report", str(report)]
    args += ["--summary-out", str(tmp_path / "summary.json")]
    assert main(args) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("rouge_2_f_score (pointwise metric):") and "metric missing 0" in first
    assert "judge" not in out.replace("judge-field", "")
    page = report.read_text()
    assert "judge" not in page.replace("judge (or metric)", "").replace("judge's (or metric's)", "")
    entry = json.loads((tmp_path / "summary.json").read_text())["validation"][0]
    assert entry["scorer"] == "metric" and entry["metric"] == "rouge_2_f_score"


def test_a_judge_is_still_a_judge(tmp_path, capsys):
    rows = [{"helpfulness/score": 1 + i % 5, "helpfulness/human_rating": 1 + (i + 1) % 5} for i in range(30)]
    results = tmp_path / "judged.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["validate", "--results", str(results), "--bootstrap", "20", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["validation"][0]["scorer"] == "judge"


def test_score_report_shows_the_per_row_scores_it_wrote(tmp_path, capsys):
    """A score run with --out has per-row scores: the report shows their distribution and the
    worst rows with both texts, never "No per-row scores"."""
    refs = tmp_path / "refs.txt"
    refs.write_text("".join(f"the cat number {i} sat on the mat\n" for i in range(30)))
    for name, words in (("sys-a", "the cat number {i} sat on a mat"), ("sys-b", "a dog {i} ran off")):
        (tmp_path / f"{name}.txt").write_text("".join(words.format(i=i) + "\n" for i in range(30)))
    report = tmp_path / "score.html"
    args = ["score", "--pred", str(tmp_path / "sys-a.txt"), "--pred", str(tmp_path / "sys-b.txt"), "--ref", str(refs)]
    args += ["--metrics", "bleu,ter", "--out", str(tmp_path / "rows.parquet"), "--quiet", "--bootstrap", "20"]
    assert main([*args, "--report", str(report), "--summary-out", str(tmp_path / "s.json")]) == 0
    capsys.readouterr()
    page = report.read_text()
    assert "No per-row scores" not in page
    worst = _section(page, "worst")
    assert "system <b>sys-b</b>" in worst and "a dog 0 ran off" in worst and "the cat number 0 sat on the mat" in worst
    summary = json.loads((tmp_path / "s.json").read_text())
    ter = [w for w in summary["worst_rows"] if w["metric"] == "ter"]
    assert ter and all(w["system"] == "sys-b" for w in ter)  # the highest TER are the worst
    series = {s["name"] for d in summary["distributions"] for s in d["series"]}
    assert series == {"sys-a", "sys-b"}  # per-system distributions
    assert summary["inputs"]["ref"] == str(refs.resolve())


@pytest.fixture
def docs(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "docs" or m.startswith("docs.")]:
        monkeypatch.delitem(sys.modules, name)
    return tmp_path / "docs" / "examples"


def test_report_of_five_summaries_keeps_each_run(docs, tmp_path, capsys):
    """Issue 28.24: `respeval report DIR` over five summaries (score, judge, gate, evaluate,
    validate) shows five runs, each with its own summary and rows; nothing mixed or lost."""
    run = tmp_path / "run"
    run.mkdir()
    refs = tmp_path / "refs.txt"
    refs.write_text("the cat sat on the mat\nit is raining today\n")
    (tmp_path / "a.txt").write_text("the cat sat on a mat\nit rains today\n")
    assert (
        main(
            [
                "score",
                "--pred",
                str(tmp_path / "a.txt"),
                "--ref",
                str(refs),
                "--quiet",
                "--bootstrap",
                "0",
                "--summary-out",
                str(run / "1-score.json"),
            ]
        )
        == 0
    )
    assert main(["judge", "--example", "--summary-out", str(run / "2-judge.json")]) == 0
    assert (
        main(
            [
                "gate",
                "--input",
                str(docs / "gate_rows.jsonl"),
                "--lexical-accept",
                "0.6",
                "--lexical-reject",
                "0.1",
                "--model",
                SCRIPTED,
                "--summary-out",
                str(run / "3-gate.json"),
            ]
        )
        == 0
    )
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"response": f"r{i}", "reference": "r1"}) + "\n" for i in range(6)))
    assert (
        main(
            [
                "evaluate",
                "--input",
                str(rows),
                "--metric",
                "exact_match",
                "--quiet",
                "--bootstrap",
                "0",
                "--summary-out",
                str(run / "4-evaluate.json"),
            ]
        )
        == 0
    )
    judged = tmp_path / "judged.jsonl"
    judged.write_text("".join(json.dumps({"q/score": 1 + i % 3, "q/human_rating": 1 + i % 2}) + "\n" for i in range(9)))
    assert main(["validate", "--results", str(judged), "--bootstrap", "0", "--summary-out", str(run / "5-v.json")]) == 0
    out = tmp_path / "merged.html"
    assert main(["report", str(run), "--out", str(out)]) == 0
    capsys.readouterr()
    page = out.read_text()
    runs = re.findall(r'<article class="run" id="(run-\d)">', page)
    assert runs == ["run-1", "run-2", "run-3", "run-4", "run-5"]
    assert re.findall(r'href="#(run-\d)"', page.split("<nav>", 1)[1].split("</nav>", 1)[0]) == runs
    commands = ["score", "judge", "gate", "evaluate", "validate"]
    for i, command in enumerate(commands, 1):
        details = _section(page, f"run-{i}-run")
        assert f"<td>command</td><td>{command}</td>" in details  # each run keeps its own details
    assert "gate pass rate" in _section(page, "run-3-summary") and "16" in _section(page, "run-3-run")
    assert "exact_match" in _section(page, "run-4-summary")
    assert "exact_match" not in _section(page, "run-3-summary")  # not mixed into another run's table
    assert _section(page, "run-3-gate") and _section(page, "run-5-agreement")


def test_score_texts_of_one_file_holding_every_system(tmp_path, capsys):
    """--system-field: predictions and references in one file; the worst rows still show both."""
    rows = tmp_path / "in.jsonl"
    records = [("a", "the cat", "the cat"), ("b", "a dog", "the cat"), ("a", "it rains", "it is raining")]
    rows.write_text("".join(json.dumps({"system": s, "response": p, "reference": r}) + "\n" for s, p, r in records))
    args = [
        "score",
        "--pred",
        str(rows),
        "--system-field",
        "system",
        "--metrics",
        "bleu",
        "--quiet",
        "--bootstrap",
        "0",
    ]
    assert main([*args, "--out", str(tmp_path / "o.parquet"), "--summary-out", str(tmp_path / "s.json")]) == 0
    capsys.readouterr()
    worst = json.loads((tmp_path / "s.json").read_text())["worst_rows"]
    assert worst[0] == {
        "metric": "bleu",
        "row": 1,
        "system": "b",
        "score": 0.0,
        "texts": {"prediction": "a dog", "reference": "the cat"},
    }
