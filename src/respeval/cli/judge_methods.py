"""The judging methods beyond pointwise on the command line: pairwise, rubric,
adaptive-rubric, multi-sampling, and ``--example`` (pairwise on real recorded judgments).

``add_method_arguments(parser)`` adds their options to the ``respeval judge`` parser
(``--input`` and ``--model`` are checked here, because ``--example`` needs neither);
``run_methods(args)`` runs any method, handing plain pointwise runs to
:func:`respeval.cli.judge.run_judge` unchanged.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

from respeval.cli.batching import batch_options, exit_status, progress_printer, run_batched_step
from respeval.cli.common import stop_exit
from respeval.cli.judge import (
    EXIT_FATAL,
    EXIT_INPUT,
    InputFileError,
    cache_path_for,
    describe_output,
    engine_options,
    finish_output,
    model_for,
    prompt_options,
    read_jsonl,
    run_judge,
)
from respeval.io import format_of
from respeval.io.files import atomic_output, guarded_outputs, partial_name
from respeval.judge.cache import JudgeCache
from respeval.judge.engine import STOP_CACHE, EngineOptions
from respeval.judge.methods.llmbar import (
    EXAMPLE_EVALUATOR,
    example_instances,
    llmbar_statistics,
    replay_model,
    to_pairs,
)
from respeval.judge.methods.pairwise import FLIP_MODES, PairResult, Pairwise, PairwiseReport, arun_pairwise
from respeval.judge.methods.pointwise import Pointwise
from respeval.judge.methods.rubrics import (
    PRESETS,
    Rubric,
    RubricGenerator,
    RubricReport,
    arun_adaptive,
    arun_rubric,
    export_rubrics,
    load_criteria,
    load_rubrics,
)
from respeval.judge.methods.sampling import AGGREGATIONS, SampledResult, SampledRow, arun_sampled
from respeval.judge.models.base import JudgeModel
from respeval.redact import redact
from respeval.stats import wilson_interval

__all__ = ["add_method_arguments", "run_example", "run_methods"]

_EPILOG = """\
methods:
  pointwise        the reference-based equivalence judge (see respeval judge)
  pairwise         baseline_model_response (A) vs response (B), both orders by default:
                   A, B, tie or inconsistent per pair; win rates with Wilson CIs and the
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


def add_method_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the method options to a ``respeval judge`` parser (see the module docstring)."""
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
    g.add_argument("--samples", type=int, default=1, metavar="K", help="requests per item (default 1)")
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
    parser.epilog = (parser.epilog or "") + "\n" + _EPILOG
    return parser


# --------------------------------------------------------------------------- --example


def run_example(args: argparse.Namespace) -> int:
    """Pairwise judging, both orders (or ``--flip``), on the LLMBar sample shipped with
    respeval: GPT-4's recorded replies are replayed through the real pairwise method."""
    instances = example_instances()
    pairs = to_pairs(instances)
    model = replay_model(instances, EXAMPLE_EVALUATOR)
    options = EngineOptions(reask=False, concurrency=8)
    report = asyncio.run(arun_pairwise(pairs, model, flip=args.flip, options=options))
    labels = [p["label"] for p in pairs]
    scored = [(p, label) for p, label in zip(report.pairs, labels) if p.outcome is not None]
    agree = sum(p.outcome == label for p, label in scored)
    if args.summary_out or args.report:
        args.method = "pairwise"
        _write_summary(args, {**report.to_json(), "model": "LLMBar replay"}, [p.to_json() for p in report.pairs], pairs)
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


# --------------------------------------------------------------------------- runs


def _records(path: str) -> list[dict[str, Any]]:
    if format_of(path) != "jsonl":
        raise InputFileError(f"{path}: expected a .jsonl file")
    records = []
    for lineno, record in read_jsonl(path):
        if not isinstance(record, dict):
            raise InputFileError(f"{path}:{lineno}: expected a JSON object")
        records.append(record)
    return records


def _check(args: argparse.Namespace) -> None:
    if args.input is None or args.model is None:
        raise InputFileError("--input and --model are required (or --example)")
    if args.samples < 1:
        raise InputFileError(f"--samples must be at least 1, got {args.samples}")
    if args.method == "rubric" and not args.rubric:
        raise InputFileError("--method rubric needs --rubric FILE (a JSON list of criteria)")
    if args.method != "adaptive-rubric" and (args.rubrics_in or args.rubrics_out or args.guidelines):
        raise InputFileError("--rubrics-in/--rubrics-out/--guidelines apply to --method adaptive-rubric")


async def _dispatch(
    args: argparse.Namespace,
    records: list[dict[str, Any]],
    options: EngineOptions,
    cache_path: str | None,
    on_row: Callable[[Any], None] | None = None,
) -> Any:
    model = model_for(args)
    with contextlib.ExitStack() as stack:
        cache = stack.enter_context(JudgeCache(cache_path)) if cache_path else None
        return await _dispatch_with(args, records, options, model, cache, on_row)


async def _dispatch_with(
    args: argparse.Namespace,
    records: list[dict[str, Any]],
    options: EngineOptions,
    model: JudgeModel,
    cache: JudgeCache | None,
    on_row: Callable[[Any], None] | None = None,
) -> Any:
    """The method's run with this model, cache and options (one pass of a --batch run);
    ``on_row`` sees each row (each pair) once it is final."""
    fields = dict(args.field)
    template, instruction = prompt_options(args)
    common: dict[str, Any] = {"cache": cache, "options": options}
    if args.method == "pairwise":
        return await arun_pairwise(
            records,
            model,
            flip=args.flip,
            samples=args.samples,
            method=Pairwise(
                max_tokens=args.max_tokens, seed=args.seed, template=template, system_instruction=instruction
            ),
            fields=fields,
            temperature=args.sample_temperature,
            on_pair=on_row,
            **common,
        )
    if args.method == "rubric":
        method = Rubric(
            load_criteria(args.rubric),
            threshold=args.threshold,
            seed=args.seed,
            template=template,
            system_instruction=instruction,
        )
        return await arun_rubric(
            records,
            model,
            method,
            samples=args.samples,
            aggregate=args.aggregate,
            fields=fields,
            on_row=on_row,
            **common,
        )
    if args.method == "adaptive-rubric":
        rubrics = load_rubrics(args.rubrics_in) if args.rubrics_in else None
        report = await arun_adaptive(
            records,
            model,
            generator=RubricGenerator(args.preset, args.guidelines, system_instruction=instruction),
            rubrics=rubrics,
            threshold=args.threshold,
            samples=args.samples,
            aggregate=args.aggregate,
            template=template,
            system_instruction=instruction,
            on_row=on_row,
            **common,
        )
        if args.rubrics_out:
            export_rubrics(args.rubrics_out, report.rubrics)
        return report
    pointwise = Pointwise(
        threshold=args.threshold,
        max_tokens=args.max_tokens,
        seed=args.seed,
        template=template,
        system_instruction=instruction,
    )
    return await arun_sampled(
        records,
        model,
        pointwise,
        samples=args.samples,
        aggregate=args.aggregate,
        threshold=args.threshold,
        temperature=args.sample_temperature,
        fields=fields,
        on_row=on_row,
        **common,
    )


@contextlib.contextmanager
def _rows_as_they_finish(args: argparse.Namespace) -> Iterator[Callable[[Any], None] | None]:
    """A writer of each final row (or pair) to OUT.partial, one flushed line per row, so a
    killed run leaves every row it finished; the run's end rewrites the file whole, in row
    order.  Every method hands its rows on as they become final."""
    if not args.out:
        yield None
        return
    with open(partial_name(args.out), "w", encoding="utf-8") as fh:

        def write(row: SampledRow | PairResult) -> None:
            data = row.to_json() if isinstance(row, PairResult) else _row_json(row)
            fh.write(json.dumps(data, ensure_ascii=False) + "\n")
            fh.flush()

        yield write


def _rows_json(result: Any) -> list[dict[str, Any]]:
    if isinstance(result, PairwiseReport):
        return [p.to_json() for p in result.pairs]
    return [_row_json(r) for r in result.rows]


def _row_json(r: SampledRow) -> dict[str, Any]:
    return {"id": r.id, "row": r.row, **(r.verdict or {}), "status": r.status, "unscored_reason": r.unscored_reason}


def _summary(result: Any) -> tuple[dict[str, Any], str, str | None]:
    if isinstance(result, (PairwiseReport, RubricReport)):
        return result.to_json(), result.format(), result.stop_reason
    assert isinstance(result, SampledResult)
    scored = [r for r in result.rows if r.scored and r.verdict is not None]
    passed = sum(bool(r.verdict["pass"]) for r in scored if r.verdict is not None)
    stable = sum(bool(r.verdict.get("unanimous")) for r in scored if r.verdict is not None)
    interval = wilson_interval(passed, len(scored)) if scored else None
    reasons: dict[str, int] = {}
    for r in result.rows:
        if not r.scored:
            key = (r.unscored_reason or "unknown").split(":", 1)[0]
            reasons[key] = reasons.get(key, 0) + 1
    numbers = [float(v["score"]) for r in scored if isinstance((v := r.verdict or {}).get("score"), (int, float))]
    data = {
        "method": "pointwise",
        "rows": len(result.rows),
        "scored": len(scored),
        "coverage": len(scored) / len(result.rows) if result.rows else None,
        "passed": passed,
        "pass_rate": passed / len(scored) if scored else None,
        "pass_rate_ci": None if interval is None else {"low": interval[0], "high": interval[1]},
        "mean_score": sum(numbers) / len(numbers) if numbers else None,
        "unanimous": stable,
        "unscored_reasons": reasons,
        "stop_reason": result.stop_reason,
        **result.spend.to_json(),
    }
    text = (
        f"{len(result.rows)} rows, {len(scored)} scored (pointwise, multi-sampled)\n"
        f"pass rate   {data['pass_rate'] if data['pass_rate'] is None else round(data['pass_rate'], 4)} "
        f"({passed}/{len(scored)}); {stable} of {len(scored)} unanimous\n{result.spend.format()}"
    )
    return data, text, result.stop_reason


_PAIR_SCORES = {"B": 1.0, "tie": 0.5, "A": 0.0}
# the pairs a report shows first: the baseline won, the orders disagreed, a tie
_PAIR_RANKS = {"A": 0.0, "inconsistent": 1.0, "tie": 2.0}


def _write_summary(
    args: argparse.Namespace, data: dict[str, Any], rows: list[dict[str, Any]], records: list[dict[str, Any]]
) -> None:
    """--summary-out / --report: the run summary, with the score distribution and the worst
    rows (pairwise: the pairs the baseline won, then those the orders disagreed on, then
    ties) and their texts."""
    from respeval.report import RowDigest, judge_run_summary, texts_of, write_run_outputs

    digest = RowDigest(args.method)
    for row in rows:
        if row.get("status") != "scored":
            continue
        if args.method == "pairwise":
            outcome = row.get("outcome") or ""
            if outcome in _PAIR_RANKS:
                explanation = row.get("reasoning_ab") or row.get("reasoning_ba")
                digest.add(int(row["row"]), _PAIR_SCORES.get(outcome), explanation, rank=_PAIR_RANKS[outcome])
            continue
        score = row.get("score")
        reasoning = row.get("reasoning")
        if isinstance(reasoning, dict):  # rubrics: a verdict and its reason per criterion
            verdicts = row.get("criteria") or {}
            reasoning = "\n".join(
                f"{cid}: {'pass' if verdicts.get(cid) else 'FAIL'}. {why}" for cid, why in reasoning.items()
            )
        explanation = reasoning if isinstance(reasoning, str) else None
        if isinstance(score, (int, float)):
            digest.add(int(row["row"]), float(score), explanation)
    texts = texts_of(records, digest.rows(), dict(args.field))
    summary = judge_run_summary({**data, "output": args.out}, digest=digest, texts=texts)
    write_run_outputs(summary, summary_out=args.summary_out, report=args.report)


def run_methods(args: argparse.Namespace) -> int:
    """Run ``respeval judge`` for any method; returns the exit status."""
    if args.example:
        return run_example(args)
    if args.method == "pointwise" and args.samples == 1:
        if args.input is None or args.model is None:
            print("respeval judge: error: --input and --model are required (or --example)", file=sys.stderr)
            return EXIT_INPUT
        return run_judge(args)
    try:
        _check(args)
        options = engine_options(args)
        cache_path = cache_path_for(args)
        inputs = [("--input", args.input), ("--rubric", args.rubric), ("--rubrics-in", args.rubrics_in)]
        outputs = [("--out", args.out), ("--rubrics-out", args.rubrics_out)]
        report = None
        with guarded_outputs(inputs, outputs, unlocked=[("--cache", cache_path)]):
            records = _records(args.input)
            model = model_for(args)
            batch = batch_options(args, model)
            if batch is not None:
                done = run_batched_step(
                    lambda m, c, o: _dispatch_with(args, records, o, m, c),
                    model,
                    cache_path,
                    options,
                    batch,
                    on_progress=progress_printer(args, "judge"),
                )
                result, report = done.result, done.report
                spend = getattr(result, "spend", None)
                if spend is not None:  # the rows were answered from the cache the batches filled
                    spend.tokens_in = report.tokens_in + report.live_tokens_in
                    spend.tokens_out = report.tokens_out + report.live_tokens_out
                    spend.cost = report.total_cost
            else:
                with _rows_as_they_finish(args) as on_row:
                    result = asyncio.run(_dispatch(args, records, options, cache_path, on_row))
            output = None
            if args.out:
                # a stopped run's rows go to OUT.partial; OUT is replaced only by a completed run
                with atomic_output(partial_name(args.out)) as fh:
                    fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in _rows_json(result))
                complete = _summary(result)[2] is None and (report is None or report.stop_kind is None)
                output = finish_output(args.out, complete=complete)
    except (InputFileError, ValueError, OSError) as exc:
        print(f"respeval judge: error: {redact(exc)}", file=sys.stderr)
        return EXIT_INPUT
    data, text, stop_reason = _summary(result)
    data.setdefault("model", args.model)
    data["samples"] = args.samples
    if report is not None:
        data["batch"] = report.to_json()
        text += "\n" + report.format()
    if output and not args.json:
        text += "\n" + describe_output(args.out, output)
    print(json.dumps({**data, "output": output, "cache": cache_path}, indent=2) if args.json else text)
    if args.summary_out or args.report:
        _write_summary(args, data, _rows_json(result), records)
    if report is not None:
        status = exit_status(report, getattr(result, "stop_kind", None))
        if status != 0:
            print(f"respeval judge: stopped: {report.stop_reason or stop_reason}", file=sys.stderr)
        return status
    if stop_reason is None:
        return 0
    kind = getattr(result, "stop_kind", None)
    then = "" if kind == STOP_CACHE else " (rerun the same command to resume)"
    print(f"respeval judge: stopped: {stop_reason}{then}", file=sys.stderr)
    return stop_exit(kind) if kind is not None else EXIT_FATAL
