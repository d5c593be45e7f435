"""``respeval evaluate``: a whole evaluation (computed, custom and judged metrics) declared once."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from respeval.cli.batching import BATCH_EPILOG, progress_printer
from respeval.cli.common import Exit, add_bootstrap_arguments, add_epilog_more, positive_int, stop_exit
from respeval.cli.judge_options import JudgeConfig, add_judge_arguments, prompt_inputs
from respeval.cli.progress import progress
from respeval.io.files import check_outputs
from respeval.judge.batch import STOP_WAITING

NAME = "evaluate"
HELP = "any mix of computed, custom and judged metrics: one table, one summary, one report"
DESCRIPTION = (
    "Evaluate a dataset with registry metrics (exact_match, bleu, rougeLsum, json_valid, regex, ...), your own "
    "Python functions (isolated with a time limit, a memory limit and no network on request) and LLM judges "
    "with your own templates and system instructions or predefined ones (GROUNDING, SAFETY, ...). Chunked, "
    "resumable, every judge answer cached."
)
EPILOG = """\
spec file (YAML, JSON or TOML; see docs/custom_metrics.md):
  metrics:
    - exact_match
    - {metric: json_valid, schema: {type: object, required: [answer]}}
    - {custom: my_checks:has_fields, isolation: process, timeout: 5}
    - {pointwise: claims, template_file: claims.txt, system_instruction: "You are an expert claims auditor."}
    - GROUNDING
    - {pairwise: preference, flip: both}

output:
  --out FILE: one row per input row with {metric}/score, {metric}/explanation,
  {metric}/pairwise_choice, {metric}/status, {metric}/unscored_reason (the hosted services'
  column names); the summary has row_count, {metric}/mean, {metric}/std, intervals,
  pass rates, coverage, calls and cost. --summary-out writes the run summary (JSON) that
  `respeval report` renders; --report FILE writes the HTML report directly.

examples:
  respeval evaluate --input rows.jsonl --spec spec.yaml --out rows.parquet --report report.html
  respeval evaluate --input rows.jsonl --metric exact_match --metric python:checks:has_fields --out rows.jsonl
  respeval evaluate --input rows.jsonl --spec spec.yaml --model openai:gpt-4o-mini --out rows.parquet --resume
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_epilog_more(p, BATCH_EPILOG)
    src = p.add_argument_group("input")
    src.add_argument("--input", metavar="FILE", help="the dataset (.jsonl, .csv, .parquet); default: the spec's input")
    src.add_argument("--spec", metavar="FILE", help="the evaluation: metrics, columns, judge (.yaml, .json, .toml)")
    src.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="NAME",
        help="a metric besides the spec's (repeatable): a registry name, a predefined judge metric "
        "(GROUNDING, ...) or python:module:function (python:module:function@VERSION: the version stands for its code "
        "when resuming)",
    )
    src.add_argument("--response-field", metavar="COL", help="the response column (default response)")
    src.add_argument("--reference-field", metavar="COL", help="the reference column (default reference)")
    src.add_argument("--baseline-field", metavar="COL", help="the pairwise baseline (default baseline_model_response)")
    src.add_argument("--id-field", metavar="COL", help="an id column, copied to the output")
    src.add_argument(
        "--on-error",
        choices=["fail", "skip", "record"],
        default="fail",
        help="unreadable records: fail (default), skip, record (to --errors)",
    )
    src.add_argument("--errors", metavar="FILE", help="bad records for --on-error record (default OUT.errors.jsonl)")
    jd = p.add_argument_group("judged metrics")
    jd.add_argument("--template", metavar="FILE", help="a pointwise judge prompt template (adds metric 'judge')")
    jd.add_argument("--system-instruction", metavar="TEXT", help="system instruction for --template (TEXT or @FILE)")
    jd.add_argument(
        "--samples", type=positive_int, default=None, metavar="K", help="judge samples per row (strict majority)"
    )
    add_judge_arguments(
        p,
        groups=("model", "engine", "cache", "budget", "batch"),
        no_cache=False,
        default_cache="OUT.cache.sqlite; the spec's judge: keys under the options",
    )
    out = p.add_argument_group("output")
    out.add_argument("--out", metavar="FILE", help="per-row results (.parquet, .jsonl, .csv); resumable")
    out.add_argument("--resume", action="store_true", help="continue an interrupted run into the same --out")
    out.add_argument("--chunk-size", type=positive_int, default=5000, help="rows per chunk (default 5000)")
    out.add_argument("--json", action="store_true", help="print summary_metrics as JSON")
    out.add_argument("--summary-out", metavar="FILE", help="write the run summary (JSON) for `respeval report`")
    out.add_argument("--report", metavar="FILE", help="write the HTML report")
    out.add_argument("--title", help="report title")
    out.add_argument("--quiet", action="store_true", help="no progress bar")
    add_bootstrap_arguments(out)


def run(args: argparse.Namespace) -> int:
    from respeval.evaluate import JudgeStopped, PointwiseMetric, evaluate, load_spec
    from respeval.evaluate.spec import read_text_option
    from respeval.report import write_run_outputs

    spec: dict[str, Any] = load_spec(args.spec) if args.spec else {"metrics": [], "columns": {}, "judge": {}}
    metrics = list(spec["metrics"]) + list(args.metric)
    if args.template:
        template = Path(args.template).read_text(encoding="utf-8")
        instruction = read_text_option(args.system_instruction)
        metrics.append(PointwiseMetric("judge", template, system_instruction=instruction))
    elif args.system_instruction:
        raise ValueError("--system-instruction goes with --template (or system_instruction: in the spec)")
    if not metrics:
        raise ValueError("no metric: give --spec FILE or --metric NAME")
    data = args.input or spec.get("input")
    if not data:
        raise ValueError("no dataset: give --input FILE (or input: in the spec)")
    columns = spec["columns"]
    out = args.out or spec.get("out")
    judge = JudgeConfig.from_args(args, out=out, cache_beside_out=True, spec=spec)
    model = judge.model if judge.model is not None else spec.get("model")
    report = args.report or spec.get("report")
    check_outputs(
        [("--input", data), ("--spec", args.spec), *prompt_inputs(args)],
        [("--out", out), ("--summary-out", args.summary_out), ("--report", report)],
    )
    bar = None
    if not args.quiet:
        from respeval.evaluate.inputs import open_dataset

        bar = progress(open_dataset(data).count(), unit="rows", desc="evaluating")
    try:
        result = evaluate(
            data,
            metrics,
            model=model,
            response_column=args.response_field or columns.get("response", "response"),
            reference_column=args.reference_field or columns.get("reference", "reference"),
            baseline_column=args.baseline_field or columns.get("baseline", "baseline_model_response"),
            prompt_column=columns.get("prompt", "prompt"),
            id_column=args.id_field or columns.get("id"),
            out=out,
            resume=args.resume,
            on_error=args.on_error,
            errors_out=args.errors,
            chunk_size=args.chunk_size,
            cache=judge.cache,
            concurrency=judge.engine.concurrency,
            samples=args.samples or spec["judge"].get("samples", 1),
            engine_options=judge.engine,
            bootstrap=args.bootstrap,
            confidence=args.confidence,
            seed=args.seed,
            title=args.title or spec.get("title"),
            progress=bar.update if bar is not None else None,
            batch=judge.batch,
            batch_progress=progress_printer(args, "evaluate"),
        )
    except JudgeStopped as exc:
        print(f"respeval evaluate: {exc}; finished chunks are kept: rerun with --resume", file=sys.stderr)
        if exc.kind == STOP_WAITING:
            return Exit.BATCH_PENDING
        return stop_exit(exc.kind) if exc.kind is not None else Exit.JUDGE_FATAL
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        batch_json = {"batch": result.batch.to_json()} if result.batch is not None else {}
        print(json.dumps({**result.summary_metrics, **batch_json}, indent=2))
    else:
        print(result.format() + (f"\n{result.batch.format()}" if result.batch is not None else ""))
    write_run_outputs(result.run_summary, summary_out=args.summary_out, report=report)
    return Exit.OK
