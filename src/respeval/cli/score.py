"""``respeval score``: lexical metrics of predictions against references, streamed in chunks."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from collections.abc import Iterator
from typing import Any

from respeval._collector import fewer_collections
from respeval.cli.common import Exit, add_bootstrap_arguments, metric_list, positive_int
from respeval.cli.progress import progress
from respeval.io.files import check_outputs, lock_outputs

NAME = "score"
HELP = "lexical metrics of predictions against references"
DESCRIPTION = (
    "Score predictions against references and print a corpus table with bootstrap confidence "
    "intervals; optionally write one result row per input row."
)
EPILOG = """\
inputs:
  --input and --references take plain text (one record per line), JSONL, CSV or Parquet,
  chosen by extension. Structured files name their fields with --response-field
  (default: response) and --reference-field (default: reference); a reference field may
  hold a list of references per row (the best-scoring one counts, per metric).
  --input alone (no --references) reads both fields from the same file.
  Several systems: repeat --input (one file per system, named by file stem, or by NAME
  with --input NAME=FILE; the references are read and tokenized once per chunk), or one
  file with --system-field.

output:
  --out FILE writes one row per scored input row (row = 0-based input record, plus
  system, the --id-field and --group-by values, and {metric}_p/_r/_f). Parts are
  kept in FILE.parts/ until the run ends, so --resume continues a killed run (it checks
  that the parts are intact and that every input starts with the bytes read before);
  FILE appears when the run completes. FILE.lock keeps a second run off the same FILE.

examples:
  respeval score --example
  respeval score --input outputs.txt --references refs.txt --metric rouge1,rougeL --stem
  respeval score --input run.jsonl --metric rougeLsum --out rows.parquet --json
  respeval score --input a.txt --input b.txt --references refs.txt --compare a --out rows.jsonl
  respeval score --input base=<(gen v1) --input new=<(gen v2) --references refs.txt --compare base
  respeval score --input big.parquet --out rows.parquet --on-error record --resume
"""


def add_arguments(score: argparse.ArgumentParser) -> None:
    src = score.add_argument_group("input")
    src.add_argument("--example", action="store_true", help="score the small sample corpus shipped with respeval")
    src.add_argument(
        "--input",
        dest="pred",
        metavar="[NAME=]FILE",
        action="append",
        help="predictions (.txt, .jsonl, .csv, .parquet, .json: an array of objects, or SQuAD's {id: answer} "
        "joined to --references by id); repeat for several systems, NAME=FILE to name one (default: its stem)",
    )
    src.add_argument("--references", dest="ref", metavar="FILE", help="references (default: the --input file)")
    src.add_argument(
        "--input-format",
        choices=("text", "jsonl", "csv", "parquet", "json"),
        help="format of an input whose extension names none (/dev/stdin, a pipe, a .de corpus; default: "
        "plain text, refused when it starts like another format)",
    )
    src.add_argument("--response-field", dest="pred_field", metavar="NAME", help="prediction field (default: response)")
    src.add_argument("--reference-field", dest="ref_field", metavar="NAME", help="reference field (default: reference)")
    src.add_argument("--id-field", metavar="NAME", help="id field of the predictions, copied to the output")
    src.add_argument("--system-field", metavar="NAME", help="field naming each row's system (one --input file)")
    src.add_argument("--group-by", metavar="FIELD", help="also report the table per value of FIELD")
    src.add_argument(
        "--on-error",
        choices=["fail", "skip", "record"],
        default="fail",
        help="bad rows: fail (stop, naming file, line and field; default), skip (leave "
        "out, counted), record (leave out and write each with its reason to --errors)",
    )
    src.add_argument(
        "--errors", metavar="FILE", help="errors file; needs --on-error record (default with --out: OUT.errors.jsonl)"
    )
    met = score.add_argument_group("metrics")
    met.add_argument(
        "--metric-option",
        action="append",
        default=[],
        metavar="METRIC.KEY=VALUE",
        help="an option of one metric (repeatable; VALUE read as JSON when it parses, else as text), e.g. "
        "trajectory_single_tool_use.tool_name=search, tool_trajectory_avg_score.match_type=IN_ORDER, "
        "trajectory_precision.empty=nan",
    )
    met.add_argument(
        "--metric",
        dest="metrics",
        metavar="LIST",
        type=metric_list,
        default=["rouge1", "rouge2", "rougeL"],
        help="comma-separated metric names (default: rouge1,rouge2,rougeL); respeval metrics lists them all: "
        "rouge1..rouge9, rougeL, rougeLsum, bleu, chrf, chrf++, ter, em, squad (the reference field may hold "
        "the list of gold answers), ...",
    )
    met.add_argument("--stem", action="store_true", help="Porter-stem tokens longer than 3 characters")
    met.add_argument(
        "--tokenizer",
        choices=["rouge", "rouge-unicode"],
        default="rouge",
        help="rouge: rouge-score's (exact); rouge-unicode: keeps non-Latin scripts "
        "(respeval's own, not rouge-score's numbers)",
    )
    out = score.add_argument_group("output")
    out.add_argument("--out", metavar="FILE", help="per-row results (.parquet, .jsonl or .csv)")
    out.add_argument("--json", action="store_true", help="print the summary as JSON")
    out.add_argument("--summary-out", metavar="FILE", help="write the run summary (JSON) for `respeval report`")
    out.add_argument("--report", metavar="FILE", help="write the HTML report")
    add_bootstrap_arguments(out)
    out.add_argument(
        "--compare",
        metavar="SYSTEM",
        help="paired significance (approximate randomization) of every system against SYSTEM",
    )
    out.add_argument("--resume", action="store_true", help="continue an interrupted run into the same --out")
    out.add_argument("--quiet", action="store_true", help="no progress bar")
    run = score.add_argument_group("execution")
    run.add_argument(
        "--threads", type=positive_int, default=None, help="threads for the native core (default: all cores)"
    )
    run.add_argument(
        "--chunk-size",
        type=positive_int,
        default=20_000,
        help="rows per chunk: the unit of memory, progress and --resume (default 20000)",
    )
    run.add_argument(
        "--engine",
        choices=["local", "dask"],
        default="local",
        help="local (default) or dask: one task per Parquet file of --input (a glob), "
        "each file holding both fields; needs respeval[dask]",
    )
    run.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --engine dask: a running scheduler (tcp://host:8786); default: a 2-worker LocalCluster on 127.0.0.1",
    )


def run(args: argparse.Namespace) -> int:
    from respeval.bulk import EXAMPLE, score_files, total_rows

    if args.example:
        if args.pred or args.ref:
            raise ValueError("--example and --input/--references are exclusive: --example scores the shipped sample")
        args.pred = [str(EXAMPLE)]
        args.id_field = args.id_field or "id"
        if args.metrics == ["rouge1", "rouge2", "rougeL"]:
            args.metrics = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    if not args.pred:
        raise ValueError("give --input FILE (and usually --references FILE), or --example to score the shipped sample")
    args.pred, args.system_names = named_inputs(args.pred)
    metric_options = _metric_options(args.metric_option)
    for metric in metric_options:
        if metric not in args.metrics:
            raise ValueError(
                f"--metric-option {metric}.…: {metric!r} is not one of --metric ({','.join(args.metrics)})"
            )
    if args.engine == "dask":
        if metric_options:
            raise ValueError("--metric-option is not supported with --engine dask yet")
        return _score_dask(args)
    from respeval.bulk.run import build_families
    from respeval.metrics import UnknownOptionError

    try:  # the metrics and their options, checked before any input is read
        build_families(args.metrics, tokenizer=args.tokenizer, stemmer=args.stem, params=metric_options)
    except UnknownOptionError:  # names the options the metric takes
        raise
    except TypeError as exc:  # a value of the wrong type for an option
        raise ValueError(
            f"a --metric-option is not an option of its metric ({exc}); respeval metrics lists them"
        ) from None
    except ValueError as exc:
        raise ValueError(
            f"{exc}; give metric options as --metric-option METRIC.KEY=VALUE "
            "(e.g. --metric-option trajectory_single_tool_use.tool_name=search)"
        ) from None
    _streaming_allocator()
    # score_files checks and locks --out and --errors; the run summary and report are checked
    # against every input and output here, and locked for the run
    inputs = [("--input", p) for p in args.pred] + [("--references", args.ref)]
    outputs = [("--out", args.out), ("--errors", args.errors)]
    check_outputs(inputs, [*outputs, *run_outputs(args)])
    with lock_outputs([path for _, path in run_outputs(args)]):
        bar = None
        if not args.quiet:
            # appears only for runs longer than a couple of seconds; a pipe is not counted first
            # (that would drain it): rows and rows/s then, without an ETA
            bar = progress(total_rows(args.pred[0], args.input_format), unit="rows", desc="scoring")
        try:
            with fewer_collections(), _how_to_go_on(args.on_error):
                summary = score_files(
                    _systems(args),
                    args.ref,
                    pred_field=args.pred_field,
                    ref_field=args.ref_field,
                    out=args.out,
                    errors_out=args.errors,
                    on_error=args.on_error,
                    resume=args.resume,
                    threads=args.threads,
                    chunk_size=args.chunk_size,
                    compare_to=args.compare,
                    metric_options=metric_options,
                    input_format=args.input_format,
                    **_run_options(args, bar),
                )
        finally:
            if bar is not None:
                bar.close()
        if args.json:
            print(json.dumps(summary.to_json(), indent=2))
        else:
            print(summary.format())
        _write_run_outputs(summary, args)
    return Exit.OK


def named_inputs(values: list[str]) -> tuple[list[str], list[str | None]]:
    """``--input NAME=FILE`` or ``--input FILE`` values as (files, names): a name is the text
    before the first ``=`` when it holds no path separator and the whole value is no existing
    file; a file alone is named by its stem (``<(cmd)`` is ``/dev/fd/63``: name it)."""
    files: list[str] = []
    names: list[str | None] = []
    for value in values:
        name, sep, path = value.partition("=")
        if sep and name.strip() and "/" not in name and os.sep not in name and not os.path.exists(value):
            if not path:
                raise ValueError(f"--input {value!r}: no file after {name + '='!r} (give --input NAME=FILE)")
            files.append(path)
            names.append(name.strip())
        else:
            files.append(value)
            names.append(None)
    return files, names


def _systems(args: argparse.Namespace) -> list[str] | dict[str, str]:
    """The predictions files, as ``{name: file}`` when a system was named (NAME=FILE)."""
    from respeval.bulk.chunks import name_systems

    given = getattr(args, "system_names", [])
    if not any(name is not None for name in given):
        return list(args.pred)
    if args.system_field:
        raise ValueError("--input NAME=FILE names a file's system; with --system-field the rows name theirs")
    return dict(zip(name_systems(args.pred, given), args.pred))


def _metric_options(specs: list[str]) -> dict[str, dict[str, Any]]:
    """``--metric-option METRIC.KEY=VALUE`` flags as ``{metric: {key: value}}``."""
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        target, sep, text = spec.partition("=")
        metric, dot, key = target.strip().rpartition(".")
        if not sep or not dot or not metric or not key:
            raise ValueError(f"--metric-option {spec!r}: expected METRIC.KEY=VALUE (e.g. trajectory_f1.empty=nan)")
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        out.setdefault(metric, {})[key] = value
    return out


def run_outputs(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    return [("--summary-out", args.summary_out), ("--report", args.report)]


def _write_run_outputs(summary, args: argparse.Namespace) -> None:
    """The run summary and report: the corpus table, the comparisons, and where ``--out``
    holds per-row scores, their distributions and the worst rows with their texts."""
    if not (args.summary_out or args.report):
        return
    from respeval.report import add_score_rows, score_inputs, score_run_summary, write_run_outputs

    inputs = None
    if args.pred and args.engine != "dask":
        from respeval.bulk.chunks import Inputs

        files = Inputs(
            preds=list(args.pred),
            ref=args.ref,
            pred_field=args.pred_field or "response",
            ref_field=args.ref_field or "reference",
            id_field=args.id_field,
            system_field=args.system_field,
            group_field=args.group_by,
            names=tuple(getattr(args, "system_names", ())),
        )
        names = files.system_names() if not args.system_field else ["*"]
        inputs = score_inputs(
            dict(zip(names, args.pred)),
            args.ref,
            pred_field=files.pred_field,
            ref_field=files.ref_field,
            system_field=args.system_field,
        )
    run = score_run_summary(summary.to_json(), inputs=inputs)
    if summary.output and os.path.exists(summary.output):
        from respeval.validate.columns import load_table

        add_score_rows(run, load_table(summary.output), summary.fields)
    write_run_outputs(run, summary_out=args.summary_out, report=args.report)


def _run_options(args: argparse.Namespace, bar: Any) -> dict[str, Any]:
    """The options a local run and a Dask run take alike."""
    return {
        "metrics": args.metrics,
        "id_field": args.id_field,
        "system_field": args.system_field,
        "group_by": args.group_by,
        "stemmer": args.stem,
        "tokenizer": args.tokenizer,
        "bootstrap": args.bootstrap,
        "confidence": args.confidence,
        "seed": args.seed,
        "progress": bar.update if bar is not None else None,
    }


@contextlib.contextmanager
def _how_to_go_on(on_error: str) -> Iterator[None]:
    """A bad row that stops the run (``--on-error fail``): its message (file, line, field,
    reason) also says how to score the other rows instead."""
    from respeval.io import InputError

    try:
        yield
    except InputError as exc:
        if on_error != "fail" or exc.row_error is None:
            raise
        raise InputError(
            f"{exc} (fix that row, or rerun with --on-error record --out FILE to score the other rows and "
            "write each bad one with its reason to FILE.errors.jsonl)",
            exc.row_error,
        ) from None


def _streaming_allocator() -> None:
    """Arrow's system allocator for a streaming run, unless the user chose one.

    mimalloc, Arrow's default here, keeps freed chunk buffers around: ~50 MB more
    peak memory in a bulk run for no measurable speed (benchmarks/README.md).
    """
    import os

    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        import pyarrow as pa

        pa.set_memory_pool(pa.system_memory_pool())


def _score_dask(args: argparse.Namespace) -> int:
    if args.ref or args.resume or args.on_error != "fail" or args.compare:
        raise ValueError(
            "--engine dask reads both fields from each Parquet file and supports neither "
            "--references, --resume, --on-error skip/record nor --compare yet"
        )
    if not args.out:
        raise ValueError("--engine dask needs --out FILE.parquet")
    try:
        from respeval.distributed.dask import expand_inputs, score_parquet
    except ImportError as exc:
        raise ValueError(f"--engine dask needs respeval[dask] (pip install 'respeval[dask]'): {exc}") from exc
    if any(name is not None for name in getattr(args, "system_names", [])):
        raise ValueError("--engine dask scores one system: give --input FILE without a NAME=")
    bar = None
    files = expand_inputs(args.pred)
    check_outputs([("--input", f) for f in files], [("--out", args.out), *run_outputs(args)])
    if not args.quiet:
        from respeval.io import count_rows

        bar = progress(sum(count_rows(f) for f in files), unit="rows", desc="scoring (dask)")
    try:
        summary = score_parquet(
            files,
            args.out,
            pred_field=args.pred_field or "response",
            ref_field=args.ref_field or "reference",
            scheduler=args.scheduler,
            **_run_options(args, bar),
        )
    finally:
        if bar is not None:
            bar.close()
    print(json.dumps(summary.to_json(), indent=2) if args.json else summary.format())
    _write_run_outputs(summary, args)
    return Exit.OK
