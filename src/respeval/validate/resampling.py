"""Shared pieces of validation: seeded row resampling, intervals from resamples (the one
:class:`respeval.stats.Interval`), JSON-safe values."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np

from respeval.stats.intervals import Interval

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 1000
# Bootstrap resamples are gathered in blocks of about this many rows (bounded memory).
_BLOCK_ROWS = 2_000_000

Label = Hashable
Lengths = Sequence[int] | np.ndarray


def safe_div(num: np.ndarray, den: np.ndarray, fill: float = 0.0) -> np.ndarray:
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64))
    out = np.full(num.shape, fill)
    np.divide(num, den, out=out, where=den != 0)
    return out


def masked_mean(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return safe_div((values * mask).sum(axis=-1), mask.sum(axis=-1), fill=np.nan)


def resample_indices(rows: int, n: int, seed: int | None) -> Iterator[tuple[int, np.ndarray]]:
    """Every validation bootstrap's resamples: ``n`` draws of ``rows`` row indices with
    replacement from ``numpy.random.default_rng(seed)``, yielded as ``(first replicate, indices
    of shape (b, rows))`` blocks of bounded size.  Block size does not change the draws."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if rows <= 0:
        raise ValueError("bootstrap needs at least one row")
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK_ROWS // rows)
    for start in range(0, n, block):
        yield start, rng.integers(0, rows, size=(min(n, start + block) - start, rows))


def resampled_means(matrix: np.ndarray, n: int, seed: int | None) -> np.ndarray:
    """Column means of ``n`` bootstrap resamples of the rows of ``matrix``: shape ``(n, cols)``."""
    out = np.empty((n, matrix.shape[1]))
    for start, idx in resample_indices(matrix.shape[0], n, seed):
        out[start : start + idx.shape[0]] = matrix[idx].mean(axis=1)
    return out


def interval_from_samples(estimate: float | None, samples: np.ndarray, confidence: float) -> Interval:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    samples = np.asarray(samples, dtype=np.float64)
    samples = samples[~np.isnan(samples)]
    delta = (1 - confidence) / 2
    low, high = np.percentile(samples, [100 * delta, 100 * (1 - delta)]) if samples.size else (math.nan, math.nan)
    est = math.nan if estimate is None else float(estimate)
    return Interval(float(low), est, float(high), confidence)


def plain_value(value: Any) -> Any:
    """numpy scalars as Python values (for hashing with Python values and for JSON)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def json_number(value: float | None) -> float | None:
    """A float for JSON: NaN and None become ``None``."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value
