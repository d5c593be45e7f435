"""Repeated runs and agent comparisons (respeval's own; ``agent_semantics.md`` §4.6-4.7).

* ``pass_at_k``: per case, the chance that at least one of k runs drawn from the n recorded
  passes (the unbiased estimator 1 - C(n-c, k) / C(n, k)); ``pass_hat_k`` (pass^k): the
  chance that all k pass, C(c, k) / C(n, k) (tau-bench's reliability measure).  ADK's
  ``num_runs`` only pools runs into one mean; here every run is kept.
* ``compare``: two agents on the same cases: the mean difference with a seeded paired
  bootstrap interval, and for 0/1 outcomes McNemar's exact test on the discordant cases.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Comparison", "PassAtKSummary", "compare", "pass_at_k", "pass_hat_k", "summarize_runs"]


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"passes ({c}) must be between 0 and the number of runs ({n})")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of runs ({n}), got {k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """P(at least one of k runs passes) for a case with ``c`` passes in ``n`` runs."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """P(all k runs pass) for a case with ``c`` passes in ``n`` runs (pass^k)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


@dataclass(frozen=True)
class PassAtKSummary:
    """Repeated runs of the same cases: per k, the mean over cases of pass@k and pass^k, and
    the mean per-run pass rate."""

    cases: int
    runs: int
    pass_rate: float
    pass_at: dict[int, float]
    pass_hat: dict[int, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "runs": self.runs,
            "pass_rate": self.pass_rate,
            "pass@k": {str(k): v for k, v in self.pass_at.items()},
            "pass^k": {str(k): v for k, v in self.pass_hat.items()},
        }


def summarize_runs(outcomes: Mapping[str, Sequence[bool]], ks: Sequence[int] | None = None) -> PassAtKSummary:
    """``outcomes``: case id -> pass/fail of each of its runs (every case the same number of
    runs).  ``ks`` defaults to 1..runs."""
    if not outcomes:
        raise ValueError("no cases")
    counts = {case: len(runs) for case, runs in outcomes.items()}
    n = next(iter(counts.values()))
    uneven = sorted(case for case, c in counts.items() if c != n)
    if uneven:
        raise ValueError(f"every case needs the same number of runs ({n}); these differ: {', '.join(uneven[:5])}")
    if n == 0:
        raise ValueError("no runs")
    ks = list(ks or range(1, n + 1))
    passes = [sum(bool(x) for x in runs) for runs in outcomes.values()]
    at = {k: math.fsum(pass_at_k(n, c, k) for c in passes) / len(passes) for k in ks}
    hat = {k: math.fsum(pass_hat_k(n, c, k) for c in passes) / len(passes) for k in ks}
    return PassAtKSummary(len(passes), n, math.fsum(passes) / (n * len(passes)), at, hat)


@dataclass(frozen=True)
class Comparison:
    """B minus A on the same cases."""

    cases: int
    mean_a: float
    mean_b: float
    difference: float
    interval: tuple[float, float]
    confidence: float
    p_bootstrap: float
    mcnemar: tuple[int, int, float] | None  # (A only passed, B only passed, exact two-sided p)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "cases": self.cases,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "difference": self.difference,
            "interval": list(self.interval),
            "confidence": self.confidence,
            "p_bootstrap": self.p_bootstrap,
        }
        if self.mcnemar is not None:
            out["mcnemar"] = {"a_only": self.mcnemar[0], "b_only": self.mcnemar[1], "p": self.mcnemar[2]}
        return out


def _mcnemar(a: np.ndarray, b: np.ndarray) -> tuple[int, int, float]:
    a_only = int(np.sum((a == 1) & (b == 0)))
    b_only = int(np.sum((a == 0) & (b == 1)))
    n = a_only + b_only
    if n == 0:
        return a_only, b_only, 1.0
    tail = math.fsum(math.comb(n, i) for i in range(min(a_only, b_only) + 1)) / 2.0**n
    return a_only, b_only, min(1.0, 2 * tail)


def compare(
    a: Mapping[str, float] | Sequence[float],
    b: Mapping[str, float] | Sequence[float],
    *,
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Comparison:
    """Paired comparison of two agents' per-case scores (mappings by case id, or sequences in
    the same case order).  Cases missing from either side are an error, not silently dropped."""
    if isinstance(a, Mapping) != isinstance(b, Mapping):
        raise TypeError("give both score sets as mappings by case id, or both as sequences")
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        only = sorted(set(a) ^ set(b))
        if only:
            raise ValueError(f"cases scored for only one agent: {', '.join(map(str, only[:5]))}")
        keys = sorted(a)
        x = np.array([a[k] for k in keys], np.float64)
        y = np.array([b[k] for k in keys], np.float64)
    else:
        x = np.asarray(a, np.float64)
        y = np.asarray(b, np.float64)
        if x.shape != y.shape:
            raise ValueError(f"{len(x)} scores for A but {len(y)} for B")
    if len(x) == 0:
        raise ValueError("no cases to compare")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("a case has no score (NaN); drop or fix it explicitly before comparing")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    diff = y - x
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(diff), size=(n_boot, len(diff)))
    boots = diff[idx].mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(boots, [alpha, 1 - alpha])
    p = min(1.0, 2 * min(float(np.mean(boots <= 0)), float(np.mean(boots >= 0))))
    binary = bool(np.isin(x, (0.0, 1.0)).all() and np.isin(y, (0.0, 1.0)).all())
    return Comparison(
        len(x),
        float(x.mean()),
        float(y.mean()),
        float(diff.mean()),
        (float(low), float(high)),
        confidence,
        p,
        _mcnemar(x, y) if binary else None,
    )
