"""The one interval type, and the Wilson score interval of a proportion.

:class:`Interval` is what every part of respeval returns for "a value and the range it is
probably in": bootstrap percentile intervals of corpus scores (``MetricResult.bootstrap``),
validation statistics, Wilson intervals of pass rates, the paired differences of
``respeval.compare``.  It unpacks as ``low, mid, high`` (the shape rouge-score's intervals
have); ``confidence`` and ``method`` say what kind of interval it is.

:func:`wilson_interval` is the one Wilson interval.  Its rule for no observations
(``n == 0``) is ``(nan, nan)``: there is no proportion to bound, and NaN is what every JSON
writer of respeval prints as ``null``.  A negative ``n`` or successes outside ``[0, n]``
are errors.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

__all__ = ["Interval", "wilson", "wilson_interval"]


def _json_number(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


@dataclass(frozen=True)
class Interval:
    """A value and an interval around it.

    Attributes:
        low, high: the interval's ends.
        mid: the value it is reported with: the estimate on all rows (validation, Wilson,
            paired differences), or for ``MetricResult.bootstrap`` the median of the
            resamples (rouge-score's ``mid``); ``estimate`` is the same number.
        confidence: the interval's level (e.g. 0.95), when known.
        method: how it was made (``"wilson"``, ``"poisson bootstrap percentile"``, ...).

    ``low, mid, high = interval`` unpacks it.
    """

    low: float
    mid: float
    high: float
    confidence: float | None = None
    method: str | None = None

    @property
    def estimate(self) -> float:
        """The point estimate (``mid``)."""
        return self.mid

    def __iter__(self) -> Iterator[float]:
        return iter((self.low, self.mid, self.high))

    def __len__(self) -> int:
        return 3

    def __getitem__(self, index: int) -> float:
        return (self.low, self.mid, self.high)[index]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (NaN as ``None``): ``estimate``, ``low``, ``high``, ``confidence``
        (and ``method`` when it is known)."""
        out: dict[str, Any] = {
            "estimate": _json_number(self.mid),
            "low": _json_number(self.low),
            "high": _json_number(self.high),
            "confidence": self.confidence,
        }
        if self.method is not None:
            out["method"] = self.method
        return out


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval ``(low, high)`` of a binomial proportion ``successes / n``.

    Unlike the normal approximation it stays inside [0, 1] and behaves at 0% and 100% and
    for small ``n``.  ``n == 0`` gives ``(nan, nan)`` (see the module docstring); successes
    outside ``[0, n]`` and a negative ``n`` are errors.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    if n == 0:
        return (math.nan, math.nan)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def wilson(successes: float, n: float, confidence: float = 0.95) -> Interval:
    """The Wilson interval as an :class:`Interval`: ``mid`` is the observed rate
    (NaN when ``n == 0``)."""
    low, high = wilson_interval(successes, n, confidence)
    return Interval(low, successes / n if n else math.nan, high, confidence, "wilson")
