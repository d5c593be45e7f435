"""The HTML report's "Agents" section: `respeval agent --report`, the run summary it is built
from (mergeable with other runs' summaries), and the per-call detail of the worst rows."""

from __future__ import annotations

import json
import re

import pytest

from respeval.cli.app import main
from respeval.metrics.trajectory import trajectory
from respeval.report import SECTIONS, load_summaries, merge_summaries, render_html
from respeval.report.schema import check_summary

# the native run is skipped with a reason when the core is not built, never left out unsaid


def _section(html: str, sid: str) -> str:
    return re.search(rf'<section id="{sid}">(.*?)</section>', html, re.S).group(1)


def test_agent_report_and_summary(tmp_path, capsys):
    html_path, summary_path = tmp_path / "agent.html", tmp_path / "agent.json"
    assert main(["agent", "--example", "--report", str(html_path), "--summary-out", str(summary_path)]) == 2
    capsys.readouterr()
    html = html_path.read_text()
    section = _section(html, "agents")
    for text in ("umbrella_today", "FAILED", "pass^k", "Per tool: matched, extra and missed calls", "think"):
        assert text in section
    # the worst rows show the calls themselves, with their arguments
    assert "get_forecast" in section and "&quot;days&quot;:3" in section and "&quot;days&quot;:2" in section
    summary = json.loads(summary_path.read_text())
    check_summary(summary)
    (entry,) = summary["agents"]
    assert entry["kind"] == "agent" and entry["trajectory"]["rows"] == 8
    assert {s["metric"] for s in summary["scores"]} >= {"response_match_score", "trajectory_recall"}
    # the summary section lists the metric means as scores
    assert "trajectory_recall" in _section(html, "summary")
    # two runs' summaries make one report holding both runs, each on its own
    merged = merge_summaries(load_summaries([summary_path, summary_path]))
    assert [len(run["agents"]) for run in merged["runs"]] == [1, 1]
    page = render_html(merged)
    for run in ("run-1-", "run-2-"):
        assert _section(page, f"{run}agents").count("Agent eval set weather_assistant") == 1


def test_agent_report_shows_run_paths_as_written(tmp_path, capsys):
    """Issue 28.30: a run's path is shown as it is (no CSS upper-casing /TMP/...)."""
    html_path = tmp_path / "agent.html"
    main(["agent", "--example", "--report", str(html_path)])
    capsys.readouterr()
    html = html_path.read_text()
    assert "weather_run1.evalset.json" in _section(html, "agents")
    assert "text-transform" not in html  # no text of a report is re-cased


def test_agents_section_only_when_there_are_agents():
    assert ("agents", "Agents") in SECTIONS
    html = render_html({"schema": "respeval.run-summary/1"})
    assert 'id="agents"' not in html and "No agent evaluation" not in html


def test_summary_agents_must_be_a_list_of_objects():
    with pytest.raises(ValueError, match="'agents' must be a list"):
        check_summary({"schema": "respeval.run-summary/1", "agents": {"kind": "agent"}})


def test_calls_of_a_row(impl):
    a = {"tool_name": "a", "tool_input": {"x": 1, "y": [True]}}
    b = {"tool_name": "b", "tool_input": None}
    res = trajectory([[a, b, a]], [[a, {"tool_name": "c", "tool_input": {}}]], implementation=impl)
    called, expected = res.calls(0)
    assert called == [("a", '{"x":1,"y":[1]}', True), ("b", "null", False), ("a", '{"x":1,"y":[1]}', False)]
    assert expected == [("a", '{"x":1,"y":[1]}', True), ("c", "{}", False)]
    with pytest.raises(IndexError):
        res.calls(1)


def test_agent_results_hold_each_turn_side_by_side(tmp_path, capsys):
    """Each case of ``respeval agent --out`` holds its turns: the user's text, the expected and
    the actual answer and tool calls, so a viewer can show them side by side."""
    out = tmp_path / "results.json"
    main(["agent", "--example", "--out", str(out)])
    capsys.readouterr()
    data = json.loads(out.read_text())
    case = next(c for c in data["runs"][0]["cases"] if c["eval_id"] == "weekend_trip")
    first = case["turns"][0]
    assert first["user"] == "What is the forecast for Oslo this weekend?"
    assert first["expected_calls"] == [{"name": "get_forecast", "args": {"city": "Oslo", "days": 3}, "id": None}]
    assert first["actual_calls"][0]["args"]["days"] == 2 and first["actual_response"] and first["expected_response"]
    assert all(len(c["turns"]) >= 1 for run in data["runs"] for c in run["cases"])
