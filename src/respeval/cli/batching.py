"""``--batch`` on the command line: the options every judging command shares, and the runs.

``judge``, ``gate`` and ``evaluate`` add the options with :func:`add_batch_arguments` (through
:func:`respeval.cli.judge_options.add_judge_arguments`) and read them back with
:func:`batch_options` (None without ``--batch``; through ``JudgeConfig.from_args``); the runs
themselves go through :func:`respeval.judge.arun` (``batch=``), whatever the method.
:func:`exit_status` maps how a batch run ended to the exit codes of :mod:`respeval.cli.common`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from respeval.cli.common import (
    Exit,
    advanced,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    stop_exit,
)
from respeval.judge.batch import (
    RETRY_MODES,
    STOP_BUDGET,
    STOP_WAITING,
    BatchOptions,
    BatchReport,
)
from respeval.judge.limits import Price
from respeval.judge.models.base import JudgeModel
from respeval.judge.prices import ModelPrice, load_price_table, model_price

__all__ = [
    "BATCH_EPILOG",
    "add_batch_arguments",
    "batch_options",
    "exit_status",
    "progress_printer",
]

BATCH_EPILOG = """\
provider batches (--batch):
  Uncached requests go out as OpenAI Batch API / Anthropic Message Batches jobs, billed at
  half the interactive price and answered within 24 hours (usually much sooner); the
  answers land in the cache and every row is then judged exactly as interactively. Kill
  the command at any time and rerun it: batches already submitted are polled, never sent
  twice. --batch-wait S returns after S seconds with exit status 5 while batches are still
  running; rerun later (or: respeval batches fetch --cache FILE). Requests that failed in a
  batch are resent (--batch-retries, --batch-retry batch|interactive), then left unscored
  with the provider's reason. The summary gives the cost at batch prices and what the run
  would have cost interactively (prices: respeval's table, --prices FILE, or
  --price-in/--price-out with the batch price at half)."""


def add_batch_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The ``--batch`` options, in their own group of ``parser``."""
    g = advanced(parser.add_argument_group("provider batches (half price, answers within 24 hours)"))
    g.add_argument(
        "--batch",
        action="store_true",
        help="send uncached requests as provider batches (openai:, anthropic: models), resumably",
    )
    g.add_argument(
        "--batch-wait",
        type=non_negative_float,
        default=None,
        metavar="S",
        help="stop waiting after S seconds, batches still running (exit 5; rerun to collect); default: wait",
    )
    g.add_argument(
        "--batch-poll",
        type=positive_float,
        default=10.0,
        metavar="S",
        help="first status check after S seconds, then 1.5x longer each time up to 300 (default 10)",
    )
    g.add_argument(
        "--batch-retries",
        type=non_negative_int,
        default=2,
        metavar="N",
        help="resend a request that failed in a batch (error, expired, cancelled) N times (default 2)",
    )
    g.add_argument(
        "--batch-retry",
        choices=RETRY_MODES,
        default="batch",
        help="resend failed requests in the next batch (default) or as ordinary calls",
    )
    g.add_argument(
        "--batch-max-requests",
        type=positive_int,
        default=None,
        metavar="N",
        help="split batches at N requests (default: the provider's limit, 50,000 / 100,000)",
    )
    g.add_argument(
        "--batch-max-mb",
        type=positive_float,
        default=None,
        metavar="MB",
        help="split batches at MB megabytes (default: the provider's limit, 200 / 256)",
    )
    g.add_argument(
        "--prices",
        metavar="FILE",
        help='price table, JSON {"MODEL": {"input": USD, "output": USD, "batch_input": ..., "batch_output": ...}} '
        "per million tokens (default: respeval's table)",
    )
    g.add_argument(
        "--batch-price-in", type=non_negative_float, metavar="USD", help="batch USD per million input tokens"
    )
    g.add_argument(
        "--batch-price-out", type=non_negative_float, metavar="USD", help="batch USD per million output tokens"
    )
    return g


def batch_options(args: argparse.Namespace, model: JudgeModel | None = None) -> BatchOptions | None:
    """The :class:`BatchOptions` the parsed ``--batch`` options ask for (None without
    ``--batch``); ``model`` settles ``--batch-price-in/--batch-price-out`` against the
    model's interactive price.  Raises ValueError on contradictory options."""
    if not getattr(args, "batch", False):
        for name in ("batch_wait", "batch_max_requests", "batch_max_mb", "batch_price_in", "batch_price_out"):
            if getattr(args, name, None) is not None:
                raise ValueError(f"--{name.replace('_', '-')} applies with --batch")
        return None
    table = load_price_table(args.prices) if getattr(args, "prices", None) else None
    prices: ModelPrice | dict[str, ModelPrice] | None = table
    if (args.batch_price_in is None) != (args.batch_price_out is None):
        raise ValueError("give both --batch-price-in and --batch-price-out")
    if args.batch_price_in is not None:
        batch_price = Price(args.batch_price_in, args.batch_price_out)
        interactive = None
        if getattr(args, "price_in", None) is not None and getattr(args, "price_out", None) is not None:
            interactive = Price(args.price_in, args.price_out)
        elif model is not None:
            known = model_price(model.model_id, model.name, table=table)
            interactive = known.interactive if known is not None else None
        if interactive is None:
            raise ValueError(
                "--batch-price-in/--batch-price-out need the interactive prices too (--price-in/--price-out)"
            )
        prices = ModelPrice(interactive, batch_price, "given prices")
    return BatchOptions(
        poll_interval=args.batch_poll,
        max_wait=args.batch_wait,
        retries=args.batch_retries,
        retry=args.batch_retry,
        max_requests=args.batch_max_requests,
        max_bytes=int(args.batch_max_mb * 1024 * 1024) if args.batch_max_mb is not None else None,
        prices=prices,
    )


def progress_printer(args: argparse.Namespace, command: str) -> Callable[[str], None] | None:
    """Progress lines on stderr (none with ``--quiet`` or ``--json``)."""
    if getattr(args, "quiet", False):
        return None

    def say(message: str) -> None:
        print(f"respeval {command}: {message}", file=sys.stderr, flush=True)

    return say


def exit_status(report: BatchReport, stop_kind: str | None) -> int:
    """The exit code of a batch run: 4 budget, 5 batches still running, else by the
    engine's own stop (3 model error, 130 interrupted), 0 when complete."""
    if report.stop_kind == STOP_BUDGET:
        return Exit.BUDGET
    if report.stop_kind == STOP_WAITING:
        return Exit.BATCH_PENDING
    return stop_exit(stop_kind)
