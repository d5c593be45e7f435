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
    assert "--input" in capsys.readouterr().err
    assert main(["agent", "--example", "--match-type", "FUZZY"]) == 1
    assert "unknown match type" in capsys.readouterr().err


def _tau_rows() -> list[dict]:
    path = shared_data("agents", "tau_bench", "airline_trajectories.jsonl")
    return [json.loads(x) for x in path.read_text().splitlines()]


def _tau_as_json_text(path):
    """The tau-bench rows as JSONL whose response and reference hold the trajectories as JSON text."""
    lines = (
        json.dumps(
            {"response": json.dumps(r["predicted_trajectory"]), "reference": json.dumps(r["reference_trajectory"])}
        )
        for r in _tau_rows()
    )
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_trajectory_metrics_from_json_text_through_score(capsys, tmp_path):
    f = _tau_as_json_text(tmp_path / "t.jsonl")
    assert main(["score", "--pred", str(f), "--metrics", "trajectory_precision,trajectory_recall", "--json"]) == 0
    out = capsys.readouterr().out
    assert "0.17816874466783886" in out and "0.47779040404040407" in out


def test_trajectory_metrics_from_nested_parquet_equal_json_text(capsys, tmp_path):
    """The same tau-bench rows as a Parquet file of nested structs (what pyarrow writes from
    the decoded JSON): each column's struct type is the union of its rows' keys, nested
    ones included, and the scores must still be the JSON text's."""
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    rows = _tau_rows()
    text = _tau_as_json_text(tmp_path / "t.jsonl")
    nested = tmp_path / "t.parquet"
    pq.write_table(
        pa.table(
            {
                "response": pa.array([r["predicted_trajectory"] for r in rows]),
                "reference": pa.array([r["reference_trajectory"] for r in rows]),
            }
        ),
        nested,
    )
    metrics = "trajectory_exact_match,trajectory_precision,trajectory_recall,tool_trajectory_avg_score"
    results = []
    for path in (text, nested):
        out = tmp_path / f"{path.stem}-{path.suffix[1:]}.jsonl"
        assert main(["score", "--pred", str(path), "--metrics", metrics, "--out", str(out), "--json"]) == 0
        capsys.readouterr()
        results.append([json.loads(line) for line in out.read_text().splitlines()])
    assert len(results[0]) == len(rows)
    assert results[0] == results[1]
    assert any(r["trajectory_exact_match"] == 1.0 for r in results[0])


def test_nested_jsonl_read_as_json_text_scores_and_records_errors_as_decoded(capsys, tmp_path, monkeypatch):
    """Nested JSONL (tau-bench as written, trajectories as arrays): `respeval score` hands the
    trajectory metrics each array's JSON text instead of decoding it in Python.  Results and
    the errors file must be those of the decoded read, bad lines among the good ones."""
    import respeval.io.readers as readers

    rows = _tau_rows()
    lines = [
        json.dumps({"id": i, "response": r["predicted_trajectory"], "reference": r["reference_trajectory"]})
        for i, r in enumerate(rows)
    ]
    lines[3] = lines[3].replace('"tool_name"', '"name"', 1)  # a call without its name: the metric's error
    lines[5] = lines[5][:-5]  # truncated: not JSON
    lines[7] = json.dumps({"id": 7, "response": {"not": "a list"}, "reference": []})
    lines[9] = lines[9].replace('"reference"', '"ref"')  # a missing field
    r11 = rows[11]
    lines[11] = json.dumps(  # NaN, which json.loads reads: a line the native checker leaves to it
        {
            "id": 11,
            "note": float("nan"),
            "response": r11["predicted_trajectory"],
            "reference": r11["reference_trajectory"],
        }
    )
    lines[13] = json.dumps(  # UTF-8 inside strings: checked natively
        {
            "id": 13,
            "note": "café",
            "response": rows[13]["predicted_trajectory"],
            "reference": rows[13]["reference_trajectory"],
        },
        ensure_ascii=False,
    )
    path = tmp_path / "tau.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    metrics = "trajectory_exact_match,trajectory_precision,trajectory_recall,tool_trajectory_avg_score"
    outputs = []
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(readers, "_jsonl_columns", lambda fields: None)
        out = tmp_path / f"out-{fast}.jsonl"
        code = main(
            [
                "score",
                "--pred",
                str(path),
                "--metrics",
                metrics,
                "--id-field",
                "id",
                "--out",
                str(out),
                "--on-error",
                "record",
                "--quiet",
            ]
        )
        assert code == 0
        capsys.readouterr()
        errors = (tmp_path / f"out-{fast}.jsonl.errors.jsonl").read_text().splitlines()
        outputs.append((out.read_text().splitlines(), errors))
    assert outputs[0] == outputs[1]
    results, errors = outputs[0]
    assert len(results) == len(rows) - 4 and len(errors) == 4
    assert any(json.loads(r)["trajectory_exact_match"] == 1.0 for r in results)


def test_csv_json_text_is_read_by_the_metrics_and_errors_name_the_file_line_and_field(capsys, tmp_path):
    """CSV columns of JSON text go to the trajectory metrics as text (they parse it
    natively); a value that is not JSON, or not a trajectory, is an error naming the file,
    line and field it came from, the reference file's for a bad reference."""
    import csv

    rows = _tau_rows()[:12]
    preds, refs = tmp_path / "preds.csv", tmp_path / "refs.csv"
    with preds.open("w", newline="") as p, refs.open("w", newline="") as r:
        pw, rw = csv.writer(p), csv.writer(r)
        pw.writerow(["id", "traj"])
        rw.writerow(["traj"])
        for i, row in enumerate(rows):
            pred, ref = json.dumps(row["predicted_trajectory"]), json.dumps(row["reference_trajectory"])
            pw.writerow([i, '{"not": "a list"}' if i == 4 else pred])
            rw.writerow([ref[:-3] if i == 2 else ref])
    out = tmp_path / "out.jsonl"
    metrics = "trajectory_exact_match,trajectory_precision"
    argv = ["score", "--pred", str(preds), "--ref", str(refs), "--pred-field", "traj", "--ref-field", "traj"]
    assert main([*argv, "--id-field", "id", "--metrics", metrics, "--out", str(out), "--on-error", "record"]) == 0
    capsys.readouterr()
    errors = [json.loads(x) for x in (tmp_path / "out.jsonl.errors.jsonl").read_text().splitlines()]
    assert [(e["file"], e["line"], e["field"]) for e in errors] == [(str(refs), 4, "traj"), (str(preds), 6, "traj")]
    assert "not JSON" in errors[0]["reason"] and "expected a list of calls" in errors[1]["reason"]
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"id": i, "response": r["predicted_trajectory"], "reference": r["reference_trajectory"]}) + "\n"
            for i, r in enumerate(rows)
            if i not in (2, 4)
        )
    )
    want = tmp_path / "want.jsonl"
    assert main(["score", "--pred", str(jsonl), "--id-field", "id", "--metrics", metrics, "--out", str(want)]) == 0
    capsys.readouterr()
    strip = lambda path: [{k: v for k, v in json.loads(x).items() if k != "row"} for x in path.read_text().splitlines()]  # noqa: E731
    assert strip(out) == strip(want)


def _judge_responder(body) -> str:
    """A judge on the local server: every answer valid, every rubric met, every sentence
    supported, except an agent answer saying there will be no rain (the example's run 2)."""
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    if "final answer against an expected answer" in system:
        agent = user.split("[AGENT ", 1)[1]
        return json.dumps(
            {"reasoning": "r", "verdict": "invalid" if agent.split("\n")[1].startswith("No rain") else "valid"}
        )
    if "one property at a time" in system:
        ids = [
            line[1 : line.index("]")] for line in user.split("[RUBRICS ", 1)[1].splitlines()[1:] if line.startswith("[")
        ]
        return json.dumps({"verdicts": [{"id": i, "reasoning": "r", "verdict": "yes"} for i in ids]})
    if "numbered sentence" in system:
        body_text = user.split("[SENTENCES ", 1)[1].split("\n", 1)[1]
        n = sum(1 for line in body_text.splitlines() if line.startswith("("))
        return json.dumps({"labels": [{"index": i + 1, "reasoning": "r", "label": "supported"} for i in range(n)]})
    raise AssertionError(system[:60])


def test_judged_metrics_through_the_local_server(capsys, tmp_path):
    from _helpers.judge_server import JudgeServer

    cache = tmp_path / "judge.sqlite"
    with JudgeServer(responder=_judge_responder) as server:
        args = [
            "agent",
            "--example",
            "--json",
            "--judge",
            "openai:judge-m",
            "--judge-base-url",
            server.url,
            "--judge-api-key-env",
            "RESPEVAL_TEST_NO_KEY",
            "--judge-metrics",
            "final_response_match_v2,task_success,hallucinations_v1",
            "--judge-samples",
            "3",
            "--judge-segmenter",
            "rule",
            "--judge-threshold",
            "task_success=0.9",
            "--judge-cache",
            str(cache),
        ]
        code = main(args)
        data = json.loads(capsys.readouterr().out)
        calls = len(server.records)
        assert main(args) == code  # a rerun is answered from the cache
        capsys.readouterr()
        assert len(server.records) == calls
    judged = {
        (run["label"], case["eval_id"]): {m["metric"]: m for m in case["metrics"]}
        for run in data["runs"]
        for case in run["cases"]
    }
    assert all("final_response_match_v2" in m and "hallucinations_v1" in m for m in judged.values())
    assert all(m["task_success"]["threshold"] == 0.9 and m["task_success"]["score"] == 1.0 for m in judged.values())
    assert data["judge"]["samples"] == 3 and data["judge"]["calls"] == calls > 0
    umbrella = sorted(
        (label, m["final_response_match_v2"]) for (label, case), m in judged.items() if "umbrella" in case
    )
    assert [m["score"] for _, m in umbrella] == [1.0, 0.0] and umbrella[1][1]["status"] == "FAILED"
    assert code == 2  # the deterministic failures still fail their cases


def test_judge_options_are_checked(capsys):
    with pytest.raises(SystemExit):
        main(["agent", "--example", "--judge", "fake:", "--judge-samples", "0"])
    assert main(["agent", "--example", "--judge", "fake:", "--judge-metrics", "vibes"]) == 1
    assert "unknown judge metric(s) vibes" in capsys.readouterr().err
    assert main(["agent", "--example", "--judge", "fake:", "--judge-threshold", "task_success"]) == 1
    assert "expected METRIC=X" in capsys.readouterr().err
