"""``respeval efficiency``: tokens, model calls, tool calls, latency and cost per case and per
run, from ADK sessions and eval sets, traces, and run outputs."""

from __future__ import annotations

import argparse
import json
import sys

from respeval.cli.common import Exit, add_bootstrap_arguments, field_mapping

NAME = "efficiency"
HELP = "tokens, model and tool calls, latency percentiles and cost, per case and per run (ADK's names)"
DESCRIPTION = """\
What each case and the run spent: tool calls, model calls, tokens in and out, latency and
cost per case; per run the totals, means with bootstrap intervals, p50/p90/p95/p99 and the
maximum.  ADK's informational metrics (tool_call_count, inference_call_count, token_usage,
invocation_duration: per-invocation values and their per-case means, equal to ADK 2.13's
*_v1 evaluators) are reported for every case.

Inputs (--from auto decides by name and content):
  adk     ADK session dumps (*.session.json) and eval sets (*.evalset.json, *.test.json),
          or directories of them
  traces  anything `respeval dataset from-traces` reads (OTLP, OpenInference, chat logs)
  rows    run outputs or built cases (JSONL, CSV, Parquet): tokens_in|input_tokens,
          tokens_out|output_tokens, model_calls, tool_calls (a count or the list),
          latency_s|latency, cost_usd|cost, model, id (--field NAME=COLUMN renames)
A value a source did not record is n/a, never 0."""
EPILOG = """\
examples:
  respeval efficiency sessions/
  respeval efficiency cases.jsonl --json
  respeval efficiency spans.jsonl --from traces --out per_case.parquet
  respeval efficiency judged.jsonl --field tokens_in=prompt_tok --prices prices.json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="+", metavar="INPUT", help="files or directories")
    parser.add_argument(
        "--from", dest="kind", choices=("auto", "adk", "traces", "rows"), default="auto", help="input kind"
    )
    parser.add_argument(
        "--field",
        action="append",
        type=field_mapping,
        default=[],
        metavar="NAME=COLUMN",
        help="read NAME (tokens_in, tokens_out, model_calls, tool_calls, latency_s, cost_usd, model, id) "
        "from COLUMN of rows",
    )
    parser.add_argument("--prices", metavar="FILE", help="a price table JSON (see respeval judge --help) for cost")
    parser.add_argument("--out", metavar="FILE", help="one row per case (.jsonl, .csv, .parquet)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    add_bootstrap_arguments(parser)


def _write(columns: dict, out: str) -> None:
    from respeval.io.writers import write_columns

    write_columns(out, columns)  # the format from the one extension map


def run(args: argparse.Namespace) -> int:
    from respeval.efficiency import efficiency

    prices = None
    if args.prices:
        from respeval.judge.prices import load_price_table

        prices = load_price_table(args.prices)
    report = efficiency(
        args.inputs,
        kind=args.kind,
        fields=dict(args.field),
        prices=prices,
        n_bootstrap=args.bootstrap,
        confidence=args.confidence,
        seed=args.seed,
    )
    if args.out:
        _write(report.columns(), args.out)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, allow_nan=False))
    else:
        print(report.format())
        if args.out:
            print(f"\nper case: {args.out}")
    if not report.cases:
        print("respeval efficiency: no cases found in the inputs", file=sys.stderr)
    return Exit.OK
