"""Hostile inputs through ``respeval score --metrics trajectory_...`` and ``respeval agent``:
every bad row or case is an error naming the file, the row (or case and invocation) and
what to do, or, under ``--on-error record``, a recorded row or NOT_EVALUATED case; never a
traceback, never a silently dropped row."""

from __future__ import annotations

import json

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
