"""Corpus aggregation: means and seeded bootstrap confidence intervals."""

from __future__ import annotations

import os

import numpy as np

from respeval import _backend

DEFAULT_SEED = 12345


def resolve_seed(seed: int | None) -> int:
    """A 64-bit seed; None draws one from the OS (an unseeded, unrepeatable run)."""
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    return int(seed) & 0xFFFFFFFFFFFFFFFF


def bootstrap_sums(matrix: np.ndarray, n_samples: int, seed: int | None, threads: int | None = None,
                   implementation: str | None = None) -> np.ndarray:
    """Column sums of ``n_samples`` bootstrap resamples of the rows of ``matrix``.

    Resampling is row-wise (all columns of a row travel together) with a
    counter-based generator: replicate ``b`` is a pure function of (seed, b), so
    the result does not depend on the thread count.  Shape ``(n_samples, columns)``.
    """
    if n_samples <= 0:
        raise ValueError(f"n_samples must be positive, got {n_samples}")
    matrix = np.ascontiguousarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise ValueError("bootstrap needs at least one row")
    out = np.empty((n_samples, matrix.shape[1]))
    _backend.get(implementation).bootstrap_sums(matrix, n_samples, resolve_seed(seed), out, threads)
    return out


def bootstrap_means(matrix: np.ndarray, n_samples: int, seed: int | None, threads: int | None = None,
                    implementation: str | None = None) -> np.ndarray:
    """Means of ``n_samples`` bootstrap resamples of the rows of ``matrix``."""
    matrix = np.asarray(matrix, dtype=np.float64)
    return bootstrap_sums(matrix, n_samples, seed, threads, implementation) / matrix.shape[0]


def percentile_interval(samples: np.ndarray, confidence: float) -> np.ndarray:
    """Rows (low, median, high) of bootstrap ``samples``, as rouge-score reports them."""
    if not 0 <= confidence <= 1:
        raise ValueError(f"confidence must be in [0, 1], got {confidence}")
    delta = (1 - confidence) / 2
    q = 100 * np.array([delta, 0.5, 1 - delta])
    return np.percentile(samples, q, axis=0)
