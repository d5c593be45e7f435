"""``respeval agent`` end to end, and trajectory metrics through ``respeval score``."""

from __future__ import annotations

import json

import pytest

from _helpers.paths import shared_data
from respeval.cli.app import main


def test_example_runs_and_gates(capsys):
    assert main(["agent", "--example"]) == 2  # a case fails in each run: the gate fails, as adk eval does
    out = capsys.readouterr().out
    assert "Tests passed: 2" in out and "pass@2=1.000" in out
    assert "tool_trajectory_avg_score[ANY_ORDER]=0.5000" in out  # weekend_trip, run 1: days=2, not 3
    assert "think" in out  # the extra bookkeeping call shows in the per-tool mistakes


def test_example_json(capsys, tmp_path):
    out_file = tmp_path / "r.json"
    assert main(["agent", "--example", "--json", "--out", str(out_file)]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data == json.loads(out_file.read_text())
    statuses = [[c["status"] for c in run["cases"]] for run in data["runs"]]
    assert statuses == [["PASSED", "FAILED", "PASSED"], ["FAILED", "PASSED", "PASSED"]]
    assert data["repeated_runs"]["pass^k"]["2"] == pytest.approx(1 / 3)
    assert data["trajectory"]["invocations"] == 8


def test_overrides_and_identical_run_passes(capsys):
    from respeval.agents.example import example_paths

    expected, _ = example_paths()
    assert main(["agent", "--expected", str(expected), "--actual", str(expected)]) == 0
    assert "Tests failed: 0" in capsys.readouterr().out
    assert main(["agent", "--example", "--match-type", "in order", "--ignore-args"]) == 0  # names only: all pass
    assert "tool_trajectory_avg_score[IN_ORDER,ignore_args]" in capsys.readouterr().out


def test_session_dump_against_legacy_eval_set(capsys, tmp_path):
    session = shared_data("agents", "adk", "adk-samples", "customer-service", "eval", "sessions", "123.session.json")
    expected = shared_data("agents", "adk", "adk-samples", "customer-service", "eval", "eval_data", "simple.test.json")
    # 11 session invocations against a 2-turn golden: counts differ, ADK raises, so do we...
    assert main(["agent", "--expected", str(expected), "--actual", str(session)]) == 1
    assert "2 expected" in capsys.readouterr().err
    # ... unless asked to record the case and go on
    assert main(["agent", "--expected", str(expected), "--actual", str(session), "--on-error", "record"]) == 2
    assert "NOT_EVALUATED" in capsys.readouterr().out


def test_bad_inputs_exit_1(capsys, tmp_path):
    assert main(["agent", "--expected", str(tmp_path / "nope.json"), "--actual", "x"]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["agent", "--expected", "a.json"]) == 1
    assert "--actual" in capsys.readouterr().err
    assert main(["agent", "--example", "--match-type", "FUZZY"]) == 1
    assert "unknown match type" in capsys.readouterr().err


def test_trajectory_metrics_from_json_text_through_score(capsys, tmp_path):
    rows = [
        json.loads(x) for x in shared_data("agents", "tau_bench", "airline_trajectories.jsonl").read_text().splitlines()
    ]
    f = tmp_path / "t.jsonl"
    f.write_text(
        "".join(
            json.dumps(
                {"response": json.dumps(r["predicted_trajectory"]), "reference": json.dumps(r["reference_trajectory"])}
            )
            + "\n"
            for r in rows
        )
    )
    assert main(["score", "--pred", str(f), "--metrics", "trajectory_precision,trajectory_recall", "--json"]) == 0
    out = capsys.readouterr().out
    assert "0.17816874466783886" in out and "0.47779040404040407" in out
