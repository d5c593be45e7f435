"""``respeval compare``: baseline against candidate on the same cases, with paired statistics,
a decision per metric and overall, CI exit codes and JUnit XML."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from typing import Any

from respeval.cli.common import (
    Exit,
    add_bootstrap_arguments,
    metric_list,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    stop_exit,
)
from respeval.io.files import guarded_outputs
from respeval.redact import redact

NAME = "compare"
HELP = "baseline vs candidate: paired tests, a decision per metric, CI exit codes"
DESCRIPTION = (
    "Compare a candidate system with a baseline on the same cases: each system's value per metric, the paired "
    "difference with a seeded bootstrap interval, McNemar's exact test (pass/fail scores), Wilcoxon signed-rank "
    "(other per-row scores) or approximate randomization (corpus BLEU/chrF/TER), the pairwise judge in both orders "
    "(sign test; inconsistent pairs count as ties), Holm's correction across the metrics, and a decision: improved, "
    "no significant change or regressed."
)
EPILOG = """\
input (JSONL, CSV or Parquet):
  --input FILE              one table with a system column (respeval run's output): one row per
                            (id, system[, template]); --baseline/--candidate name two systems;
                            rows are paired on the id (and the template when there is one)
  --baseline-file FILE --candidate-file FILE
                            two tables, one per system, paired on the id; --baseline and
                            --candidate then only name them
  Each row needs the id and the response; the metrics read --reference-field; the judge is shown
  --prompt-field when present. A null response (the system produced nothing) is scored as an
  empty response and reported.

decisions:
  per metric: improved / no significant change / regressed, when its Holm-corrected p-value is
  <= --alpha (the chance of any false alarm among the metrics stays <= alpha); overall:
  regressed when any metric regressed, else improved when any improved.

sequential (--until-decided, needs --model):
  the judge sees the cases in a seeded random order, --block at a time, and stops as soon as an
  always-valid confidence sequence of the net win rate excludes 0 (improved / regressed) or lies
  within +-MARGIN (no change worth detecting); if the cases run out first, the fixed test on all
  of them decides. The sequence gets half of Holm's strictest level (alpha / number of metrics)
  and the final fixed test the other half, so every decision keeps its error rate. The output
  says how many judge calls and how much cost that saved.

exit status:
  0 done (and no --fail-on condition), 1 bad input, 2 --fail-on regression and the decision is
  regressed (--fail-on change: anything but no significant change), 3 the judge stopped on a model
  error (1 when its cache file is damaged), 4 the judge stopped at the budget, 130 interrupted.

examples:
  respeval compare --input responses.jsonl --baseline baseline --candidate candidate \\
      --metric exact_match,rouge1 --reference-field expected
  respeval compare --baseline-file old.jsonl --candidate-file new.parquet --metric rouge1,bleu \\
      --reference-field reference --json --fail-on regression --junit compare.xml
  respeval compare --input responses.jsonl --metric exact_match --reference-field expected \\
      --model openai:gpt-4o-mini --cache judge.sqlite --until-decided --report compare.html
"""

FAIL_ON = ("regression", "change")


def add_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_argument_group("input")
    src.add_argument("--input", metavar="FILE", help="one table of responses with a system column")
    src.add_argument("--baseline-file", metavar="FILE", help="the baseline's responses (with --candidate-file)")
    src.add_argument("--candidate-file", metavar="FILE", help="the candidate's responses (with --baseline-file)")
    src.add_argument("--baseline", default="baseline", metavar="NAME", help="the baseline system (default baseline)")
    src.add_argument(
        "--candidate", default="candidate", metavar="NAME", help="the candidate system (default candidate)"
    )
    src.add_argument("--id-field", default="id", metavar="NAME", help="case id column (default id)")
    src.add_argument("--response-field", default="response", metavar="NAME", help="response column (default response)")
    src.add_argument(
        "--reference-field",
        dest="ref_field",
        default="reference",
        metavar="NAME",
        help="reference column (default reference)",
    )
    src.add_argument("--prompt-field", default="prompt", metavar="NAME", help="prompt column, shown to the judge")
    src.add_argument(
        "--system-field",
        default="system",
        metavar="NAME",
        help="the column naming the systems in --input (default system; 'template' compares two templates)",
    )
    src.add_argument("--template-field", default="template", metavar="NAME", help="template column (default template)")
    met = p.add_argument_group("metrics")
    met.add_argument(
        "--metric",
        dest="metrics",
        type=metric_list,
        default=[],
        metavar="LIST",
        help="comma-separated registry metrics, e.g. exact_match,rouge1,bleu (respeval metrics lists them)",
    )
    jd = p.add_argument_group("pairwise judge (both orders)")
    jd.add_argument(
        "--model",
        dest="judge",
        metavar="SPEC",
        help="judge model: openai:MODEL, anthropic:MODEL, python:module:function or fake:...",
    )
    jd.add_argument("--base-url", metavar="URL", help="API root for openai:/anthropic: judges")
    jd.add_argument("--api-key-env", metavar="NAME", help="environment variable holding the judge's API key")
    jd.add_argument(
        "--samples",
        dest="judge_samples",
        type=positive_int,
        default=1,
        metavar="K",
        help="samples per order (vote margin kept)",
    )
    jd.add_argument("--cache", metavar="FILE", help="judge answer cache (SQLite): a rerun pays for nothing twice")
    jd.add_argument("--replay-only", action="store_true", help="answer from the cache only (for CI)")
    jd.add_argument("--concurrency", type=positive_int, metavar="N", help="judge calls in flight (default 8)")
    jd.add_argument("--max-retries", type=non_negative_int, metavar="N", help="retries per call (default 5)")
    jd.add_argument("--timeout", type=positive_float, metavar="S", help="seconds per call (default 60)")
    jd.add_argument("--budget-usd", type=non_negative_float, metavar="USD", help="stop the judge at this spend")
    jd.add_argument("--budget-calls", type=non_negative_int, metavar="N", help="stop the judge after N calls")
    jd.add_argument("--price-in", type=non_negative_float, metavar="USD", help="USD per million input tokens")
    jd.add_argument("--price-out", type=non_negative_float, metavar="USD", help="USD per million output tokens")
    st = p.add_argument_group("statistics")
    st.add_argument("--alpha", type=_alpha, default=0.05, metavar="A", help="error rate of the decisions (0.05)")
    add_bootstrap_arguments(st)
    seq = p.add_argument_group("sequential judging")
    seq.add_argument(
        "--until-decided", action="store_true", help="judge in a seeded random order until the decision is known"
    )
    seq.add_argument(
        "--margin", type=_margin, default=0.05, metavar="M", help="smallest net win rate worth detecting (0.05)"
    )
    seq.add_argument("--block", type=positive_int, default=20, metavar="N", help="cases judged per step (20)")
    out = p.add_argument_group("output and CI")
    out.add_argument("--json", action="store_true", help="print the comparison as JSON")
    out.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        metavar="WHAT",
        help="exit 2 when the decision is regressed (regression) or anything but no change (change)",
    )
    out.add_argument("--junit", metavar="FILE", help="write JUnit XML: one test case per metric, and the overall one")
    out.add_argument("--summary-out", metavar="FILE", help="write the run summary (JSON) for `respeval report`")
    out.add_argument("--report", metavar="FILE", help="write the HTML report (deltas as a forest plot, flipped cases)")


def _alpha(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not 0 < x < 1:
        raise argparse.ArgumentTypeError(f"alpha must be between 0 and 1 (e.g. 0.05), got {value}")
    return x


def _margin(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not 0 < x < 1:
        raise argparse.ArgumentTypeError(f"the margin is a net win rate between 0 and 1 (e.g. 0.05), got {value}")
    return x


def _engine_options(args: argparse.Namespace) -> Any:
    from respeval.judge.engine import EngineOptions
    from respeval.judge.limits import Budget, Price

    if (args.price_in is None) != (args.price_out is None):
        raise ValueError("give both --price-in and --price-out (USD per million tokens)")
    prices = Price(args.price_in, args.price_out) if args.price_in is not None else None
    if args.budget_usd is not None and prices is None:
        raise ValueError("--budget-usd needs --price-in and --price-out (USD per million tokens)")
    given = {k: getattr(args, k) for k in ("concurrency", "max_retries", "timeout") if getattr(args, k) is not None}
    return EngineOptions(
        **given,
        budget=Budget(max_calls=args.budget_calls, max_cost=args.budget_usd),
        prices=prices,
        replay_only=args.replay_only,
        confidence=args.confidence,
    )


def _check(args: argparse.Namespace) -> None:
    two = args.baseline_file or args.candidate_file
    if args.input and two:
        raise ValueError("give --input (one table with a system column) or --baseline-file and --candidate-file")
    if not args.input and not two:
        raise ValueError("nothing to read: give --input FILE, or --baseline-file and --candidate-file")
    if two and not (args.baseline_file and args.candidate_file):
        raise ValueError("--baseline-file and --candidate-file go together")
    if not args.metrics and not args.judge:
        raise ValueError("nothing to compare: give --metric (e.g. exact_match,rouge1) and/or --model MODEL")
    if args.until_decided and not args.judge:
        raise ValueError("--until-decided judges until the decision is known: give --model MODEL")
    judge_only = ("--cache", "--replay-only", "--base-url", "--api-key-env", "--budget-usd", "--budget-calls")
    if not args.judge:
        given = [flag for flag in judge_only if getattr(args, flag[2:].replace("-", "_"))]
        if given:
            raise ValueError(f"{', '.join(given)} configure the judge: give --model MODEL")
    if args.replay_only and not args.cache:
        raise ValueError("--replay-only answers from the cache: give --cache FILE")


def junit_cases(data: dict[str, Any]) -> list[Any]:
    """A JUnit case per metric (failing when it regressed) and one for the overall decision."""
    from respeval.report.junit import JUnitCase

    cases = []
    for m in data["metrics"]:
        diff = m["difference"]
        text = (
            f"baseline {m['baseline']} candidate {m['candidate']} difference {diff['value']} "
            f"[{diff['low']}, {diff['high']}] {m['test']} p={m['p_value']} p_holm={m['p_holm']}"
        )
        failure = (f"{m['metric']} regressed (p_holm={m['p_holm']})", "regressed", text)
        cases.append(
            JUnitCase(
                m["metric"],
                "respeval.compare.metric",
                failure if m["decision"] == "regressed" else None,
                properties={"decision": m["decision"], "p_value": str(m["p_value"]), "difference": str(diff["value"])},
            )
        )
    regressed = [f["id"] for f in data["flipped"] if f["regressed"]]
    text = f"flipped cases that regressed ({len(regressed)}): " + ", ".join(map(str, regressed[:50]))
    overall = (f"{data['candidate']} regressed against {data['baseline']}", "regressed", text)
    cases.append(
        JUnitCase(
            "overall",
            "respeval.compare",
            overall if data["decision"] == "regressed" else None,
            properties={"decision": data["decision"], "cases": str(data["cases"])},
        )
    )
    return cases


async def _compare(args: argparse.Namespace) -> Any:
    from respeval.compare import acompare

    judge = None
    if args.judge:
        from respeval.judge.specs import load_model

        judge = load_model(args.judge, base_url=args.base_url, api_key_env=args.api_key_env)
    return await acompare(
        args.input,
        baseline=args.baseline,
        candidate=args.candidate,
        baseline_file=args.baseline_file,
        candidate_file=args.candidate_file,
        metrics=args.metrics,
        ref_field=args.ref_field,
        id_field=args.id_field,
        response_field=args.response_field,
        prompt_field=args.prompt_field,
        system_field=args.system_field,
        template_field=args.template_field,
        judge=judge,
        judge_samples=args.judge_samples,
        cache=args.cache,
        options=_engine_options(args) if judge is not None else None,
        until_decided=args.until_decided,
        margin=args.margin,
        block=args.block,
        alpha=args.alpha,
        confidence=args.confidence,
        bootstrap=args.bootstrap,
        seed=args.seed,
    )


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def run(args: argparse.Namespace) -> int:
    """Run ``respeval compare`` with parsed arguments; returns the exit status."""
    inputs = [
        ("--input", args.input),
        ("--baseline-file", args.baseline_file),
        ("--candidate-file", args.candidate_file),
    ]
    outputs = [("--junit", args.junit), ("--summary-out", args.summary_out), ("--report", args.report)]
    with guarded_outputs(inputs, outputs, unlocked=[("--cache", args.cache)]):
        try:
            _check(args)
            result = asyncio.run(_compare(args))
        except (ValueError, OSError) as exc:
            print(f"respeval compare: error: {redact(exc)}", file=sys.stderr)
            return Exit.INPUT
        data = _json_safe(result.to_json())
        print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else redact(result.format()))
        if args.junit:
            from respeval.report.junit import write_junit

            write_junit(args.junit, "respeval.compare", junit_cases(data))
        if args.summary_out or args.report:
            from respeval.report import compare_run_summary, write_run_outputs

            write_run_outputs(compare_run_summary(data), summary_out=args.summary_out, report=args.report)
    if result.stop_kind is not None:
        print(f"respeval compare: the judge stopped: {redact(result.stop_reason)}", file=sys.stderr)
        return stop_exit(result.stop_kind)
    if args.fail_on == "regression" and result.decision == "regressed":
        print(f"respeval compare: FAILED: {args.candidate} regressed against {args.baseline}", file=sys.stderr)
        return Exit.GATE_FAILED
    if args.fail_on == "change" and result.decision != "no_change":
        print(f"respeval compare: FAILED: {args.candidate} changed ({result.decision})", file=sys.stderr)
        return Exit.GATE_FAILED
    return Exit.OK
