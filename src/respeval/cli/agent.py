"""``respeval agent``: score an agent's conversations against an ADK eval set."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from respeval.cli.common import Exit, positive_int, unit_interval
from respeval.cli.judge_options import JudgeConfig, add_judge_arguments
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
  --references  an ADK eval file: EvalSet schema (*.evalset.json / *.test.json), a legacy
              turn list (*.test.json) or a legacy eval-set list.
  --input    one run of the agent: an eval set holding the agent's turns (cases matched
              by eval_id), an ADK session dump (*.session.json; for a one-case eval set, or
              named <eval_id>.session.json), a directory of either, or CASE=PATH.
              Repeat --input for repeated runs (pass@k, pass^k).
  criteria    from --config, else test_config.json beside --references, else ADK's defaults
              (tool_trajectory_avg_score >= 1.0, response_match_score >= 0.8); --match-type,
              --ignore-args and --threshold override the trajectory criterion.

judged metrics (--model MODEL): each case's actual conversation (turns, tool calls and results)
  goes to an LLM judge with respeval's own prompts and ADK's sampling, voting and averaging
  rules: final_response_match_v2 (K samples, strict majority, ties fail), the rubric metrics
  rubric_based_final_response_quality_v1 / rubric_based_tool_use_quality_v1 (the eval set's
  rubrics), hallucinations_v1 (per-sentence support, share supported), and respeval's
  conversation-level task_success, trajectory_quality, tool_use_quality.  Their values join
  the case status (a failed judged metric fails the case).  Metrics and thresholds come from
  --judge-metrics / --judge-threshold, else from ADK criteria of those names in the config.

exit status: 0 every case passed, 2 a case did not pass (as `adk eval` fails), 1 bad input,
  3 the judge stopped on a model error.

examples:
  respeval agent --example
  respeval agent --references home.test.json --input run1.evalset.json
  respeval agent --references set.evalset.json --input sessions/ --match-type IN_ORDER
  respeval agent --references set.evalset.json --input r1.json --input r2.json --json
  respeval agent --example --report agent-report.html
  respeval agent --example --model openai:gpt-4o-mini --samples 3 --cache judge.sqlite
  respeval agent --references set.evalset.json --input run/ --model openai:m --base-url http://127.0.0.1:8000/v1 \
      --judge-metrics final_response_match_v2,hallucinations_v1 --judge-threshold hallucinations_v1=0.9
"""


# the library's spelling of --on-error fail
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--references", dest="expected", metavar="EVALSET", help="the golden ADK eval file")
    parser.add_argument(
        "--input",
        dest="actual",
        action="append",
        default=[],
        metavar="SOURCE",
        help="one run's conversations (repeatable)",
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
        choices=("fail", "record"),
        default="fail",
        help="a case that cannot be scored (invocation counts differ, malformed calls): stop with its error "
        "(fail, default) or record it as NOT_EVALUATED with the reason (record)",
    )
    parser.add_argument("--json", action="store_true", help="print the full results as JSON")
    parser.add_argument("--out", metavar="FILE", help="also write the full results as JSON to FILE")
    parser.add_argument("--worst", type=int, default=5, metavar="K", help="lowest-recall invocations to list")
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="also write the HTML report (per-case statuses, trajectory tables, per-tool mistakes, worst invocations)",
    )
    parser.add_argument(
        "--summary-out", metavar="FILE", help="write the run summary (JSON) for `respeval report` to merge with others"
    )
    add_judge_arguments(
        parser,
        groups=("model", "engine", "cache", "budget"),
        title="judged metrics (an LLM judge; off unless --model is given)",
    )
    judge = parser.add_argument_group("judged metrics: what is judged")
    judge.add_argument(
        "--judge-metrics",
        metavar="LIST",
        help="comma-separated: final_response_match_v2, rubric_based_final_response_quality_v1, "
        "rubric_based_tool_use_quality_v1, hallucinations_v1, task_success, trajectory_quality, tool_use_quality "
        "(default: the config's judged criteria, else final_response_match_v2,task_success)",
    )
    judge.add_argument(
        "--samples",
        dest="judge_samples",
        type=positive_int,
        metavar="K",
        help="judge calls per invocation, strict majority (ADK's num_samples; default: the config's, else 5)",
    )
    judge.add_argument(
        "--judge-threshold",
        action="append",
        default=[],
        metavar="METRIC=X",
        help="pass threshold of a judged metric (repeatable; default: the config's, else 0.5)",
    )
    judge.add_argument(
        "--judge-segmenter",
        choices=("judge", "rule"),
        default="judge",
        help="hallucinations_v1: split answers into sentences with the judge (ADK's way) or by rule (one call less)",
    )
    judge.add_argument(
        "--judge-intermediate",
        action="store_true",
        help="hallucinations_v1: also check the agent's intermediate texts, not only its final answers",
    )


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from respeval.agents.adk import DEFAULT_CRITERIA, find_eval_config, normalize_match_type
    from respeval.agents.evaluation import evaluate_agent
    from respeval.agents.example import example_paths
    from respeval.agents.loaders import load_eval_set

    if args.example:
        if args.expected or args.actual:
            raise ValueError("--example runs on the shipped eval set; leave out --references and --input")
        expected_path, actual_paths = example_paths()
    else:
        if not args.expected or not args.actual:
            raise ValueError("give --references EVALSET and at least one --input SOURCE (or --example)")
        expected_path, actual_paths = Path(args.expected), list(args.actual)
    judge_config = JudgeConfig.from_args(args) if args.model else None
    inputs = [("--references", expected_path), *[("--input", a) for a in actual_paths], ("--config", args.config)]
    check_outputs(
        [*inputs, ("--initial-session", args.initial_session)],
        [("--out", args.out), ("--summary-out", args.summary_out), ("--report", args.report)],
    )
    expected = load_eval_set(expected_path, initial_session=args.initial_session, on_error=args.on_error)
    config = args.config or find_eval_config(expected_path)
    criteria = list(_criteria(config, judged=bool(args.model)) if config else DEFAULT_CRITERIA)
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
    judge_stop = _judge(args, judge_config, report, config) if judge_config is not None else None
    if args.out:
        write_text_atomic(args.out, json.dumps(report.to_dict(), indent=2, default=str) + "\n")
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        print(report.format(worst=args.worst))
    if args.out:
        print(f"results written to {args.out}", file=sys.stderr)
    if args.report or args.summary_out:
        from respeval.agents.report import agent_summary

        summary = agent_summary(report, worst=max(args.worst, 10))
        if args.summary_out:
            write_text_atomic(args.summary_out, json.dumps(summary, indent=2, default=str) + "\n")
            print(f"run summary written to {args.summary_out}", file=sys.stderr)
        if args.report:
            from respeval.report import write_report

            print(f"report written to {write_report(summary, args.report)}", file=sys.stderr)
    if judge_stop:
        print(f"the judge stopped: {judge_stop}", file=sys.stderr)
        return Exit.JUDGE_FATAL
    return Exit.OK if report.passed else Exit.GATE_FAILED


def _criteria(config: str | Path, *, judged: bool) -> tuple:
    """The config's offline criteria; none at all is fine when it has judged ones and --model."""
    from respeval.agents.adk import load_eval_config
    from respeval.agents.judging import judge_settings_from_config
    from respeval.agents.loaders import AgentDataError

    try:
        return load_eval_config(config)
    except AgentDataError:
        if judged and judge_settings_from_config(config) is not None:
            return ()
        raise


def _judge(args: argparse.Namespace, judge: JudgeConfig, report: object, config: str | Path | None) -> str | None:
    """Add the judged metrics to ``report``; the judge's stop reason, if it stopped."""
    import asyncio

    from respeval.agents.judging import JudgeSettings, judge_settings_from_config
    from respeval.judge.cache import JudgeCache
    from respeval.judge.methods.multiturn import judge_agent

    settings = (judge_settings_from_config(config) if config else None) or JudgeSettings()
    if args.judge_metrics:
        metrics = tuple(m.strip() for m in args.judge_metrics.split(",") if m.strip())
        settings = JudgeSettings(metrics, settings.thresholds, settings.samples, settings.rubrics)
    if args.judge_samples:
        settings.samples = args.judge_samples
    for spec in args.judge_threshold:
        metric, sep, value = spec.partition("=")
        if not sep:
            raise ValueError(f"--judge-threshold {spec!r}: expected METRIC=X")
        if metric.strip() not in settings.metrics:
            raise ValueError(
                f"--judge-threshold {spec!r}: {metric!r} is not one of the judged metrics {settings.metrics}"
            )
        settings.thresholds[metric.strip()] = unit_interval(value)
    settings.segmenter = args.judge_segmenter
    settings.intermediate = args.judge_intermediate
    assert judge.model is not None
    cache = JudgeCache(judge.cache) if judge.cache else None
    try:
        judged = asyncio.run(judge_agent(report, judge.model, settings, cache=cache, options=judge.engine))
    finally:
        if cache is not None:
            cache.close()
    return judged.stop_reason
