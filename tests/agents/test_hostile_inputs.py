"""Hostile inputs through ``respeval score --metrics trajectory_...`` and ``respeval agent``:
every bad row or case is an error naming the file, the row (or case and invocation) and
what to do, or, under ``--on-error record``, a recorded row or NOT_EVALUATED case; never a
traceback, never a silently dropped row."""

from __future__ import annotations

import json

import pytest

from respeval.cli.app import main

CALL = [{"tool_name": "a", "tool_input": {"x": 1}}]


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _no_traceback(err: str) -> None:
    assert "Traceback" not in err and "internal error" not in err, err


def test_a_jsonl_line_nested_deeper_than_the_decoder_goes_is_a_named_bad_row(capsys, tmp_path):
    """A trajectory nested thousands of levels deep makes ``json.loads`` give up
    (RecursionError); that is one bad line, not a crash of the whole run."""
    deep = '{"id": 2, "predicted": [{"tool_name": "a", "tool_input": {"x": %s}}], "reference": []}' % _deep(5000)
    good = json.dumps({"id": 1, "predicted": CALL, "reference": CALL})
    path = tmp_path / "deep.jsonl"
    path.write_text(good + "\n" + deep + "\n" + good.replace('"id": 1', '"id": 3') + "\n")
    argv = ["score", "--pred", str(path), "--pred-field", "predicted", "--ref-field", "reference", "--quiet"]
    argv += ["--id-field", "id", "--metrics", "trajectory_precision"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert f"{path}:2" in err and "nested" in err
    out = tmp_path / "out.jsonl"
    assert main([*argv, "--on-error", "record", "--out", str(out)]) == 0
    _no_traceback(capsys.readouterr().err)
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["1", "3"]
    (error,) = [json.loads(x) for x in (tmp_path / "out.jsonl.errors.jsonl").read_text().splitlines()]
    assert (error["file"], error["line"]) == (str(path), 2) and "nested" in error["reason"]


def test_an_eval_file_nested_deeper_than_the_decoder_goes_is_named(capsys, tmp_path):
    args = '{"x": %s}' % _deep(5000)
    text = (
        '{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{"user_content": '
        '{"parts": [{"text": "q"}]}, "intermediate_data": {"tool_uses": [{"name": "a", "args": %s}]}}]}]}' % args
    )
    path = tmp_path / "deep.evalset.json"
    path.write_text(text)
    assert main(["agent", "--expected", str(path), "--actual", str(path)]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert str(path) in err and "nested" in err


# --- respeval agent: bad actual and expected files ------------------------------------------


def _invocation(text: str, calls: list) -> dict:
    return {
        "user_content": {"parts": [{"text": "q"}]},
        "final_response": {"parts": [{"text": text}]},
        "intermediate_data": {"tool_uses": calls},
    }


def _golden() -> dict:
    return {
        "eval_set_id": "s",
        "eval_cases": [
            {
                "eval_id": "c1",
                "conversation": [_invocation("It is sunny", [{"name": "get", "args": {"city": "Oslo"}}])],
            },
            {
                "eval_id": "c2",
                "conversation": [
                    _invocation("ok", []),
                    _invocation("done", [{"name": "set", "args": {"v": 1}}]),
                ],
            },
        ],
    }


def _write(path, data) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def _bad_call(args) -> dict:
    data = _golden()
    data["eval_cases"][1]["conversation"][1]["intermediate_data"]["tool_uses"][0]["args"] = args
    return data


def test_a_non_utf8_actual_file_is_named(capsys, tmp_path):
    gold = _write(tmp_path / "gold.evalset.json", _golden())
    bad = tmp_path / "run.evalset.json"
    bad.write_bytes(json.dumps(_golden()).replace("Oslo", "Osl\\u00f8").encode().replace(b"\\u00f8", b"\xf8"))
    assert main(["agent", "--expected", gold, "--actual", str(bad)]) == 1
    err = capsys.readouterr().err
    _no_traceback(err)
    assert str(bad) in err and "UTF-8" in err


def test_a_length_mismatch_names_the_run_file_and_what_to_do(capsys, tmp_path):
    gold = _write(tmp_path / "gold.evalset.json", _golden())
    short = _golden()
    short["eval_cases"][1]["conversation"].pop()
    run2 = _write(tmp_path / "run2.evalset.json", short)
    assert main(["agent", "--expected", gold, "--actual", gold, "--actual", run2]) == 1
    err = capsys.readouterr().err
    assert run2 in err and "eval case 'c2'" in err and "1 actual invocations but 2 expected" in err
    assert "--on-error record" in err


def test_malformed_calls_under_on_error_record_are_recorded_cases_not_a_stopped_run(capsys, tmp_path):
    """``--on-error record`` promises: a case that cannot be scored (counts differ,
    malformed calls) is recorded NOT_EVALUATED with its reason; the other cases are scored."""
    gold = _write(tmp_path / "gold.evalset.json", _golden())
    for args in ([1, 2], 3, "x=1"):
        bad = _write(tmp_path / "bad.evalset.json", _bad_call(args))
        for expected, actual in ((gold, bad), (bad, gold)):
            argv = ["agent", "--expected", expected, "--actual", actual, "--json"]
            assert main(argv) == 1
            err = capsys.readouterr().err
            assert bad in err and "eval case 'c2'" in err and "invocation 1" in err and "args" in err
            assert main([*argv, "--on-error", "record"]) == 2, (args, expected == bad)
            data = json.loads(capsys.readouterr().out)
            (run,) = data["runs"]
            cases = {c["eval_id"]: c for c in run["cases"]}
            assert cases["c1"]["status"] == "PASSED"
            assert cases["c2"]["status"] == "NOT_EVALUATED"
            for m in cases["c2"]["metrics"]:
                assert bad in m["reason"] and "invocation 1" in m["reason"] and "args" in m["reason"]
            assert (run["passed"], run["failed"]) == (1, 1)  # recorded, not dropped


def test_a_call_the_metrics_cannot_read_under_on_error_record_is_recorded(capsys, tmp_path):
    """Arguments nested past the metrics' limit load fine but cannot be scored: the case is
    NOT_EVALUATED with the reason, and the trajectory diagnostics leave its invocation out,
    saying so, instead of stopping the run with an error naming a bare row number."""
    deep: object = 1
    for _ in range(150):
        deep = [deep]
    gold = _write(tmp_path / "gold.evalset.json", _bad_call({"v": deep}))
    argv = ["agent", "--expected", gold, "--actual", gold]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "eval case 'c2', invocation 1" in err and "row 0" not in err
    assert main([*argv, "--on-error", "record"]) == 0  # ADK's rule: a NOT_EVALUATED metric does not fail a case
    out = capsys.readouterr().out
    assert "tool_trajectory_avg_score[EXACT]: eval case 'c2', invocation 1" in out
    assert "run 1, c2, invocation 1" in out  # named among the invocations the diagnostics left out
    assert main([*argv, "--on-error", "record", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    c2 = data["runs"][0]["cases"][1]
    assert [(m["metric"], m["status"]) for m in c2["metrics"]] == [
        ("tool_trajectory_avg_score[EXACT]", "NOT_EVALUATED"),
        ("response_match_score", "PASSED"),
    ]
    assert data["trajectory"]["invocations"] == 2
    (left_out,) = data["trajectory"]["unscored"]
    assert (left_out["run"], left_out["eval_id"], left_out["invocation"]) == (1, "c2", 1)


def test_a_session_event_with_an_empty_function_call_is_an_error_not_dropped(tmp_path):
    from respeval.agents.loaders import AgentDataError, invocations_from_events

    events = [
        {"invocation_id": "i", "author": "user", "content": {"parts": [{"text": "q"}]}},
        {"invocation_id": "i", "author": "agent", "content": {"parts": [{"function_call": {}}]}},
    ]
    with pytest.raises(AgentDataError, match="invocation 0.*function_call has no tool name"):
        invocations_from_events(events, "s.session.json")


# --- respeval score: a system none of whose rows scored -------------------------------------


def test_a_system_whose_every_row_is_bad_reports_no_value_not_zero(capsys, tmp_path):
    """Every row's tool_input is a list: nothing scores, so the corpus value is undefined;
    printing 0.0000 (and "values": 0.0 in --json) would read as a real, terrible score."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "lists.parquet"
    pq.write_table(
        pa.table(
            {
                "predicted": pa.array(
                    [[{"tool_name": "a", "tool_input": [1, 2]}], [{"tool_name": "a", "tool_input": [3]}]]
                ),
                "reference": pa.array([CALL, CALL]),
            }
        ),
        path,
    )
    argv = ["score", "--pred", str(path), "--pred-field", "predicted", "--ref-field", "reference", "--quiet"]
    argv += ["--metrics", "trajectory_precision", "--on-error", "record", "--errors", str(tmp_path / "e.jsonl")]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rows_scored"] == 0 and data["rows_failed"] == 2
    for system in data["systems"]:
        assert system["rows"] == 0
        assert all(v is None for v in system["values"].values()), system["values"]
    report = tmp_path / "report.html"
    assert main([*argv, "--report", str(report)]) == 0
    assert "0.0000" not in capsys.readouterr().out
    assert report.is_file()


def test_a_bad_row_that_stops_a_run_says_how_to_go_on(capsys, tmp_path):
    """``--on-error fail`` (the default) stops at the first bad row: the message names the
    file, line and field, and says how to score the other rows instead."""
    path = tmp_path / "rows.jsonl"
    path.write_text(
        json.dumps({"predicted": CALL, "reference": CALL})
        + "\n"
        + json.dumps({"predicted": [{"tool_name": "a", "tool_input": [1]}], "reference": CALL})
        + "\n"
    )
    argv = ["score", "--pred", str(path), "--pred-field", "predicted", "--ref-field", "reference", "--quiet"]
    assert main([*argv, "--metrics", "trajectory_precision"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2: field 'predicted'" in err and "'tool_input' is a list" in err
    assert "--on-error record" in err
    path.write_text(json.dumps({"predicted": CALL, "reference": CALL}) + "\n" + '{"predicted": [\n')
    assert main([*argv, "--metrics", "trajectory_precision"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2: malformed JSON" in err and "--on-error record" in err


def test_a_directory_of_mixed_files_names_what_it_skips_and_records_what_it_cannot_read(capsys, tmp_path):
    """A run directory with a good eval set, a file that is not JSON, a text file and a
    subdirectory: without --on-error record the broken file stops the run, naming it; with
    it, the file is listed as unreadable and the cases are scored; the entries that are not
    *.json files are named as skipped, not passed over in silence."""
    gold = _write(tmp_path / "gold.evalset.json", _golden())
    run = tmp_path / "run"
    (run / "sub").mkdir(parents=True)
    _write(run / "run.evalset.json", _golden())
    (run / "broken.json").write_text('{"eval_set_id": ')
    (run / "notes.txt").write_text("hello")
    argv = ["agent", "--expected", gold, "--actual", str(run)]
    assert main(argv) == 1
    assert str(run / "broken.json") in capsys.readouterr().err
    assert main([*argv, "--on-error", "record"]) == 0
    out = capsys.readouterr().out
    assert "Tests passed: 2" in out
    assert str(run / "broken.json") in out and "not JSON" in out
    assert "notes.txt" in out and "sub" in out
    assert main([*argv, "--on-error", "record", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (unreadable,) = data["unreadable_files"]
    assert unreadable["file"] == str(run / "broken.json") and "not JSON" in unreadable["reason"]
    assert sorted(data["skipped_entries"]) == sorted([str(run / "notes.txt"), str(run / "sub")])


def test_trajectory_metric_options_reach_score(capsys, tmp_path):
    """``trajectory_single_tool_use`` cannot run without ``tool_name`` and ADK's match type
    is an option: ``respeval score`` takes them as ``--metric-option METRIC.KEY=VALUE``
    (values read as JSON when they parse, else as text), and refuses a bad one by name."""
    rows = tmp_path / "rows.jsonl"
    think = {"tool_name": "think", "tool_input": {}}
    rows.write_text(
        json.dumps({"predicted": [think, *CALL], "reference": CALL})
        + "\n"
        + json.dumps({"predicted": [think], "reference": CALL})
        + "\n"
    )
    argv = ["score", "--pred", str(rows), "--pred-field", "predicted", "--ref-field", "reference", "--quiet"]
    argv += ["--metrics", "trajectory_single_tool_use,tool_trajectory_avg_score"]
    assert main(argv) == 1
    assert "--metric-option trajectory_single_tool_use.tool_name=" in capsys.readouterr().err
    opts = ["--metric-option", "trajectory_single_tool_use.tool_name=a"]
    opts += ["--metric-option", "tool_trajectory_avg_score.match_type=IN_ORDER", "--json"]
    assert main([*argv, *opts]) == 0
    data = json.loads(capsys.readouterr().out)
    values = data["systems"][0]["values"]
    assert values["trajectory_single_tool_use[a]"] == 0.5
    assert values["tool_trajectory_avg_score"] == 0.5  # IN_ORDER: the extra think is allowed
    assert "adk:IN_ORDER" in data["signatures"]["trajectory"]
    bad = ["--metric-option", "tool_trajectory_avg_score.match_type=FUZZY"]
    assert main([*argv, *opts[:2], *bad]) == 1
    assert "FUZZY" in capsys.readouterr().err
    assert main([*argv, "--metric-option", "tool_name=a"]) == 1
    assert "METRIC.KEY=VALUE" in capsys.readouterr().err
    assert main([*argv, *opts[:2], "--metric-option", "trajectory_recall.empty=nan"]) == 1  # not a metric of the run
    assert "'trajectory_recall' is not one of --metric " in capsys.readouterr().err
    assert main([*argv, *opts[:2], "--metric-option", "tool_trajectory_avg_score.bogus=1"]) == 1
    assert "bogus" in capsys.readouterr().err
