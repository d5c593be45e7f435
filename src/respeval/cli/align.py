"""``respeval align``: align a judge with human labels and freeze the chosen judge."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from respeval.cli.common import (
    Exit,
    add_bootstrap_arguments,
    field_mapping,
    non_negative_int,
    positive_int,
    stop_exit,
)
from respeval.cli.judge_options import InputFileError, JudgeConfig, add_judge_arguments
from respeval.io.files import guarded_outputs
from respeval.redact import redact, redact_data

NAME = "align"
HELP = "align a judge with human labels: few-shot examples and guidelines chosen on a train split"
DESCRIPTION = (
    "From a judge spec and human-labelled rows: a seeded stratified train/held-out split, an optimiser "
    "over the judge's prompt (few-shot examples drawn from the train rows; optionally guidelines rewritten "
    "by a model from the train disagreements) scored on the train split only, the held-out balanced "
    "accuracy, balanced F1 and Cohen's kappa with bootstrap intervals before and after, the bias probes "
    "on both judges, and the chosen judge frozen as a versioned spec file (its hash is in every cache key "
    "and in the signature)."
)
EPILOG = """\
the judge spec (--spec FILE, .json/.yaml/.toml): one pointwise entry, as in an evaluate spec:
  {"pointwise": "NAME", "template": "... {column} ...", "labels": ["1", "2"], "criteria": {...}}
  (or "score_range": [1, 5]). The human label of each row (--label-field) must be one of the
  judge's labels (or a score in its range).

what it writes (--out FILE): the chosen judge as a spec entry, with its examples, guidelines,
  spec_version (one more than the spec's) and spec_hash, and an "aligned" record of how it was
  chosen (split, candidates, held-out numbers). Use it as a metrics: entry of `respeval evaluate`,
  or align it again.

--seed seeds the split, the few-shot draws and the bootstrap. A judge that stops (the budget,
Ctrl-C, a model error) reports no number from part of the rows; rerun with the same --cache.

the held-out labels are never shown to the optimiser: it gets the train rows only. Every
candidate judges the train rows except its own examples.

examples:
  respeval align --example
  respeval align --input labelled.jsonl --spec judge.json --model openai:gpt-4o-mini \\
      --out judge.aligned.json --cache align.sqlite
  respeval align --input llmbar.json --spec judge.yaml --model openai:gpt-4o-mini \\
      --rewriter openai:gpt-4o --swap output_1,output_2 --out judge.aligned.json
"""


def _pair(value: str) -> tuple[str, str]:
    a, sep, b = value.partition(",")
    if not sep or not a.strip() or not b.strip():
        raise argparse.ArgumentTypeError(f"expected COLUMN,COLUMN, got {value!r}")
    return a.strip(), b.strip()


def _fraction(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1), got {value!r}") from None
    if not 0.0 < x < 1.0:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1), got {value!r}")
    return x


def add_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_argument_group("input")
    src.add_argument("--input", metavar="FILE", help="human-labelled rows (.jsonl, .json, .csv, .parquet)")
    src.add_argument("--spec", metavar="FILE", help="the judge spec: one pointwise entry (.json, .yaml, .toml)")
    src.add_argument(
        "--label-field", default="label", metavar="NAME", help="the column of the human labels (default label)"
    )
    src.add_argument(
        "--example",
        action="store_true",
        help="align the shipped example: 40 LLMBar pairs, a toy judge that learns from its examples (offline)",
    )
    split = p.add_argument_group("split and optimiser")
    split.add_argument(
        "--held-out",
        type=_fraction,
        default=0.5,
        metavar="F",
        help="share of every label's rows held out (default 0.5)",
    )
    split.add_argument(
        "--candidates",
        type=non_negative_int,
        default=8,
        metavar="N",
        help="few-shot sets tried besides the judge as given (default 8)",
    )
    split.add_argument("--shots", type=positive_int, default=4, metavar="K", help="examples per set (default 4)")
    split.add_argument(
        "--rewriter", metavar="SPEC", help="a model that rewrites the guidelines from the train disagreements"
    )
    split.add_argument(
        "--rewrite-rounds", type=non_negative_int, default=1, metavar="N", help="rewrites tried (default 1)"
    )
    probes = p.add_argument_group("bias probes")
    probes.add_argument(
        "--swap",
        type=_pair,
        metavar="COL,COL",
        help="two columns to exchange for the position probe (e.g. output_1,output_2)",
    )
    probes.add_argument(
        "--swap-label",
        action="append",
        type=field_mapping,
        default=[],
        metavar="A=B",
        help="an answer with the columns exchanged means B in the original order (default: two labels trade places)",
    )
    add_bootstrap_arguments(probes)
    add_judge_arguments(p, groups=("model", "engine", "cache", "budget"))
    out = p.add_argument_group("output")
    out.add_argument("--out", metavar="FILE", help="the frozen judge spec (.json); required unless --example")
    out.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    """Run ``respeval align`` with parsed arguments; returns the exit status."""
    from respeval.align import align
    from respeval.align.example import dataset_path, spec_path

    try:
        config = JudgeConfig.from_args(args)
        data, spec, model, swap = args.input, args.spec, config.model, args.swap
        if args.example:
            data = data or dataset_path()
            spec = spec or spec_path()
            if model is None:
                from respeval.judge.specs import load_model

                model = load_model("python:respeval.align.example:nearest_example_judge")
            swap = swap or ("output_1", "output_2")
        missing = [flag for flag, v in (("--input", data), ("--spec", spec), ("--model", model)) if v is None]
        if not args.example and args.out is None:
            missing.append("--out")
        if missing:
            raise InputFileError(f"give {', '.join(missing)} (or --example)")
        rewriter = None
        if args.rewriter:
            from respeval.judge.specs import load_model

            rewriter = load_model(args.rewriter)
    except (InputFileError, ValueError, OSError) as exc:
        print(f"respeval align: error: {redact(exc)}", file=sys.stderr)
        return Exit.INPUT
    from respeval.align.optimiser import AlignmentStopped

    inputs = [("--input", data), ("--spec", spec)]
    assert model is not None
    with guarded_outputs(inputs, [("--out", args.out)], unlocked=[("--cache", config.cache)]):
        try:
            result = align(
                data,
                spec,
                model,
                label_field=args.label_field,
                held_out=args.held_out,
                seed=args.seed,
                candidates=args.candidates,
                shots=args.shots,
                rewriter=rewriter,
                rewrite_rounds=args.rewrite_rounds,
                swap=swap,
                swap_labels=dict(args.swap_label) or None,
                cache=config.cache,
                options=config.engine,
                n_boot=args.bootstrap,
                bootstrap_seed=args.seed,
                confidence=args.confidence,
                out=args.out,
            )
        except AlignmentStopped as exc:
            print(f"respeval align: stopped: {redact(exc)}", file=sys.stderr)
            return stop_exit(exc.stop_kind) if exc.stop_kind else Exit.JUDGE_FATAL
    if args.example and args.input is None:
        result.source = "the shipped respeval/data/llmbar_example.jsonl"
    if args.json:
        out: Any = redact_data(result.to_dict())
        print(json.dumps(out, indent=2, default=str))
    else:
        print(redact(result.format()))
    return Exit.OK
