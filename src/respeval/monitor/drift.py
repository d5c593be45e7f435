"""Did a window move away from the reference?  Each metric of a window against the same
metric over the reference windows, with the false-alarm rate held over every window tested.

* a **pass rate** (the gate's, a judged metric's, a metric listed in ``proportions``): the
  pooled two-proportion z-test, one-sided towards worse
  (:func:`respeval.stats.two_proportion_test`);
* a **mean** (every other metric): the bootstrap test of the difference of means, one-sided
  towards worse (:func:`respeval.stats.bootstrap_mean_difference`).

**Repeated looks.**  Every window after the reference is tested, so the ``k``-th window after
the reference (``k = window - last reference window``; an empty window uses up its ``k``
too) is tested at ``alpha_k = alpha / (k (k + 1))`` (:func:`respeval.stats.spent_alpha`),
and the metrics of one window share that level by Holm's correction.  The levels of all
windows sum to ``alpha``, so on a stream that does not change the chance of **any** false
alarm, over every metric and every window for as long as the monitor runs, is at most
``alpha`` (5% by default) whatever the dependence between the tests (union bound).  A
window is **regressed** when at least one of its metrics is.  The price of the guarantee is
power that falls with ``k``: a long-running monitor should be given a new reference (a new
store) when the system is changed on purpose.

A metric with fewer than ``min_rows`` rows in the window or in the reference is not tested
(``insufficient``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from respeval.stats import (
    SPENDING_METHOD,
    bootstrap_mean_difference,
    holm,
    spent_alpha,
    two_proportion_test,
)

__all__ = [
    "MEAN",
    "PROPORTION",
    "DriftTest",
    "MetricDrift",
    "MetricValues",
    "WindowDrift",
    "drift_series",
    "check_window",
]

PROPORTION, MEAN = "pass_rate", "mean"
OK, REGRESSED, INSUFFICIENT, REFERENCE, EMPTY = "ok", "regressed", "insufficient", "reference", "empty"


@dataclass(frozen=True)
class MetricValues:
    """One metric's per-row values in one window: booleans (a pass rate) or numbers (a mean)."""

    kind: str
    values: np.ndarray
    higher_is_better: bool = True

    def __post_init__(self) -> None:
        if self.kind not in (PROPORTION, MEAN):
            raise ValueError(f"kind must be {PROPORTION!r} or {MEAN!r}, got {self.kind!r}")

    @property
    def n(self) -> int:
        return int(self.values.size)

    @classmethod
    def of(cls, kind: str, values: Sequence[Any], higher_is_better: bool = True) -> MetricValues:
        dtype = bool if kind == PROPORTION else np.float64
        return cls(kind, np.asarray(list(values), dtype=dtype), higher_is_better)


@dataclass(frozen=True)
class DriftTest:
    """How windows are tested: the false-alarm rate over all of them, the smallest sample,
    the bootstrap's replicates and seed."""

    alpha: float = 0.05
    min_rows: int = 30
    bootstrap: int = 1000
    seed: int = 12345

    @property
    def method(self) -> str:
        return SPENDING_METHOD


@dataclass(frozen=True)
class MetricDrift:
    metric: str
    kind: str
    decision: str  # ok, regressed, insufficient
    test: str | None = None
    statistic: float | None = None
    p_value: float | None = None
    p_holm: float | None = None
    difference: float | None = None
    reference: float | None = None
    value: float | None = None
    n: int = 0
    n_reference: int = 0

    def to_json(self) -> dict[str, Any]:
        return {k: _finite(v) for k, v in vars(self).items()}


@dataclass(frozen=True)
class WindowDrift:
    status: str  # reference, empty, insufficient, ok, regressed
    look: int | None = None
    level: float | None = None
    metrics: tuple[MetricDrift, ...] = ()

    @property
    def regressed(self) -> list[str]:
        return [m.metric for m in self.metrics if m.decision == REGRESSED]

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "look": self.look,
            "level": self.level,
            "regressed": self.regressed,
            "metrics": [m.to_json() for m in self.metrics],
        }


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (np.floating, np.integer)):
        return _finite(value.item())
    return value


def _value(values: MetricValues) -> float | None:
    if values.n == 0:
        return None
    return float(np.mean(values.values))


def check_window(
    reference: Mapping[str, MetricValues],
    window: Mapping[str, MetricValues],
    look: int,
    test: DriftTest = DriftTest(),
    *,
    seed: int | None = None,
) -> WindowDrift:
    """The drift test of one window (its ``look``-th after the reference; see the module
    docstring).  ``reference`` and ``window`` map metric names to their values."""
    level = spent_alpha(test.alpha, look)
    results: list[dict[str, Any]] = []
    tested: list[int] = []
    p_values: list[float] = []
    base = test.seed if seed is None else seed
    for i, (name, values) in enumerate(window.items()):
        ref = reference.get(name)
        entry: dict[str, Any] = {
            "metric": name,
            "kind": values.kind,
            "decision": INSUFFICIENT,
            "value": _value(values),
            "reference": _value(ref) if ref is not None else None,
            "n": values.n,
            "n_reference": ref.n if ref is not None else 0,
        }
        results.append(entry)
        if ref is None or ref.n < test.min_rows or values.n < test.min_rows:
            continue
        worse = "less" if values.higher_is_better else "greater"
        if values.kind == PROPORTION:
            sig = two_proportion_test(
                int(ref.values.sum()), ref.n, int(values.values.sum()), values.n, alternative=worse
            )
        else:
            sig = bootstrap_mean_difference(
                ref.values, values.values, n_samples=test.bootstrap, seed=base + 7919 * i, alternative=worse
            )
        entry.update(test=sig.test, statistic=sig.statistic, p_value=sig.p_value, difference=sig.details["difference"])
        tested.append(len(results) - 1)
        p_values.append(sig.p_value)
    if p_values:
        for index, adjusted in zip(tested, holm(p_values)):
            results[index]["p_holm"] = adjusted
            results[index]["decision"] = REGRESSED if adjusted <= level else OK
    metrics = tuple(MetricDrift(**r) for r in results)
    if not window or all(m.n == 0 for m in metrics):
        status = EMPTY
    elif not p_values:
        status = INSUFFICIENT
    else:
        status = REGRESSED if any(m.decision == REGRESSED for m in metrics) else OK
    return WindowDrift(status, look, level, metrics)


def pooled(windows: Sequence[Mapping[str, MetricValues]]) -> dict[str, MetricValues]:
    """The reference: each metric's values over several windows, together."""
    out: dict[str, MetricValues] = {}
    for window in windows:
        for name, values in window.items():
            if name in out:
                prev = out[name]
                out[name] = MetricValues(prev.kind, np.concatenate([prev.values, values.values]), prev.higher_is_better)
            else:
                out[name] = values
    return out


def drift_series(
    windows: Sequence[Mapping[str, MetricValues]], reference_windows: int = 1, test: DriftTest = DriftTest()
) -> list[WindowDrift]:
    """The drift test of every window of a series against its first ``reference_windows``
    (what the monitor does window by window, in one call: for simulations and tests)."""
    reference = pooled(windows[:reference_windows])
    out = [WindowDrift(REFERENCE) for _ in windows[:reference_windows]]
    for k, window in enumerate(windows[reference_windows:], 1):
        out.append(check_window(reference, window, k, test, seed=test.seed + 104729 * k))
    return out
