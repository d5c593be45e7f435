"""``respeval gate``: exact match -> lexical -> judge, with CI exit codes and JUnit XML."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from respeval.cli.batching import BATCH_EPILOG, exit_status
from respeval.cli.common import Exit, add_epilog_more, unit_interval
from respeval.cli.judge_options import JudgeConfig, add_judge_arguments
from respeval.gate import (
    ACCEPT,
    LEXICAL_METRICS,
    NORMALIZATIONS,
    REJECT,
    GateConfig,
    GateReport,
    Thresholds,
    arun_gate,
    calibrate,
    stage_scores,
)
from respeval.io import read_records
from respeval.io.files import atomic_output, guarded_outputs
from respeval.judge.batch import BatchCache
from respeval.judge.cache import JudgeCache
from respeval.judge.methods import MethodOptions, build_method
from respeval.redact import redact

NAME = "gate"
HELP = "exact -> lexical -> LLM judge escalation, for CI"
DESCRIPTION = (
    "Settle what exact match and a lexical metric can settle, two-sided, and send only the rest to an "
    "LLM judge. Reports rows settled and precision per stage, and judge calls saved."
)
EPILOG = """\
input:
  JSONL, CSV or Parquet with response, reference (a string, or a list: the best match
  counts), optional prompt and id. --calibrate takes rows {"id": ..., "label": true|false}
  (true = the response is correct; a CSV's true/false or 1/0), human labels for some ids.

stages:
  exact    accept on a normalized match (SQuAD normalization by default)
  lexical  ROUGE-1 F by default (--lexical-metric); accept >= --lexical-accept,
           reject < --lexical-reject; rows in between go on
  judge    pointwise LLM judge (--model); without --model those rows are "undecided"

exit status:
  0 pass rate >= --fail-under (or no floor), 1 bad input, 2 pass rate below --fail-under,
  3 the judge stopped (budget, fatal error); with --batch, 4 the budget stopped the
  submissions and 5 batches are still running (--batch-wait; rerun to collect).

examples:
  respeval gate --input rows.jsonl --lexical-accept 0.9 --lexical-reject 0.2 --model fake:
  respeval gate --input rows.jsonl --lexical-accept 0.9 --lexical-reject 0.2 \\
      --model openai:gpt-4o-mini --batch --cache gate.sqlite
  respeval gate --input rows.jsonl --calibrate labels.jsonl --target-precision 0.98 \\
      --model openai:gpt-4o-mini --fail-under 0.8 --junit gate.xml
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_epilog_more(p, BATCH_EPILOG)
    p.add_argument("--input", required=True, metavar="FILE", help="rows to gate (.jsonl, .csv or .parquet)")
    st = p.add_argument_group("stages")
    st.add_argument(
        "--normalize", choices=NORMALIZATIONS, default="squad", help="exact-match normalization (default squad)"
    )
    st.add_argument(
        "--exact-reject", action="store_true", help="also reject rows that do not match exactly (off by default)"
    )
    st.add_argument(
        "--lexical-metric",
        choices=LEXICAL_METRICS,
        default="rouge1",
        help="lexical stage score (F measure; default rouge1)",
    )
    st.add_argument("--lexical-accept", type=unit_interval, metavar="T", help="accept when the lexical score >= T")
    st.add_argument("--lexical-reject", type=unit_interval, metavar="T", help="reject when the lexical score < T")
    st.add_argument(
        "--calibrate", metavar="LABELS", help="fit the thresholds on these human labels (.jsonl, .csv or .parquet)"
    )
    st.add_argument(
        "--labels",
        metavar="LABELS",
        help="human labels (.jsonl, .csv or .parquet) for the per-stage precision only, without fitting",
    )
    st.add_argument(
        "--target-precision",
        type=unit_interval,
        default=0.98,
        metavar="P",
        help="calibration target per stage and side (default 0.98)",
    )
    st.add_argument(
        "--min-support", type=int, default=20, metavar="N", help="labelled rows a fitted side must rest on (default 20)"
    )
    add_judge_arguments(p, title="judge (for the rows left; without --model they are undecided)")
    out = p.add_argument_group("output and CI")
    out.add_argument("--out", metavar="FILE", help="per-row decisions (.jsonl)")
    out.add_argument("--json", action="store_true", help="print the report as JSON")
    out.add_argument("--fail-under", type=unit_interval, metavar="RATE", help="exit 2 when the pass rate is below RATE")
    out.add_argument("--junit", metavar="FILE", help="write JUnit XML, one test case per row")
    out.add_argument("--summary-out", metavar="FILE", help="write the run summary (JSON) for `respeval report`")
    out.add_argument("--report", metavar="FILE", help="write the HTML report")


def read_rows(path: str) -> list[dict[str, Any]]:
    """Every record of a JSONL, CSV or Parquet file."""
    return [record for _, record in read_records(path)]


_LABEL_TEXTS = {"true": True, "false": False, "1": True, "0": False}


def read_labels(path: str) -> dict[Any, bool]:
    """``{"id": ..., "label": true|false}`` rows (1/0 accepted; a CSV cell's text "true",
    "false", "1" or "0"); anything else is an error."""
    labels: dict[Any, bool] = {}
    for where, record in read_records(path):
        value = record.get("label")
        if isinstance(value, str) and value.strip().lower() in _LABEL_TEXTS:
            value = _LABEL_TEXTS[value.strip().lower()]
        if isinstance(value, bool):
            labels[record.get("id")] = value
        elif value in (0, 1) and not isinstance(value, float):
            labels[record.get("id")] = bool(value)
        else:
            raise ValueError(f"{where}: field 'label': must be true/false (or 1/0), got {value!r}")
    return labels


def _config(args: argparse.Namespace, records: list[dict[str, Any]], labels: dict[Any, bool]) -> tuple[GateConfig, Any]:
    base = GateConfig(
        exact=Thresholds(1.0, 1.0 if args.exact_reject else None),
        lexical=Thresholds(args.lexical_accept, args.lexical_reject),
        normalize=args.normalize,
        lexical_metric=args.lexical_metric,
    )
    scores = stage_scores(records, base)
    if args.calibrate:
        if args.lexical_accept is not None or args.lexical_reject is not None:
            raise ValueError("--calibrate fits the thresholds: drop --lexical-accept/--lexical-reject")
        base = calibrate(
            records,
            labels,
            target_precision=args.target_precision,
            base=base,
            min_support=args.min_support,
            scores=scores,
        )
    return base, scores


def write_junit(report: GateReport, path: str) -> None:
    """One ``testcase`` per row: rejected rows fail, unscored/undecided rows are errors
    (not silently skipped), accepted rows pass."""
    from respeval.report.junit import JUnitCase
    from respeval.report.junit import write_junit as write

    cases = []
    for row in report.rows:
        detail = f"stage={row.stage or '-'} exact={row.exact:g} lexical={row.lexical:.4f}"
        if row.judge_score is not None:
            detail += f" judge_score={row.judge_score:g}"
        failure = error = None
        if row.decision == REJECT:
            failure = (f"rejected by {row.stage}", "rejected", detail)
        elif row.decision != ACCEPT:
            error = (f"{row.decision}: {row.reason or 'no judge given'}", row.decision, detail)
        cases.append(JUnitCase(str(row.id), f"respeval.gate.{row.stage or 'none'}", failure, error))
    write(path, "respeval.gate", cases)


async def _run(
    judge: JudgeConfig,
    records: list[dict[str, Any]],
    config: GateConfig,
    scores: Any,
    labels: dict[Any, bool],
) -> GateReport:
    cache = (BatchCache(judge.cache) if judge.batch is not None else JudgeCache(judge.cache)) if judge.cache else None
    method = build_method(
        "pointwise", MethodOptions(threshold=judge.threshold, max_tokens=judge.max_tokens, seed=judge.seed)
    )
    try:
        return await arun_gate(
            records,
            config,
            model=judge.model,
            method=method,
            cache=cache,
            options=judge.engine,
            labels=labels,
            scores=scores,
            batch=judge.batch or False,
        )
    finally:
        if cache is not None:
            cache.close()


def run(args: argparse.Namespace) -> int:
    """Run ``respeval gate`` with parsed arguments; returns the exit status."""
    inputs = [("--input", args.input), ("--calibrate", args.calibrate), ("--labels", args.labels)]
    outputs = [
        ("--out", args.out),
        ("--junit", args.junit),
        ("--summary-out", args.summary_out),
        ("--report", args.report),
    ]
    with guarded_outputs(inputs, outputs, unlocked=[("--cache", args.cache)]):
        try:
            judge = JudgeConfig.from_args(args)
            records = read_rows(args.input)
            if args.calibrate and args.labels:
                raise ValueError("--calibrate already reads the labels: drop --labels")
            label_path = args.calibrate or args.labels
            labels = read_labels(label_path) if label_path else {}
            config, scores = _config(args, records, labels)
            report = asyncio.run(_run(judge, records, config, scores, labels))
        except (ValueError, OSError) as exc:
            print(f"respeval gate: error: {redact(exc)}", file=sys.stderr)
            return Exit.INPUT
        if args.out:
            with atomic_output(args.out) as fh:
                fh.writelines(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in report.rows)
        if args.junit:
            write_junit(report, args.junit)
        print(json.dumps(report.to_json(), indent=2) if args.json else report.format())
        if args.summary_out or args.report:
            from respeval.report import gate_run_summary, write_run_outputs

            run_summary = gate_run_summary(report.to_json(), rows=[r.to_json() for r in report.rows], records=records)
            write_run_outputs(run_summary, summary_out=args.summary_out, report=args.report)
    summary = report.judge_summary
    if summary is not None and summary.batch is not None and summary.stop_reason:
        print(f"respeval gate: the judge stopped: {summary.stop_reason}", file=sys.stderr)
        return exit_status(summary.batch, "error")
    if summary is not None and summary.stop_reason:
        print(f"respeval gate: the judge stopped: {summary.stop_reason}", file=sys.stderr)
        return Exit.JUDGE_FATAL
    rate = report.pass_rate or 0.0
    if args.fail_under is not None and rate < args.fail_under:
        print(f"respeval gate: FAILED: pass rate {rate:.4f} is below --fail-under {args.fail_under:g}", file=sys.stderr)
        return Exit.GATE_FAILED
    return Exit.OK
