"""Trace reading throughput and memory: ``respeval dataset from-traces`` and its readers.

Two measurements on seeded synthetic GenAI traffic (``tests/_helpers/trace_corpus.py``: agent
runs of 4-6 spans with input/output messages, usage and tool spans, written as the SDK's
encoder and protobuf's JSON mapping write OTLP JSON; one export request of 100 spans per line,
traces spread over neighbouring requests):

1. **Throughput** (``--throughput-spans``, default 100,000), in one process, interleaved
   rounds:

   * ``respeval read``: :func:`respeval.traces.sources.read_records`, the spans decoded
     (ids, AnyValue attributes, events): spans/s read;
   * ``respeval cases``: :func:`respeval.traces.read_cases`, everything up to the cases
     (partitioning by trace, grouping, messages, tool calls, tokens): cases/s built;
   * ``proto JSON``: the short script a user would write with the OTLP proto JSON mapping:
     ``json_format.Parse`` each line into an ``ExportTraceServiceRequest``, each span's
     attributes into a dict, spans grouped by trace id (in memory): spans/s.

   Reported: the median of the rounds, their range, and the per-round ratio to proto JSON.

2. **Peak RSS** of the command, ``python -m respeval dataset from-traces --input FILE
   --out cases.jsonl --quiet`` (and with ``--scrub-pii``, and with ``--dedupe``), in a fresh
   process per size (``--rss-spans``, default 100,000 and 1,000,000), from ``os.wait4``.

    python benchmarks/traces_report.py                      # both, the default sizes
    python benchmarks/traces_report.py --rss-spans 100000 1000000 --throughput-spans 100000 --rounds 5

The corpus files are written under ``--dir`` (default: a temporary directory; ~0.9 KB a
span, so about 0.9 GB for a million spans) and reused when they exist.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import report_json  # noqa: E402
from _helpers import trace_corpus  # noqa: E402


def host_cpu() -> str:
    model = report_json.cpu_model()
    return f"{model} ({os.cpu_count()} CPUs)" if model else platform.processor() or platform.machine()


def corpus(directory: Path, n_spans: int) -> tuple[Path, dict[str, int]]:
    path = directory / f"spans-{n_spans}.jsonl"
    meta = directory / f"spans-{n_spans}.json"
    if path.exists() and meta.exists():
        return path, json.loads(meta.read_text())
    counts = trace_corpus.write(path, n_spans, seed=1)
    meta.write_text(json.dumps(counts))
    return path, counts


def respeval_read(path: Path) -> int:
    from respeval.traces.errors import BadRecords
    from respeval.traces.sources import read_records

    n = 0
    for _ in read_records(str(path), BadRecords("fail")):
        n += 1
    return n


def respeval_cases(path: Path) -> int:
    from respeval import traces

    n = 0
    for _ in traces.read_cases([str(path)]):
        n += 1
    return n


def proto_json(path: Path) -> int:
    """The OTLP proto JSON mapping, the way a short script reads it."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    grouped: dict[str, list] = defaultdict(list)
    n = 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            request = json_format.Parse(line, ExportTraceServiceRequest())
            for rs in request.resource_spans:
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        attrs = {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in span.attributes}
                        grouped[span.trace_id.hex()].append((span.span_id.hex(), span.name, attrs))
                        n += 1
    return n


def throughput(path: Path, counts: dict[str, int], rounds: int) -> dict:
    runs = {"respeval read": respeval_read, "respeval cases": respeval_cases, "proto JSON": proto_json}
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for name, fn in runs.items():  # interleaved: a slow moment of the host hits every reader
            t = time.perf_counter()
            got = fn(path)
            times[name].append(time.perf_counter() - t)
            want = counts["traces"] if name == "respeval cases" else counts["spans"]
            assert got == want, (name, got, want)
    out = {}
    for name, ts in times.items():
        unit = counts["traces"] if name == "respeval cases" else counts["spans"]
        rates = [unit / t for t in ts]
        out[name] = {
            "median_per_s": statistics.median(rates),
            "min_per_s": min(rates),
            "max_per_s": max(rates),
            "spans_per_s": statistics.median(counts["spans"] / t for t in ts),
            "ratio_to_proto": [p / r for r, p in zip(ts, times["proto JSON"])],
        }
    return out


def peak_rss(path: Path, out_dir: Path, extra: list[str]) -> dict:
    cmd = [sys.executable, "-m", "respeval", "dataset", "from-traces", "--input", str(path), "--out", str(out_dir / "cases.jsonl"), "--quiet", "--report", str(out_dir / "report.json"), *extra]  # fmt: skip
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode() if proc.stderr else ""
    if status != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err}")
    report = json.loads((out_dir / "report.json").read_text())
    return {
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "wall_s": wall,
        "written": report["written"],
        "command": " ".join(cmd[1:]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--throughput-spans", type=int, default=100_000)
    parser.add_argument("--rss-spans", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    directory = args.dir or Path(tempfile.mkdtemp(prefix="respeval-traces-bench-"))
    directory.mkdir(parents=True, exist_ok=True)
    print(f"host: {host_cpu()}; Python {platform.python_version()}")
    results: dict = {"host": host_cpu()}
    if args.throughput_spans:
        path, counts = corpus(directory, args.throughput_spans)
        print(
            f"\nthroughput: {counts['spans']:,} spans, {counts['traces']:,} traces, {path.stat().st_size / 1e6:.0f} MB, {args.rounds} rounds"
        )
        res = throughput(path, counts, args.rounds)
        results["throughput"] = res
        print("| reader | median | range | spans/s | speed-up over proto JSON (its time / this time, per round) |")
        print("|---|---|---|---|---|")
        for name, r in res.items():
            unit = "cases/s" if name == "respeval cases" else "spans/s"
            ratios = ", ".join(f"{x:.2f}" for x in r["ratio_to_proto"])
            print(
                f"| {name} | {r['median_per_s']:,.0f} {unit} | {r['min_per_s']:,.0f}-{r['max_per_s']:,.0f} | {r['spans_per_s']:,.0f} | {ratios} |"
            )
    if args.rss_spans:
        print("\npeak RSS of `respeval dataset from-traces` (fresh process per run):")
        print("| spans | options | peak RSS | wall | cases written |")
        print("|---|---|---|---|---|")
        results["rss"] = []
        for n in args.rss_spans:
            path, counts = corpus(directory, n)
            for extra in ([], ["--scrub-pii"], ["--dedupe"]):
                with tempfile.TemporaryDirectory(dir=directory) as out:
                    r = peak_rss(path, Path(out), extra)
                r.update(spans=counts["spans"], options=" ".join(extra) or "(none)")
                results["rss"].append(r)
                print(
                    f"| {counts['spans']:,} | {r['options']} | {r['peak_rss_mb']:.0f} MB | {r['wall_s']:.0f} s | {r['written']:,} |"
                )
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
