"""Every ``$ respeval ...`` command in docs/efficiency.md runs as written and exits 0, and the
numbers the page states are the ones the command computes."""

from __future__ import annotations

import json
import shlex
import shutil

from _helpers.paths import ROOT
from respeval.cli import main

DOC = ROOT / "docs" / "efficiency.md"
COMMANDS = [line[2:] for line in DOC.read_text().splitlines() if line.startswith("$ respeval ")]


def test_doc_commands_run(tmp_path, monkeypatch, capsys):
    assert len(COMMANDS) >= 3
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    for command in COMMANDS:
        status = main(shlex.split(command)[1:])
        out = capsys.readouterr()
        assert status == 0, (command, out.err)
    assert (tmp_path / "efficiency_cases.csv").read_text().count("\n") == 7  # header + 6 rows


def test_the_stated_session_numbers(capsys):
    session = ROOT / "docs" / "examples" / "efficiency" / "weather.session.json"
    prices = session.parent / "prices.json"
    assert main(["efficiency", str(session), "--prices", str(prices), "--json"]) == 0
    case = json.loads(capsys.readouterr().out)["per_case"][0]
    assert (case["tool_calls"], case["model_calls"], case["tokens_in"], case["tokens_out"]) == (3, 5, 2572, 135)
    assert [i["tool_call_count"] for i in case["invocations"]] == [1.0, 2.0] and case["tool_call_count"] == 1.5
    assert [i["inference_call_count"] for i in case["invocations"]] == [2.0, 3.0]
    assert [i["token_usage"]["total_tokens"] for i in case["invocations"]] == [964, 1743]
    assert case["token_usage"]["total_tokens"] == 1353.5
    assert case["invocation_duration"]["total_seconds"] is None
    assert abs(case["cost_usd"] - (2572 * 0.30 + 135 * 2.50) / 1e6) < 1e-15
    text = DOC.read_text()
    for stated in ("3 tool calls, 5 model calls", "2,572 tokens in", "135 out", "964, 1743; case: 1353.5"):
        assert stated in text
