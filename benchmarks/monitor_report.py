"""The monitor's per-window cost, against reading the same windows with a short Python script
that uses the OpenTelemetry proto JSON mapping.

Traffic: seeded windows made with the real OpenTelemetry SDK (``tests/_helpers/monitor_traffic.py``:
an ``invoke_agent`` root and a ``chat`` span per trace with GenAI input/output messages, as
the SDK's OTLP encoder and protobuf's JSON mapping write them, two files of three export
requests per window).  Three runs over the same files, in one process, interleaved round by
round (a slow moment of the host hits all of them):

* ``monitor, reading``: ``respeval.monitor.Monitor(...).step(drain=True)`` with no metric and
  no references: the files read into a fresh SQLite store (the checkpoint committed with the
  records), windows closed, every trace's case built, sampled and committed once;
* ``monitor, scoring``: the same plus the gate against references (exact -> lexical ->
  judge; the scripted judge ``python:_helpers.monitor_traffic:judge`` answers in-process, no
  network, no cache) and ``rougeL``, per-window intervals and the drift test;
* ``proto JSON``: the script a user would write: ``json_format.Parse`` each line into an
  ``ExportTraceServiceRequest``, spans grouped by trace id, each trace put in its hour by
  its root's start, the prompt and the response read from the chat span's
  ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (no checkpoint, no scoring).

Reported: milliseconds per window (median of the rounds and range) and, per round, the
proto script's time over each monitor run's (above 1: the monitor is faster).  One untimed
round goes first (imports, the native core's first load).

    python benchmarks/monitor_report.py                     # 6 windows of 2,000 traces, 3 rounds
    python benchmarks/monitor_report.py --windows 6 --per-window 2000 --rounds 5
    python benchmarks/monitor_report.py --dask             # + reading with --engine dask
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import report_json  # noqa: E402
from _helpers import monitor_traffic  # noqa: E402

HOUR_NS = 3600 * 10**9


def host_cpu() -> str:
    model = report_json.cpu_model()
    return f"{model} ({os.cpu_count()} CPUs)" if model else platform.processor() or platform.machine()


def proto_json(files: list[Path]) -> dict[int, list[tuple[str, str, str]]]:
    """The OTLP proto JSON mapping, the way a short script reads the windows."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    spans: dict[bytes, list] = defaultdict(list)
    for path in files:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                request = json_format.Parse(line, ExportTraceServiceRequest())
                for rs in request.resource_spans:
                    for ss in rs.scope_spans:
                        for span in ss.spans:
                            spans[span.trace_id].append(span)
    windows: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
    for trace_id, group in spans.items():
        root = min(group, key=lambda s: s.start_time_unix_nano)
        prompt = response = ""
        for span in group:
            attrs = {kv.key: kv.value.string_value for kv in span.attributes}
            if "gen_ai.input.messages" in attrs:
                inputs = json.loads(attrs["gen_ai.input.messages"])
                prompt = next((p["content"] for m in inputs if m["role"] == "user" for p in m["parts"]), "")
                outputs = json.loads(attrs.get("gen_ai.output.messages", "[]"))
                response = next((p["content"] for m in outputs for p in m["parts"]), "")
        windows[root.start_time_unix_nano // HOUR_NS].append((trace_id.hex(), prompt, response))
    return windows


def run_monitor(src: Path, work: Path, scoring: bool, engine: object = None) -> int:
    from respeval.gate import GateConfig, Thresholds
    from respeval.judge.specs import load_model
    from respeval.monitor import Judge, Monitor, MonitorConfig, References

    store = work / "m.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    if scoring:
        config = MonitorConfig(
            references=References(str(work / "refs.jsonl")),
            gate=GateConfig(lexical=Thresholds(reject_below=0.25)),
            judge_budget=None,
            min_rows=20,
        )
        judge = Judge(load_model("python:_helpers.monitor_traffic:judge"))
        with Monitor([str(src)], str(store), config, ["rougeL"], judge=judge) as m:
            m.step(drain=True)
            return len(m.report.windows)
    with Monitor([str(src)], str(store), MonitorConfig(min_rows=20), engine=engine) as m:
        m.step(drain=True)
        return len(m.report.windows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--windows", type=int, default=6)
    parser.add_argument("--per-window", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--dask",
        action="store_true",
        help="also: reading with --engine dask (a 2-worker LocalCluster, started untimed)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="respeval-monitor-bench-"))
    try:
        src = work / "src"
        t = time.perf_counter()
        made = monitor_traffic.write(src, windows=args.windows, per_window=args.per_window, seed=0)
        monitor_traffic.references(work / "refs.jsonl")
        size = sum(f.stat().st_size for f in made.files)
        spans = 2 * args.windows * args.per_window
        print(f"host: {host_cpu()}; Python {platform.python_version()}; load average {os.getloadavg()[0]:.2f}")
        print(
            f"traffic: {args.windows} windows x {args.per_window:,} traces ({spans:,} spans, {size / 1e6:.1f} MB, "
            f"{len(made.files)} files), made with the OpenTelemetry SDK in {time.perf_counter() - t:.1f} s; "
            f"{args.rounds} interleaved rounds"
        )
        runs = {
            "monitor, reading": lambda: run_monitor(src, work, False),
            "monitor, scoring": lambda: run_monitor(src, work, True),
            "proto JSON": lambda: len(proto_json(sorted(made.files))),
        }
        cluster = client = None
        if args.dask:
            from distributed import Client

            from respeval.distributed.dask import local_cluster

            cluster = local_cluster()
            client = Client(cluster)
            runs["monitor, reading, --engine dask (2 workers)"] = lambda: run_monitor(src, work, False, client)
        times: dict[str, list[float]] = {k: [] for k in runs}
        for fn in runs.values():  # one untimed round first: imports, the core's first load, caches
            fn()
        for _ in range(args.rounds):
            for name, fn in runs.items():
                t = time.perf_counter()
                got = fn()
                times[name].append(time.perf_counter() - t)
                assert got == args.windows, (name, got)
        print(f"load average after: {os.getloadavg()[0]:.2f}\n")
        print("| run | ms per window: median | range | traces/s | proto JSON's time / this time, per round |")
        print("|---|---:|---|---:|---|")
        results = {}
        for name, ts in times.items():
            per = [1000 * x / args.windows for x in ts]
            ratios = [p / x for x, p in zip(ts, times["proto JSON"])]
            results[name] = {"ms_per_window": per, "ratio_proto_over_this": ratios}
            print(
                f"| {name} | {statistics.median(per):,.0f} | {min(per):,.0f}-{max(per):,.0f} | "
                f"{args.windows * args.per_window / statistics.median(ts):,.0f} | "
                f"{', '.join(f'{r:.2f}' for r in ratios)} |"
            )
        if args.json:
            print(json.dumps({"host": host_cpu(), "results": results}, indent=2))
        if client is not None:
            client.close()
            cluster.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
