"""A ``python:`` judge function is user code in this process: whatever it does short of ending
the process, the run stops cleanly with its name or goes on, and what it prints never reaches
the command's result stream (issue 28: the siblings of 17, 18 and 21)."""

from __future__ import annotations

import json
import sys

from respeval import judge
from respeval.judge import CallableModel

VERDICT = '{"reasoning": "ok", "score": 1.0, "pass": true}'


def items(n: int) -> list[dict]:
    return [{"id": str(i), "prompt": "q", "response": "a", "reference": "a"} for i in range(n)]


class Unreadable(Exception):
    def __str__(self):
        raise RuntimeError("no message")


def test_sys_exit_in_a_judge_function_stops_the_run_with_its_name():
    def leaves(request):
        sys.exit(0)

    result = judge.run(items(2), CallableModel(leaves, name="mymod:leaves"), concurrency=1)
    assert result.stop_kind == "error"
    assert "judge function mymod:leaves called sys.exit(0)" in result.stop_reason


def test_an_exception_whose_message_raises_still_names_the_judge():
    def odd(request):
        raise Unreadable

    result = judge.run(items(1), CallableModel(odd, name="mymod:odd"), concurrency=1)
    assert result.stop_kind == "error"
    assert "judge function mymod:odd raised Unreadable (its message could not be read)" in result.stop_reason


def test_a_mapping_that_is_not_json_stops_the_run_with_a_message():
    def huge(request):
        return {"score": 10**5000, "pass": True, "reasoning": "x"}

    result = judge.run(items(1), CallableModel(huge, name="mymod:huge"), concurrency=1)
    assert result.stop_kind == "error" and "returned a mapping that is not JSON data" in result.stop_reason


def test_numpy_values_in_a_returned_mapping_are_read():
    import numpy as np

    result = judge.run(items(1), CallableModel(lambda r: {"score": np.float64(1.0), "pass": np.bool_(True)}))
    assert result.rows[0].status == "scored"


def test_what_a_judge_function_prints_goes_to_stderr(capsys):
    async def chatty(request):
        print("the judge function speaks")
        return VERDICT

    judge.run(items(3), CallableModel(chatty), concurrency=2)
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("the judge function speaks") == 3


def test_judge_json_stays_json_when_the_judge_function_prints(tmp_path, monkeypatch, capsys):
    from respeval.cli import main

    (tmp_path / "noisy_judge.py").write_text(
        f"def judge(request):\n    print('noise on stdout')\n    return {VERDICT!r}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in items(2)))
    status = main(
        ["judge", "--input", str(rows), "--model", "python:noisy_judge:judge", "--no-cache", "--json", "--quiet",
         "--out", str(tmp_path / "out.jsonl")]
    )  # fmt: skip
    out = capsys.readouterr()
    assert status == 0, out.err
    assert json.loads(out.out)["rows"] == 2 and "noise on stdout" in out.err
