"""``respeval monitor``: continuous evaluation of live traffic (see :mod:`respeval.monitor`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from typing import Any

from respeval.cli.common import Exit, non_negative_int, positive_int, unit_interval

NAME = "monitor"
HELP = "score a growing source of traces window by window, and say when quality moved"
DESCRIPTION = """\
Continuous evaluation of live traffic: read a growing source of traces (a directory of OTLP
JSON files, or files a collector appends to), put each trace in a time window by its start,
and when a window closes score a seeded sample of it and test it against the reference.

per window:
  sampling     a trace is in or out by a seeded hash of its trace id (as `dataset from-traces`):
               --sample-rate P, --all-failures, --stratify FIELD [--per-stratum N]
  the gate     exact -> lexical -> judge against references (--references FILE: prompt ->
               reference; thresholds in the spec's monitor.gate), so that most rows need no
               judge call; the judge sees at most --judge-budget rows per window, the first
               in sampling order (the rest are unscored, named so)
  metrics      the spec's metrics (an evaluate spec: registry, custom and judged metrics; judged
               ones on what the gate left of the budget), each with its interval
  drift        each metric against the reference windows (the first --reference-windows):
               pass rates by the two-proportion z-test, means by a bootstrap test, one-sided
               towards worse.  Every window is tested, so the k-th window after the reference
               is tested at alpha/(k(k+1)) (Holm across its metrics): the chance of any false
               alarm, over every window ever tested, is at most --alpha (default 0.05)

windows: a window closes when the source has reached its end plus --lateness (the latest span
  end read is the watermark); records that arrive for a closed window are late (counted, not
  scored: a trace is scored once).  --drain closes every window now (the source is complete).

the store (--store FILE, SQLite) holds the checkpoint (each file's offset, committed with the
  records read) and every result: a kill at any moment loses nothing committed, a rerun goes
  on where it stopped, no trace is scored twice and none is skipped.  The judge's answers are
  cached (--cache, default STORE.cache.sqlite), so a rerun pays for nothing twice.  A store
  refuses settings other than those it was started with (naming what changed).

the spec (--spec, YAML/JSON/TOML): an evaluate spec (metrics, model, judge, columns) with an
  optional `monitor:` section (window, lateness, sample_rate, seed, references, gate,
  judge_budget, reference_windows, alpha, min_rows, proportions, ...); options here win.

outputs: the trend table (each window: traces, sampled, judged, each metric's value and
  interval, the status) on stdout; --report FILE.html (the metrics over windows with their
  bands), --summary-out FILE.json (the run summary), --json (what this run did)."""
EPILOG = """\
examples:
  respeval monitor --input otel/ --spec spec.yaml --store monitor.sqlite --window 1h
  respeval monitor --input otel/ --spec spec.yaml --store monitor.sqlite --once --report trend.html
  respeval monitor --input otel/ --spec spec.yaml --store monitor.sqlite --sample-rate 0.05 --all-failures \\
      --references golden.jsonl --judge-budget 200 --model openai:gpt-4o-mini
  # a backlog of traces: decoding partitioned over a Dask cluster (the same store as one process)
  respeval monitor --input otel/ --spec spec.yaml --store monitor.sqlite --drain --engine dask --scheduler tcp://head:8786
  # cron, every 10 minutes: exit status 2 when a window scored by this run regressed
  */10 * * * *  respeval monitor --input /var/otel --spec spec.yaml --store monitor.sqlite --once --quiet

exit status: 0 no regression, 1 bad input or options, 2 a window regressed (--fail-on: a window
  scored by this run, default; latest: the latest window; never), 130 interrupted (rerun to go on)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from respeval.cli.judge_options import add_judge_arguments

    src = parser.add_argument_group("source and store")
    src.add_argument(
        "--input", dest="source", action="append", required=True, metavar="DIR|FILE", help="trace files (repeatable)"
    )
    src.add_argument("--spec", metavar="FILE", help="an evaluate spec with an optional monitor: section")
    src.add_argument("--store", required=True, metavar="FILE", help="the monitor's SQLite store (created if missing)")
    src.add_argument(
        "--on-error",
        choices=("skip", "record", "fail"),
        default=None,
        help="bad records: skip (counted; default), record (kept in the store with file, line and reason), fail",
    )
    win = parser.add_argument_group("windows and sampling")
    win.add_argument("--window", metavar="DURATION", help="window length: 90s, 5m, 1h, 1d (default 1h)")
    win.add_argument("--lateness", metavar="DURATION", help="how long a window stays open after its end (default 5m)")
    win.add_argument("--sample-rate", type=unit_interval, metavar="P", help="keep each trace with probability P")
    win.add_argument("--seed", type=non_negative_int, metavar="S", help="the sampling seed")
    win.add_argument(
        "--all-failures", action="store_true", default=None, help="keep every trace that recorded an error"
    )
    win.add_argument("--stratify", metavar="FIELD", help="sample each value of a case field on its own, per window")
    win.add_argument("--per-stratum", type=non_negative_int, metavar="N", help="with --stratify: N traces of each")
    gate = parser.add_argument_group("gate and judge budget")
    gate.add_argument(
        "--references", metavar="FILE", help="the gate's references: JSONL/CSV/Parquet with prompt, reference"
    )
    gate.add_argument(
        "--reference-key", metavar="FIELD", help="the case field the references are keyed by (default prompt)"
    )
    gate.add_argument("--reference-field", metavar="NAME", help="the references' column (default reference)")
    gate.add_argument(
        "--judge-budget", type=non_negative_int, metavar="ROWS", help="rows sent to the judge per window (default 100)"
    )
    drift = parser.add_argument_group("drift test")
    drift.add_argument(
        "--reference-windows", type=positive_int, metavar="N", help="the first N windows are the reference (default 1)"
    )
    drift.add_argument("--alpha", type=unit_interval, metavar="A", help="false alarms over every window (default 0.05)")
    drift.add_argument("--min-rows", type=positive_int, metavar="N", help="rows a metric needs per side (default 30)")
    run = parser.add_argument_group("running")
    run.add_argument("--once", action="store_true", help="read what is there, score what closed, exit (cron, CI)")
    run.add_argument("--drain", action="store_true", help="the source is complete: close and score every window")
    run.add_argument(
        "--poll", metavar="DURATION", default="30s", help="without --once: time between reads (default 30s)"
    )
    run.add_argument(
        "--engine",
        choices=["local", "dask"],
        default="local",
        help="local (default) or dask: the decoding of the source's JSON-lines files partitioned over a Dask "
        "cluster (a task per file, or per 8 MiB of one), applied here in order: the same store; needs respeval[dask]",
    )
    run.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --engine dask: a running scheduler (tcp://host:8786); default: a 2-worker LocalCluster on 127.0.0.1",
    )
    run.add_argument("--scrub-pii", action="store_true", default=None, help="replace PII before judging and storing")
    run.add_argument("--pii-key-file", metavar="FILE", help="the placeholders' key (default RESPEVAL_PII_KEY)")
    run.add_argument(
        "--fail-on",
        choices=("new", "latest", "never"),
        default="new",
        help="exit 2 when a window scored by this run regressed (new), when the latest window did (latest), never",
    )
    out = parser.add_argument_group("outputs")
    out.add_argument("--report", metavar="FILE", help="the trend report (HTML), rewritten after each step")
    out.add_argument("--summary-out", metavar="FILE", help="the trend report as a run summary (JSON)")
    out.add_argument(
        "--last", type=positive_int, metavar="N", help="show the last N windows in the table (default all)"
    )
    out.add_argument("--json", action="store_true", help="print what this run did as JSON (no table)")
    out.add_argument("--quiet", action="store_true", help="no progress and no table")
    add_judge_arguments(parser, groups=("model", "engine", "cache"), default_cache="STORE.cache.sqlite")


def _dask_client(scheduler: str | None, stack: contextlib.ExitStack) -> Any:
    """A client of ``scheduler``, or of a LocalCluster of this machine (closed with ``stack``)."""
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("--engine dask needs Dask: pip install 'respeval[dask]'") from None
    if scheduler:
        return stack.enter_context(Client(scheduler))
    from respeval.distributed.dask import local_cluster

    cluster = stack.enter_context(local_cluster())
    return stack.enter_context(Client(cluster))


def _inside(path: str, directory: str) -> bool:
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return os.path.commonpath([path, directory]) == directory


def run(args: argparse.Namespace) -> int:
    from respeval.cli.judge_options import JudgeConfig
    from respeval.monitor import Judge, Monitor, config_from_spec, format_trend, parse_duration, trend_summary

    spec: dict[str, Any] = {"metrics": []}
    base = None
    if args.spec:
        from respeval.evaluate.spec import load_spec

        spec = load_spec(args.spec, sections=("monitor",))
        base = os.path.dirname(os.path.abspath(args.spec))
    for name, path in (("--report", args.report), ("--summary-out", args.summary_out), ("--store", args.store)):
        for source in args.source:
            if path and os.path.isdir(source) and _inside(path, source):
                raise ValueError(f"{name} {path} is inside the source {source}: write it somewhere else")
    pii_key = None
    scrub = args.scrub_pii if args.scrub_pii is not None else (spec.get("monitor") or {}).get("scrub_pii")
    if scrub:
        from respeval.traces.pii import run_key

        pii_key, origin = run_key(args.pii_key_file) if args.pii_key_file else run_key()
        if origin.startswith("random"):
            raise ValueError(
                "--scrub-pii in a monitor needs a fixed key, so that placeholders stay the same across runs: "
                "--pii-key-file FILE or RESPEVAL_PII_KEY"
            )
    elif args.pii_key_file:
        raise ValueError("--pii-key-file is the key of --scrub-pii's placeholders: add --scrub-pii")
    references = None
    if args.references or args.reference_key or args.reference_field:
        section_refs = (spec.get("monitor") or {}).get("references") or {}
        if isinstance(section_refs, str):
            section_refs = {"file": section_refs}
        spec_file = section_refs.get("file")
        if isinstance(spec_file, str) and base is not None and not os.path.isabs(spec_file):
            spec_file = os.path.join(base, spec_file)
        references = {
            "file": args.references or spec_file,
            "key": args.reference_key or section_refs.get("key", "prompt"),
            "field": args.reference_field or section_refs.get("field", "reference"),
        }
        if references["file"] is None:
            raise ValueError("--reference-key/--reference-field need --references FILE (or references: in the spec)")
    overrides = {
        "window": args.window,
        "lateness": args.lateness,
        "sample_rate": args.sample_rate,
        "seed": args.seed,
        "all_failures": args.all_failures,
        "stratify": args.stratify,
        "per_stratum": args.per_stratum,
        "references": references,
        "judge_budget": args.judge_budget,
        "reference_windows": args.reference_windows,
        "alpha": args.alpha,
        "min_rows": args.min_rows,
        "scrub_pii": scrub or None,
        "pii_key": pii_key,
        "on_error": args.on_error,
    }
    config = config_from_spec(spec.get("monitor"), base=base, overrides=overrides)
    poll = parse_duration(args.poll, "--poll")
    judge_config = JudgeConfig.from_args(args, out=args.store, cache_beside_out=True, spec=spec)
    judge = None
    cache = None
    if judge_config.model is not None:
        if judge_config.cache is not None:
            from respeval.judge.cache import JudgeCache

            cache = JudgeCache(judge_config.cache)
        judge = Judge(judge_config.model, cache, judge_config.engine, judge_config.threshold)
    if args.scheduler and args.engine != "dask":
        raise ValueError("--scheduler is the Dask scheduler of --engine dask: add --engine dask")
    with contextlib.ExitStack() as stack:
        if cache is not None:
            stack.callback(cache.close)
        client = None
        if args.engine == "dask":
            client = _dask_client(args.scheduler, stack)
        bar = None
        if not args.quiet and not args.json:
            from respeval.cli.progress import progress

            bar = stack.enter_context(progress(None, unit="B", desc="reading traces", unit_scale=True))
        m = stack.enter_context(
            Monitor(
                args.source,
                args.store,
                config,
                spec.get("metrics") or (),
                columns=spec.get("columns") or {},
                judge=judge,
                progress=bar.update if bar is not None else None,
                engine=client,
            )
        )

        def write_outputs() -> None:
            if not (args.report or args.summary_out):
                return
            summary = trend_summary(
                args.store,
                alpha=config.alpha,
                confidence=config.confidence,
                meta={"source": ", ".join(args.source), "store": args.store, "window": f"{config.window:g} s"},
            )
            if args.summary_out:
                from respeval.io.files import write_text_atomic

                write_text_atomic(args.summary_out, json.dumps(summary, indent=2, allow_nan=False) + "\n")
            if args.report:
                from respeval.report import write_report

                write_report(summary, args.report)

        interrupted = False
        if args.once or args.drain:
            m.step(drain=args.drain)
            write_outputs()
        else:
            stop = threading.Event()
            previous = {}

            def on_signal(signum: int, frame: Any) -> None:
                nonlocal interrupted
                interrupted = True
                stop.set()

            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, on_signal)
            try:

                def on_step(scored: list[dict[str, Any]]) -> None:
                    write_outputs()
                    if scored and not args.quiet and not args.json:
                        print(format_trend(scored), file=sys.stdout, flush=True)

                m.follow(poll=poll, stop=stop, on_step=on_step)
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
        report = m.report
        windows = [w for _, _, w in m.store.windows()]
    if args.json:
        print(json.dumps(report.to_json(), indent=2, allow_nan=False))
    elif not args.quiet and (args.once or args.drain):
        print(format_trend(windows, last=args.last))
    ingest = report.ingest
    print(
        f"respeval monitor: read {ingest.files} file{'s' * (ingest.files != 1)} ({ingest.records:,} records, "
        f"{ingest.late:,} late, {ingest.outside_sample:,} outside the sample, {ingest.bad:,} bad); "
        f"{len(report.windows)} window{'s' * (len(report.windows) != 1)} scored"
        + (
            f", regressed: {', '.join(str(w['start'])[:16] for w in report.windows if w['status'] == 'regressed')}"
            if report.regressed
            else ""
        )
        + f"; judge: {report.judge_calls:,} calls, {report.cache_hits:,} cache hits, ${report.cost_usd:.4f}"
        + f" -> {args.store}",
        file=sys.stderr,
    )
    if interrupted:
        return Exit.INTERRUPTED
    if args.fail_on == "new" and report.regressed:
        return Exit.GATE_FAILED
    if args.fail_on == "latest" and windows and windows[-1]["status"] == "regressed":
        return Exit.GATE_FAILED
    return Exit.OK
