"""The judging methods' options on the command line (pairwise, rubric, adaptive-rubric,
multi-sampling), how a ``respeval judge`` run of a whole-run method writes its rows and its
run summary, and ``--example`` (pairwise on real recorded judgments).

:func:`add_method_arguments` adds the options; :func:`method_options` reads them back as a
:class:`~respeval.judge.methods.MethodOptions`, from which the registry builds any method
(:func:`~respeval.judge.methods.build_method`): nothing here knows which method runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from respeval.cli.common import add_epilog_more
from respeval.cli.judge_options import InputFileError, JudgeConfig
from respeval.io import read_records as read_input
from respeval.io.files import replace_with_new
from respeval.judge.engine import EngineOptions
from respeval.judge.methods import MethodOptions
from respeval.judge.methods.llmbar import (
    EXAMPLE_EVALUATOR,
    example_instances,
    llmbar_statistics,
    replay_model,
    to_pairs,
)
from respeval.judge.methods.pairwise import FLIP_MODES, PairwiseRun
from respeval.judge.methods.rubrics import PRESETS, load_criteria, load_rubrics
from respeval.judge.methods.sampling import AGGREGATIONS
from respeval.judge.run import run as judge_run

__all__ = [
    "add_method_arguments",
    "check_method_options",
    "method_options",
    "read_records",
    "rows_as_they_finish",
    "run_example",
    "write_summary",
]

_EPILOG = """\
methods:
  pointwise        the reference-based equivalence judge (see respeval judge)
  pairwise         baseline_model_response vs response (the candidate), both orders by
                   default: CANDIDATE, BASELINE, TIE or INCONSISTENT per pair (the labels
                   evaluate and validate use); win rates with Wilson CIs and the
                   position-consistency rate. --flip half: one order per pair, every other
                   pair swapped (cheaper, weaker: consistency cannot be measured)
  rubric           --rubric FILE (JSON list of {id, description, importance, weight}):
                   a verdict per criterion, weighted score; a reply missing a criterion
                   leaves the row unscored
  adaptive-rubric  the judge writes one rubric per prompt (--preset, --guidelines), frozen
                   for every response to that prompt; --rubrics-out to export, edit, and
                   --rubrics-in to feed back
  --samples K      K requests per item (sample index in the cache key); --aggregate
                   majority (strict; early stop), mean or median

examples:
  respeval judge --example
  respeval judge --method pairwise --input pairs.jsonl --model fake: --out pairs.out.jsonl
  respeval judge --method adaptive-rubric --preset INSTRUCTION_FOLLOWING --input rows.jsonl \\
      --model openai:gpt-4o-mini --rubrics-out rubrics.json
"""

_RUBRIC_WRITERS_ONLY = ("--rubrics-in", "--rubrics-out", "--guidelines")


def add_method_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the method options to a ``respeval judge`` parser (see the module docstring)."""
    from respeval.cli.common import positive_int

    g = parser.add_argument_group("methods (pairwise, rubrics, multi-sampling)")
    g.add_argument(
        "--example",
        action="store_true",
        help="pairwise judging with flipping on real recorded judgments (LLMBar, GPT-4): no network, no key",
    )
    g.add_argument(
        "--flip",
        choices=FLIP_MODES,
        default="both",
        help="pairwise orders: both (default) or half (every other pair swapped; weaker)",
    )
    g.add_argument("--samples", type=positive_int, default=1, metavar="K", help="requests per item (default 1)")
    g.add_argument(
        "--aggregate",
        choices=AGGREGATIONS,
        default="majority",
        help="how K samples combine: majority (strict; default), mean, median",
    )
    g.add_argument(
        "--sample-temperature",
        type=float,
        default=None,
        metavar="T",
        help="temperature for multi-sampling (default: the method's, 0)",
    )
    g.add_argument("--rubric", metavar="FILE", help="static rubric: JSON list of criteria")
    g.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="GENERAL_QUALITY",
        help="adaptive rubric focus (default GENERAL_QUALITY)",
    )
    g.add_argument(
        "--guidelines", metavar="TEXT", help="adaptive rubric guidelines, e.g. 'must not give financial advice'"
    )
    g.add_argument("--rubrics-in", metavar="FILE", help="adaptive rubrics to use (edited export)")
    g.add_argument("--rubrics-out", metavar="FILE", help="write the adaptive rubrics used (JSON)")
    add_epilog_more(parser, _EPILOG)
    return parser


def method_options(
    args: argparse.Namespace, config: JudgeConfig, template: str | None, instruction: str | None
) -> MethodOptions:
    """The method options of ``respeval judge``'s parsed arguments (``--rubric`` and
    ``--rubrics-in`` read), with the verdict options of ``config``."""
    return MethodOptions(
        threshold=config.threshold,
        max_tokens=config.max_tokens,
        seed=config.seed,
        template=template,
        system_instruction=instruction,
        samples=args.samples,
        aggregate=args.aggregate,
        sample_temperature=args.sample_temperature,
        flip=args.flip,
        criteria=load_criteria(args.rubric) if args.rubric else None,
        preset=args.preset,
        guidelines=args.guidelines,
        rubrics=load_rubrics(args.rubrics_in) if args.rubrics_in else None,
    )


def check_method_options(args: argparse.Namespace, method: Any) -> None:
    """Refuse the options the method built does not read."""
    given = [flag for flag in _RUBRIC_WRITERS_ONLY if getattr(args, flag[2:].replace("-", "_"))]
    if given and not getattr(method, "writes_rubrics", False):
        raise InputFileError(
            "/".join(_RUBRIC_WRITERS_ONLY) + " apply to a method that writes rubrics (--method adaptive-rubric)"
        )


def read_records(path: str) -> list[dict[str, Any]]:
    """Every record of a JSONL, CSV or Parquet input (a whole-run method may read them more
    than once)."""
    return [record for _, record in read_input(path)]


@contextlib.contextmanager
def rows_as_they_finish(out: str | None) -> Iterator[Callable[[Any], None] | None]:
    """A writer of each final row (or pair) to ``out``, one flushed line per row, so a killed
    run leaves every row it finished; the run's end rewrites the file whole, in row order."""
    if not out:
        yield None
        return
    with replace_with_new(out) as fh:  # a link planted at OUT.partial is replaced, never written through

        def write(row: Any) -> None:
            fh.write(json.dumps(row.to_json(), ensure_ascii=False) + "\n")
            fh.flush()

        yield write


def write_summary(
    args: argparse.Namespace, data: dict[str, Any], rows: Any, records: list[dict[str, Any]], output: str | None
) -> None:
    """--summary-out / --report: the run summary, with the score distribution and the worst
    rows (what each row gives of itself: ``digest_entry``) and their texts."""
    from respeval.report import RowDigest, judge_run_summary, texts_of, write_run_outputs

    digest = RowDigest(args.method)
    for row in rows:
        entry = row.digest_entry()
        if entry is not None:
            index, score, explanation, rank = entry
            digest.add(int(index), score, explanation, rank=rank)
    texts = texts_of(records, digest.rows(), dict(args.field))
    summary = judge_run_summary({**data, "output": output}, digest=digest, texts=texts)
    write_run_outputs(summary, summary_out=args.summary_out, report=args.report)


# --------------------------------------------------------------------------- --example


def run_example(args: argparse.Namespace) -> int:
    """Pairwise judging, both orders (or ``--flip``), on the LLMBar sample shipped with
    respeval: GPT-4's recorded replies are replayed through the real pairwise method."""
    instances = example_instances()
    pairs = to_pairs(instances)
    model = replay_model(instances, EXAMPLE_EVALUATOR)
    options = EngineOptions(reask=False, concurrency=8)
    report = judge_run(pairs, model, method=PairwiseRun(flip=args.flip), options=options)
    labels = [p["label"] for p in pairs]
    scored = [(p, label) for p, label in zip(report.pairs, labels) if p.outcome is not None]
    agree = sum(p.outcome == label for p, label in scored)
    if args.summary_out or args.report:
        args.method = "pairwise"
        write_summary(args, {**report.to_json(), "model": "LLMBar replay"}, report.pairs, pairs, args.out)
    if args.json:
        out = report.to_json()
        out["accuracy_vs_human"] = agree / len(scored) if scored else None
        if args.flip == "both":
            out["llmbar_statistics"] = llmbar_statistics(report, labels)
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"LLMBar Natural sample: {len(pairs)} instruction/output pairs, GPT-4's recorded verdicts "
        f"(LLMBar, MIT licence) replayed offline.\nA = output_1, B = output_2; the human label says which "
        "is better.\n"
    )
    print(report.format())
    print(
        f"\nagreement with the human label: {agree}/{len(scored)} pairs"
        + (" (an inconsistent pair counts as wrong)" if args.flip == "both" else "")
    )
    if args.flip == "both":
        stats = llmbar_statistics(report, labels)
        print(
            f"right per order (LLMBar's figures): A shown first {stats['correct_False']}, "
            f"B shown first {stats['correct_True']}, both {stats['correct_both']}"
        )
    for pair, label in list(zip(report.pairs, labels))[:5]:
        print(
            f"  {pair.id}: A|B order says {pair.winners.get('ab')}, B|A order says {pair.winners.get('ba')} "
            f"-> {pair.outcome} (human: {label})"
        )
    return 0
