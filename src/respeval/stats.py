"""Corpus aggregation: means and seeded bootstrap confidence intervals."""

from __future__ import annotations

import numpy as np

DEFAULT_SEED = 12345

# Keep one resampling block at about this many gathered rows, so memory stays
# bounded (tens of MB) however large the corpus is.
_BLOCK_ROWS = 1_000_000


def bootstrap_means(matrix: np.ndarray, n_samples: int, seed: int | None) -> np.ndarray:
    """Means of ``n_samples`` bootstrap resamples of the rows of ``matrix``.

    Returns an array of shape ``(n_samples, matrix.shape[1])``.  Resampling is
    row-wise (all columns of a row travel together), from
    ``numpy.random.default_rng(seed)``.
    """
    if n_samples <= 0:
        raise ValueError(f"n_samples must be positive, got {n_samples}")
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise ValueError("bootstrap needs at least one row")
    rows = matrix.shape[0]
    rng = np.random.default_rng(seed)
    out = np.empty((n_samples, matrix.shape[1]))
    block = max(1, _BLOCK_ROWS // rows)
    for start in range(0, n_samples, block):
        stop = min(n_samples, start + block)
        idx = rng.integers(0, rows, size=(stop - start, rows))
        out[start:stop] = matrix[idx].mean(axis=1)
    return out


def percentile_interval(samples: np.ndarray, confidence: float) -> np.ndarray:
    """Rows (low, median, high) of bootstrap ``samples``, as rouge-score reports them."""
    if not 0 <= confidence <= 1:
        raise ValueError(f"confidence must be in [0, 1], got {confidence}")
    delta = (1 - confidence) / 2
    q = 100 * np.array([delta, 0.5, 1 - delta])
    return np.percentile(samples, q, axis=0)
