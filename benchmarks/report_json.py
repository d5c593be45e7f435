"""What a benchmark report writes with ``--json PATH``: its key results and the host they ran on.

Every report that ``benchmarks/speed_table.py`` renders takes ``--json PATH`` (through
:func:`add_option`) and, at its end, calls :func:`write` with a dict of its results; the
printed report does not change.  The file is::

    {"report": "mt_report.py", "argv": [...], "host": {...}, "results": {...}}

``host`` (:func:`host`) names the CPU model (``/proc/cpuinfo``), the cores, the load average
before the measurement and at the write, Python, the git commit and the date.  A ratio of two
contenders timed round by round is :func:`ratio` (the ratio of the best calls, then the
median, min and max of the per-round ratios); a series of per-round values is :func:`spread`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cpu_model() -> str | None:
    """The first ``model name`` of ``/proc/cpuinfo``, or None where there is none."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()


def host(load_before: tuple[float, float, float] | None = None) -> dict:
    """The machine, the load on it and the code measured, as of now."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "cpu": cpu_model() or platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "load_average_before": list(load_before) if load_before is not None else None,
        "load_average": list(os.getloadavg()),
        "python": platform.python_version(),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "uncommitted_changes": bool(status) if status is not None else None,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def spread(values: list[float]) -> dict:
    """Median, min and max of per-round values (and how many rounds)."""
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "rounds": len(values),
    }


def ratio(numerator_times: list[float], denominator_times: list[float]) -> dict:
    """``numerator / denominator`` of two contenders' times, interleaved round by round: the
    ratio of their best (least) times, and the spread of the ratios of the same round.  With
    the peer's times over respeval's, a ratio above 1 is how many times faster respeval is."""
    per_round = [a / b for a, b in zip(numerator_times, denominator_times)]
    return {"best": min(numerator_times) / min(denominator_times), **spread(per_round)}


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        type=Path,
        metavar="PATH",
        help="also write the key results and the host to PATH, machine-readably (benchmarks/speed_table.py reads it)",
    )


def write(path: Path | None, report: str, results: dict, load_before: tuple[float, float, float] | None) -> None:
    """Write ``results`` with the host to ``path`` (nothing when ``path`` is None)."""
    if path is None:
        return
    doc = {"report": report, "argv": sys.argv[1:], "host": host(load_before), "results": results}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
