"""Exactly rounded sums that can be accumulated piece by piece.

A corpus mean must not depend on how the rows were split (chunks, files, Dask
partitions) nor on the order the values were added in.  So every float64 is
taken apart into its integer mantissa and exponent, the mantissas are added
exactly (``exact_sum_bins`` of the core or of the reference), and the total is
kept as one Python integer: the sum of the values times 2**1126.  Rounding
happens once, when the value is read, so the result equals ``math.fsum`` of all
the values ever added, however they were split.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from respeval import _backend

# A float64 is mantissa * 2**(max(E, 1) - 1075) for biased exponent E, and
# 2**-1074 is the smallest step: scaled by 2**1126, every value is an integer.
_SHIFT = 1126
_CALL_ROWS = 1 << 32  # per kernel call, so piece sums cannot overflow


def exact_numerator(values: np.ndarray, implementation: str | None = None) -> int:
    """``sum(values) * 2**1126`` as an exact integer (values: 1-D, float64)."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        x = x.ravel()
    if x.size == 0:
        return 0
    kernels = _backend.get(implementation)
    bins = np.zeros((3, 2048), dtype=np.int64)
    for start in range(0, x.size, _CALL_ROWS):
        part = x[start : start + _CALL_ROWS]
        bad = kernels.exact_sum_bins(part, bins)
        if bad >= 0:
            raise ValueError(f"cannot sum a non-finite value ({float(part[bad])!r} at position {start + bad})")
    total = 0
    for e in np.flatnonzero(bins.any(axis=0)):
        hi, mid, lo = (int(v) for v in bins[:, e])
        total += ((hi << 36) + (mid << 18) + lo) << (max(int(e), 1) + _SHIFT - 1075)
    return total


def to_float(numerator: int) -> float:
    """The float nearest ``numerator / 2**1126`` (Python's int division rounds correctly)."""
    return numerator / (1 << _SHIFT)


def exact_sum(values: np.ndarray, implementation: str | None = None) -> float:
    """The correctly rounded sum of ``values`` (equal to ``math.fsum``)."""
    return to_float(exact_numerator(values, implementation))


def exact_mean(values: np.ndarray) -> float:
    """``exact_sum(values) / len(values)`` (0.0 when empty): the same for any split or order."""
    x = np.asarray(values, dtype=np.float64)
    return exact_sum(x) / x.size if x.size else 0.0


def mean_of(values: Iterable[float]) -> float | None:
    """:func:`exact_mean` of any iterable of numbers; None when there are none.  The one
    rule for a mean in respeval (summaries of ``score``, ``judge``, ``evaluate``, ``gate``,
    ``compare`` and the reports): the exactly rounded sum divided by the count."""
    x = np.fromiter((float(v) for v in values), dtype=np.float64)
    return exact_mean(x) if x.size else None


def float_numerator(value: float) -> int:
    """``value * 2**1126`` as an exact integer: one number's share of the numerator
    :func:`exact_numerator` sums, for running sums kept one value at a time (a value's
    denominator is a power of two no larger than 2**1074).  Raises on a non-finite value."""
    num, den = float(value).as_integer_ratio()
    return num * ((1 << _SHIFT) // den)


class ExactSums:
    """Exact running sums of the columns of row blocks."""

    def __init__(self, width: int) -> None:
        self.numerators = [0] * width

    def add(self, block: np.ndarray) -> None:
        block = np.asarray(block, dtype=np.float64).reshape(-1, len(self.numerators))
        for c in range(block.shape[1]):
            self.numerators[c] += exact_numerator(block[:, c])

    def merge(self, other: ExactSums) -> None:
        self.numerators = [a + b for a, b in zip(self.numerators, other.numerators)]

    def values(self) -> np.ndarray:
        return np.array([to_float(n) for n in self.numerators], dtype=np.float64)
