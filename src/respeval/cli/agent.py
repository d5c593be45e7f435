"""``respeval agent``: score an agent's conversations against an ADK eval set."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from respeval.cli.common import Exit, unit_interval
from respeval.io.files import check_outputs, write_text_atomic

NAME = "agent"
HELP = "score agent trajectories and answers against an ADK eval set (ADK 2.13 numbers)"
DESCRIPTION = """\
Score an agent's conversations against an ADK eval set with ADK 2.13's deterministic metrics
(tool_trajectory_avg_score, response_match_score), thresholds and pass/fail statuses, plus
respeval's trajectory diagnostics (Vertex-style precision/recall/F1 over every invocation,
per-tool mistakes, substitutions) and, over repeated runs, pass@k and pass^k."""
EPILOG = """\
inputs:
  --expected  an ADK eval file: EvalSet schema (*.evalset.json / *.test.json), a legacy
              turn list (*.test.json) or a legacy eval-set list.
  --actual    one run of the agent: an eval set holding the agent's turns (cases matched
              by eval_id), an ADK session dump (*.session.json; for a one-case eval set, or
              named <eval_id>.session.json), a directory of either, or CASE=PATH.
              Repeat --actual for repeated runs (pass@k, pass^k).
  criteria    from --config, else test_config.json beside --expected, else ADK's defaults
              (tool_trajectory_avg_score >= 1.0, response_match_score >= 0.8); --match-type,
              --ignore-args and --threshold override the trajectory criterion.

exit status: 0 every case passed, 2 a case did not pass (as `adk eval` fails), 1 bad input.

examples:
  respeval agent --example
  respeval agent --expected home.test.json --actual run1.evalset.json
  respeval agent --expected set.evalset.json --actual sessions/ --match-type IN_ORDER
  respeval agent --expected set.evalset.json --actual r1.json --actual r2.json --json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--expected", metavar="EVALSET", help="the golden ADK eval file")
    parser.add_argument(
        "--actual", action="append", default=[], metavar="SOURCE", help="one run's conversations (repeatable)"
    )
    parser.add_argument("--example", action="store_true", help="run on the small eval set shipped with respeval")
    parser.add_argument("--config", metavar="FILE", help="an ADK EvalConfig (test_config.json) with the criteria")
    parser.add_argument(
        "--match-type", metavar="TYPE", help="tool_trajectory_avg_score match type: EXACT, IN_ORDER or ANY_ORDER"
    )
    parser.add_argument("--ignore-args", action="store_true", help="compare tool names only (ADK 2.13 ignore_args)")
    parser.add_argument(
        "--threshold", type=unit_interval, metavar="X", help="tool_trajectory_avg_score threshold (default 1.0)"
    )
    parser.add_argument(
        "--initial-session", metavar="FILE", help="session input for legacy eval files (initial.session.json)"
    )
    parser.add_argument(
        "--on-error",
        choices=("raise", "record"),
        default="raise",
        help="a case that cannot be scored (invocation counts differ, malformed calls): stop with its error "
        "(raise, default) or record it as NOT_EVALUATED with the reason (record)",
    )
    parser.add_argument("--json", action="store_true", help="print the full results as JSON")
    parser.add_argument("--out", metavar="FILE", help="also write the full results as JSON to FILE")
    parser.add_argument("--worst", type=int, default=5, metavar="K", help="lowest-recall invocations to list")


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from respeval.agents.adk import DEFAULT_CRITERIA, find_eval_config, load_eval_config, normalize_match_type
    from respeval.agents.evaluation import evaluate_agent
    from respeval.agents.example import example_paths
    from respeval.agents.loaders import load_eval_set

    if args.example:
        if args.expected or args.actual:
            raise ValueError("--example runs on the shipped eval set; leave out --expected and --actual")
        expected_path, actual_paths = example_paths()
    else:
        if not args.expected or not args.actual:
            raise ValueError("give --expected EVALSET and at least one --actual SOURCE (or --example)")
        expected_path, actual_paths = Path(args.expected), list(args.actual)
    inputs = [("--expected", expected_path), *[("--actual", a) for a in actual_paths], ("--config", args.config)]
    check_outputs([*inputs, ("--initial-session", args.initial_session)], [("--out", args.out)])
    expected = load_eval_set(expected_path, initial_session=args.initial_session)
    config = args.config or find_eval_config(expected_path)
    criteria = list(load_eval_config(config) if config else DEFAULT_CRITERIA)
    if args.match_type or args.ignore_args or args.threshold is not None:
        traj = [c for c in criteria if c.metric == "tool_trajectory_avg_score"] or [DEFAULT_CRITERIA[0]]
        changed = replace(
            traj[0],
            match_type=normalize_match_type(args.match_type) if args.match_type else traj[0].match_type,
            ignore_args=args.ignore_args or traj[0].ignore_args,
            threshold=args.threshold if args.threshold is not None else traj[0].threshold,
        )
        criteria = [changed] + [c for c in criteria if c.metric != "tool_trajectory_avg_score"]
    report = evaluate_agent(expected, actual_paths, criteria, on_error=args.on_error)
    if args.out:
        write_text_atomic(args.out, json.dumps(report.to_dict(), indent=2, default=str) + "\n")
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        print(report.format(worst=args.worst))
    if args.out:
        print(f"results written to {args.out}", file=sys.stderr)
    return Exit.OK if report.passed else Exit.GATE_FAILED
