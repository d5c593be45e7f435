"""Exact sums and the streaming Poisson bootstrap in Python (``cext/bootstrap.pxi``).

The Poisson bootstrap, readably: the spec of ``cext/poisson_bootstrap.h``.

Every row gets, per replicate ``b``, a Poisson(1) weight that is a pure function
of (seed, row key, b).  A replicate's statistic sums are ``sum(weight * row)``,
added row by row in row order, so they can be accumulated chunk by chunk and do
not depend on the chunking.  The native core computes the same weights and,
because it also adds one row at a time without fused multiply-add, the same sums.
"""

from __future__ import annotations

from decimal import Decimal, getcontext

import numpy as np

MAX_WEIGHT = 12


def tail_thresholds() -> np.ndarray:
    """``round(P(X >= k) * 2**32)`` for X ~ Poisson(1), k = 1..12, from the series of e**-1."""
    getcontext().prec = 50
    e_inv = Decimal(-1).exp()
    cdf, fact, out = Decimal(0), Decimal(1), []
    for k in range(MAX_WEIGHT):
        fact *= max(k, 1)
        cdf += e_inv / fact
        out.append(int(((1 - cdf) * (1 << 32)).to_integral_value()))
    return np.array(out, dtype=np.uint32)


_TAIL = tail_thresholds()
_U64 = np.uint64


def _mix64(z: np.ndarray) -> np.ndarray:
    z = z ^ (z >> _U64(30))
    z = z * _U64(0xBF58476D1CE4E5B9)
    z = z ^ (z >> _U64(27))
    z = z * _U64(0x94D049BB133111EB)
    return z ^ (z >> _U64(31))


def row_hashes(seed: int, keys: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        keys = np.asarray(keys, dtype=np.int64).astype(np.uint64)
        mixed_seed = _mix64(np.array([seed], dtype=np.uint64))[0]
        return _mix64(mixed_seed ^ (keys * _U64(0x9E3779B97F4A7C15) + _U64(0x632BE59BD9B4E019)))


def poisson_weights(keys, seed: int, n_replicates: int) -> bytes:
    """Weights of every (row key, replicate) as uint8 bytes, rows x replicates."""
    if not 0 <= n_replicates < 2**32:
        raise ValueError("n_replicates must be in [0, 2**32)")
    return _weights(row_hashes(seed, keys), n_replicates).astype(np.uint8).tobytes()


def _weights(hashes: np.ndarray, n_replicates: int) -> np.ndarray:
    """float64[rows, replicates]: the murmur3 finaliser of a per-replicate counter,
    counted against the Poisson upper-tail thresholds."""
    b = np.arange(n_replicates, dtype=np.uint32)
    lo = (hashes & _U64(0xFFFFFFFF)).astype(np.uint32)[:, None]
    hi = (hashes >> _U64(32)).astype(np.uint32)[:, None]
    with np.errstate(over="ignore"):
        x = (lo ^ (b * np.uint32(0x9E3779B9))) + hi
        x ^= x >> np.uint32(16)
        x *= np.uint32(0x85EBCA6B)
        x ^= x >> np.uint32(13)
        x *= np.uint32(0xC2B2AE35)
        x ^= x >> np.uint32(16)
    return (x[:, :, None] < _TAIL).sum(axis=2).astype(np.float64)


def poisson_bootstrap_add(stats, keys, seed: int, acc, threads=None) -> None:
    """Same contract as ``_core.poisson_bootstrap_add`` (and the same sums, bit for bit)."""
    stats = np.asarray(stats, dtype=np.float64)
    keys = np.asarray(keys, dtype=np.int64)
    rows, cols = stats.shape
    if len(keys) != rows:
        raise ValueError(f"keys has {len(keys)} entries for {rows} rows")
    if acc.shape[0] != cols + 1:
        raise ValueError(f"acc must have {cols + 1} rows (one per statistic, then the weights), got {acc.shape[0]}")
    if rows == 0 or acc.shape[1] == 0:
        return
    weights = _weights(row_hashes(seed, keys), acc.shape[1])
    for r in range(rows):  # one row at a time: the native core's order of additions
        acc[:cols] += stats[r][:, None] * weights[r]
        acc[cols] += weights[r]


def exact_sum_bins(values, out) -> int:
    """Add ``values`` into ``out`` (int64[3, 2048]); -1, or the first non-finite position.

    Bin E (the biased exponent of a float64) gets the signed 53-bit integer
    mantissa in three 18-bit pieces (high, middle, low).  Each piece sum is an
    exact integer, so the binned total is the exact sum of the values.
    """
    if out.shape != (3, 2048):
        raise ValueError("out must have shape (3, 2048)")
    x = np.ascontiguousarray(values, dtype=np.float64)
    bits = x.view(np.uint64)
    e = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    if (e == 0x7FF).any():
        return int(np.flatnonzero(e == 0x7FF)[0])
    mant = (bits & np.uint64(0xFFFFFFFFFFFFF)).astype(np.int64) + np.where(e > 0, 1 << 52, 0)
    sign = np.where(bits >> np.uint64(63), -1, 1)
    for p, piece in enumerate((mant >> 36, (mant >> 18) & 0x3FFFF, mant & 0x3FFFF)):
        # float64 bincount sums stay exact: every piece is < 2**18 and calls have < 2**35 values
        out[p] += np.bincount(e, weights=(sign * piece).astype(np.float64), minlength=2048).astype(np.int64)
    return -1
