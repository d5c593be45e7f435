"""Pearson, Spearman and Kendall tau-b (equal to scipy's), at segment or system level."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from respeval.stats import DEFAULT_SEED
from respeval.validate.resampling import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    Interval,
    interval_from_samples,
    json_number,
    resample_indices,
)


@dataclass(frozen=True)
class Correlation:
    """Pearson, Spearman and Kendall tau-b of ``n`` (x, y) pairs; NaN when undefined (a
    constant side).  ``level`` says what a pair is: a row (``segment``) or a system mean."""

    n: int
    pearson: float
    spearman: float
    kendall_tau_b: float
    level: str = "segment"
    units: tuple[str, ...] = ()
    x: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)
    y: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)

    def bootstrap(
        self, n: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE
    ) -> dict[str, Interval]:
        """Percentile intervals from resampling the correlated pairs (rows, or systems at
        system level) with replacement."""
        samples = {name: np.empty(n) for name in ("pearson", "spearman", "kendall_tau_b")}
        for start, block in resample_indices(self.n, n, seed):
            for i, idx in enumerate(block, start):
                x, y = self.x[idx], self.y[idx]
                samples["pearson"][i] = pearson(x, y)
                samples["spearman"][i] = spearman(x, y)
                samples["kendall_tau_b"][i] = kendall_tau_b(x, y)
        return {name: interval_from_samples(getattr(self, name), s, confidence) for name, s in samples.items()}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out: dict[str, Any] = {
            "n": self.n,
            "level": self.level,
            "pearson": json_number(self.pearson),
            "spearman": json_number(self.spearman),
            "kendall_tau_b": json_number(self.kendall_tau_b),
        }
        if self.units:
            out["units"] = list(self.units)
        return out


def _as_float_pair(x: Iterable[float], y: Iterable[float]) -> tuple[np.ndarray, np.ndarray]:
    xa = np.asarray(x if isinstance(x, np.ndarray) else list(x), dtype=np.float64)
    ya = np.asarray(y if isinstance(y, np.ndarray) else list(y), dtype=np.float64)
    if xa.ndim != 1 or xa.shape != ya.shape:
        raise ValueError(f"x and y must be 1-D of the same length, got {xa.shape} and {ya.shape}")
    if np.isnan(xa).any() or np.isnan(ya).any():
        raise ValueError("x and y must not contain NaN (drop missing rows first)")
    return xa, ya


def pearson(x: Iterable[float], y: Iterable[float]) -> float:
    """Pearson's r (NaN when fewer than 2 pairs or a side is constant); equals scipy's
    ``pearsonr(x, y).statistic``."""
    xa, ya = _as_float_pair(x, y)
    if xa.size < 2:
        return math.nan
    xm, ym = xa - xa.mean(), ya - ya.mean()
    nx, ny = np.linalg.norm(xm), np.linalg.norm(ym)
    if nx == 0 or ny == 0:
        return math.nan
    return float(np.clip(np.dot(xm / nx, ym / ny), -1.0, 1.0))


def rankdata(a: Iterable[float]) -> np.ndarray:
    """1-based ranks, ties sharing their average rank (scipy's ``rankdata(method="average")``)."""
    arr = np.asarray(a, dtype=np.float64)
    n = arr.size
    sorter = np.argsort(arr, kind="mergesort")
    inverse = np.empty(n, dtype=np.intp)
    inverse[sorter] = np.arange(n)
    ordered = arr[sorter]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    dense = np.cumsum(starts)[inverse]
    bounds = np.r_[np.nonzero(starts)[0], n]
    return 0.5 * (bounds[dense] + bounds[dense - 1] + 1)


def spearman(x: Iterable[float], y: Iterable[float]) -> float:
    """Spearman's rho: Pearson's r of average ranks; equals scipy's ``spearmanr``."""
    xa, ya = _as_float_pair(x, y)
    return pearson(rankdata(xa), rankdata(ya))


def _tie_pairs(sorted_values: np.ndarray) -> int:
    """Pairs of equal values in an already sorted 1-D array (or rows of a 2-D one)."""
    if sorted_values.shape[0] == 0:
        return 0
    if sorted_values.ndim == 1:
        change = sorted_values[1:] != sorted_values[:-1]
    else:
        change = (sorted_values[1:] != sorted_values[:-1]).any(axis=1)
    bounds = np.nonzero(np.r_[True, change, True])[0]
    counts = np.diff(bounds).astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


def _count_inversions(y: np.ndarray) -> int:
    """Pairs ``i < j`` with ``y[i] > y[j]``, by merging halves level by level (vectorised)."""
    n = y.size
    pos = np.arange(n, dtype=np.int64)
    levels = np.unique(y, return_inverse=True)[1].astype(np.int64).ravel()  # dense ranks
    m = int(levels.max()) + 1 if n else 1
    total, width = 0, 1
    while width < n:
        block = pos // (2 * width)
        is_left = (pos // width) % 2 == 0
        # one integer key: by block, then value, left half before right half on equal values
        order = np.argsort((block * m + levels) * 2 + ~is_left)
        left_sorted, block_sorted = is_left[order], block[order]
        left_per_block = np.bincount(block[is_left], minlength=block[-1] + 1)
        left_before_block = np.r_[0, np.cumsum(left_per_block)[:-1]]
        left_upto = np.cumsum(left_sorted) - left_before_block[block_sorted]
        right = ~left_sorted
        greater_left = left_per_block[block_sorted[right]] - left_upto[right]
        total += int(greater_left.sum())
        width *= 2
    return total


def kendall_tau_b(x: Iterable[float], y: Iterable[float]) -> float:
    """Kendall's tau-b (ties corrected on both sides); equals scipy's ``kendalltau`` default.

    O(n log² n): discordant pairs are counted as inversions of ``y`` ordered by ``(x, y)``.
    NaN when fewer than 2 pairs or either side is constant.
    """
    xa, ya = _as_float_pair(x, y)
    n = xa.size
    if n < 2:
        return math.nan
    perm = np.lexsort((ya, xa))
    xs, ys = xa[perm], ya[perm]
    discordant = _count_inversions(ys)
    x_ties = _tie_pairs(xs)
    y_ties = _tie_pairs(np.sort(ya))
    joint_ties = _tie_pairs(np.column_stack((xs, ys)))
    pairs = n * (n - 1) // 2
    if x_ties == pairs or y_ties == pairs:
        return math.nan
    con_minus_dis = pairs - x_ties - y_ties + joint_ties - 2 * discordant
    tau = con_minus_dis / math.sqrt(pairs - x_ties) / math.sqrt(pairs - y_ties)
    return float(min(1.0, max(-1.0, tau)))


def correlations(x: Iterable[float], y: Iterable[float]) -> Correlation:
    """Pearson, Spearman and Kendall tau-b of paired values (row by row)."""
    xa, ya = _as_float_pair(x, y)
    return Correlation(
        n=int(xa.size),
        pearson=pearson(xa, ya),
        spearman=spearman(xa, ya),
        kendall_tau_b=kendall_tau_b(xa, ya),
        x=xa,
        y=ya,
    )


def metric_human_correlation(
    metric: Iterable[float],
    human: Iterable[float],
    *,
    systems: Iterable[Hashable] | None = None,
    level: Literal["segment", "system"] = "segment",
) -> Correlation:
    """Correlation of an automatic metric with human scores.

    ``level="segment"`` pools every row; ``level="system"`` first averages metric and human
    scores per system (``systems`` gives each row's system; the order of first appearance is
    kept in ``units``) and correlates the means — e.g. REALSumm's system-level Kendall tau of
    ROUGE-2 against LitePyramid recall.
    """
    xa, ya = _as_float_pair(metric, human)
    if level == "segment":
        return correlations(xa, ya)
    if level != "system":
        raise ValueError(f"level must be 'segment' or 'system', got {level!r}")
    if systems is None:
        raise ValueError("level='system' needs systems (one system name per row)")
    names = list(systems)
    if len(names) != xa.size:
        raise ValueError(f"systems has {len(names)} rows but the scores have {xa.size}")
    units = list(dict.fromkeys(names))
    code = {s: i for i, s in enumerate(units)}
    idx = np.fromiter((code[s] for s in names), dtype=np.int64, count=len(names))
    counts = np.bincount(idx, minlength=len(units))
    mx = np.bincount(idx, weights=xa, minlength=len(units)) / counts
    my = np.bincount(idx, weights=ya, minlength=len(units)) / counts
    c = correlations(mx, my)
    return Correlation(
        c.n, c.pearson, c.spearman, c.kendall_tau_b, level="system", units=tuple(str(u) for u in units), x=mx, y=my
    )
