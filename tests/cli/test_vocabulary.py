"""One vocabulary across every command (issue 32, point 3 and acceptance 2): every option of
every command, walked from the parser ``respeval`` builds, has one spelling per concept; old
spellings live only in respeval.cli.vocabulary.ALIASES, hidden, and still work."""

from __future__ import annotations

import argparse
import json

import pytest

from _helpers.cli import run_cli
from respeval.cli import vocabulary
from respeval.cli.app import Parser, build_parser
from respeval.cli.vocabulary import ALIASES, Alias, add_aliases, concept_of, spelling_problems, walk


def test_every_command_speaks_one_vocabulary():
    assert spelling_problems(build_parser()) == []


def test_the_walk_reaches_every_command_and_subcommand():
    commands = {command for command, _ in walk(build_parser())}
    assert {"score", "judge", "gate", "evaluate", "agent", "compare", "run", "monitor", "validate"} <= commands
    assert {"dataset from-traces", "dataset generate"} <= commands


def _planted(*flags: str) -> argparse.ArgumentParser:
    parser = Parser(prog="respeval")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    for i, flag in enumerate(flags):
        sub.add_parser(f"cmd{i}").add_argument(flag)
    return parser


def test_the_check_fails_on_two_spellings_of_one_concept():
    problems = spelling_problems(_planted("--response-field", "--pred-field"))
    assert problems == [
        "one concept (response-field), 2 spellings: --pred-field (cmd1); --response-field (cmd0)",
    ]
    assert spelling_problems(_planted("--cache", "--judge-cache")) != []
    assert spelling_problems(_planted("--input", "--results")) != []
    assert spelling_problems(_planted("--input", "--input")) == []


def test_the_check_fails_on_an_old_spelling_shown_or_a_hidden_option_outside_the_table():
    parser = Parser(prog="respeval")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    score = sub.add_parser("score")
    score.add_argument("--input")
    score.add_argument("--pred")  # the table's old spelling, shown by --help
    score.add_argument("--secret", help=argparse.SUPPRESS)
    problems = spelling_problems(parser)
    assert "respeval score: --pred is an old spelling of --input, yet shown" in problems
    assert "respeval score: --secret is hidden but not in the alias table" in problems


def test_the_check_fails_on_one_judge_option_with_two_defaults():
    parser = Parser(prog="respeval")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    sub.add_parser("a").add_argument("--concurrency", default=8, metavar="N")
    sub.add_parser("b").add_argument("--concurrency", default=16, metavar="N")
    assert spelling_problems(parser) == [
        "--concurrency: one judge option, 2 defaults/metavars [('16', 'N'), ('8', 'N')]"
    ]


def test_concepts():
    assert concept_of("--pred-field") == concept_of("--response-field") == "response-field"
    assert concept_of("--ref") == concept_of("--references") == concept_of("--expected") == "reference"
    assert concept_of("--judge-base-url") == concept_of("--base-url")
    assert concept_of("--judge") == concept_of("--model")
    assert concept_of("--judge-field") != concept_of("--field")  # validate's column of judge values


def test_every_alias_is_hidden_and_reaches_its_new_name():
    parser = build_parser()
    actions = {(command, flag): action for command, action in walk(parser) for flag in action.option_strings}
    for alias in ALIASES:
        for command in alias.commands:
            old, new = actions[command, alias.old], actions[command, alias.new]
            assert old.help == argparse.SUPPRESS, (command, alias.old)
            assert new.help != argparse.SUPPRESS, (command, alias.new)
            assert old.dest == new.dest, (command, alias.old)


def test_an_alias_the_parser_lacks_is_refused():
    parser = Parser(prog="x")
    with pytest.raises(ValueError, match="lacks"):
        add_aliases(parser, "score")
    parser.add_argument("--input")
    parser.add_argument("--pred")
    with pytest.raises(ValueError, match="an option of its own"):
        add_aliases(parser, "score")


@pytest.fixture
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(vocabulary, "_warned", set())


def test_an_old_spelling_parses_as_the_new_one_and_warns_once(fresh_warnings, capsys):
    parser = build_parser()
    args = parser.parse_args(["score", "--pred", "a.txt", "--pred", "b.txt", "--ref", "r.txt", "--metrics", "bleu"])
    new = parser.parse_args(
        ["score", "--input", "a.txt", "--input", "b.txt", "--references", "r.txt", "--metric", "bleu"]
    )
    assert vars(args) == vars(new)
    err = capsys.readouterr().err
    assert err.count("--pred is now --input") == 1
    assert "--ref is now --references" in err and "--metrics is now --metric" in err


def test_an_old_spelling_satisfies_a_required_option(fresh_warnings, capsys):
    args = build_parser().parse_args(["validate", "--results", "r.jsonl"])
    assert args.results == "r.jsonl"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["validate"])
    assert "the following arguments are required: --input" in capsys.readouterr().err


def test_an_old_value_maps_to_the_new_one(fresh_warnings, capsys):
    args = build_parser().parse_args(["agent", "--example", "--on-error", "raise"])
    assert args.on_error == "fail"
    assert "--on-error raise is now --on-error fail" in capsys.readouterr().err


def test_a_new_command_built_from_the_shared_helpers_passes():
    from respeval.cli.common import add_bootstrap_arguments
    from respeval.cli.judge_options import add_judge_arguments

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    p = sub.add_parser("new-command")
    p.add_argument("--input", metavar="FILE")
    p.add_argument("--response-field", metavar="NAME")
    add_judge_arguments(p, groups=("model", "engine", "cache", "budget"))
    add_bootstrap_arguments(p)
    assert spelling_problems(parser) == []


def test_old_spellings_run(fresh_warnings, capsys, tmp_path):
    preds = tmp_path / "p.txt"
    preds.write_text("the cat sat\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "score", "--pred", str(preds), "--ref", str(preds), "--bootstrap", "0", "--json")
    assert code == 0, err
    assert "--pred is now --input" in err
    code2, out2, _ = run_cli(
        capsys, "score", "--input", str(preds), "--references", str(preds), "--bootstrap", "0", "--json"
    )
    timing = ("seconds", "rows_per_second")
    old, new = ({k: v for k, v in json.loads(o).items() if k not in timing} for o in (out, out2))
    assert (code2, new) == (code, old)


def test_alias_table_is_the_single_source():
    assert all(isinstance(a, Alias) and a.old.startswith("--") and a.new.startswith("--") for a in ALIASES)
    keys = [(c, a.old) for a in ALIASES for c in a.commands]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("command", ["judge", "gate", "evaluate", "run", "agent", "monitor"])
def test_help_is_short_and_help_all_has_the_rest(capsys, command):
    code, short, _ = run_cli(capsys, command, "--help")
    assert code == 0 and "examples:" in short
    code, everything, _ = run_cli(capsys, command, "--help-all")
    assert code == 0
    assert "--backoff-base" in everything and "--backoff-base" not in short
    assert f"respeval {command} --help-all" in short
    assert len(short.splitlines()) < len(everything.splitlines())


def test_the_cli_reference_shows_every_option():
    """The docs page is generated with --help-all: the advanced groups are on it."""
    import importlib.util
    from pathlib import Path

    hook = Path(__file__).parents[2] / "docs" / "_hooks" / "reference.py"
    spec = importlib.util.spec_from_file_location("reference_hook", hook)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = module.cli_reference()
    for command, action in walk(build_parser()):
        for flag in action.option_strings:
            if action.help != argparse.SUPPRESS and command:
                assert flag in page, (command, flag)


@pytest.mark.parametrize("command", ["judge", "gate", "evaluate", "run"])
def test_the_notes_in_depth_are_in_help_all_and_named_in_help(capsys, command):
    """Provider batches (and judge's methods) are explained by --help-all; --help names them."""
    _, short, _ = run_cli(capsys, command, "--help")
    _, everything, _ = run_cli(capsys, command, "--help-all")
    assert "provider batches (--batch):" in everything and "Uncached requests go out" not in short
    assert "and provider batches (--batch)" in short or ", provider batches (--batch):" in short
    if command == "judge":
        assert "adaptive-rubric  the judge writes" in everything and "adaptive-rubric  the judge" not in short
        assert len(short.splitlines()) <= 160, len(short.splitlines())
