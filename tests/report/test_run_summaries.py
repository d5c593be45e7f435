"""One run summary for every command: ``score``, ``judge`` (every method), ``gate``,
``evaluate`` and ``validate`` each write the one schema with ``--summary-out`` and the HTML
report with ``--report FILE``; ``respeval report`` renders the summary and the command's
``--json`` output alike."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from _helpers.paths import ROOT
from respeval import report as rep
from respeval.cli import main

SCRIPTED = "python:docs.examples.scripted_judge:judge"


@pytest.fixture
def docs(tmp_path, monkeypatch):
    """The docs' examples and their scripted judge, importable, in a scratch directory."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "docs" or m.startswith("docs.")]:
        monkeypatch.delitem(sys.modules, name)
    return tmp_path / "docs" / "examples"


def run_with_outputs(capsys, tmp_path: Path, name: str, argv: list[str]) -> tuple[dict[str, Any], str, Any]:
    """Run a command with --summary-out, --report and --json; returns the summary, the
    report's HTML and the --json output, after checking that `respeval report` renders the
    summary and the --json output."""
    summary_path, report_path = tmp_path / f"{name}.summary.json", tmp_path / f"{name}.html"
    capsys.readouterr()
    status = main([*argv, "--summary-out", str(summary_path), "--report", str(report_path), "--json"])
    captured = capsys.readouterr()
    out = captured.out
    assert status == 0, (out, captured.err)
    printed = json.loads(out[out.index("{") :])
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    rep.check_summary(summary)
    html = report_path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    # the sections the run fills and only those, its command's result first, the run details last
    shown = re.findall(r'<section id="([^"]+)">', html)
    assert shown == [sid for sid, _, _ in rep.present_sections(summary)] and shown[-1] == "run"
    first = next(sid for sid in rep.ORDERS[summary["meta"]["command"]] if sid in shown)
    assert shown[0] == first and not re.search(r'</h2><p class="empty">', html)  # no section holds only a note
    # `respeval report` renders both the summary and what --json printed
    (tmp_path / f"{name}.stdout.json").write_text(json.dumps(printed))
    for source in (summary_path, tmp_path / f"{name}.stdout.json"):
        again = tmp_path / f"{name}.again.html"
        assert main(["report", str(source), "--out", str(again)]) == 0
        assert rep.SCHEMA not in again.read_text() and "<section" in again.read_text()
    return summary, html, printed


def test_score_writes_the_run_summary(tmp_path, capsys):
    refs = tmp_path / "refs.txt"
    refs.write_text("the cat sat on the mat\nit is raining today\na quick brown fox\n")
    (tmp_path / "a.txt").write_text("the cat sat on a mat\nit rains today\na quick fox\n")
    (tmp_path / "b.txt").write_text("a cat on the mat\nit is raining\nthe brown fox\n")
    argv = ["score", "--pred", str(tmp_path / "a.txt"), "--pred", str(tmp_path / "b.txt"), "--ref", str(refs)]
    summary, html, printed = run_with_outputs(
        capsys, tmp_path, "score", [*argv, "--compare", "a", "--bootstrap", "50", "--quiet"]
    )
    assert summary["meta"]["command"] == "score"
    assert summary["meta"]["signature: rouge"].startswith("rouge1+rouge2+rougeL")
    assert [t["metric"] for t in summary["systems"]] == printed["fields"]
    assert {r["system"] for r in summary["systems"][0]["rows"]} == {"a", "b"}
    assert summary["comparisons"] and summary["comparisons"][0]["baseline"] == "a"
    assert "Paired comparisons" in html
    assert rep.to_run_summary(printed)["systems"] == summary["systems"]


@pytest.mark.parametrize(
    "method,extra",
    [
        ("pointwise", []),
        ("pointwise", ["--samples", "3"]),
        ("pairwise", []),
        ("rubric", ["--rubric", "RUBRIC"]),
        ("adaptive-rubric", []),
    ],
)
def test_judge_every_method_writes_the_run_summary(method, extra, docs, tmp_path, capsys):
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps([{"id": "answers", "description": "Answers the question.", "importance": "HIGH"}]))
    extra = [str(rubric) if x == "RUBRIC" else x for x in extra]
    data = docs / ("prompt_versions.jsonl" if method == "pairwise" else "rows.jsonl")
    argv = ["judge", "--method", method, "--input", str(data), "--model", SCRIPTED, "--no-cache", "--quiet", *extra]
    summary, html, printed = run_with_outputs(capsys, tmp_path, f"judge-{method}", argv)
    meta = summary["meta"]
    assert meta["command"] == "judge" and meta["method"] == method and meta["judge"] == SCRIPTED
    (judge,) = summary["judges"]
    rows = sum(1 for line in data.read_text().splitlines() if line.strip())
    assert judge["method"] == method and judge["rows"] == rows and judge["coverage"] == pytest.approx(1.0)
    assert judge["pass_rate"] is not None and judge["pass_low"] <= judge["pass_rate"] <= judge["pass_high"]
    assert summary["scores"] and summary["distributions"]
    assert "No LLM judge ran" not in html and "No score distributions" not in html
    worst = summary["worst_rows"]
    assert worst and all(w["texts"].get("response") and w["texts"].get("explanation") for w in worst)
    if method == "pairwise":
        names = [s["metric"] for s in summary["scores"]]
        assert "pairwise candidate win rate" in names and "pairwise position consistency" in names
        outcomes = summary["distributions"][0]["series"][0]["counts"]  # B, A, tie, inconsistent
        assert len(worst) == sum(outcomes[1:]) and all(w["score"] == 0.0 for w in worst[: outcomes[1]])
        assert all(w["texts"].get("baseline_model_response") for w in worst)
    else:
        assert [w["score"] for w in worst] == sorted(w["score"] for w in worst)
        assert len(worst) == min(5, rows)
    # the --json output converts to the same coverage and pass rate
    converted = rep.to_run_summary(printed)["judges"][0]
    assert converted["coverage"] == pytest.approx(judge["coverage"])
    assert converted["pass_rate"] == pytest.approx(judge["pass_rate"])


@pytest.mark.parametrize("method", ["pointwise", "pairwise"])
def test_judge_batch_writes_the_run_summary(method, tmp_path, capsys):
    """--batch (provider batch APIs, faked by the test server) writes the same summary."""
    from _helpers.batch_api import BatchAPI
    from _helpers.judge_server import JudgeServer, default_responder

    rows = [
        {
            "id": f"q{i}",
            "prompt": f"Question {i}?",
            "reference": f"Answer {i}.",
            "response": f"candidate {i}",
            "baseline_model_response": f"baseline {i}",
        }  # fmt: skip
        for i in range(12)
    ]
    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def responder(body):  # always the output shown second: each pair comes out inconsistent (scored)
        if '"winner"' in body["messages"][0]["content"]:
            return json.dumps({"reasoning": "the second", "winner": "b"})
        return default_responder(body)

    with JudgeServer(batch_api=BatchAPI(responder=responder)) as server:
        argv = ["judge", "--method", method, "--input", str(src), "--model", "openai:gpt-4o-mini"]
        argv += ["--base-url", server.url, "--out", str(tmp_path / "out.jsonl"), "--batch", "--batch-poll", "0.02"]
        summary, html, printed = run_with_outputs(capsys, tmp_path, f"batch-{method}", [*argv, "--quiet"])
    (judge,) = summary["judges"]
    assert judge["rows"] == 12 and judge["coverage"] == pytest.approx(1.0)
    if method == "pointwise":
        assert summary["worst_rows"] and all(w["texts"].get("response") for w in summary["worst_rows"])
        assert summary["distributions"][0]["series"][0]["counts"] and "No score distributions" not in html


def test_judge_example_writes_the_run_summary(tmp_path, capsys):
    summary, html, printed = run_with_outputs(capsys, tmp_path, "judge-example", ["judge", "--example"])
    (judge,) = summary["judges"]
    assert judge["method"] == "pairwise" and judge["rows"] == printed["pairs"] == 40
    assert summary["worst_rows"] and all(w["texts"].get("prompt") for w in summary["worst_rows"])


def test_gate_writes_the_run_summary(docs, tmp_path, capsys):
    argv = ["gate", "--input", str(docs / "gate_rows.jsonl"), "--lexical-accept", "0.6", "--lexical-reject", "0.1"]
    summary, html, printed = run_with_outputs(capsys, tmp_path, "gate", [*argv, "--model", SCRIPTED])
    (funnel,) = summary["gate"]
    assert funnel["total"] == 16 and sum(s["settled"] for s in funnel["stages"]) == 16
    assert summary["judges"][0]["rows"] == 1
    rejected = [w for w in summary["worst_rows"]]
    assert len(rejected) == min(5, printed["decisions"]["reject"]) and all(w["texts"] for w in rejected)
    assert "gate decisions by stage" in html
    assert rep.to_run_summary(printed)["gate"] == summary["gate"]


def test_evaluate_writes_the_run_summary(docs, tmp_path, capsys):
    spec = docs / "evaluate" / "spec.yaml"
    argv = ["evaluate", "--input", str(docs / "evaluate" / "rows.jsonl"), "--spec", str(spec)]
    argv += ["--model", "python:my_checks:scripted_judge", "--bootstrap", "50", "--quiet"]
    sys.path.insert(0, str(docs / "evaluate"))
    try:
        summary, html, printed = run_with_outputs(capsys, tmp_path, "evaluate", argv)
    finally:
        sys.path.remove(str(docs / "evaluate"))
    assert printed["row_count"] == 4 and summary["summary_metrics"] == printed
    names = {s["metric"] for s in summary["scores"]}
    assert {"exact_match", "bleu", "claims", "GROUNDING", "preference"} <= names
    assert summary["judges"] and summary["distributions"] and summary["worst_rows"]
    converted = rep.to_run_summary(printed)
    by_name = {s["metric"]: s for s in converted["scores"]}
    for score in summary["scores"]:
        assert by_name[score["metric"]]["mean"] == score["mean"]
        assert by_name[score["metric"]]["coverage"] == score["coverage"]


def test_validate_writes_the_run_summary(tmp_path, capsys):
    rows = [
        {"id": i, "helpfulness/score": 1 + i % 5, "helpfulness/human_rating": 1 + (i + i // 7) % 5} for i in range(40)
    ]
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["validate", "--results", str(results), "--bootstrap", "50"]
    summary, html, printed = run_with_outputs(capsys, tmp_path, "validate", argv)
    assert summary == printed and summary["validation"][0]["metric"] == "helpfulness"
    assert "No judge was validated" not in html


def test_nan_in_a_summary_is_written_as_null(tmp_path):
    summary = rep.new_summary("x")
    summary["scores"] = [{"metric": "m", "mean": float("nan"), "low": float("inf"), "n": 0}]
    rep.write_run_outputs(summary, summary_out=tmp_path / "s.json")
    text = (tmp_path / "s.json").read_text()
    assert "NaN" not in text and "Infinity" not in text and json.loads(text)["scores"][0]["mean"] is None


def test_row_digest_keeps_the_lowest_rows_and_counts_scores():
    digest = rep.RowDigest("m", keep=3)
    for row, score in enumerate([0.5, 1.0, 0.0, 0.5, None, 0.0, 1.0]):
        digest.add(row, score, f"why {row}")
    ranked = rep.RowDigest("pairs", keep=2)
    for row, (score, rank) in enumerate([(1.0, None), (None, 0.5), (0.0, 0.0), (0.5, 2.0)]):
        ranked.add(row, score, rank=rank)
    assert ranked.rows() == [2, 1] and [w["score"] for w in ranked.worst()] == [0.0, None]
    assert digest.rows() == [2, 5, 0]  # lowest first, ties by row
    # 0, 0.5 and 1 are values on a scale, binned; whole numbers (a 1-5 judge scale) are bars
    assert digest.distribution()["kind"] == "numeric" and sum(digest.distribution()["series"][0]["counts"]) == 6
    scale = rep.RowDigest("judge")
    for row, score in enumerate([1, 2, 2, 5, 3]):
        scale.add(row, score)
    assert scale.distribution()["labels"] == ["1", "2", "3", "5"]
    assert scale.distribution()["series"][0]["counts"] == [1, 2, 1, 1]
    worst = digest.worst({2: {"response": "r2"}})
    assert worst[0] == {"metric": "m", "row": 2, "score": 0.0, "texts": {"response": "r2", "explanation": "why 2"}}
    many = rep.RowDigest("m", max_distinct=20)
    for i in range(1000):
        many.add(i, i / 1000)
    hist = many.distribution()
    assert hist["kind"] == "numeric" and sum(hist["series"][0]["counts"]) == 1000


def test_unknown_json_is_named():
    with pytest.raises(ValueError, match="not a run summary"):
        rep.to_run_summary({"hello": 1}, "x.json")
