"""``respeval judge``: judge a JSONL file with an LLM, resumably and within a budget.

``run`` hands every method but plain pointwise to ``respeval.cli.judge_methods``;
``run_judge`` runs the pointwise judge.  Results go to ``--out`` as rows finish and the summary to stdout; progress and errors go to
stderr.  The API key is read from the environment only and is never printed or stored.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

from respeval.cli.batching import BATCH_EPILOG, add_batch_arguments, batch_options, exit_status, run_batch_judge
from respeval.cli.common import (
    Exit,
    field_mapping,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    stop_exit,
)
from respeval.io import format_of
from respeval.io import read_jsonl as read_records
from respeval.io.files import commit, guarded_outputs, is_regular, partial_name
from respeval.judge.cache import JudgeCache
from respeval.judge.engine import STOP_CACHE, EngineOptions, JudgeEngine, RunResult
from respeval.judge.limits import Budget, Price
from respeval.judge.methods import JudgeMethod, get_method
from respeval.judge.models.base import JudgeModel
from respeval.judge.results import RowResult
from respeval.judge.specs import load_model
from respeval.redact import redact

NAME = "judge"
HELP = "judge responses with an LLM: pointwise, pairwise, rubrics (async, cached, budgeted)"
DESCRIPTION = (
    "Ask an LLM judge whether each response states the reference's key facts (or compare pairs, or check "
    "rubrics). Concurrent, rate-limited, retried, cached and budgeted; unparseable verdicts are reported "
    "as unscored with their reason, and the summary gives coverage."
)
METHOD_NAMES = ("pointwise", "pairwise", "rubric", "adaptive-rubric")
STRUCTURED_CHOICES = ("response_format", "guided_json", "structured_outputs", "detect", "tool", "none")

# Vertex AI's evaluation dataset columns (``baseline_model_response`` is read by pairwise
# methods); --field may rename any of them, whichever method runs.
VERTEX_FIELDS = ("prompt", "response", "reference", "baseline_model_response", "id")

EXIT_INPUT = Exit.INPUT
EXIT_FATAL = Exit.JUDGE_FATAL
EXIT_BUDGET = Exit.BUDGET
EXIT_INTERRUPTED = Exit.INTERRUPTED

EPILOG = """\
input:
  JSONL, one object per line, with Vertex AI's field names: prompt (the question,
  optional), response (the candidate), reference, and id (copied to the output; the
  0-based row number when absent). Rename with --field, e.g. --field response=answer.
  The whole file is checked before the first call: a bad line stops the run at once.

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
    """Every ``respeval judge`` option: the pointwise judge's, then the other methods'."""
    src = p.add_argument_group("input")
    src.add_argument("--input", metavar="FILE", help="items to judge (.jsonl); required unless --example")
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
    mod = p.add_argument_group("model")
    mod.add_argument(
        "--model",
        metavar="SPEC",
        help="openai:MODEL, anthropic:MODEL, python:module:function or fake:... (see below)",
    )
    mod.add_argument(
        "--base-url", metavar="URL", help="API root for openai:/anthropic: models, e.g. http://localhost:8000/v1"
    )
    mod.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="environment variable holding the API key (default: OPENAI_API_KEY or ANTHROPIC_API_KEY)",
    )
    mod.add_argument(
        "--no-json-schema", action="store_true", help="do not send response_format (servers without structured output)"
    )
    mod.add_argument(
        "--structured",
        choices=STRUCTURED_CHOICES,
        default=None,
        help="how the verdict schema is sent: openai: response_format (default), guided_json or structured_outputs "
        "(vLLM), detect (ask the server); anthropic: tool (default: a forced tool call); none: prompt only",
    )
    mod.add_argument(
        "--max-tokens", metavar="N", type=positive_int, default=512, help="reply limit per call (default 512)"
    )
    mod.add_argument("--seed", metavar="N", type=int, default=None, help="sampling seed, for models that support one")
    mod.add_argument(
        "--threshold",
        metavar="T",
        type=float,
        default=0.5,
        help="a row passes when the judge says pass and score >= THRESHOLD (default 0.5)",
    )
    mod.add_argument("--no-reask", action="store_true", help="do not re-ask once when a reply cannot be parsed")
    eng = p.add_argument_group("engine")
    eng.add_argument("--concurrency", metavar="N", type=positive_int, default=8, help="calls in flight (default 8)")
    eng.add_argument(
        "--max-retries",
        metavar="N",
        type=non_negative_int,
        default=5,
        help="retries per call on 429/5xx/timeouts/connection errors (default 5)",
    )
    eng.add_argument("--timeout", metavar="S", type=positive_float, default=60.0, help="seconds per call (default 60)")
    eng.add_argument("--rpm", metavar="N", type=positive_float, default=None, help="max requests per minute")
    eng.add_argument("--tpm", metavar="N", type=positive_float, default=None, help="max tokens per minute")
    eng.add_argument(
        "--backoff-base",
        metavar="S",
        type=non_negative_float,
        default=0.5,
        help="first retry delay in seconds, doubled per retry, with jitter (default 0.5)",
    )
    eng.add_argument(
        "--backoff-max",
        metavar="S",
        type=non_negative_float,
        default=30.0,
        help="longest retry delay in seconds (default 30); Retry-After is honoured",
    )
    eng.add_argument("--cache", metavar="FILE", help="answer cache, SQLite (default: OUT.cache.sqlite)")
    eng.add_argument("--no-cache", action="store_true", help="do not cache answers (no resuming)")
    eng.add_argument(
        "--replay-only", action="store_true", help="answer from the cache only; stop with an error on a miss (for CI)"
    )
    bud = p.add_argument_group("budget and prices")
    bud.add_argument(
        "--budget-usd",
        metavar="USD",
        type=non_negative_float,
        default=None,
        help="stop once this much is spent (needs --price-in/--price-out)",
    )
    bud.add_argument(
        "--budget-calls", metavar="N", type=non_negative_int, default=None, help="stop after this many calls"
    )
    bud.add_argument(
        "--budget-tokens",
        metavar="N",
        type=non_negative_int,
        default=None,
        help="stop once this many tokens (in + out) are used",
    )
    bud.add_argument(
        "--price-in", type=non_negative_float, default=None, metavar="USD", help="USD per million input tokens"
    )
    bud.add_argument(
        "--price-out", type=non_negative_float, default=None, metavar="USD", help="USD per million output tokens"
    )
    out = p.add_argument_group("output")
    out.add_argument(
        "--out", metavar="FILE", help="per-row results (.jsonl); rows go to FILE.partial until the run completes"
    )
    out.add_argument("--json", action="store_true", help="print the summary as JSON")
    out.add_argument("--summary-out", metavar="FILE", help="write the run summary (JSON) for `respeval report`")
    out.add_argument("--report", metavar="FILE", help="write the HTML report")
    out.add_argument("--quiet", action="store_true", help="no progress bar")
    from respeval.cli.judge_methods import add_method_arguments

    add_method_arguments(p)
    add_batch_arguments(p)
    p.epilog = (p.epilog or "") + "\n" + BATCH_EPILOG


def run(args: argparse.Namespace) -> int:
    from respeval.cli.judge_methods import run_methods

    return run_methods(args)


# --------------------------------------------------------------------------- input


class InputFileError(ValueError):
    pass


def read_jsonl(path: str) -> Iterator[tuple[int, Any]]:
    """(line number, object) per record: the one JSONL reader (:func:`respeval.io.read_jsonl`)."""
    return read_records(path)


def _check_input(path: str, method: JudgeMethod, fields: dict[str, str]) -> tuple[int, list[Any] | None]:
    """Check every record before the first call (paying for 90,000 rows to then fail on a
    typo in row 90,001 is the failure this prevents); returns the row count, and the records
    themselves when the input is a pipe (it can be read only once)."""
    if format_of(path) != "jsonl":
        raise InputFileError(f"{path}: expected a .jsonl file")
    rows = 0
    kept: list[Any] | None = None if is_regular(path) else []
    for lineno, record in read_jsonl(path):
        if not isinstance(record, dict):
            raise InputFileError(f"{path}:{lineno}: expected a JSON object, got {type(record).__name__}")
        projected = {
            name: record[fields.get(name, name)] for name in (*method.fields, "id") if fields.get(name, name) in record
        }
        try:
            method.item(projected)
        except ValueError as exc:
            raise InputFileError(f"{path}:{lineno}: {_renamed(str(exc), fields)}") from exc
        row_id = projected.get("id")
        if isinstance(row_id, (dict, list)):
            raise InputFileError(f"{path}:{lineno}: field 'id': expected a string or number")
        rows += 1
        if kept is not None:
            kept.append(record)
    return rows, kept


def _renamed(message: str, fields: dict[str, str]) -> str:
    for name, column in fields.items():
        message = message.replace(f"field {name!r}", f"field {column!r} (--field {name}={column})")
    return message


# --------------------------------------------------------------------------- run


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


def engine_options(args: argparse.Namespace) -> EngineOptions:
    prices = None
    if args.price_in is not None or args.price_out is not None:
        if args.price_in is None or args.price_out is None:
            raise InputFileError("give both --price-in and --price-out (USD per million tokens)")
        prices = Price(args.price_in, args.price_out)
    if args.budget_usd is not None and prices is None and not getattr(args, "batch", False):
        raise InputFileError("--budget-usd needs --price-in and --price-out (USD per million tokens)")
    budget = Budget(max_calls=args.budget_calls, max_tokens=args.budget_tokens, max_cost=args.budget_usd)
    return EngineOptions(
        concurrency=args.concurrency,
        max_retries=args.max_retries,
        timeout=args.timeout,
        backoff_base=args.backoff_base,
        backoff_max=args.backoff_max,
        requests_per_minute=args.rpm,
        tokens_per_minute=args.tpm,
        budget=budget,
        prices=prices,
        reask=not args.no_reask,
        replay_only=args.replay_only,
        seed=args.seed or 0,
    )


def cache_path_for(args: argparse.Namespace) -> str | None:
    if args.no_cache:
        if args.cache or args.replay_only:
            raise InputFileError("--no-cache contradicts --cache/--replay-only")
        return None
    path = args.cache or (f"{args.out}.cache.sqlite" if args.out else None)
    if args.replay_only:
        if path is None:
            raise InputFileError("--replay-only needs --cache FILE (or --out, whose default cache it reads)")
        if not os.path.exists(path):
            raise InputFileError(f"--replay-only: no cache at {path}")
    return path


async def _judge(
    args: argparse.Namespace,
    method: JudgeMethod,
    fields: dict[str, str],
    total: int,
    kept: list[Any] | None,
    options: EngineOptions,
    cache_path: str | None,
    digest: Any = None,
) -> RunResult:
    model = model_for(args)
    columns = list(method.verdict_fields)
    loop = asyncio.get_running_loop()
    with contextlib.ExitStack() as stack:
        cache = stack.enter_context(JudgeCache(cache_path)) if cache_path else None
        writer = None
        if args.out:
            # rows go to OUT.partial as they finish; OUT is replaced only by a completed run
            out = stack.enter_context(open(partial_name(args.out), "w", encoding="utf-8"))
            writer = _LineWriter(out, loop)
            stack.callback(writer.flush)  # runs before the file closes, whatever happens
        bar = None
        if not args.quiet:
            from tqdm import tqdm

            bar = stack.enter_context(
                tqdm(total=total, unit="rows", file=sys.stderr, delay=2.0, dynamic_ncols=True, desc="judging")
            )

        def on_row(row: RowResult) -> None:
            if writer is not None:
                writer.add(json.dumps(row.to_json(columns), ensure_ascii=False) + "\n")
            if digest is not None and row.verdict is not None and row.scored:
                digest.add(row.row, row.verdict.get("score"), row.verdict.get("reasoning"))
            if bar is not None:
                bar.update(1)

        async with model:
            engine = JudgeEngine(model, method, options, cache=cache, fields=fields)

            def on_signal() -> None:
                if engine.interrupt() == 1:
                    print(
                        f"\nstopping: letting {engine.in_flight} calls in flight finish (Ctrl-C again to abandon them)",
                        file=sys.stderr,
                    )

            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    loop.add_signal_handler(sig, on_signal)
                except (NotImplementedError, RuntimeError):  # pragma: no cover - Windows
                    pass
            try:
                records = kept if kept is not None else (record for _, record in read_jsonl(args.input))
                return await engine.run(records, on_row=on_row, keep_rows=False)
            finally:
                for sig in (signal.SIGINT, signal.SIGTERM):
                    try:
                        loop.remove_signal_handler(sig)
                    except (NotImplementedError, RuntimeError):  # pragma: no cover
                        pass
    raise AssertionError("unreachable")  # pragma: no cover - for type checkers


def model_for(args: argparse.Namespace) -> JudgeModel:
    """The judge model the parsed options name."""
    return load_model(
        args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        json_schema=not args.no_json_schema,
        structured=getattr(args, "structured", None),
        timeout=args.timeout,
    )


def run_judge(args: argparse.Namespace) -> int:
    """Run ``respeval judge`` with parsed arguments; returns the exit status."""
    try:
        template, instruction = prompt_options(args)
        method = get_method(
            args.method,
            threshold=args.threshold,
            max_tokens=args.max_tokens,
            seed=args.seed,
            template=template,
            system_instruction=instruction,
        )
        known = {*VERTEX_FIELDS, *method.fields}
        fields = dict(args.field)
        unknown = sorted(set(fields) - known)
        if unknown:
            raise InputFileError(f"--field: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        options = engine_options(args)
        cache_path = cache_path_for(args)
        model = model_for(args)  # fail fast on a bad spec
        batch = batch_options(args, model)
        report = None
        digest = None
        if args.summary_out or args.report:
            from respeval.report import RowDigest

            digest = RowDigest(method.name)
        outputs = [("--out", args.out), *run_outputs(args)]
        with guarded_outputs([("--input", args.input)], outputs, unlocked=[("--cache", cache_path)]):
            total, kept = _check_input(args.input, method, fields)
            if batch is not None:
                records = kept if kept is not None else [r for _, r in read_jsonl(args.input)]
                result, report = run_batch_judge(args, model, method, fields, options, cache_path, batch, records)
                if digest is not None and args.out:  # the rows went to OUT.partial as the passes completed
                    for _, row in read_jsonl(partial_name(args.out)):
                        if row.get("status") == "scored":
                            digest.add(int(row["row"]), row.get("score"), row.get("reasoning"))
            else:
                result = asyncio.run(_judge(args, method, fields, total, kept, options, cache_path, digest))
            complete = result.stop_kind is None and (report is None or report.stop_kind is None)
            output = finish_output(args.out, complete=complete)
            if digest is not None:
                from respeval.report import judge_run_summary, texts_of, write_run_outputs

                source = kept if kept is not None else (record for _, record in read_jsonl(args.input))
                texts = texts_of(source, digest.rows(), fields)
                data = {**result.summary.to_json(), "output": output}
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
        print(json.dumps({**summary.to_json(), "output": output, "cache": cache_path}, indent=2))
    else:
        print(summary.format())
        if output:
            print(describe_output(args.out, output))
        if cache_path:
            print(f"cache: {cache_path}")
    if report is not None:
        status = exit_status(report, result.stop_kind)
        if status != Exit.OK:
            print(f"respeval judge: stopped: {summary.stop_reason}", file=sys.stderr)
        return status
    if result.stop_kind is None:
        return 0
    then = "" if result.stop_kind == STOP_CACHE else " (rerun the same command to resume)"  # the reason says what
    print(f"respeval judge: stopped: {summary.stop_reason}; {summary.not_run} rows left{then}", file=sys.stderr)
    return stop_exit(result.stop_kind)
