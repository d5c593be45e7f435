"""``respeval judge``: judge a JSONL, CSV or Parquet file with an LLM, resumably and within a budget.

``run`` builds the method the options name through the registry
(:func:`~respeval.judge.methods.build_method`) and runs it with :func:`respeval.judge.arun`,
live or as provider batches.  A per-request method (pointwise) streams: the input is checked
whole first, then read as the engine goes, and rows go to ``--out`` as they finish.  A
whole-run method (pairwise, rubrics, multi-sampling) reads the input once into memory.  The
summary goes to stdout; progress and errors go to stderr.  The API key is read from the
environment only and is never printed or stored.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from typing import Any

from respeval.cli.batching import BATCH_EPILOG, exit_status, progress_printer
from respeval.cli.common import Exit, add_epilog_more, field_mapping, signals_interrupt, stop_exit
from respeval.cli.judge_methods import (
    add_method_arguments,
    check_method_options,
    method_options,
    read_records,
    rows_as_they_finish,
    run_example,
    write_summary,
)
from respeval.cli.judge_options import InputFileError, JudgeConfig, add_judge_arguments, prompt_inputs
from respeval.cli.progress import progress
from respeval.io import read_records as read_input
from respeval.io.files import atomic_output, commit, guarded_outputs, is_regular, partial_name, replace_with_new
from respeval.judge.engine import STOP_CACHE, RunResult
from respeval.judge.methods import JudgeMethod, build_method
from respeval.judge.methods.rubrics import export_rubrics
from respeval.judge.results import RowResult
from respeval.judge.run import EnginePass, JudgePlan, RunControl, arun, resolve_method
from respeval.redact import redact

NAME = "judge"
HELP = "judge responses with an LLM: pointwise, pairwise, rubrics (async, cached, budgeted)"
DESCRIPTION = (
    "Ask an LLM judge whether each response states the reference's key facts (or compare pairs, or check "
    "rubrics). Concurrent, rate-limited, retried, cached and budgeted; unparseable verdicts are reported "
    "as unscored with their reason, and the summary gives coverage."
)
METHOD_NAMES = (
    "pointwise",
    "pairwise",
    "rubric",
    "adaptive-rubric",
    "faithfulness",
    "context_precision",
    "context_recall",
    "citation_check",
)
"""The registry's methods (:data:`respeval.judge.methods.METHODS`) that judge JSONL rows."""

# Vertex AI's evaluation dataset columns (``baseline_model_response`` is read by pairwise
# methods); --field may rename any of them, whichever method runs.
VERTEX_FIELDS = ("prompt", "response", "reference", "baseline_model_response", "context", "id")

EXIT_INPUT = Exit.INPUT
EXIT_FATAL = Exit.JUDGE_FATAL
EXIT_BUDGET = Exit.BUDGET
EXIT_INTERRUPTED = Exit.INTERRUPTED

EPILOG = """\
input:
  JSONL (one object per line), CSV or Parquet, with Vertex AI's field names: prompt
  (the question, optional), response (the candidate), reference, and id (copied to the
  output; the 0-based row number when absent). Rename with --field, e.g. --field response=answer.
  The whole file is checked before the first call: a bad row stops the run at once.

models:
  openai:MODEL        OpenAI-compatible chat completions: OpenAI, or with --base-url
                      vLLM, Ollama (http://localhost:11434/v1), llama.cpp's server,
                      LiteLLM. Key: $OPENAI_API_KEY (none is sent if it is unset).
  anthropic:MODEL     Anthropic Messages API. Key: $ANTHROPIC_API_KEY.
  python:MOD:FUNC     a Python function request -> str | dict (async or not); its cached
                      answers are keyed by its code (its module and the project files
                      it imports): edit it and it is asked again. python:MOD:FUNC@V keys
                      them by version V instead (bump V to re-ask).
  fake:[k=v,...]      a scripted judge for dry runs: fake:score=0.5,latency=0.01
  --api-key-env NAME reads the key from another variable. Keys are never written anywhere.

prompts:
  --template FILE replaces the method's user message with yours: name any column as
  {column} (each value goes in fenced as data); the method's grading contract and reply
  format stay. --system-instruction TEXT (or @FILE) says who the judge is. Both are part
  of every cache key and of the signature: change them and nothing stale is reused.

output:
  --out gets one JSON line per row: id, row, score, pass, judge_pass, reasoning, status
  (scored | unscored), unscored_reason, parsed_from, tokens_in, tokens_out, cost,
  cache_hit, attempts, reasked. A row the judge's reply could not be read for is
  "unscored" with its reason -- never a silent 0, 1 or pass. Rows go to OUT.partial as
  they finish; OUT is replaced only when every row is judged (a stopped or failed run
  leaves the previous OUT as it was). OUT.lock keeps a second run off the same --out.

resuming:
  Every answer is cached (SQLite, by default OUT.cache.sqlite beside --out) before its row
  is written. After a crash, Ctrl-C or a budget stop, rerun the same command: answers
  already received are not paid for again. --replay-only answers from the cache alone and
  fails on a miss (for CI).

exit status:
  0 all rows judged (some may be unscored: see coverage), 1 bad input or options,
  3 stopped by a model error (401, 400, ...), 4 stopped by the budget, 5 provider batches
  still running (--batch-wait; rerun to collect), 130 interrupted.

examples:
  respeval judge --input items.jsonl --model openai:gpt-4o-mini --out results.jsonl \\
      --budget-usd 2 --price-in 0.15 --price-out 0.60
  respeval judge --input items.jsonl --model openai:Qwen/Qwen2.5-7B-Instruct \\
      --base-url http://localhost:8000/v1 --concurrency 64 --out results.jsonl
  respeval judge --input items.jsonl --model openai:gpt-4o-mini --out results.jsonl \\
      --cache judge.sqlite --replay-only
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Every ``respeval judge`` option: the input, the prompt, the shared judge options, the
    output, then the methods'."""
    src = p.add_argument_group("input")
    src.add_argument(
        "--input", metavar="FILE", help="items to judge (.jsonl, .csv or .parquet); required unless --example"
    )
    src.add_argument(
        "--method",
        default="pointwise",
        choices=METHOD_NAMES,
        help="judging method: " + ", ".join(METHOD_NAMES) + " (default pointwise: equivalence against the reference)",
    )
    src.add_argument(
        "--field",
        action="append",
        type=field_mapping,
        default=[],
        metavar="NAME=COLUMN",
        help="read field NAME (prompt, response, reference, baseline_model_response, id) from COLUMN; repeatable",
    )
    prompt = p.add_argument_group("prompt (every method)")
    prompt.add_argument(
        "--template",
        metavar="FILE",
        help="your own user message: a text file naming columns as {column} ({prompt}, {response}, {reference}, "
        "{context}, ...; pairwise: {baseline_model_response} and {response}); each value is fenced as data",
    )
    prompt.add_argument(
        "--system-instruction",
        metavar="TEXT|@FILE",
        help="who the judge is, e.g. 'You are an expert claims auditor.' (@FILE reads it from a file); "
        "put before the method's grading contract",
    )
    add_judge_arguments(p, default_cache="OUT.cache.sqlite")
    out = p.add_argument_group("output")
    out.add_argument(
        "--out", metavar="FILE", help="per-row results (.jsonl); rows go to FILE.partial until the run completes"
    )
    out.add_argument("--json", action="store_true", help="print the summary as JSON")
    out.add_argument("--summary-out", metavar="FILE", help="write the run summary (JSON) for `respeval report`")
    out.add_argument("--report", metavar="FILE", help="write the HTML report")
    out.add_argument("--quiet", action="store_true", help="no progress bar")
    add_method_arguments(p)
    add_epilog_more(p, BATCH_EPILOG)


def run(args: argparse.Namespace) -> int:
    """Run ``respeval judge`` with parsed arguments; returns the exit status."""
    if args.example:
        return run_example(args)
    if args.input is None or args.model is None:
        print("respeval judge: error: --input and --model are required (or --example)", file=sys.stderr)
        return EXIT_INPUT
    try:
        config = JudgeConfig.from_args(args, out=args.out, cache_beside_out=True)
        template, instruction = prompt_options(args)
        method = build_method(args.method, method_options(args, config, template, instruction))
        check_method_options(args, method)
        plan = resolve_method(method, keep_rows=False)
    except (InputFileError, ValueError, OSError) as exc:
        print(f"respeval judge: error: {redact(exc)}", file=sys.stderr)
        return EXIT_INPUT
    if isinstance(plan, EnginePass):
        return _run_rows(args, config, plan.method)
    return _run_plan(args, config, plan)


def _stopped(stop_kind: str | None, batch: Any) -> int:
    """The exit status of a run that ended with ``stop_kind`` (and batch mode's report)."""
    return exit_status(batch, stop_kind) if batch is not None else stop_exit(stop_kind)


def _resume_hint(stop_kind: str | None) -> str:
    # a damaged cache's reason says what to do; a rerun would meet it again
    return "" if stop_kind == STOP_CACHE else " (rerun the same command to resume)"


# --------------------------------------------------------------------------- input


def _check_input(path: str, method: JudgeMethod, fields: dict[str, str]) -> tuple[int, list[Any] | None]:
    """Check every record before the first call (paying for 90,000 rows to then fail on a
    typo in row 90,001 is the failure this prevents); returns the row count, and the records
    themselves when the input is a pipe (it can be read only once)."""
    rows = 0
    kept: list[Any] | None = None if is_regular(path) else []
    for where, record in read_input(path):
        projected = {
            name: record[fields.get(name, name)] for name in (*method.fields, "id") if fields.get(name, name) in record
        }
        try:
            method.item(projected)
        except ValueError as exc:
            raise InputFileError(f"{where}: {_renamed(str(exc), fields)}") from exc
        row_id = projected.get("id")
        if isinstance(row_id, (dict, list)):
            raise InputFileError(f"{where}: field 'id': expected a string or number")
        rows += 1
        if kept is not None:
            kept.append(record)
    return rows, kept


def _renamed(message: str, fields: dict[str, str]) -> str:
    for name, column in fields.items():
        message = message.replace(f"field {name!r}", f"field {column!r} (--field {name}={column})")
    return message


# --------------------------------------------------------------------------- output


class _LineWriter:
    """Rows go out as whole lines, in one write per batch, flushed every 50 ms or 256 rows.

    A flush per row costs a system call per row (a tenth of the engine's time at 1,000
    rows/s); batching keeps results visible within 50 ms.  Only whole lines are written, so
    a stopped run leaves whole rows; a SIGKILL can still cut the write in flight short
    (Linux ends an interrupted write after the pages it has copied), leaving the last line
    incomplete.  Rows not yet flushed, and those of a cut line, are in the cache, and a
    rerun writes them again for free; OUT itself is only ever replaced by a complete run.
    """

    def __init__(self, out: Any, loop: asyncio.AbstractEventLoop, *, seconds: float = 0.05, rows: int = 256) -> None:
        self._out = out
        self._loop = loop
        self._seconds = seconds
        self._rows = rows
        self._pending: list[str] = []
        self._timer: asyncio.TimerHandle | None = None

    def add(self, line: str) -> None:
        self._pending.append(line)
        if len(self._pending) >= self._rows:
            self.flush()
        elif self._timer is None:
            self._timer = self._loop.call_later(self._seconds, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending:
            self._out.write("".join(self._pending))
            self._out.flush()
            self._pending.clear()


def run_outputs(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """The run-summary outputs (--summary-out, --report) as (option, path) pairs."""
    return [("--summary-out", getattr(args, "summary_out", None)), ("--report", getattr(args, "report", None))]


def partial_scratch(out: str | None) -> list[tuple[str, str | None]]:
    """OUT.partial, for the input/output guard (rows go there until the run completes)."""
    return [("--out's partial file", partial_name(out) if out else None)]


def finish_output(out: str | None, *, complete: bool) -> str | None:
    """Rename OUT.partial into place when the run completed; otherwise leave OUT as it was.
    Returns the file that holds this run's rows."""
    if not out:
        return None
    if complete:
        commit(partial_name(out), out)
        return out
    return partial_name(out)


def describe_output(out: str | None, holder: str | None) -> str:
    if holder == out:
        return f"per-row results: {out}"
    return f"rows judged so far: {holder} ({out} is replaced only when a run completes; rerun to finish)"


def prompt_options(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """``--template FILE`` and ``--system-instruction TEXT|@FILE``: (template, instruction)."""
    from respeval.judge.methods.prompts import read_text_option

    template = None
    if getattr(args, "template", None):
        try:
            with open(args.template, encoding="utf-8") as fh:
                template = fh.read()
        except OSError as exc:
            raise InputFileError(f"--template: cannot read {args.template}: {exc.strerror or exc}") from exc
    try:
        instruction = read_text_option(getattr(args, "system_instruction", None))
    except ValueError as exc:
        raise InputFileError(f"--system-instruction: {exc}") from exc
    return template, instruction


# --------------------------------------------------------------------------- a per-request method


async def _judge_rows(
    args: argparse.Namespace,
    config: JudgeConfig,
    method: JudgeMethod,
    fields: dict[str, str],
    total: int,
    kept: list[Any] | None,
    digest: Any = None,
) -> RunResult:
    columns = list(method.verdict_fields)
    loop = asyncio.get_running_loop()
    control = RunControl()
    with contextlib.ExitStack() as stack:
        writer = None
        if args.out:
            # rows go to OUT.partial as they finish; OUT is replaced only by a completed run
            out = stack.enter_context(replace_with_new(partial_name(args.out)))
            writer = _LineWriter(out, loop)
            stack.callback(writer.flush)  # runs before the file closes, whatever happens
        bar = None
        if not args.quiet and config.batch is None:
            bar = stack.enter_context(progress(total, unit="rows", desc="judging"))

        def on_row(row: RowResult) -> None:
            if writer is not None:
                writer.add(json.dumps(row.to_json(columns), ensure_ascii=False) + "\n")
            entry = row.digest_entry() if digest is not None else None
            if entry is not None:
                digest.add(entry[0], entry[1], entry[2])
            if bar is not None:
                bar.update(1)

        if config.batch is None:
            stack.enter_context(signals_interrupt(loop, control))
        records = kept if kept is not None else (record for _, record in read_input(args.input))
        assert config.model is not None
        return await arun(
            records,
            config.model,
            method=method,
            cache=config.cache,
            fields=fields,
            on_row=on_row,
            keep_rows=False,
            options=config.engine,
            batch=config.batch or False,
            on_progress=progress_printer(args, "judge"),
            control=control,
        )
    raise AssertionError("unreachable")  # pragma: no cover - for type checkers


def _run_rows(args: argparse.Namespace, config: JudgeConfig, method: JudgeMethod) -> int:
    """``respeval judge`` for a per-request method: check the input whole, then stream it."""
    try:
        known = {*VERTEX_FIELDS, *method.fields}
        fields = dict(args.field)
        unknown = sorted(set(fields) - known)
        if unknown:
            raise InputFileError(f"--field: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        digest = None
        if args.summary_out or args.report:
            from respeval.report import RowDigest

            digest = RowDigest(method.name)
        outputs = [("--out", args.out), *run_outputs(args)]
        inputs = [("--input", args.input), *prompt_inputs(args)]
        with guarded_outputs(inputs, outputs, unlocked=[("--cache", config.cache)], scratch=partial_scratch(args.out)):
            total, kept = _check_input(args.input, method, fields)
            result = asyncio.run(_judge_rows(args, config, method, fields, total, kept, digest))
            report = result.batch
            complete = result.stop_kind is None and (report is None or report.stop_kind is None)
            output = finish_output(args.out, complete=complete)
            if digest is not None:
                from respeval.report import judge_run_summary, texts_of, write_run_outputs

                source = kept if kept is not None else (record for _, record in read_input(args.input))
                texts = texts_of(source, digest.rows(), fields)
                data = {**result.to_json(), "output": output}
                write_run_outputs(
                    judge_run_summary(data, digest=digest, texts=texts),
                    summary_out=args.summary_out,
                    report=args.report,
                )
    except (InputFileError, ValueError, OSError) as exc:
        print(f"respeval judge: error: {redact(exc)}", file=sys.stderr)
        return EXIT_INPUT
    summary = result.summary
    if args.json:
        print(json.dumps({**summary.to_json(), "output": output, "cache": config.cache}, indent=2))
    else:
        print(summary.format())
        if output:
            print(describe_output(args.out, output))
        if config.cache:
            print(f"cache: {config.cache}")
    status = _stopped(result.stop_kind, report)
    if status == Exit.OK:
        return status
    if report is not None:
        print(f"respeval judge: stopped: {summary.stop_reason}", file=sys.stderr)
    else:
        print(
            f"respeval judge: stopped: {summary.stop_reason}; {summary.not_run} rows left"
            f"{_resume_hint(result.stop_kind)}",
            file=sys.stderr,
        )
    return status


# --------------------------------------------------------------------------- a whole-run method


def _run_plan(args: argparse.Namespace, config: JudgeConfig, plan: JudgePlan[Any]) -> int:
    """``respeval judge`` for a whole-run method (pairwise, rubrics, multi-sampling)."""
    try:
        inputs = [
            ("--input", args.input),
            ("--rubric", args.rubric),
            ("--rubrics-in", args.rubrics_in),
            *prompt_inputs(args),
        ]
        outputs = [("--out", args.out), ("--rubrics-out", args.rubrics_out), *run_outputs(args)]
        with guarded_outputs(inputs, outputs, unlocked=[("--cache", config.cache)], scratch=partial_scratch(args.out)):
            records = read_records(args.input)
            assert config.model is not None
            # live, every row goes to OUT.partial as it becomes final; a batch run's rows are
            # final only after its last pass
            scratch = partial_name(args.out) if args.out and config.batch is None else None
            with rows_as_they_finish(scratch) as on_row:
                result = asyncio.run(
                    arun(
                        records,
                        config.model,
                        method=plan,
                        cache=config.cache,
                        fields=dict(args.field),
                        on_row=on_row,
                        options=config.engine,
                        batch=config.batch or False,
                        on_progress=progress_printer(args, "judge"),
                    )
                )
            if args.rubrics_out:
                export_rubrics(args.rubrics_out, result.rubrics)
            output = None
            if args.out:
                # a stopped run's rows go to OUT.partial; OUT is replaced only by a completed run
                with atomic_output(partial_name(args.out)) as fh:
                    fh.writelines(json.dumps(row.to_json(), ensure_ascii=False) + "\n" for row in result.rows)
                complete = result.stop_reason is None and (result.batch is None or result.batch.stop_kind is None)
                output = finish_output(args.out, complete=complete)
    except (InputFileError, ValueError, OSError) as exc:
        print(f"respeval judge: error: {redact(exc)}", file=sys.stderr)
        return EXIT_INPUT
    data = result.to_json()
    data.setdefault("model", args.model)
    data["samples"] = args.samples
    text = result.format()
    if output and not args.json:
        text += "\n" + describe_output(args.out, output)
    print(json.dumps({**data, "output": output, "cache": config.cache}, indent=2) if args.json else text)
    if args.summary_out or args.report:
        write_summary(args, data, result.rows, records, args.out)
    if result.batch is not None:
        status = exit_status(result.batch, result.stop_kind)
    elif result.stop_reason is None:
        status = Exit.OK
    else:  # stopped, whatever its kind says
        status = _stopped(result.stop_kind, None) or EXIT_FATAL
    if status != Exit.OK:
        again = "" if result.batch is not None else _resume_hint(result.stop_kind)
        reason = (result.batch.stop_reason if result.batch is not None else None) or result.stop_reason
        print(f"respeval judge: stopped: {reason}{again}", file=sys.stderr)
    return status
