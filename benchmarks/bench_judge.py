"""Judge engine throughput against an instantly-answering local OpenAI-compatible server.

    python -m pytest benchmarks/bench_judge.py                      # ~1 minute
    python -m pytest benchmarks/bench_judge.py --benchmark-disable  # smoke test, seconds

The server (tests/_helpers/judge_server.py) runs in its own process, so it has the second core; the
engine runs here on one.  Target: at least 1,000 judged rows per second, so that the engine
is never the bottleneck of a judged evaluation (a real judge answers far slower).

Besides rows/s (wall clock, best round) the summary gives the engine's CPU time per row
(this process only: user + system).  On a shared machine rows/s drops when other
processes take the cores; CPU per row does not, and 1 / (CPU per row) is the rate the
engine sustains on one core of its own.

Workloads, 5,000 pointwise rows at concurrency 64 (500 in the smoke test):
  http-cold     the full path: prompt, cache lookup (miss), HTTP call, parse, cache write
  http-nocache  the same without the cache
  http-warm     a rerun: every answer from the cache, no HTTP
  fake-cold     engine + cache with the in-process fake model: the engine's own overhead
  httpx-sharded http-nocache through httpx's AsyncHTTPTransport in pools of 8 (the default
                for remote endpoints) instead of the loopback transport (2,000 rows)
  httpx-pool    the same through one httpx pool of 64 connections (1,000 rows): why
                neither is the default for local servers
Every round checks that every row was scored with the verdict the server gave.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _helpers.judge_server import spawn_server  # noqa: E402
from respeval import judge  # noqa: E402

TARGET_ROWS_PER_S = 1_000
CONCURRENCY = 64
_RESULTS: list[tuple[str, int, float, float]] = []


def _items(n: int) -> list[dict]:
    return [
        {
            "id": i,
            "prompt": f"What is item {i}?",
            "reference": f"Item {i} is a reference answer.",
            "response": f"Item {i} is a candidate answer. [[score={(0.0, 0.5, 1.0)[i % 3]}]]",
        }
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def server():
    with spawn_server(0.0) as srv:
        yield srv


@pytest.fixture(scope="module")
def rows(request) -> int:
    return 500 if request.config.getoption("benchmark_disable") else 5_000


@pytest.fixture(scope="module", autouse=True)
def report(request):
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or not _RESULTS:
        return
    # Module teardown output is captured; this table belongs on the terminal.
    with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
        _write_table(reporter)


def _write_table(reporter) -> None:
    reporter.write_line("")
    reporter.section(f"judge engine: judged rows per second (best round, concurrency {CONCURRENCY})")
    reporter.write_line(f"{'workload':<14} {'rows':>6} {'rows/s':>10} {'CPU us/row':>11} {'rows/CPU-s':>11}")
    for name, n, rate, cpu in _RESULTS:
        flag = "" if rate >= TARGET_ROWS_PER_S or name.startswith("httpx") else f"   < target {TARGET_ROWS_PER_S}"
        reporter.write_line(f"{name:<14} {n:>6} {rate:>10,.0f} {cpu * 1e6:>11,.0f} {1 / cpu:>11,.0f}{flag}")


def _check(result: judge.RunResult, n: int) -> None:
    assert result.summary.scored == n, result.summary.format()
    assert all(r.verdict["score"] == (0.0, 0.5, 1.0)[r.row % 3] for r in result.rows)


def _bench(benchmark, name: str, n: int, run, setup=None, rounds: int = 3) -> None:
    cpu: list[float] = []

    def timed(*args):
        start = time.process_time()
        try:
            return run(*args)
        finally:
            cpu.append(time.process_time() - start)

    kwargs = {"rounds": rounds, "warmup_rounds": 0 if setup else 1}
    if setup is not None:
        kwargs["setup"] = setup
    result = benchmark.pedantic(timed, **kwargs)
    _check(result, n)
    benchmark.extra_info.update(rows=n, concurrency=CONCURRENCY)
    if benchmark.stats is not None:  # None with --benchmark-disable
        rate = n / benchmark.stats.stats.min
        cpu_per_row = min(cpu) / n
        benchmark.extra_info.update(
            rows_per_s=rate,
            cpu_us_per_row=cpu_per_row * 1e6,
            cpu_us_per_row_rounds=[c / n * 1e6 for c in cpu[-rounds:]],
        )
        _RESULTS.append((name, n, rate, cpu_per_row))


def _fresh_cache():
    path = Path(tempfile.mkdtemp(prefix="respeval-bench-")) / "cache.sqlite"
    return (path,), {}


def test_http_cold(benchmark, server, rows):
    items = _items(rows)
    model = judge.OpenAIChatModel("bench", base_url=server.url)
    benchmark.group = "judge"
    _bench(
        benchmark,
        "http-cold",
        rows,
        lambda cache: judge.run(items, model, cache=cache, concurrency=CONCURRENCY),
        setup=_fresh_cache,
    )


def test_http_nocache(benchmark, server, rows):
    items = _items(rows)
    model = judge.OpenAIChatModel("bench", base_url=server.url)
    benchmark.group = "judge"
    _bench(benchmark, "http-nocache", rows, lambda: judge.run(items, model, concurrency=CONCURRENCY))


def test_http_warm(benchmark, server, rows, tmp_path):
    items = _items(rows)
    model = judge.OpenAIChatModel("bench", base_url=server.url)
    cache = tmp_path / "warm.sqlite"
    judge.run(items, model, cache=cache, concurrency=CONCURRENCY)
    before = server.stats()["requests"]
    benchmark.group = "judge"
    _bench(benchmark, "http-warm", rows, lambda: judge.run(items, model, cache=cache, concurrency=CONCURRENCY))
    assert server.stats()["requests"] == before  # nothing reached the server


def test_fake_cold(benchmark, rows):
    items = _items(rows)

    def answer(request):
        score = float(request.messages[1].content.split("[[score=")[1].split("]]")[0])
        return f'{{"reasoning": "r", "score": {score}, "pass": {"true" if score >= 0.5 else "false"}}}'

    benchmark.group = "judge"
    _bench(
        benchmark,
        "fake-cold",
        rows,
        lambda cache: judge.run(items, judge.FakeModel(answer), cache=cache, concurrency=CONCURRENCY),
        setup=_fresh_cache,
    )


def test_httpx_sharded(benchmark, server, rows):
    n = min(rows, 2_000)
    items = _items(n)

    def run():
        transport = judge.ShardedTransport(max_connections=CONCURRENCY)
        return judge.run(
            items, judge.OpenAIChatModel("bench", base_url=server.url, transport=transport), concurrency=CONCURRENCY
        )

    benchmark.group = "judge"
    _bench(benchmark, "httpx-sharded", n, run, rounds=1)


def test_httpx_pool(benchmark, server, rows):
    n = min(rows, 1_000)
    items = _items(n)

    def run():
        transport = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=CONCURRENCY), retries=0)
        return judge.run(
            items, judge.OpenAIChatModel("bench", base_url=server.url, transport=transport), concurrency=CONCURRENCY
        )

    benchmark.group = "judge"
    _bench(benchmark, "httpx-pool", n, run, rounds=1)
