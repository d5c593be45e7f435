"""What the interleaved A/B scripts share (ab_intern.py, ab_family.py): two builds of the
native core loaded side by side, rounds that time each side in a random order, and the
per-round ratio B/A, whose median and quartiles cancel the host's fast and slow phases
(they move both sides alike within a round)."""

from __future__ import annotations

import importlib.util
import random
import statistics
from collections.abc import Callable


def load_core(path: str, tag: str):
    """A build of ``respeval._core`` from its shared library, as a module of its own."""
    spec = importlib.util.spec_from_file_location(f"respeval_ab_{tag}._core", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def interleave(time_one: Callable[[str], float], rounds: int, rows: int, seed: int = 1):
    """``rounds`` rounds timing sides "A" and "B" (``time_one(side)``: seconds) in a random
    order; per side the times in us a row, and the per-round ratios B/A."""
    rng = random.Random(seed)
    per_row: dict[str, list[float]] = {"A": [], "B": []}
    ratios = []
    for _ in range(rounds):
        order = ["A", "B"]
        rng.shuffle(order)
        took = {k: time_one(k) for k in order}
        for k, dt in took.items():
            per_row[k].append(dt / rows * 1e6)
        ratios.append(took["B"] / took["A"])
    return per_row, ratios


def report(per_row: dict, labels: dict, ratios: list, what: str, digits: int = 2) -> None:
    for k in ("A", "B"):
        print(f"{k} {labels[k]}: median {statistics.median(per_row[k]):.{digits}f} us a row")
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    print(f"B/A time, per round: median {statistics.median(ratios):.3f} (quartiles {q1:.3f}-{q3:.3f}), {what}")
