"""``respeval validate``: a judge (or a metric) against human labels."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from respeval import report as rep
from respeval import validate as val
from respeval.cli.common import Exit, add_bootstrap_arguments, non_negative_int
from respeval.io.files import guarded_outputs
from respeval.redact import redact_data

NAME = "validate"
HELP = "check a judge (or a metric) against human labels"
DESCRIPTION = (
    "Agreement of judge verdicts with human labels (accuracy, balanced accuracy, macro and "
    "support-weighted F1, Cohen's kappa, confusion matrix), correlations for numeric scores, position "
    "consistency for pairwise judges, a verbosity probe; seeded bootstrap intervals throughout."
)
EPILOG = """\
columns (Vertex's convention; several metrics per file are fine):
  {metric}/score            with {metric}/human_rating           (pointwise)
  {metric}/pairwise_choice  with {metric}/human_pairwise_choice  (pairwise)
  {metric}/pairwise_choice_swapped: the judge's verdict with the responses shown the other
  way round, in the original orientation (adds position consistency and flip rate).
  Text columns used when present: prompt, reference, response, baseline_model_response,
  response_a/_b, response1/2, output_1/2, {metric}/explanation.
  Rows where the judge or the human value is missing are dropped together and counted.

examples:
  respeval validate --input judged.jsonl
  respeval validate --input judged.parquet --labels humans.csv --id-field id
  respeval validate --input scored.jsonl --judge-field scores.rouge_2_f_score \\
      --human-field scores.litepyramid_recall --system-field system --level system
  respeval validate --input judged.jsonl --summary-out run/validation.json && \\
      respeval report run/ --out report.html
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_argument_group("input")
    src.add_argument(
        "--input",
        dest="results",
        required=True,
        metavar="FILE",
        help="judge results (.jsonl, .json, .csv, .parquet); may hold the human labels too",
    )
    src.add_argument("--labels", metavar="FILE", help="human labels, if not in --input")
    src.add_argument(
        "--id-field", metavar="NAME", help="match --labels rows to --input rows on this field (default: row order)"
    )
    src.add_argument(
        "--metric",
        action="append",
        metavar="NAME",
        help="validate only this metric (repeatable; default: every metric found)",
    )
    cols = p.add_argument_group("explicit columns (instead of Vertex's names)")
    cols.add_argument("--judge-field", metavar="COL", help="judge (or metric) values; dotted paths reach into objects")
    cols.add_argument("--human-field", metavar="COL", help="human values")
    cols.add_argument("--swapped-field", metavar="COL", help="pairwise verdicts in the swapped order")
    cols.add_argument("--kind", choices=["pointwise", "pairwise"], help="default: pairwise with --swapped-field")
    cols.add_argument(
        "--name",
        help="name of the metric in the output (default: the last part of --judge-field, e.g. rouge_2_f_score)",
    )
    corr = p.add_argument_group("correlation")
    corr.add_argument("--system-field", metavar="COL", help="system of each row (for --level system)")
    corr.add_argument(
        "--level",
        choices=["segment", "system"],
        default="segment",
        help="correlate rows (segment) or per-system means (system); default segment",
    )
    opt = p.add_argument_group("options")
    opt.add_argument(
        "--first-shown", metavar="LABEL", help="pairwise label of the response shown first (default: A, or 1)"
    )
    add_bootstrap_arguments(opt)
    opt.add_argument(
        "--disagreements",
        type=non_negative_int,
        default=10,
        metavar="K",
        help="worst disagreements kept per metric (default 10)",
    )
    out = p.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print the run summary as JSON")
    out.add_argument("--summary-out", metavar="FILE", help="write the run summary (JSON) for `respeval report`")
    out.add_argument("--report", metavar="FILE", help="also write the HTML report")


# --------------------------------------------------------------------------- validate


def _load_joined(args: argparse.Namespace) -> dict[str, list[Any]]:
    table = val.load_table(args.results)
    if args.labels:
        table = val.join_tables(table, val.load_table(args.labels), id_field=args.id_field)
    return table


def _selected_metrics(args: argparse.Namespace, table: dict[str, list[Any]]) -> list[val.MetricColumns]:
    if args.judge_field or args.human_field:
        if not (args.judge_field and args.human_field):
            raise ValueError("--judge-field and --human-field go together")
        kind: Literal["pointwise", "pairwise"] = args.kind or ("pairwise" if args.swapped_field else "pointwise")
        name = args.name or re.split(r"[./]", args.judge_field)[-1] or args.judge_field
        return [val.MetricColumns(name, kind, args.judge_field, args.human_field, args.swapped_field)]
    found = val.find_metrics(table)
    if args.metric:
        names = {m.name for m in found}
        missing = [m for m in args.metric if m not in names]
        if missing:
            raise ValueError(
                f"no judge and human columns for metric(s) {', '.join(missing)}; "
                f"found: {', '.join(sorted(names)) or 'none'}"
            )
        found = [m for m in found if m.name in args.metric]
    return found


def _first_shown(value: str | None) -> Any:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return value


def _system_correlations(
    args: argparse.Namespace, table: dict[str, list[Any]], results: Sequence[val.MetricValidation]
) -> list[dict[str, Any]]:
    """System-level correlations (``--level system``) of every numeric judge/human pair."""
    if args.level != "system":
        return []
    if not args.system_field:
        raise ValueError("--level system needs --system-field")
    systems = val.table_column(table, args.system_field)
    out = []
    for r in results:
        judge, human = val.table_column(table, r.judge_column), val.table_column(table, r.human_column)
        keep = [
            i
            for i, (a, b) in enumerate(zip(judge, human))
            if val.is_number(a) and val.is_number(b) and systems[i] is not None
        ]
        if not keep:
            continue
        corr = val.metric_human_correlation(
            [judge[i] for i in keep], [human[i] for i in keep], systems=[systems[i] for i in keep], level="system"
        )
        out.append(rep.correlation_entry(r.name, corr, metric=r.judge_column, human=r.human_column))
    return out


def build_validation_summary(args: argparse.Namespace) -> dict[str, Any]:
    """Run the validation the arguments ask for; returns the run summary."""
    table = _load_joined(args)
    metrics = _selected_metrics(args, table)
    results = val.validate_table(
        table,
        metrics=metrics,
        n_boot=args.bootstrap,
        seed=args.seed,
        confidence=args.confidence,
        first_shown=_first_shown(args.first_shown),
        max_disagreements=args.disagreements,
    )
    meta = {
        "command": "validate",
        "results": str(args.results),
        "labels": str(args.labels or args.results),
        "bootstrap": f"{args.bootstrap} resamples, seed {args.seed}, "
        f"{round(100 * args.confidence)}% percentile intervals",
    }
    summary = rep.validation_summary(results, title=f"Validation of {Path(args.results).name}", meta=meta)
    correlations = _system_correlations(args, table, results)
    if correlations:
        summary["correlations"] = correlations
    return summary


def _ci_text(intervals: dict[str, Any], key: str) -> str:
    iv = intervals.get(key)
    if not iv or iv.get("low") is None:
        return ""
    return f"[{iv['low']:.4f}, {iv['high']:.4f}]"


def _value(x: Any) -> str:
    return "-" if x is None else f"{x:.4f}"


def format_validation(summary: dict[str, Any]) -> str:
    """The human-readable tables of a validation run summary."""
    lines: list[str] = []
    for v in summary.get("validation", []):
        d = v["dropped"]
        scorer = v.get("scorer") or "judge"
        lines += [
            f"{v['metric']} ({v['kind']}{' metric' if scorer == 'metric' else ''}): {v['used']} of {v['rows']} "
            f"rows used, {d['total']} dropped "
            f"({scorer} missing {d['judge_missing']}, human missing {d['human_missing']}, "
            f"both {d['both_missing']})",
            "",
        ]
        lines += _format_agreement(v)
        lines += _format_block(
            "correlation with human ratings",
            v.get("correlation"),
            [("pearson", "Pearson r"), ("spearman", "Spearman rho"), ("kendall_tau_b", "Kendall tau-b")],
        )
        lines += _format_block(
            "position consistency (both orders)",
            v.get("pairwise"),
            [
                ("consistency", "consistency"),
                ("flip_rate", "flip rate"),
                ("tie_rate", "tie rate"),
                ("consistency_kappa", "kappa between orders"),
                ("first_position_rate", "picks the first shown"),
            ],
        )
        if v.get("pairwise_note"):
            lines += [f"  note: {v['pairwise_note']}", ""]
        lines += _format_verbosity(v.get("verbosity"))
    for c in summary.get("correlations", []):
        lines.append(
            f"{c['name']}: {c['level']}-level correlation over {c['n']} units: Pearson "
            f"{_value(c['pearson'])}, Spearman {_value(c['spearman'])}, Kendall tau-b "
            f"{_value(c['kendall_tau_b'])}"
        )
    return "\n".join(lines).rstrip()


def _format_agreement(v: dict[str, Any]) -> list[str]:
    ag = v.get("agreement")
    if not ag:
        return [f"  agreement {v.get('agreement_note') or 'not computed'}", ""]
    iv = ag.get("intervals", {})
    lines = [f"  {'statistic':<42} {'value':>8}   interval"]
    for key, name in val.AGREEMENT_FIELDS.items():
        lines.append(f"  {name:<42} {_value(ag[key]):>8}   {_ci_text(iv, key)}")
    labels = [str(x) for x in ag["labels"]]
    width = max(6, *(len(x) for x in labels)) + 1
    lines += [
        "",
        f"  confusion (rows: human, columns: {v.get('scorer') or 'judge'})",
        "  " + " " * width + "".join(f"{x:>{width}}" for x in labels),
    ]
    for lab, row in zip(labels, ag["confusion"]["matrix"]):
        lines.append(f"  {lab:>{width}}" + "".join(f"{c:>{width}}" for c in row))
    lines += ["", f"  {'label':>{width}} {'precision':>10} {'recall':>8} {'F1':>8} {'support':>8}"]
    for c in ag["per_class"]:
        lines.append(
            f"  {str(c['label']):>{width}} {c['precision']:10.4f} {c['recall']:8.4f} {c['f1']:8.4f} {c['support']:8d}"
        )
    return lines + [""]


def _format_block(title: str, block: dict[str, Any] | None, keys: list[tuple[str, str]]) -> list[str]:
    if not block:
        return []
    iv = block.get("intervals", {})
    lines = [f"  {title}, n = {block['n']}"]
    for key, name in keys:
        lines.append(f"  {name:<42} {_value(block.get(key)):>8}   {_ci_text(iv, key)}")
    return lines + [""]


def _format_verbosity(vb: dict[str, Any] | None) -> list[str]:
    if not vb:
        return []
    iv = vb.get("intervals", {})
    if vb["kind"] == "pairwise":
        text = (
            f"  verbosity: share of decisive verdicts picking the longer response: judge "
            f"{_value(vb['judge'])} {_ci_text(iv, 'judge')}, human {_value(vb['human'])}"
        )
    else:
        text = (
            f"  verbosity: Spearman(score, length) judge {_value(vb['judge'])} {_ci_text(iv, 'judge')}; "
            f"human {_value(vb['human'])}"
        )
    if vb.get("excess") is not None:
        text += f", judge - human {vb['excess']:+.4f} {_ci_text(iv, 'excess')}"
    return [text, ""]


def run(args: argparse.Namespace) -> int:
    """Run ``respeval validate``; returns the exit status."""
    inputs = [("--input", args.results), ("--labels", args.labels)]
    with guarded_outputs(inputs, [("--summary-out", args.summary_out), ("--report", args.report)]):
        # the texts of disagreements come from the user's files: a key pasted there stays out
        summary = redact_data(build_validation_summary(args))
        if args.summary_out:  # the one writer every command uses (strict JSON, replaced atomically)
            rep.write_run_outputs(summary, summary_out=args.summary_out)
        if args.json:
            print(json.dumps(summary, indent=2, allow_nan=False))
        else:
            print(format_validation(summary))
            if args.summary_out:
                print(f"\nrun summary: {Path(args.summary_out).resolve()}")
        if args.report:
            rep.write_run_outputs(summary, report=args.report)
            print(f"report: {Path(args.report).resolve()}", file=sys.stderr if args.json else sys.stdout)
    return Exit.OK
