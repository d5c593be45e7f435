"""What every ``respeval`` subcommand shares: argument types, defaults and the exit codes."""

from __future__ import annotations

import argparse
import contextlib
import enum
import signal
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from respeval._run_summary import STOP_BUDGET, STOP_CACHE, STOP_INTERRUPTED
from respeval.stats import DEFAULT_SEED

if TYPE_CHECKING:  # asyncio costs a command that runs no event loop ~40 ms of imports
    import asyncio

_N = TypeVar("_N", int, float)


class Exit(enum.IntEnum):
    """Exit status of every ``respeval`` command (documented in ``respeval --help``)."""

    OK = 0
    INPUT = 1  # bad input, options or files: the message says which and what to do
    GATE_FAILED = 2  # a quality gate failed (pass rate below --fail-under, compare --fail-on regression)
    JUDGE_FATAL = 3  # the judge stopped on a model error (401, 400, ...)
    BUDGET = 4  # the judge stopped at the budget
    BATCH_PENDING = 5  # provider batches are still running (--batch-wait): rerun later to collect them
    INTERNAL = 70  # a bug in respeval (EX_SOFTWARE): the traceback, scrubbed of secrets, is printed
    INTERRUPTED = 130  # Ctrl-C / SIGINT; rerun the same command to resume


def stop_exit(kind: str | None) -> Exit:
    """The exit status of a judge run that stopped for ``kind`` (the engine's stop kinds):
    0 done, 4 the budget, 130 interrupted, 1 a cache file to fix (damaged, locked), else 3."""
    return {
        None: Exit.OK,
        STOP_BUDGET: Exit.BUDGET,
        STOP_INTERRUPTED: Exit.INTERRUPTED,
        STOP_CACHE: Exit.INPUT,
    }.get(kind, Exit.JUDGE_FATAL)


EXIT_HELP = """\
exit status (every command):
  0 done, 1 bad input or options, 2 a gate failed (gate --fail-under, compare --fail-on),
  3 the judge stopped on a model error, 4 the judge stopped at the budget, 5 provider batches
  still running (--batch-wait; rerun to collect), 70 an internal error (a bug: please report
  it), 130 interrupted (rerun to resume)."""

_Group = TypeVar("_Group", bound=argparse._ArgumentGroup)


def advanced(group: _Group) -> _Group:
    """Mark an option group as advanced: ``COMMAND --help`` leaves it out (and says so),
    ``COMMAND --help-all`` and the CLI reference show it."""
    group.respeval_advanced = True  # type: ignore[attr-defined]
    return group


def add_epilog_more(parser: argparse.ArgumentParser, text: str) -> None:
    """Notes that ``COMMAND --help-all`` (and the CLI reference) show after the epilog, and
    ``--help`` names by their section titles: the depth a first look does not need."""
    before = getattr(parser, "respeval_epilog_more", "")
    parser.respeval_epilog_more = f"{before}\n{text}".strip("\n")  # type: ignore[attr-defined]


DEFAULT_CONFIDENCE = 0.95
DEFAULT_BOOTSTRAP = 1000


def _parsed(value: str, kind: Callable[[str], _N], ok: Callable[[_N], bool], expected: str, out_of_range: str) -> _N:
    """``value`` read as ``kind``; an ArgumentTypeError ``expected`` when it is not one, and
    ``out_of_range`` when ``ok`` refuses it."""
    try:
        x = kind(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{expected}, got {value!r}") from None
    if not ok(x):
        raise argparse.ArgumentTypeError(f"{out_of_range}, got {value}")
    return x


def positive_int(value: str) -> int:
    """An integer >= 1."""
    what = "expected a positive integer"
    return _parsed(value, int, lambda n: n >= 1, what, what)


def non_negative_int(value: str) -> int:
    """An integer >= 0."""
    what = "expected a non-negative integer"
    return _parsed(value, int, lambda n: n >= 0, what, what)


def non_negative_float(value: str) -> float:
    what = "expected a non-negative number"
    return _parsed(value, float, lambda x: x >= 0, what, what)


def positive_float(value: str) -> float:
    what = "expected a positive number"
    return _parsed(value, float, lambda x: x > 0, what, what)


def unit_interval(value: str) -> float:
    """A number in [0, 1] (rates, thresholds)."""
    what = "expected a number in [0, 1]"
    return _parsed(value, float, lambda x: 0.0 <= x <= 1.0, what, what)


def confidence(value: str) -> float:
    """A confidence level strictly between 0 and 1."""
    return _parsed(
        value,
        float,
        lambda c: 0 < c < 1,
        "confidence must be a number between 0 and 1",
        "confidence must be between 0 and 1 (e.g. 0.95)",
    )


def field_mapping(value: str) -> tuple[str, str]:
    """``NAME=COLUMN``."""
    name, sep, column = value.partition("=")
    if not sep or not name or not column:
        raise argparse.ArgumentTypeError(f"expected NAME=COLUMN, got {value!r}")
    return name, column


def metric_list(value: str) -> list[str]:
    """Comma-separated metric names, each known to the registry."""
    from respeval.metrics import REGISTRY

    names = [m.strip() for m in value.split(",") if m.strip()]
    unknown = [m for m in names if m not in REGISTRY]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown metric(s) {', '.join(unknown) or '(none given)'}; available: {', '.join(REGISTRY.names())} "
            "(respeval metrics lists them)"
        )
    return names


def add_bootstrap_arguments(
    group: argparse._ArgumentGroup | argparse.ArgumentParser, *, resamples: bool = True
) -> None:
    """--bootstrap N, --confidence C and --seed S, with the same defaults everywhere."""
    if resamples:
        group.add_argument(
            "--bootstrap",
            type=non_negative_int,
            default=DEFAULT_BOOTSTRAP,
            metavar="N",
            help=f"bootstrap resamples for confidence intervals (0 = none; default {DEFAULT_BOOTSTRAP})",
        )
    group.add_argument(
        "--confidence",
        type=confidence,
        default=DEFAULT_CONFIDENCE,
        metavar="C",
        help=f"confidence level of the intervals (default {DEFAULT_CONFIDENCE})",
    )
    group.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, metavar="S", help=f"bootstrap seed (default {DEFAULT_SEED})"
    )


@contextlib.contextmanager
def signals_interrupt(loop: asyncio.AbstractEventLoop, control: Any) -> Iterator[None]:
    """Ctrl-C and SIGTERM stop the run cleanly (a second Ctrl-C abandons the calls in flight);
    ``control`` is a :class:`respeval.judge.run.RunControl`."""

    def on_signal() -> None:
        if control.interrupt() == 1:
            print(
                f"\nstopping: letting {control.in_flight} calls in flight finish (Ctrl-C again to abandon them)",
                file=sys.stderr,
            )

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, on_signal)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - Windows
            pass
    try:
        yield
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):  # pragma: no cover
                pass
