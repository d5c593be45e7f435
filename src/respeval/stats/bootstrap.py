"""Corpus aggregation: the seeded Poisson bootstrap and percentile intervals.

Every row gets, per replicate, a Poisson(1) weight drawn from (seed, row key,
replicate) alone.  A replicate's sums are then ``sum(weight * row)`` and its
size ``sum(weight)``, which can be accumulated chunk by chunk (the bulk pipeline
never holds the corpus) and do not depend on the thread count or the chunking.
The library's ``.bootstrap()`` and the pipeline's tables use this same scheme,
so the same rows and seed give the same intervals everywhere.
"""

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


def new_accumulator(width: int, n_samples: int) -> np.ndarray:
    """Zeroed sums for ``width`` statistics (and the resample sizes, last) of ``n_samples`` replicates."""
    if n_samples <= 0:
        raise ValueError(f"n_samples must be positive, got {n_samples}")
    return np.zeros((width + 1, n_samples), dtype=np.float64)


def bootstrap_add(
    acc: np.ndarray,
    matrix: np.ndarray,
    keys: np.ndarray,
    seed: int,
    threads: int | None = None,
    implementation: str | None = None,
) -> None:
    """Add rows (``matrix``, keyed by ``keys``) to the replicate sums in ``acc``."""
    matrix = np.ascontiguousarray(matrix, dtype=np.float64)
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    _backend.get(implementation).poisson_bootstrap_add(matrix, keys, seed, acc, threads)


def replicate_sums(acc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sums ``[replicates, width]``, sizes ``[replicates]``) of the replicates that drew
    at least one row (a replicate of size 0 has no corpus value)."""
    sizes = acc[-1]
    keep = sizes > 0
    return np.ascontiguousarray(acc[:-1, keep].T), sizes[keep]


def bootstrap_means(
    matrix: np.ndarray, n_samples: int, seed: int | None, threads: int | None = None, implementation: str | None = None
) -> np.ndarray:
    """Column means of the bootstrap replicates of the rows of ``matrix`` (rows keyed 0..n-1)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise ValueError("bootstrap needs at least one row")
    acc = new_accumulator(matrix.shape[1], n_samples)
    bootstrap_add(acc, matrix, np.arange(matrix.shape[0], dtype=np.int64), resolve_seed(seed), threads, implementation)
    sums, sizes = replicate_sums(acc)
    return sums / sizes[:, None]


def percentile_interval(samples: np.ndarray, confidence: float) -> np.ndarray:
    """Rows (low, median, high) of bootstrap ``samples``, as rouge-score reports them."""
    if not 0 <= confidence <= 1:
        raise ValueError(f"confidence must be in [0, 1], got {confidence}")
    delta = (1 - confidence) / 2
    q = 100 * np.array([delta, 0.5, 1 - delta])
    return np.percentile(samples, q, axis=0)
