"""Benchmark fixtures: the real workloads, sizes, and a pairs/s summary at the end.

rouge-score-rs reads RAYON_NUM_THREADS once per process, so this process can only measure
it at one thread count: 1 by default (set here, before rouge_score_rs is imported), or
whatever the caller sets (``RAYON_NUM_THREADS=0`` means all cores).
``python benchmarks/report.py`` measures both, in separate processes.

With ``--benchmark-disable`` (the smoke test) every workload is cut to a few hundred pairs.
With ``--benchmark-json PATH`` the file's ``machine_info`` carries ``host``, the host as the
reports' ``--json`` names it (benchmarks/report_json.py), for benchmarks/speed_table.py.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")

import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
import report_json  # noqa: E402

_LOAD_AT_START = os.getloadavg()


@dataclass(frozen=True)
class Sizes:
    short: int  # respeval and rouge-score-rs
    python_ref: int  # respeval's pure-Python reference
    rouge_score: int  # rouge-score
    long: int | None  # respeval and rouge-score-rs (None: all)
    long_rouge_score: int


FULL = Sizes(short=corpus.N_SHORT, python_ref=2_000, rouge_score=5_000, long=None, long_rouge_score=16)
SMOKE = Sizes(short=2_000, python_ref=200, rouge_score=200, long=16, long_rouge_score=2)


@pytest.fixture(scope="session")
def smoke(request) -> bool:
    return bool(request.config.getoption("benchmark_disable"))


@pytest.fixture(scope="session")
def sizes(smoke) -> Sizes:
    return SMOKE if smoke else FULL


@pytest.fixture(scope="session")
def short(sizes) -> corpus.Pairs:
    if not corpus.data_available():
        pytest.skip(corpus.missing_message())
    return corpus.short_pairs(sizes.short)


@pytest.fixture(scope="session")
def long_docs(sizes) -> corpus.Pairs:
    if not corpus.data_available():
        pytest.skip(corpus.missing_message())
    return corpus.long_pairs(sizes.long)


@pytest.hookimpl(optionalhook=True)
def pytest_benchmark_update_machine_info(config, machine_info) -> None:
    machine_info["host"] = report_json.host(_LOAD_AT_START)


# --- the pairs/s summary ---------------------------------------------------------------

_RESULTS: list[dict] = []


@pytest.fixture
def record(benchmark):
    """Call after ``benchmark.pedantic``: stores pairs and (when timed) best pairs/s."""

    def _record(workload: str, library: str, config: str, pairs: int) -> None:
        benchmark.extra_info.update(workload=workload, library=library, config=config, pairs=pairs)
        if benchmark.stats is None:  # --benchmark-disable
            return
        best = benchmark.stats.stats.min
        benchmark.extra_info["pairs_per_s_best"] = pairs / best
        _RESULTS.append(
            dict(workload=workload, library=library, config=config, pairs=pairs, best=best, rate=pairs / best)
        )

    return _record


def pytest_terminal_summary(terminalreporter) -> None:
    if not _RESULTS:
        return
    tr = terminalreporter
    tr.section("respeval ROUGE benchmarks: pairs per second (best round)")
    baseline = {r["workload"]: r["rate"] for r in _RESULTS if r["library"] == "rouge-score-rs"}
    tr.write_line(
        f"{'workload':<28} {'library':<16} {'config':<16} {'pairs':>7} {'pairs/s':>11} {'vs rouge-score-rs':>18}"
    )
    for r in sorted(_RESULTS, key=lambda r: (r["workload"].startswith("long"), r["workload"], -r["rate"])):
        base = baseline.get(r["workload"])
        ratio = f"{r['rate'] / base:.2f}x" if base else "-"
        tr.write_line(
            f"{r['workload']:<28} {r['library']:<16} {r['config']:<16} {r['pairs']:>7} {r['rate']:>11,.0f} {ratio:>18}"
        )
    tr.write_line(
        f"(rouge-score-rs ran with RAYON_NUM_THREADS={os.environ.get('RAYON_NUM_THREADS')}; "
        "rouge-score and respeval-python are timed on evenly spread subsets)"
    )
