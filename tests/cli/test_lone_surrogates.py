"""Issue 28.20: a JSONL text holding a lone surrogate (``"\\ud800"``, half of a UTF-16 pair:
valid JSON, but no character) stopped ``evaluate`` (even with ``--on-error record``) and
``judge`` with "'utf-8' codec can't encode" and no file, line or field, while ``score``
scored it.  One rule for every command: the record is a bad row, named with its file, line
and field, under ``--on-error`` like any other bad row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _helpers.cli import run_cli as run
from respeval.io import read_jsonl
from respeval.io.errors import InputError


def rows(path: Path, bad_line: str) -> Path:
    good = [
        json.dumps({"id": f"q{i}", "prompt": f"Q{i}?", "reference": f"A{i}.", "response": f"A{i}."}) for i in range(3)
    ]
    path.write_text("\n".join([good[0], bad_line, *good[1:]]) + "\n", encoding="utf-8")
    return path


LONE = '{"id": "bad", "prompt": "Q?", "reference": "A.", "response": "A \\ud800 B"}'
COMMANDS = {
    "score": ["score", "--metrics", "rouge1", "--bootstrap", "0", "--quiet", "--pred"],
    "evaluate": ["evaluate", "--metric", "exact_match", "--quiet", "--input"],
    "judge": ["judge", "--model", "fake:", "--quiet", "--input"],
    "gate": ["gate", "--input"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_names_the_row_and_stops(tmp_path, capsys, command):
    data = rows(tmp_path / "rows.jsonl", LONE)
    code, _, err = run(capsys, *COMMANDS[command], str(data))
    assert code == 1, err
    assert f"{data}:2: field 'response': " in err and "lone surrogate \\ud800" in err, err
    assert "codec" not in err


@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_on_error_record_writes_the_row_and_scores_the_others(tmp_path, capsys, command):
    data = rows(tmp_path / "rows.jsonl", LONE)
    out = tmp_path / "out.jsonl"
    code, _, err = run(capsys, *COMMANDS[command], str(data), "--out", str(out), "--on-error", "record")
    assert code == 0, err
    assert len(out.read_text().splitlines()) == 3
    (error,) = [json.loads(x) for x in Path(f"{out}.errors.jsonl").read_text().splitlines()]
    assert "lone surrogate" in json.dumps(error) and "response" in json.dumps(error), error


def test_a_nested_surrogate_and_one_in_a_key_are_named(tmp_path):
    nested = rows(tmp_path / "n.jsonl", '{"response": "x", "messages": [{"role": "user", "content": "\\udc00"}]}')
    with pytest.raises(
        InputError, match=r"n.jsonl:2: field 'messages': .*messages\[0\]\.content.*lone surrogate \\udc00"
    ):
        list(read_jsonl(nested))
    key = rows(tmp_path / "k.jsonl", '{"response": "x", "a\\ud800": 1}')
    with pytest.raises(InputError, match=r"k.jsonl:2: .*lone surrogate \\ud800"):
        list(read_jsonl(key))


def test_a_surrogate_pair_and_a_written_backslash_u_are_text(tmp_path):
    """A pair escapes one character (an emoji); ``\\\\ud800`` is a backslash and letters."""
    data = rows(tmp_path / "ok.jsonl", '{"response": "\\ud83d\\ude00 and \\\\ud800", "reference": "r"}')
    assert [r["response"] for _, r in read_jsonl(data)][1] == "\U0001f600 and \\ud800"


def test_the_same_rule_for_adk_eval_sets(tmp_path):
    from respeval.agents.loaders import AgentDataError, read_json

    evalset = tmp_path / "e.evalset.json"
    evalset.write_text('{"eval_set_id": "s", "eval_cases": [{"eval_id": "c\\ud800"}]}', encoding="utf-8")
    with pytest.raises(AgentDataError, match=r"e.evalset.json: at eval_cases\[0\]\.eval_id: .*lone surrogate \\ud800"):
        read_json(evalset)


def test_the_same_rule_for_in_memory_records():
    from respeval.evaluate import evaluate

    records = [{"response": "a\ud800", "reference": "x"}, {"response": "x", "reference": "x"}]
    with pytest.raises(ValueError, match=r"dataset row 0: field 'response': text holds a lone surrogate \\ud800"):
        evaluate(records, ["exact_match"])
    result = evaluate(records, ["exact_match"], on_error="skip")
    assert result.table.num_rows == 1 and result.table.column("row").to_pylist() == [1]
