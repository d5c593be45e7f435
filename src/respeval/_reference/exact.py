"""Exponent-binned mantissa sums, readable: the spec of ``_core.exact_sum_bins``."""

from __future__ import annotations

import numpy as np


def exact_sum_bins(values, out) -> int:
    """Add ``values`` into ``out`` (int64[3, 2048]); -1, or the first non-finite position.

    Bin E (the biased exponent of a float64) gets the signed 53-bit integer
    mantissa in three 18-bit pieces (high, middle, low).  Each piece sum is an
    exact integer, so the binned total is the exact sum of the values.
    """
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
