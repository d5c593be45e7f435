"""One vocabulary for every ``respeval`` command (issue 32, point 3): the one table of old
spellings, each kept as a hidden alias of its new name, and the check that no concept has two
spellings outside that table.

The words every command uses:

* ``--input FILE`` the rows a command reads (JSONL, CSV or Parquet through :mod:`respeval.io`);
  ``--references FILE`` what they are compared against, when it is a file of its own;
* ``--response-field``, ``--reference-field``, ``--prompt-field``, ``--id-field``,
  ``--system-field``, ``--baseline-field`` the columns read;
* ``--metric`` the metrics; ``--on-error fail|skip|record`` bad rows;
* the judge options of :func:`respeval.cli.judge_options.add_judge_arguments`, with the same
  names and defaults in every command (``--model``, ``--base-url``, ``--cache``,
  ``--concurrency``, ``--samples``, ...).

An old spelling still works: :func:`add_aliases` adds it to the parser with its help hidden
(``argparse.SUPPRESS``), and the first use in a process prints one line on stderr naming the
new spelling.  :func:`spelling_problems` is what ``tests/cli/test_vocabulary.py`` runs over
the whole parser: a new command that uses the shared helpers and these words passes it.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ALIASES",
    "OTHER_CONCEPT",
    "VALUE_ALIASES",
    "Alias",
    "add_aliases",
    "add_aliases_everywhere",
    "check_required",
    "concept_of",
    "spelling_problems",
    "walk",
]


@dataclass(frozen=True)
class Alias:
    """``old`` is the former spelling of ``new`` in each of ``commands`` (their paths as typed:
    ``"score"``, ``"dataset generate"``)."""

    commands: tuple[str, ...]
    old: str
    new: str


_JUDGE_PREFIXED = (
    "base-url",
    "api-key-env",
    "no-json-schema",
    "structured",
    "concurrency",
    "max-retries",
    "timeout",
    "rpm",
    "tpm",
    "backoff-base",
    "backoff-max",
    "no-reask",
    "cache",
    "no-cache",
    "replay-only",
    "budget-usd",
    "budget-calls",
    "budget-tokens",
    "price-in",
    "price-out",
    "samples",
)

ALIASES: tuple[Alias, ...] = (
    # inputs: the rows read are --input everywhere
    Alias(("score",), "--pred", "--input"),
    Alias(("agent",), "--actual", "--input"),
    Alias(("validate",), "--results", "--input"),
    Alias(("monitor",), "--source", "--input"),
    # what the rows are compared against, as a file of its own
    Alias(("score",), "--ref", "--references"),
    Alias(("agent",), "--expected", "--references"),
    # the columns read
    Alias(("score",), "--pred-field", "--response-field"),
    Alias(("score", "compare"), "--ref-field", "--reference-field"),
    # the metrics
    Alias(("score", "compare"), "--metrics", "--metric"),
    # the judge options: one group, unprefixed, in every command
    Alias(("agent", "compare", "clusters"), "--judge", "--model"),
    Alias(("clusters",), "--name-with", "--model"),
    Alias(("compare",), "--judge-samples", "--samples"),
    *(Alias(("agent",), f"--judge-{name}", f"--{name}") for name in _JUDGE_PREFIXED),
)
"""Every old spelling and its new name: the single source (``--help`` never shows these)."""

VALUE_ALIASES: dict[tuple[str, str], dict[str, str]] = {
    ("agent", "--on-error"): {"raise": "fail"},
}
"""Old values of an option, per (command, option): ``agent --on-error raise`` is ``fail``,
as in every other command."""

OTHER_CONCEPT: dict[tuple[str, str], str] = {
    ("dataset from-traces", "--model"): "a filter (traces that called this model), like --service and --route",
}
"""Shown spellings of the judge options that a command uses for another concept, and why."""

_warned: set[tuple[str, str]] = set()


def _warn_once(command: str, old: str, new: str) -> None:
    """One line on stderr, the first time a process meets this old spelling."""
    if (command, old) in _warned:
        return
    _warned.add((command, old))
    print(f"respeval {command}: {old} is now {new} (the old spelling still works)", file=sys.stderr)


class _AliasAction(argparse.Action):
    """An old spelling: warns once, then does what the new option's action does."""

    def __init__(self, option_strings: list[str], dest: str, target: argparse.Action, command: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, **kw)
        self.target, self.command = target, command

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        _warn_once(self.command, option_string or self.option_strings[0], self.target.option_strings[0])
        self.target(parser, namespace, values, self.target.option_strings[0])


def _value_alias(command: str, option: str, mapping: dict[str, str], kind: Callable[[str], Any] | None) -> Any:
    def convert(value: str) -> Any:
        if value in mapping:
            _warn_once(command, f"{option} {value}", f"{option} {mapping[value]}")
            value = mapping[value]
        return kind(value) if kind is not None else value

    return convert


def add_aliases(parser: argparse.ArgumentParser, command: str) -> None:
    """Add the old spellings of ``command``'s options (from :data:`ALIASES`) to ``parser``,
    hidden.  An alias whose new name the parser lacks is a mistake in the table: ValueError."""
    actions = parser._option_string_actions
    for alias in ALIASES:
        if command not in alias.commands:
            continue
        target = actions.get(alias.new)
        if target is None:
            raise ValueError(f"respeval {command}: the alias table maps {alias.old} to {alias.new}, which it lacks")
        if alias.old in actions:
            raise ValueError(f"respeval {command}: {alias.old} is an option of its own and an alias of {alias.new}")
        if target.required:
            # an alias must be able to satisfy it: check_required does after parsing
            target.required = False
            required = getattr(parser, _REQUIRED, None)
            if required is None:
                required = []
                setattr(parser, _REQUIRED, required)
            required.append(target)
        options: dict[str, Any] = {"type": target.type} if target.type is not None else {}
        parser.add_argument(
            alias.old,
            **options,
            action=_AliasAction,
            target=target,
            command=command,
            dest=target.dest,
            nargs=target.nargs,
            choices=target.choices,
            metavar=target.metavar,
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
        )
    for (where, option), mapping in VALUE_ALIASES.items():
        if where == command and option in actions:
            target = actions[option]
            kind = target.type if callable(target.type) else None
            target.type = _value_alias(command, option, mapping, kind)


_REQUIRED = "_respeval_required"  # on the parser: its required options that have an old spelling


def check_required(parser: argparse.ArgumentParser, namespace: argparse.Namespace) -> None:
    """argparse's "the following arguments are required" for the required options that have an
    old spelling (given either way)."""
    missing = [a for a in getattr(parser, _REQUIRED, ()) if getattr(namespace, a.dest, None) in (None, [])]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(a.option_strings[0] for a in missing)}")


def add_aliases_everywhere(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> None:
    """:func:`add_aliases` on every subcommand's parser under ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                add_aliases(sub, " ".join((*path, name)))
                add_aliases_everywhere(sub, (*path, name))


# --------------------------------------------------------------------------- the check

# words that name one concept (the detector of two spellings, beside the table of aliases)
_SYNONYMS = {
    **dict.fromkeys(("pred", "preds", "prediction", "predictions", "hyp", "hyps", "hypothesis"), "response"),
    **dict.fromkeys(("hypotheses", "responses", "output", "outputs", "answers"), "response"),
    **dict.fromkeys(("ref", "refs", "reference", "references", "expected", "gold", "golden"), "reference"),
    **dict.fromkeys(("input", "inputs", "results", "source", "sources", "actual", "data", "dataset"), "input"),
    **dict.fromkeys(("metric", "metrics"), "metric"),
    **dict.fromkeys(("col", "column", "columns", "field", "fields"), "field"),
    **dict.fromkeys(("judge", "model", "name-with"), "model"),
}


def concept_of(flag: str) -> str:
    """The concept an option spelling names, e.g. ``--pred-field`` and ``--response-field``:
    ``response-field``; ``--judge-cache`` and ``--cache``: ``cache``.  Only a guide for
    :func:`spelling_problems`: two spellings with one concept are flagged unless the alias table
    relates them."""
    name = flag.lstrip("-")
    if name in _SYNONYMS:
        return _SYNONYMS[name]
    if name.startswith("judge-") and name[len("judge-") :] in _JUDGE_PREFIXED:
        name = name[len("judge-") :]
    # word by word: "references" (a file) and "reference-field" (a column) stay apart
    return "-".join(_SYNONYMS.get(w, w) for w in re.split(r"[-_]", name))


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.Action]]:
    """Every (command path, action) of ``parser`` and its subcommands."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, (*path, name))
        else:
            yield " ".join(path), action


def spelling_problems(parser: argparse.ArgumentParser, aliases: Iterable[Alias] = ALIASES) -> list[str]:
    """What breaks the one vocabulary in ``parser`` (empty: nothing):

    * an old spelling of the alias table shown by ``--help``, or a hidden option not in it;
    * one concept (:func:`concept_of`) with two shown spellings, across all commands;
    * one shown spelling of the judge options with two defaults or two metavars."""
    aliases = list(aliases)
    old = {(c, a.old): a.new for a in aliases for c in a.commands}
    problems: list[str] = []
    shown: dict[str, set[str]] = defaultdict(set)
    where: dict[str, list[str]] = defaultdict(list)
    judge_shape: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for command, action in walk(parser):
        for flag in action.option_strings:
            if flag in ("-h", "--help", "--version", "--help-all"):
                continue
            hidden = action.help == argparse.SUPPRESS
            if hidden:
                if (command, flag) not in old:
                    problems.append(f"respeval {command}: {flag} is hidden but not in the alias table")
                continue
            if (command, flag) in old:
                problems.append(f"respeval {command}: {flag} is an old spelling of {old[command, flag]}, yet shown")
                continue
            if not flag.startswith("--"):
                continue
            concept = concept_of(flag)
            shown[concept].add(flag)
            where[flag].append(command)
            judge_option = flag.lstrip("-") in _JUDGE_PREFIXED or flag == "--model"
            if judge_option and flag != "--samples" and (command, flag) not in OTHER_CONCEPT:
                judge_shape[flag].add((repr(action.default), str(action.metavar)))
    for concept, flags in sorted(shown.items()):
        if len(flags) > 1:
            spelled = "; ".join(f"{f} ({', '.join(sorted(set(where[f])))})" for f in sorted(flags))
            problems.append(f"one concept ({concept}), {len(flags)} spellings: {spelled}")
    for flag, shapes in sorted(judge_shape.items()):
        if len(shapes) > 1:
            problems.append(f"{flag}: one judge option, {len(shapes)} defaults/metavars {sorted(shapes)}")
    return problems
