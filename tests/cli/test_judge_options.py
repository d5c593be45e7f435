"""The judge options of ``judge``, ``gate``, ``evaluate`` and ``agent`` come from one
``add_judge_arguments()`` and are read by one ``JudgeConfig.from_args()``: the same
defaults (the library's), the same checks, the old spellings, and no Namespace past the CLI."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import respeval
from respeval.cli import main
from respeval.cli.app import build_parser
from respeval.cli.judge_options import JudgeConfig
from respeval.judge import EngineOptions, FakeModel

SRC = Path(respeval.__file__).parent
# each command, the arguments it needs besides the judge's, and how it names the judge options
COMMANDS = {
    "judge": (["--input", "x.jsonl"], ""),
    "gate": (["--input", "x.jsonl"], ""),
    "evaluate": (["--input", "x.jsonl", "--metric", "exact_match"], ""),
    "agent": (["--example"], ""),
}


def parse(command: str, *judge_args: str):
    extra, _ = COMMANDS[command]
    return build_parser().parse_args([command, *extra, *judge_args])


def flag(command: str, name: str) -> str:
    prefix = COMMANDS[command][1]
    return f"--{prefix}-{name}" if prefix else f"--{name}"


def model_flag(command: str) -> str:
    prefix = COMMANDS[command][1]
    return f"--{prefix}" if prefix else "--model"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_one_set_of_defaults(command):
    args = parse(command, model_flag(command), "fake:")
    config = JudgeConfig.from_args(args, prefix=COMMANDS[command][1])
    defaults = EngineOptions()
    assert config.engine == EngineOptions(budget=config.engine.budget), command  # every engine default the library's
    assert config.engine.budget.unlimited and config.engine.concurrency == defaults.concurrency == 8
    assert isinstance(config.model, FakeModel) and config.cache is None and config.batch is None


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_options_are_read_the_same(command):
    args = parse(
        command,
        model_flag(command),
        "fake:",
        flag(command, "concurrency"),
        "3",
        flag(command, "max-retries"),
        "1",
        flag(command, "timeout"),
        "7",
        flag(command, "budget-usd"),
        "2",
        flag(command, "price-in"),
        "0.5",
        flag(command, "price-out"),
        "1.5",
        flag(command, "cache"),
        "c.sqlite",
    )
    config = JudgeConfig.from_args(args, prefix=COMMANDS[command][1])
    engine = config.engine
    assert (engine.concurrency, engine.max_retries, engine.timeout) == (3, 1, 7.0)
    assert engine.budget.max_cost == 2.0 and engine.prices.input_per_million == 0.5 and config.cache == "c.sqlite"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_concurrency_zero_is_refused_by_every_command(command, capsys):
    extra, _ = COMMANDS[command]
    with pytest.raises(SystemExit) as stop:  # refused while parsing: the engine never sees it
        main([command, *extra, model_flag(command), "fake:", flag(command, "concurrency"), "0"])
    err = capsys.readouterr().err
    assert stop.value.code == 1 and f"argument {flag(command, 'concurrency')}: expected a positive integer" in err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_same_checks(command):
    prefix = COMMANDS[command][1]
    with pytest.raises(ValueError, match=f"give both {flag(command, 'price-in')} and {flag(command, 'price-out')}"):
        JudgeConfig.from_args(parse(command, flag(command, "price-in"), "1"), prefix=prefix)
    with pytest.raises(ValueError, match=f"{flag(command, 'budget-usd')} needs {flag(command, 'price-in')}"):
        JudgeConfig.from_args(parse(command, flag(command, "budget-usd"), "1"), prefix=prefix)
    with pytest.raises(ValueError, match="no cache at /nonexistent/c.sqlite"):
        args = parse(command, flag(command, "replay-only"), flag(command, "cache"), "/nonexistent/c.sqlite")
        JudgeConfig.from_args(args, prefix=prefix)


def test_a_spec_file_is_read_under_the_options():
    spec = {"model": "fake:", "judge": {"concurrency": 32, "timeout": 5, "price_in": 1, "price_out": 2}}
    args = parse("evaluate")
    config = JudgeConfig.from_args(args, out="o.jsonl", cache_beside_out=True, spec=spec)
    assert (config.engine.concurrency, config.engine.timeout, config.cache) == (32, 5, "o.jsonl.cache.sqlite")
    assert isinstance(config.model, FakeModel)
    args = parse("evaluate", "--concurrency", "4", "--cache", "mine.sqlite")
    config = JudgeConfig.from_args(args, out="o.jsonl", cache_beside_out=True, spec=spec)
    assert (config.engine.concurrency, config.cache) == (4, "mine.sqlite")  # the command line wins
    with pytest.raises(ValueError, match="judge: give both price_in and price_out"):
        JudgeConfig.from_args(args, spec={"judge": {"price_in": 1}})


def test_gate_gets_the_engine_options(tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": 1, "response": "It is Paris.", "reference": "Lyon"}) + "\n")
    assert main(["gate", "--input", str(rows), "--model", "fake:", "--budget-calls", "0", "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["judge"]["stop_reason"].startswith("budget")


def test_agent_still_takes_its_old_judge_spellings(tmp_path, capsys):
    out = tmp_path / "agent.json"
    status = main(
        ["agent", "--example", "--judge", "fake:", "--judge-cache", str(tmp_path / "j.sqlite"),
         "--judge-concurrency", "2", "--judge-samples", "1", "--judge-metrics", "final_response_match_v2",
         "--out", str(out)]
    )  # fmt: skip
    assert status in (0, 2) and (tmp_path / "j.sqlite").exists()
    assert "final_response_match_v2" in out.read_text()


def test_the_namespace_stops_at_the_cli():
    offenders = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if "cli" not in path.relative_to(SRC).parts
        and any(
            isinstance(node, (ast.Import, ast.ImportFrom))
            and "argparse" in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    ]
    assert offenders == []


def test_judge_and_judge_methods_are_no_circle():
    def imports(name: str) -> set[str]:
        tree = ast.parse((SRC / "cli" / f"{name}.py").read_text(encoding="utf-8"))
        return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}

    assert "respeval.cli.judge_methods" in imports("judge")
    assert "respeval.cli.judge" not in imports("judge_methods")
    text = (SRC / "cli" / "judge_methods.py").read_text(encoding="utf-8")
    assert "args.method ==" not in text and "args.method !=" not in text  # the registry builds the method
