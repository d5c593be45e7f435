"""The ``respeval`` command line: one parser, one dispatch table, one exit-code map.

Each subcommand is a module of this package with ``NAME``, ``HELP``, ``DESCRIPTION``,
``EPILOG``, ``add_arguments(parser)`` and ``run(args) -> int``; adding a command is one module
and one line in ``COMMANDS``.  Results and tables go to stdout, progress and errors to
stderr, so ``--json`` output can be piped.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

from respeval._version import __version__
from respeval.cli.common import EXIT_HELP, Exit
from respeval.cli.vocabulary import add_aliases_everywhere, check_required
from respeval.redact import redact

# subcommand modules, in the order --help lists them
COMMANDS = (
    "respeval.cli.run",
    "respeval.cli.score",
    "respeval.cli.agent",
    "respeval.cli.dataset",
    "respeval.cli.efficiency",
    "respeval.cli.judge",
    "respeval.cli.gate",
    "respeval.cli.compare",
    "respeval.cli.monitor",
    "respeval.cli.clusters",
    "respeval.cli.batches",
    "respeval.cli.evaluate",
    "respeval.cli.validate",
    "respeval.cli.align",
    "respeval.cli.report",
    "respeval.cli.view",
    "respeval.cli.metrics",
)


class Parser(argparse.ArgumentParser):
    """argparse with respeval's exit code for usage errors (1, not argparse's 2, which
    ``gate`` uses for a failed gate)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(Exit.INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def format_help(self, *, everything: bool = False) -> str:
        """``--help``: the advanced option groups (:func:`respeval.cli.common.advanced`) left
        out, with a line saying so; ``everything``: all of them (``--help-all``, the docs)."""
        hidden = [g for g in self._action_groups if getattr(g, "respeval_advanced", False)]
        more = getattr(self, "respeval_epilog_more", "")
        if everything:
            return super().format_help() + (f"\n{more}\n" if more else "")
        if not hidden:
            return super().format_help() + (f"\nmore ({_titles(more)}): {self.prog} --help-all\n" if more else "")
        groups, saved = self._action_groups, {}
        try:
            self._action_groups = [g for g in groups if g not in hidden]
            for g in hidden:
                for a in g._group_actions:
                    saved[a] = a.help
                    a.help = argparse.SUPPRESS
            text = super().format_help()
        finally:
            self._action_groups = groups
            for a, help_text in saved.items():
                a.help = help_text
        titles = ", ".join(str(g.title) for g in hidden)
        extra = f"; and {_titles(more)}" if more else ""
        return f"{text}\n{len(saved)} more options ({titles}){extra}: {self.prog} --help-all\n"

    def format_help_all(self) -> str:
        return self.format_help(everything=True)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = super().parse_known_args(args, namespace)
        check_required(self, parsed)
        return parsed, extras


def _titles(epilog: str) -> str:
    """The section titles of an epilog (its lines ``title:`` at the margin), as a list."""
    return ", ".join(line[:-1] for line in epilog.splitlines() if line.endswith(":") and not line.startswith(" "))


class _HelpAll(argparse.Action):
    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        parser._print_message(parser.format_help_all(), sys.stdout)
        parser.exit()


def _add_help_all(parser: argparse.ArgumentParser) -> None:
    """``--help-all`` on ``parser`` and its subcommands' parsers."""
    parser.add_argument("--help-all", action=_HelpAll, nargs=0, help="show every option, the advanced ones too")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _add_help_all(sub)


def _command_modules(command: str | None = None) -> list[ModuleType]:
    """Every command's module, or only ``command``'s when it names one: a run imports the
    one command it runs (importing all of them took half a second before any work)."""
    names = [name for name in COMMANDS if command is None or name.rsplit(".", 1)[1] == command]
    return [importlib.import_module(name) for name in names or COMMANDS]


def build_parser(command: str | None = None) -> Parser:
    """The parser of every command; with ``command`` (a command's name), of that one only."""
    parser = Parser(
        prog="respeval",
        description="Score LLM and agent responses: exact lexical metrics (rouge-score, sacreBLEU and "
        "SQuAD numbers) from a native core, an honest LLM judge, gates, validation and reports.",
        epilog=EXIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"respeval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for module in _command_modules(command):
        p = sub.add_parser(
            module.NAME,
            help=module.HELP,
            description=module.DESCRIPTION,
            epilog=module.EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        _add_help_all(p)
        p.set_defaults(run=module.run)
    add_aliases_everywhere(parser)
    return parser


def set_openmp_policy() -> None:
    """The command line's OpenMP setting, made where the program starts (the library sets
    nothing in its caller's process).  The core runs many short OpenMP loops; with libgomp's
    default (spinning) waits, idle threads spin between them and, when another process holds
    a core, a 2-thread run is slower than a 1-thread one; sleeping threads cost nothing
    measurable here (benchmarks/README.md, "OpenMP wait policy").  Only a default: an
    ``OMP_WAIT_POLICY`` the user set wins.  libgomp reads it when the core loads, which no
    command does before ``main`` runs."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def main(argv: Sequence[str] | None = None) -> int:
    set_openmp_policy()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv and not argv[0].startswith("-") else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return Exit.INPUT
    try:
        return int(args.run(args))
    except BrokenPipeError:
        # the reader went away (``respeval metrics | head``): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return Exit.OK
    except KeyboardInterrupt:
        print(f"respeval {args.command}: interrupted (rerun the same command to resume)", file=sys.stderr)
        return Exit.INTERRUPTED
    except (ValueError, TypeError, OSError) as exc:
        # input problems are the user's to fix: one clear line, no traceback
        print(f"respeval {args.command}: error: {redact(exc)}", file=sys.stderr)
        return Exit.INPUT
    except Exception as exc:
        errors = sys.modules.get("respeval.judge.errors")  # loaded only by the commands that judge
        if errors is not None and isinstance(exc, errors.JudgeError):
            # a provider refused or failed for good (a batch it would not take, a key it
            # rejects): what was done is kept, and the message says what to fix before rerunning
            print(f"respeval {args.command}: stopped: {redact(exc)}", file=sys.stderr)
            return Exit.JUDGE_FATAL
        # a bug: the traceback helps, but it may quote a key from a request or a URL
        print(redact(traceback.format_exc()), file=sys.stderr, end="")
        print(f"respeval {args.command}: internal error (a bug in respeval; please report it)", file=sys.stderr)
        return Exit.INTERNAL
