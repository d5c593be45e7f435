"""``respeval dataset``: build eval datasets (``from-traces``: from production traces;
``generate``: synthetic cases from a template and seed values)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import Any

from respeval.cli.common import Exit, non_negative_int, unit_interval
from respeval.cli.progress import progress

NAME = "dataset"
HELP = "build eval datasets: from production traces, or synthetic cases from a template through a model"
DESCRIPTION = """\
Build eval datasets.

  from-traces  read traces (OpenTelemetry OTLP JSON with GenAI or OpenInference spans, OpenAI
               chat-completions logs, ADK session dumps), make one case per trace (prompt,
               conversation, response, tool calls, model, tokens, cost, latency, error,
               feedback), filter, sample reproducibly, scrub PII, drop near duplicates, and
               write the cases as an eval dataset, an ADK eval set and a labelling sheet.
  generate     write synthetic cases from a template and seed values through any model the
               judge supports, each checked against a JSON schema, with edge-case directives
               (long inputs, ambiguous requests, adversarial prompts, several languages,
               previously failed cases), near duplicates dropped; cached and resumable."""
EPILOG = """\
see `respeval dataset from-traces --help` and `respeval dataset generate --help`.

examples:
  respeval dataset from-traces --input spans.jsonl --out cases.jsonl
  respeval dataset from-traces --input traces/ --sample-rate 0.05 --seed 7 --all-failures \\
      --dedupe --scrub-pii --out cases.parquet --adk-evalset cases.evalset.json --label-sheet label.csv
  respeval dataset generate --template question.txt --values seeds.jsonl --model openai:gpt-4o-mini \\
      -n 200 --directive none --directive adversarial --directive multilingual --out cases.jsonl
"""

GENERATE_DESCRIPTION = """\
Write synthetic eval cases: a template filled with each seed's values, sent to a model
(any the judge supports: openai:, anthropic:, python:, fake:), one JSON object back per case,
checked against a JSON schema.

requests: -n N cases; request i takes seed (i mod S) of the S seeds in --values (JSONL, one
  object per line: the template's {field} values), directive ((i div S) mod D) of the D
  --directive options, and variant (i div (S x D)), which asks for a case different from the
  obvious one.  The template (--template FILE, or the text itself) names seed fields as
  {field}; {{ and }} are literal braces.

directives (edge cases, --directive, repeatable; default none):
  none            the template as it is
  long-inputs     a long input (several paragraphs) with the request buried in it
  ambiguous       an underspecified request; the reference says what a good answer does
  adversarial     a prompt injection, a jailbreak attempt or a false premise
  multilingual    the whole case in the next of --languages
  failed-cases    a new case probing the weakness of the next of --failed's cases

the schema (--schema FILE, a JSON Schema; default: {prompt, reference}, both non-empty
  strings) goes with each request (structured output where the model has it) and every reply
  is checked against it (jsonschema): a reply that is not one JSON object the schema accepts
  is asked again once with the validation error, then recorded with its reason in --rejected
  (default OUT.rejected.jsonl).

near duplicates: MinHash (native core) of 3-word shingles of --dedupe-on's text (default
  prompt); a case whose estimated Jaccard similarity to an earlier kept one is at least
  --dedupe-threshold (0.8) is dropped (--no-dedupe keeps them).

cached and resumable: every answer is kept in the cache (--cache, default OUT.cache.sqlite);
  the requests depend only on the inputs and options, so rerunning a stopped command (budget,
  Ctrl-C, a kill) pays only for the requests left and writes what an uninterrupted run writes.

a case row: the schema's fields, then id (stable: a hash of the request), seed_index,
  directive, language, variant, model."""

GENERATE_EPILOG = """\
examples:
  respeval dataset generate --template "Ask a support question about {product}." --values seeds.jsonl \\
      --model openai:gpt-4o-mini -n 50 --out cases.jsonl
  respeval dataset generate --template question.txt --values seeds.jsonl --model anthropic:claude-3-5-haiku-latest \\
      -n 300 --directive none --directive long-inputs --directive ambiguous --directive adversarial \\
      --directive multilingual --languages German,Japanese --schema case.schema.json --out cases.parquet
  respeval dataset generate --template question.txt --values seeds.jsonl --model openai:gpt-4o-mini -n 100 \\
      --directive failed-cases --failed failures.jsonl --budget-usd 2 --price-in 0.15 --price-out 0.6 --out more.jsonl

exit status: 0 done, 1 bad input or options, 3 the model failed for good, 4 the budget stopped the
  run (rerun with a larger budget: what was answered is in the cache), 130 interrupted (rerun)."""

FROM_TRACES_DESCRIPTION = """\
Read trace files, make one case per trace and write the cases as an eval dataset.

inputs (--input FILE or DIR, repeatable; a directory: every *.jsonl, *.ndjson, *.json below it):
  OpenTelemetry OTLP JSON, as the collector's file exporter writes it (one export request per
  line) or as OTLP/HTTP JSON payloads (one per file); spans following the GenAI semantic
  conventions (every version: gen_ai.input/output.messages, the gen_ai.user.message /
  gen_ai.choice events, gen_ai.prompt / gen_ai.completion; execute_tool spans; usage) or
  OpenInference's (llm.input_messages.N..., TOOL spans, llm.token_count.*); OpenAI
  chat-completions logs ({request, response} per line); ADK session dumps (*.session.json).
  The format is read from each file's content.

a case: trace_id, start_time, service, route, model, prompt (the first user message), messages
  (the whole conversation), response (the final assistant text), tool_calls ({name, arguments}
  in order), tools, input_tokens and output_tokens (summed over the model calls), model_calls, cost_usd,
  latency_s, error, feedback.

sampling: a trace is in or out by a seeded hash of its trace id (blake2b, keyed by the seed),
  the same on every run and machine, for a shuffled copy of the input and for the input split
  across files; cases are written in that hash's order.  --sample-rate P keeps each trace with
  probability P; --all-failures keeps every trace that recorded an error, plus P of the rest;
  --stratify FIELD keeps round(P x n) of each stratum's n cases (at least --min-per-stratum),
  or --per-stratum N of each.

near duplicates (--dedupe): MinHash (native core) over 3-word shingles of the user messages
  (--dedupe-on conversation: of every message), 128 permutations of fixed seed 1, 16 bands;
  a case whose estimated Jaccard similarity to an earlier kept case is at least
  --dedupe-threshold (default 0.8) is dropped.

PII (--scrub-pii): API keys and credentials, bearer tokens, emails, IPv6 and IPv4 addresses,
  card numbers (Luhn) and phone numbers become [KIND_xxxxxxxxxx], an HMAC of the value with the
  run key: the same value, the same placeholder, in every file (and across runs with
  --pii-key-file or RESPEVAL_PII_KEY).  The report counts replacements per kind, never values.

outputs (each written to a temporary file and renamed into place when complete):
  --out           the dataset: .jsonl, .parquet or .csv (nested fields as JSON text)
  --adk-evalset   an ADK eval set (expected trajectory = the one observed), for review and
                  for `respeval agent` / ADK's own evaluators
  --label-sheet   a CSV for humans: the case and empty label and notes columns
  --report        the build report as JSON (--json prints it)

memory: records are partitioned by trace-id hash into temporary files (--tmp-dir, default the
  system's), then read back one partition at a time: memory does not grow with the input
  (with --dedupe, the index of kept cases does: about 2 KB a case)."""

FROM_TRACES_EPILOG = """\
examples:
  respeval dataset from-traces --input spans.jsonl --out cases.jsonl
  respeval dataset from-traces --input otel/ --sample-rate 0.1 --seed 7 --out cases.jsonl
  respeval dataset from-traces --input otel/ --sample-rate 0.02 --all-failures --dedupe --scrub-pii \\
      --out cases.parquet --adk-evalset review.evalset.json --label-sheet label.csv --report build.json
  respeval dataset from-traces --input chat-logs.jsonl --stratify model --per-stratum 50 --out cases.jsonl
  respeval dataset from-traces --input otel/ --since 2025-05-01 --until 2025-05-02 --service checkout \\
      --failures-only --out failures.jsonl

exit status: 0 done, 1 bad input or options (the message names the file, line and field)."""


def _time(value: str) -> int:
    from respeval.traces.chatlogs import parse_time
    from respeval.traces.otlp import BadField

    try:
        t = parse_time(value, "time")
    except BadField:
        raise argparse.ArgumentTypeError(
            f"expected an ISO 8601 time (2025-05-01, 2025-05-01T12:00:00Z) or Unix seconds, got {value!r}"
        ) from None
    assert t is not None
    return t


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # subcommands parse as the command does (its class says how errors read)
    sub = parser.add_subparsers(dest="dataset_command", metavar="SUBCOMMAND", parser_class=type(parser))
    p = sub.add_parser(
        "from-traces",
        help="cases from production traces",
        description=FROM_TRACES_DESCRIPTION,
        epilog=FROM_TRACES_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _from_traces_arguments(p)
    g = sub.add_parser(
        "generate",
        help="synthetic cases from a template and seed values, through a model",
        description=GENERATE_DESCRIPTION,
        epilog=GENERATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _generate_arguments(g)


def _generate_arguments(p: argparse.ArgumentParser) -> None:
    from respeval.cli.common import positive_int
    from respeval.cli.judge_options import add_judge_arguments
    from respeval.generate import DIRECTIVES, LANGUAGES

    src = p.add_argument_group("inputs")
    src.add_argument(
        "--template", required=True, metavar="FILE|TEXT", help="the prompt template ({field} per seed field)"
    )
    src.add_argument("--values", required=True, metavar="FILE", help="seed values: JSONL, one object per line")
    src.add_argument("-n", type=positive_int, required=True, metavar="N", help="cases to ask for")
    src.add_argument("--schema", metavar="FILE", help="the JSON Schema of a case (default: {prompt, reference})")
    src.add_argument(
        "--system-instruction", metavar="TEXT|@FILE", help="what the cases are for, put before the format rules"
    )
    edge = p.add_argument_group("edge cases")
    edge.add_argument(
        "--directive",
        action="append",
        choices=list(DIRECTIVES),
        metavar="NAME",
        help=f"an edge-case directive, taken in turn (repeatable): {', '.join(DIRECTIVES)}",
    )
    edge.add_argument(
        "--languages",
        metavar="L1,L2",
        help=f"for multilingual, taken in turn (default {','.join(LANGUAGES)})",
    )
    edge.add_argument("--failed", metavar="FILE", help="previously failed cases (JSONL), for failed-cases")
    smp = p.add_argument_group("sampling and cleaning")
    smp.add_argument("--temperature", type=float, default=1.0, metavar="T", help="sampling temperature (default 1.0)")
    smp.add_argument("--max-tokens", type=positive_int, default=1024, metavar="N", help="reply limit (default 1024)")
    smp.add_argument("--seed", type=int, metavar="S", help="sent to models that support a seed (plus the case index)")
    smp.add_argument("--no-dedupe", action="store_true", help="keep near duplicates")
    smp.add_argument(
        "--dedupe-threshold", type=unit_interval, default=0.8, metavar="X", help="near duplicate from (default 0.8)"
    )
    smp.add_argument("--dedupe-on", default="prompt", metavar="FIELD", help="the case field compared (default prompt)")
    out = p.add_argument_group("outputs")
    out.add_argument("--out", required=True, metavar="FILE", help="the cases: .jsonl, .parquet or .csv")
    out.add_argument(
        "--rejected", metavar="FILE", help="requests with no usable case, and why (default OUT.rejected.jsonl)"
    )
    out.add_argument("--report", metavar="FILE", help="the generation report (JSON)")
    out.add_argument("--json", action="store_true", help="print the report as JSON")
    out.add_argument("--quiet", action="store_true", help="no progress bar")
    add_judge_arguments(
        p, groups=("model", "engine", "cache", "budget"), default_cache="OUT.cache.sqlite", title="generator"
    )


def _from_traces_arguments(p: argparse.ArgumentParser) -> None:
    from respeval.stats import DEFAULT_SEED
    from respeval.traces.dedupe import THRESHOLD

    src = p.add_argument_group("inputs")
    src.add_argument(
        "--input", action="append", default=[], required=True, metavar="FILE|DIR", help="trace files (repeatable)"
    )
    src.add_argument(
        "--on-error",
        choices=["fail", "skip", "record"],
        default="fail",
        help="bad records: fail (stop, naming file, line and field; default), skip (leave out, counted), "
        "record (leave out and write each with its reason to --errors)",
    )
    src.add_argument("--errors", metavar="FILE", help="bad records for --on-error record (default OUT.errors.jsonl)")
    src.add_argument(
        "--feedback-attribute",
        action="append",
        default=[],
        metavar="NAME",
        help="a span attribute holding user feedback (repeatable; added to user.feedback, feedback, user.rating, ...)",
    )
    src.add_argument("--tmp-dir", metavar="DIR", help="where the temporary partitions go (default: the system's)")
    flt = p.add_argument_group("filters")
    flt.add_argument(
        "--since", type=_time, metavar="TIME", help="traces that started at or after TIME (ISO 8601 or Unix s)"
    )
    flt.add_argument("--until", type=_time, metavar="TIME", help="traces that started before TIME")
    flt.add_argument("--service", action="append", default=[], metavar="NAME", help="only this service (repeatable)")
    flt.add_argument(
        "--model", action="append", default=[], metavar="NAME", help="only traces that called this model (repeatable)"
    )
    flt.add_argument("--route", action="append", default=[], metavar="ROUTE", help="only this http.route (repeatable)")
    failures = flt.add_mutually_exclusive_group()
    failures.add_argument("--failures-only", action="store_true", help="only traces that recorded an error")
    failures.add_argument("--no-failures", action="store_true", help="only traces that recorded no error")
    smp = p.add_argument_group("sampling")
    smp.add_argument(
        "--sample-rate",
        type=unit_interval,
        default=1.0,
        metavar="P",
        help="keep each trace with probability P (default 1)",
    )
    smp.add_argument(
        "--seed",
        type=non_negative_int,
        default=DEFAULT_SEED,
        metavar="S",
        help=f"sampling seed (default {DEFAULT_SEED})",
    )
    smp.add_argument(
        "--all-failures", action="store_true", help="keep every trace that recorded an error, plus P of the rest"
    )
    smp.add_argument(
        "--stratify", metavar="FIELD", help="sample each value of a case field on its own (model, service, ...)"
    )
    smp.add_argument(
        "--per-stratum", type=non_negative_int, metavar="N", help="with --stratify: N cases of each stratum"
    )
    smp.add_argument(
        "--min-per-stratum",
        type=non_negative_int,
        default=1,
        metavar="N",
        help="with --stratify and --sample-rate: at least N cases of each stratum (default 1)",
    )
    cln = p.add_argument_group("cleaning")
    cln.add_argument("--dedupe", action="store_true", help="drop near duplicates (MinHash, native core)")
    cln.add_argument(
        "--dedupe-threshold",
        type=unit_interval,
        default=THRESHOLD,
        metavar="X",
        help=f"estimated Jaccard similarity from which a case is a near duplicate (default {THRESHOLD})",
    )
    cln.add_argument(
        "--dedupe-on",
        choices=("prompt", "conversation"),
        default="prompt",
        help="compare the user messages (prompt, default) or every message (conversation)",
    )
    cln.add_argument("--scrub-pii", action="store_true", help="replace PII with stable placeholders")
    cln.add_argument(
        "--pii-key-file",
        metavar="FILE",
        help="the key of the placeholders' HMAC (16+ bytes; default RESPEVAL_PII_KEY, else a random key for the run)",
    )
    out = p.add_argument_group("outputs")
    out.add_argument("--out", metavar="FILE", help="the eval dataset (.jsonl, .parquet, .csv)")
    out.add_argument("--adk-evalset", metavar="FILE", help="also an ADK eval set (*.evalset.json)")
    out.add_argument("--label-sheet", metavar="FILE", help="also a labelling sheet (CSV) for humans")
    out.add_argument("--report", metavar="FILE", help="write the build report (JSON)")
    out.add_argument("--json", action="store_true", help="print the build report as JSON")
    out.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    if args.dataset_command is None:
        print(
            "respeval dataset: say what to build: respeval dataset from-traces --help, respeval dataset generate --help",
            file=sys.stderr,
        )
        return Exit.INPUT
    if args.dataset_command == "generate":
        return _generate(args)
    return _from_traces(args)


def _generate(args: argparse.Namespace) -> int:
    from respeval.cli.common import stop_exit
    from respeval.cli.judge_options import JudgeConfig
    from respeval.generate import LANGUAGES, GenerateOptions, generate_cases
    from respeval.io.files import guarded_outputs, write_text_atomic
    from respeval.io.formats import WRITE_FORMATS, format_of
    from respeval.io.readers import read_jsonl
    from respeval.judge.methods.prompts import read_text_option

    if format_of(args.out) not in WRITE_FORMATS:
        raise ValueError(f"--out {args.out}: the cases are written as .jsonl, .parquet or .csv")
    directives = tuple(dict.fromkeys(args.directive or ["none"]))
    if args.failed and "failed-cases" not in directives:
        raise ValueError("--failed FILE is what the failed-cases directive reads: add --directive failed-cases")
    if args.languages and "multilingual" not in directives:
        raise ValueError("--languages is what the multilingual directive reads: add --directive multilingual")
    template = args.template
    if template.startswith("@") or os.path.isfile(template):
        template = read_text_option(template if template.startswith("@") else "@" + template, None)
    seeds = [row for _, row in read_jsonl(args.values)]
    failed = tuple(row for _, row in read_jsonl(args.failed)) if args.failed else ()
    schema = None
    if args.schema:
        from respeval.metrics.checks import JsonValid

        schema = JsonValid(schema=args.schema).schema  # read and checked as json_valid reads a schema
    system = read_text_option(args.system_instruction, None) if args.system_instruction else None
    languages = tuple(x.strip() for x in args.languages.split(",") if x.strip()) if args.languages else LANGUAGES
    options = GenerateOptions(
        n=args.n,
        directives=directives,
        languages=languages,
        failed=failed,
        schema=schema,
        system_instruction=system,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        seed=args.seed,
        dedupe=not args.no_dedupe,
        dedupe_threshold=args.dedupe_threshold,
        dedupe_field=args.dedupe_on,
    )
    config = JudgeConfig.from_args(args, out=args.out, cache_beside_out=True)
    if config.model is None:
        raise ValueError("say which model writes the cases: --model openai:MODEL (anthropic:, python:, fake: ...)")
    rejected = args.rejected or f"{args.out}.rejected.jsonl"
    inputs = [("--values", args.values)] + ([("--failed", args.failed)] if args.failed else [])
    outputs = [("--out", args.out), ("--rejected", rejected), ("--report", args.report)]
    with guarded_outputs(inputs, outputs, unlocked=[("--cache", config.cache)]), contextlib.ExitStack() as stack:
        bar = None
        if not args.quiet:
            bar = stack.enter_context(progress(args.n, unit="case", desc="generating"))
        _, report = generate_cases(
            template,
            seeds,
            config.model,
            options,
            out=args.out,
            rejected=rejected,
            cache=config.cache,
            engine_options=config.engine,
            on_row=(lambda _row: bar.update(1)) if bar is not None else None,
        )
        if args.report:
            report.outputs["report"] = args.report
            write_text_atomic(args.report, json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    r = report
    parts = [
        f"{r.requested:,} requested",
        f"{r.valid:,} valid",
        f"{r.invalid:,} invalid (asked again once, then recorded in {rejected})" if r.invalid else "0 invalid",
        f"{r.near_duplicates:,} near duplicates dropped",
        f"{r.written:,} written -> {args.out}",
        f"model: {r.calls:,} calls, {r.cache_hits:,} cache hits, ${r.cost_usd:.4f}",
    ]
    if r.not_run:
        parts.append(f"{r.not_run:,} not run ({r.stop_reason}): rerun the same command to go on from the cache")
    print("respeval dataset generate: " + "; ".join(parts), file=sys.stderr)
    return stop_exit(r.stop_kind) if r.stop_kind is not None else Exit.OK


def _inside(path: str, directory: str) -> bool:
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return os.path.commonpath([path, directory]) == directory


def _from_traces(args: argparse.Namespace) -> int:
    from respeval.io.files import atomic_output, guarded_outputs, write_text_atomic
    from respeval.traces import Filters, Options, Sampling, from_traces
    from respeval.traces.sources import input_files

    if not (args.out or args.adk_evalset or args.label_sheet):
        raise ValueError("say where the cases go: --out FILE (and/or --adk-evalset FILE, --label-sheet FILE)")
    if args.errors and args.on_error != "record":
        raise ValueError("--errors is where --on-error record writes bad records: add --on-error record")
    if args.per_stratum is not None and not args.stratify:
        raise ValueError("--per-stratum needs --stratify FIELD")
    if args.pii_key_file and not args.scrub_pii:
        raise ValueError("--pii-key-file is the key of --scrub-pii's placeholders: add --scrub-pii")
    if args.out is not None:
        from respeval.io.formats import WRITE_FORMATS, format_of

        if format_of(args.out) not in WRITE_FORMATS:
            raise ValueError(
                f"--out {args.out}: cannot infer the format from the name; the dataset is written as .jsonl, "
                ".parquet or .csv"
            )
    errors_path = args.errors
    if args.on_error == "record" and errors_path is None:
        base = args.out or args.adk_evalset or args.label_sheet
        errors_path = f"{base}.errors.jsonl"
    outputs = [
        ("--out", args.out),
        ("--adk-evalset", args.adk_evalset),
        ("--label-sheet", args.label_sheet),
        ("--report", args.report),
        ("--errors", errors_path),
    ]
    for raw in args.input:
        if os.path.isdir(raw):
            for name, path in outputs:
                if path is not None and _inside(path, raw):
                    raise ValueError(
                        f"{name} {path} is inside the input directory {raw}: a rerun would read it as traces; "
                        "write it somewhere else"
                    )
    files = input_files(args.input)
    pii_key = None
    if args.scrub_pii:
        from respeval.traces.pii import run_key

        pii_key, _ = run_key(args.pii_key_file) if args.pii_key_file else (None, "")
    filters = Filters(
        since_ns=args.since,
        until_ns=args.until,
        services=frozenset(args.service),
        models=frozenset(args.model),
        routes=frozenset(args.route),
        errors="only" if args.failures_only else "exclude" if args.no_failures else "include",
    )
    from respeval.traces.case import CASE_FIELDS, DEFAULT_FEEDBACK_ATTRIBUTES

    if args.stratify and args.stratify not in CASE_FIELDS:
        raise ValueError(f"--stratify {args.stratify}: not a case field (one of {', '.join(CASE_FIELDS)})")
    sampling = Sampling(
        rate=args.sample_rate,
        seed=args.seed,
        keep_errors=args.all_failures,
        stratify=args.stratify,
        per_stratum=args.per_stratum,
        min_per_stratum=args.min_per_stratum,
    )
    options = Options(
        filters=filters,
        sampling=sampling,
        dedupe=args.dedupe,
        dedupe_threshold=args.dedupe_threshold,
        dedupe_on=args.dedupe_on,
        scrub_pii=args.scrub_pii,
        pii_key=pii_key,
        feedback_attributes=tuple(dict.fromkeys([*DEFAULT_FEEDBACK_ATTRIBUTES, *args.feedback_attribute])),
        on_error=args.on_error,
        tmp_dir=args.tmp_dir,
    )
    with guarded_outputs([("--input", f) for f in files], outputs), contextlib.ExitStack() as stack:
        bar = None
        if not args.quiet:
            total = 0
            for f in files:
                try:
                    total += os.path.getsize(f)
                except OSError:
                    pass
            bar = stack.enter_context(progress(total or None, unit="B", desc="reading traces", unit_scale=True))
        sink = None
        if errors_path is not None:
            # written as bad records come, renamed into place only when the build completes
            fh = stack.enter_context(atomic_output(errors_path))

            def sink(record: Any) -> None:
                fh.write(json.dumps(record.to_json(), ensure_ascii=False) + "\n")

        report = from_traces(
            files,
            out=args.out,
            adk_evalset=args.adk_evalset,
            label_sheet=args.label_sheet,
            options=options,
            errors=sink,
            progress=bar.update if bar is not None else None,
        )
        if errors_path is not None:
            report.outputs["errors"] = errors_path
        if args.report:
            report.outputs["report"] = args.report
            write_text_atomic(args.report, json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    print(_summary(report), file=sys.stderr)
    return Exit.OK


def _summary(report: Any) -> str:
    r = report
    i = r.inputs
    parts = [
        f"read {i.files} file{'s' * (i.files != 1)} ({i.spans:,} spans, {i.log_events:,} log events, "
        f"{i.chat_lines:,} chat lines, {i.sessions:,} sessions; {i.bad_records:,} bad records)",
        f"{r.traces:,} traces",
    ]
    out = sum(r.filtered_out.values())
    if out:
        parts.append(f"{out:,} left out by filters")
    parts.append(f"{r.sampled:,} sampled" + (f" ({r.errors_kept:,} with errors)" if r.errors_kept else ""))
    if r.dedupe is not None:
        parts.append(f"{r.near_duplicates:,} near duplicates dropped")
    if r.pii is not None:
        found = ", ".join(f"{n:,} {k}" for k, n in r.pii.items() if n) or "none found"
        parts.append(f"PII replaced: {found}")
    parts.append(f"{r.written:,} cases written")
    if r.adk_left_out:
        parts.append(f"{r.adk_left_out:,} left out of the ADK eval set (tool arguments that are not objects)")
    if r.unreadable_trajectories:
        parts.append(f"{r.unreadable_trajectories:,} with tool calls the trajectory metrics cannot read")
    where = ", ".join(f"{k}: {v}" for k, v in r.outputs.items())
    return "respeval dataset from-traces: " + "; ".join(parts) + (f" -> {where}" if where else "")
