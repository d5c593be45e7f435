"""The ``respeval`` command line.  Results and tables go to stdout, progress and
errors to stderr, so ``--json`` output can be piped."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from respeval import __version__

ROUGE_METRICS = [f"rouge{n}" for n in range(1, 10)] + ["rougeL", "rougeLsum"]

_SCORE_EPILOG = """\
inputs:
  --pred and --ref take plain text (one record per line), JSONL, CSV or Parquet,
  chosen by extension. Structured files name their fields with --pred-field
  (default: response) and --ref-field (default: reference); a reference field may
  hold a list of references per row (the best-scoring one counts, per metric).
  --pred alone (no --ref) reads both fields from the same file.

examples:
  respeval score --example
  respeval score --pred outputs.txt --ref refs.txt --metrics rouge1,rougeL --stem
  respeval score --pred run.jsonl --metrics rougeLsum --out rows.parquet --json
"""


def _metrics(value: str) -> list[str]:
    names = [m.strip() for m in value.split(",") if m.strip()]
    unknown = [m for m in names if m not in ROUGE_METRICS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown metric(s) {', '.join(unknown) or '(none given)'}; available: {', '.join(ROUGE_METRICS)}")
    return names


def _positive_int(value: str) -> int:
    n = int(value)
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value}")
    return n


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="respeval",
        description="Score LLM and agent responses against references, with the numbers of "
                    "rouge-score (and more) from a fast native core.")
    parser.add_argument("--version", action="version", version=f"respeval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    score = sub.add_parser(
        "score", help="lexical metrics of predictions against references",
        description="Score predictions against references and print a corpus table with "
                    "bootstrap confidence intervals; optionally write one result row per input row.",
        epilog=_SCORE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = score.add_argument_group("input")
    src.add_argument("--example", action="store_true",
                     help="score the small sample corpus shipped with respeval")
    src.add_argument("--pred", metavar="FILE", help="predictions (.txt, .jsonl, .csv, .parquet)")
    src.add_argument("--ref", metavar="FILE", help="references (default: the --pred file)")
    src.add_argument("--pred-field", metavar="NAME", help="prediction field (default: response)")
    src.add_argument("--ref-field", metavar="NAME", help="reference field (default: reference)")
    src.add_argument("--id-field", metavar="NAME", help="id field of the predictions, copied to the output")
    met = score.add_argument_group("metrics")
    met.add_argument("--metrics", type=_metrics, default=["rouge1", "rouge2", "rougeL"],
                     help="comma-separated: rouge1..rouge9, rougeL, rougeLsum (default: rouge1,rouge2,rougeL)")
    met.add_argument("--stem", action="store_true", help="Porter-stem tokens longer than 3 characters")
    met.add_argument("--tokenizer", choices=["rouge", "rouge-unicode"], default="rouge",
                     help="rouge: rouge-score's (exact); rouge-unicode: keeps non-Latin scripts "
                          "(respeval's own, not rouge-score's numbers)")
    out = score.add_argument_group("output")
    out.add_argument("--out", metavar="FILE", help="per-row results (.parquet, .jsonl or .csv)")
    out.add_argument("--json", action="store_true", help="print the summary as JSON")
    out.add_argument("--bootstrap", type=_positive_int, default=1000, metavar="N",
                     help="bootstrap resamples for confidence intervals (0 = none; default 1000)")
    out.add_argument("--confidence", type=float, default=0.95, help="confidence level (default 0.95)")
    out.add_argument("--seed", type=int, default=12345, help="bootstrap seed (default 12345)")
    out.add_argument("--quiet", action="store_true", help="no progress bar")
    run = score.add_argument_group("execution")
    run.add_argument("--threads", type=_positive_int, default=None,
                     help="threads for the native core (default: all cores)")
    run.add_argument("--chunk-size", type=_positive_int, default=50_000, help="rows per chunk (default 50000)")
    return parser


def _table(summary) -> str:
    pct = int(round(summary.confidence * 100))
    lines = [f"{summary.rows} rows scored in {summary.seconds:.2f}s", "",
             f"{'metric':<10} {'P':>8} {'R':>8} {'F':>8}   F {pct}% CI (bootstrap)"]
    for name, m in summary.metrics.items():
        ci = (f"[{m.interval.low.fmeasure:.4f}, {m.interval.high.fmeasure:.4f}]"
              if m.interval is not None else "-")
        lines.append(f"{name:<10} {m.mean.precision:8.4f} {m.mean.recall:8.4f} {m.mean.fmeasure:8.4f}   {ci}")
    lines += ["", f"signature: {summary.signature}"]
    if summary.output:
        lines.append(f"per-row results: {summary.output}")
    return "\n".join(lines)


def _score(args: argparse.Namespace) -> int:
    from respeval.pipeline import EXAMPLE, score_files, total_rows

    if args.example:
        if args.pred or args.ref:
            raise SystemExit("respeval score: --example and --pred/--ref are exclusive")
        args.pred = str(EXAMPLE)
        args.id_field = args.id_field or "id"
        if args.metrics == ["rouge1", "rouge2", "rougeL"]:
            args.metrics = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    if not args.pred:
        raise SystemExit("respeval score: give --pred FILE (and usually --ref FILE), or --example")
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        # appears only for runs longer than a couple of seconds
        bar = tqdm(total=total_rows(args.pred), unit="rows", file=sys.stderr, delay=2.0,
                   dynamic_ncols=True, desc="scoring")
    try:
        summary = score_files(args.pred, args.ref, metrics=args.metrics, pred_field=args.pred_field,
                              ref_field=args.ref_field, id_field=args.id_field, stemmer=args.stem,
                              tokenizer=args.tokenizer, out=args.out, threads=args.threads,
                              chunk_size=max(args.chunk_size, 1), bootstrap=args.bootstrap,
                              confidence=args.confidence, seed=args.seed,
                              progress=bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        print(json.dumps(summary.to_json(), indent=2))
    else:
        print(_table(summary))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return _score(args)
    except (ValueError, TypeError, OSError) as exc:
        # input problems are the user's to fix: one clear line, no traceback
        print(f"respeval {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
