"""Percentiles of a sample (latency p50/p90/p95/p99, token counts).

One definition: linear interpolation between the order statistics, the ``q``-th percentile
of ``n`` sorted values ``x[0..n-1]`` being ``x[h] + (h - floor(h)) * (x[h+1] - x[h])`` at
``h = (n - 1) * q / 100`` (Hyndman and Fan's type 7: numpy's and pandas' default, Excel's
``PERCENTILE.INC``, ``statistics.quantiles(..., method="inclusive")``).  NaN is ignored;
no values give NaN.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["DEFAULT_PERCENTILES", "percentile_label", "percentiles"]

DEFAULT_PERCENTILES = (50.0, 90.0, 95.0, 99.0)


def percentile_label(q: float) -> str:
    """``p50``, ``p99``, ``p99.9``."""
    return f"p{q:g}"


def percentiles(values: Iterable[float], qs: Sequence[float] = DEFAULT_PERCENTILES) -> dict[str, float]:
    """``{"p50": ..., "p90": ...}`` of ``values`` (see the module docstring)."""
    for q in qs:
        if not 0 <= q <= 100 or math.isnan(q):
            raise ValueError(f"a percentile is between 0 and 100, got {q!r}")
    x = np.asarray([float(v) for v in values], dtype=np.float64)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return {percentile_label(q): math.nan for q in qs}
    got = np.percentile(x, np.asarray(qs, dtype=np.float64), method="linear")
    return {percentile_label(q): float(v) for q, v in zip(qs, np.atleast_1d(got))}
