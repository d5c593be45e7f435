"""Batch mode's own cost: where the time of a ``--batch`` run goes, phase by phase.

    python benchmarks/batch_report.py --rows 20000          # ~1 minute
    python benchmarks/batch_report.py --rows 100000 --runs 1

Judges ``--rows`` pointwise rows with ``batch=True`` against the fake batch API of the test
server (tests/_helpers/batch_api.py, in its own process: its time is the "provider" here),
then reruns them from the cache.  For each phase it prints wall time and this process's CPU
time per row (user + system; on a shared machine wall time grows with the load, CPU per row
does not):

  pass 1      the engine over every row: prompts, cache keys, misses set aside
  prepare     batch lines (JSON) for every request, the jobs recorded in the cache database
  upload      sending the batch files and submitting the batches (the fake parses them)
  provider    waiting: the fake answers the batch (0.1 s of "processing" plus its own work)
  download    result files fetched, matched by custom_id, stored in the cache
  pass 2      the engine over every row again, every answer from the cache
  rerun       a second run: one pass, all from the cache, nothing sent
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _helpers.judge_server import spawn_server  # noqa: E402
from respeval import judge  # noqa: E402
from respeval.judge.batch import BatchOptions, arun_rows_batched  # noqa: E402
from respeval.judge.methods.pointwise import Pointwise  # noqa: E402

PHASES = ("pass 1", "prepare", "upload", "provider", "download", "pass 2")


def rows(n: int) -> list[dict]:
    return [
        {
            "id": i,
            "prompt": f"What is item {i}?",
            "reference": f"Item {i} is a reference answer.",
            "response": f"Item {i} is a candidate answer. [[score={(0.0, 0.5, 1.0)[i % 3]}]]",
        }  # fmt: skip
        for i in range(n)
    ]


def cpu() -> float:
    t = os.times()
    return t.user + t.system


class Clock:
    """Marks (wall, cpu) at each progress message that ends a phase."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, float, float]] = [("start", time.perf_counter(), cpu())]

    def mark(self, name: str) -> None:
        self.marks.append((name, time.perf_counter(), cpu()))

    def on_progress(self, message: str) -> None:
        if message.startswith("pass 1:"):
            self.mark("pass 1")
        elif "uploading" in message or (": submitted" in message and self.marks[-1][0] == "pass 1"):
            self.mark("prepare")
        elif ": submitted" in message:
            self.mark("upload")
        elif "answers stored" in message:
            self.mark("download")

    def phases(self) -> dict[str, tuple[float, float]]:
        out: dict[str, tuple[float, float]] = {}
        for (_, w0, c0), (name, w1, c1) in zip(self.marks, self.marks[1:]):
            wall, spent = out.get(name, (0.0, 0.0))
            out[name] = (wall + w1 - w0, spent + c1 - c0)
        return out


def one_run(n: int, workdir: Path) -> tuple[dict[str, tuple[float, float]], tuple[float, float]]:
    records = rows(n)
    cache = workdir / "batch.sqlite"
    with spawn_server(batch_api={"seconds": 0.1}) as server:
        model = judge.OpenAIChatModel("gpt-4o-mini", base_url=server.url)
        clock = Clock()
        options = BatchOptions(poll_interval=0.05, poll_max=0.2)
        result, report = asyncio.run(
            arun_rows_batched(
                records, model, Pointwise(), cache=cache, batch=options, keep_rows=False, on_progress=clock.on_progress
            )  # fmt: skip
        )
        clock.mark("pass 2")
        assert result.summary.scored == n and report.succeeded == n, result.summary.format()
        phases = clock.phases()
        # the wait for the provider is what "download" measured minus the fetch itself: split by CPU
        started, spent = time.perf_counter(), cpu()
        again, _ = asyncio.run(arun_rows_batched(records, model, Pointwise(), cache=cache, batch=options))
        rerun = (time.perf_counter() - started, cpu() - spent)
        assert again.summary.cache_hits == n and server.stats()["batch_api"]["batches"] == report.batches_submitted
    return phases, rerun


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    n = args.rows
    results = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            results.append(one_run(n, Path(tmp)))
    print(f"{n:,} rows, {args.runs} runs (min-max); load average {os.getloadavg()[0]:.1f}")
    print(f"{'phase':<10} {'wall s':>16} {'CPU µs/row':>18}")
    names = ["pass 1", "prepare", "upload", "download", "pass 2"]
    for name in names:
        walls = [r[0].get(name, (0.0, 0.0))[0] for r in results]
        cpus = [r[0].get(name, (0.0, 0.0))[1] / n * 1e6 for r in results]
        label = "wait+download" if name == "download" else name
        print(f"{label:<14} {min(walls):6.2f}-{max(walls):6.2f} {min(cpus):8.0f}-{max(cpus):6.0f}")
    walls = [sum(w for w, _ in r[0].values()) for r in results]
    cpus = [sum(c for _, c in r[0].values()) / n * 1e6 for r in results]
    print(f"{'total':<14} {min(walls):6.2f}-{max(walls):6.2f} {min(cpus):8.0f}-{max(cpus):6.0f}")
    walls = [r[1][0] for r in results]
    cpus = [r[1][1] / n * 1e6 for r in results]
    print(f"{'rerun':<14} {min(walls):6.2f}-{max(walls):6.2f} {min(cpus):8.0f}-{max(cpus):6.0f}")


if __name__ == "__main__":
    main()
