"""``respeval compare`` on the command line: the Interface spellings, both input modes, --help
with examples, bad input named with exit 1, --fail-on, JUnit, the run summary and the report."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from _helpers.compare_sim import responses
from respeval.cli import main
from respeval.report import load_summaries, render_html, to_run_summary


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def table(tmp_path):
    return write_jsonl(tmp_path / "responses.jsonl", responses(300, "regression", seed=3))


def test_help_has_examples_and_the_exit_codes():
    done = subprocess.run(
        [sys.executable, "-m", "respeval", "compare", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    for text in (
        "--baseline-file",
        "--until-decided",
        "--fail-on",
        "examples:",
        "exit status:",
        "respeval compare --input",
    ):
        assert text in done.stdout
    listing = subprocess.run([sys.executable, "-m", "respeval", "--help"], capture_output=True, text=True, timeout=60)
    assert "compare" in listing.stdout


def test_the_interface_spelling_prints_the_json_the_issue_names(table, capsys):
    code = main(
        [
            "compare", "--input", str(table), "--baseline", "baseline", "--candidate", "candidate",
            "--metrics", "exact_match,rouge1", "--ref-field", "expected", "--json",
        ]
    )  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["decision"] == "regressed" and data["cases"] == 300
    em = data["metrics"][0]
    assert (em["metric"], em["test"], em["decision"]) == ("exact_match", "mcnemar_exact", "regressed")
    assert em["difference"]["low"] < em["difference"]["value"] < em["difference"]["high"]
    assert isinstance(em["statistic"], float) and 0 <= em["p_value"] <= em["p_holm"] <= 1


def test_two_files_and_fail_on_change(tmp_path, capsys):
    rows = responses(100, "identical", seed=4)
    base = write_jsonl(tmp_path / "old.jsonl", [r for r in rows if r["system"] == "baseline"])
    cand = write_jsonl(tmp_path / "new.jsonl", [r for r in rows if r["system"] == "candidate"])
    args = ["compare", "--baseline-file", str(base), "--candidate-file", str(cand), "--metrics", "exact_match"]
    args += ["--ref-field", "expected", "--baseline", "v1", "--candidate", "v2"]
    assert main([*args, "--fail-on", "change"]) == 0
    out = capsys.readouterr().out
    assert "v2 vs v1: 100 paired cases" in out and "decision: no significant change" in out


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "nothing to compare: give --metric"),
        (["--metrics", "exact_match", "--candidate", "nope"], "no row has system 'nope'"),
        (["--metrics", "exact_match", "--until-decided"], "--until-decided judges until the decision is known"),
        (["--metrics", "exact_match", "--cache", "x.sqlite"], "--cache configure the judge: give --model MODEL"),
        (["--metrics", "rouge1", "--ref-field", "missing_column"], "field 'missing_column': missing"),
        (["--metrics", "exact_match", "--judge", "nope:x"], "unknown provider 'nope'"),
    ],
)
def test_bad_input_is_named_with_exit_1(table, capsys, extra, message):
    assert main(["compare", "--input", str(table), "--ref-field", "expected", *extra]) == 1
    assert message in capsys.readouterr().err


def test_the_input_modes_do_not_mix(table, capsys):
    assert main(["compare", "--input", str(table), "--baseline-file", str(table), "--metrics", "em"]) == 1
    assert "give --input" in capsys.readouterr().err
    assert main(["compare", "--metrics", "exact_match"]) == 1
    assert "nothing to read" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["compare", "--input", str(table), "--metrics", "no_such_metric"])
    assert exc.value.code == 1


def test_junit_summary_and_report(table, tmp_path, capsys):
    junit, summary, report = tmp_path / "c.xml", tmp_path / "summary.json", tmp_path / "report.html"
    code = main(
        [
            "compare", "--input", str(table), "--metrics", "exact_match,chrf", "--ref-field", "expected",
            "--judge", "python:_helpers.compare_sim:judge", "--until-decided", "--fail-on", "regression",
            "--junit", str(junit), "--summary-out", str(summary), "--report", str(report), "--json",
        ]
    )  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert code == 2
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {"exact_match", "chrf", "judge", "overall"}
    assert cases["overall"].find("failure") is not None
    assert cases["exact_match"].find("properties/property[@name='decision']").get("value") == "regressed"
    (loaded,) = load_summaries([summary])
    entry = loaded["compare"][0]
    assert entry["decision"] == "regressed" and [m["metric"] for m in entry["metrics"]] == [
        "exact_match",
        "chrf",
        "judge",
    ]
    assert entry["judge"]["sequential"]["cases_total"] == 300 and loaded["judges"][0]["method"] == "pairwise"
    assert to_run_summary(data)["compare"][0]["metrics"] == entry["metrics"]
    html = report.read_text(encoding="utf-8")
    assert 'id="compare"' in html and "candidate − baseline" in html and "Flipped cases" in html
    assert html.count('stroke-dasharray="4 3"') == 2  # one forest per scale: [0, 1] and chrF's 0-100
    assert render_html(loaded) == html


def test_the_report_command_renders_compare_json(table, tmp_path, capsys):
    main(["compare", "--input", str(table), "--metrics", "exact_match", "--ref-field", "expected", "--json"])
    out = tmp_path / "compare.json"
    out.write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["report", str(out), "--out", str(tmp_path / "r.html")]) == 0
    assert "Baseline vs candidate" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_a_judge_budget_stop_exits_4_with_the_comparison_printed(table, tmp_path, capsys):
    code = main(
        [
            "compare", "--input", str(table), "--metrics", "exact_match", "--ref-field", "expected",
            "--judge", "python:_helpers.compare_sim:judge", "--budget-calls", "20", "--concurrency", "1",
        ]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 4 and "the judge stopped" in err and "budget" in err
    assert "STOPPED" in out and "exact_match" in out
