"""Paired significance tests: the exact binomial test, McNemar's exact test, the sign test,
the Wilcoxon signed-rank test, and Holm's correction across several tests.

The numbers are scipy.stats' (``binomtest``, ``wilcoxon`` with its default options), to
1e-12, computed with the standard library and numpy only:

* **Binomial tails** are exact.  For ``p = 1/2`` (every paired test here) they are sums of
  exact integer binomial coefficients divided by ``2**n``, rounded once; for other ``p`` (or
  more than 10,000 trials) each probability is computed by Loader's saddle-point formula
  (``stirlerr`` and ``bd0``, the method of R's ``dbinom``), accurate to a few units in the
  last place, and summed with ``math.fsum``.  The two-sided p-value is scipy's: the
  probability of every outcome no more likely than the one observed (with scipy's relative
  tolerance of 1e-7 for "as likely").
* **McNemar's exact test** is the binomial test of the discordant pairs:
  ``binomtest(c, b + c, 0.5)`` with ``b`` the pairs only the baseline passes and ``c`` the
  pairs only the candidate passes (statsmodels' ``mcnemar(exact=True)``).  With no
  discordant pair there is no evidence: p = 1.
* **The sign test** is the binomial test of the positive among the non-zero differences:
  zero differences are dropped (the classic rule), so identical rows weigh nothing.
* **Wilcoxon signed-rank** follows ``scipy.stats.wilcoxon``'s defaults:
  ``zero_method="wilcox"`` (zero differences are dropped before ranking), ties get average
  ranks, ``correction=False`` (no continuity correction), and ``method="auto"``: the exact
  distribution when there are at most 50 differences and neither ties nor zeros; else, with
  at most 13 differences, the exact sign-flip (permutation) distribution of the statistic
  (scipy's permutation test, which enumerates all ``2**n`` flips at that size); else the
  normal approximation with the tie correction of the variance.  ``zero_method="pratt"``
  and ``"zsplit"``, ``correction=True`` and ``method="exact"`` / ``"asymptotic"`` are the
  named variants.  ``method="exact"`` is the exact conditional distribution given the ranks,
  ties and zeros included (scipy's ``"exact"`` without ties or zeros; with them scipy
  rounds the statistic to the untied distribution instead).  One deliberate difference:
  when every difference is zero scipy's normal approximation returns NaN; here p = 1 (no
  evidence of any difference), as scipy's own exact path gives for small samples.
* **Holm's step-down correction** adjusts the p-values of the metrics of one comparison so
  that the chance of any false "significant" among them stays at most alpha, whatever their
  dependence.

Two independent samples (a monitor's window against its reference window, no pairing):

* **The two-proportion z-test** of ``k_a / n_a`` against ``k_b / n_b`` with the pooled
  standard error, ``z = (p_b - p_a) / sqrt(p (1 - p) (1/n_a + 1/n_b))``, ``p`` the pooled
  rate: statsmodels' ``proportions_ztest`` (its ``prop_var=False`` default), and for the
  two-sided p-value ``scipy.stats.chi2_contingency(correction=False)`` of the 2 x 2 table
  (``z**2`` is that chi-square).  One deliberate difference: when both samples are all passes
  or all failures (pooled rate 0 or 1) the standard error is 0 and statsmodels gives NaN;
  here z = 0 and p = 1 (no evidence of a difference).
* **The bootstrap test of a difference of means**: each sample is resampled on its own with
  the seeded Poisson bootstrap of :mod:`respeval.stats.bootstrap` (``n_samples`` replicates;
  the second sample's seed is the first's plus one), the replicates' differences give the
  standard error, and ``z = (mean_b - mean_a) / se`` is read against the normal
  distribution (the bootstrap's normal interval, Efron & Tibshirani ch. 13): its tails stay
  usable at the small levels repeated looks spend (a percentile p-value below
  ``1 / n_samples`` would need more replicates than a monitor can pay for each window).

Every test returns a :class:`Significance` (test name, statistic, p-value, observations
used, method, alternative, details).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = [
    "ALTERNATIVES",
    "Significance",
    "binomial_pmf",
    "binomial_test",
    "bootstrap_mean_difference",
    "holm",
    "mcnemar_exact",
    "sign_test",
    "two_proportion_test",
    "wilcoxon_signed_rank",
]

ALTERNATIVES = ("two-sided", "less", "greater")
ZERO_METHODS = ("wilcox", "pratt", "zsplit")
WILCOXON_METHODS = ("auto", "exact", "asymptotic")

# scipy.stats.binomtest: outcomes whose probability is within this factor of the observed
# one's count as "as likely" (floating-point ties across the mode).
_RELATIVE_TIE = 1 + 1e-7
_EXACT_HALF_MAX_N = 10_000  # exact integer tails for p = 1/2 up to here; Loader beyond
_EXACT_WILCOXON_MAX_N = 500  # the exact sign-flip distribution costs O(n**3)
_TAIL_EPS = 1e-20  # a tail term this small relative to the sum so far ends the sum


@dataclass(frozen=True)
class Significance:
    """The result of one test.

    Attributes:
        test: ``binomial``, ``mcnemar_exact``, ``sign_test`` or ``wilcoxon``.
        statistic: the binomial tests: the successes (for McNemar and the sign test, the
            discordant pairs in the candidate's favour); Wilcoxon: scipy's statistic (the
            smaller rank sum when two-sided, else the rank sum of the positive differences).
        p_value: the p-value.
        n: observations the test used (trials, discordant pairs, non-zero differences).
        method: ``exact``, ``exact (sign flips)`` or ``asymptotic``.
        alternative: ``two-sided``, ``less`` or ``greater``.
        details: test-specific numbers (``b`` and ``c`` for McNemar, ``z``, ``zeros`` ...).
    """

    test: str
    statistic: float
    p_value: float
    n: int
    method: str
    alternative: str = "two-sided"
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "n": self.n,
            "method": self.method,
            "alternative": self.alternative,
            **self.details,
        }


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}")


# --------------------------------------------------------------------------- binomial probabilities


def _stirlerr_table() -> list[float]:
    """``stirlerr(n) = log(n!) - (n + 1/2) log n + n - log(2 pi)/2`` for n = 0..15, computed
    with 40 significant digits (the series below is accurate only above 15)."""
    out = [0.0]
    with localcontext() as ctx:
        ctx.prec = 40
        half_log_2pi = (2 * Decimal("3.141592653589793238462643383279502884197")).ln() / 2
        for n in range(1, 16):
            dn = Decimal(n)
            value = Decimal(math.factorial(n)).ln() - (dn + Decimal("0.5")) * dn.ln() + dn - half_log_2pi
            out.append(float(value))
    return out


_STIRLERR = _stirlerr_table()


def _stirlerr(n: float) -> float:
    """The error of Stirling's formula for ``log(n!)`` (Loader 2000)."""
    if n <= 15:
        return _STIRLERR[int(n)]
    nn = n * n
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    if n > 500:
        return (s0 - s1 / nn) / n
    if n > 80:
        return (s0 - (s1 - s2 / nn) / nn) / n
    if n > 35:
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n


def _bd0(x: float, mean: float) -> float:
    """``x log(x / mean) + mean - x``, without cancellation when x is near the mean (Loader)."""
    if abs(x - mean) < 0.1 * (x + mean):
        v = (x - mean) / (x + mean)
        s = (x - mean) * v
        ej = 2 * x * v
        v *= v
        for j in range(1, 1000):
            ej *= v
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                return s1
            s = s1
        return s
    return x * math.log(x / mean) + mean - x


def _pmf_loader(x: int, n: int, p: float) -> float:
    """P(X = x) for X ~ Binomial(n, p), by Loader's saddle-point formula (R's ``dbinom_raw``)."""
    q = 1.0 - p
    if x < 0 or x > n:
        return 0.0
    if p == 0.0:
        return 1.0 if x == 0 else 0.0
    if q == 0.0:
        return 1.0 if x == n else 0.0
    if x == 0:
        return math.exp(-_bd0(n, n * q) - n * p if p < 0.1 else n * math.log(q))
    if x == n:
        return math.exp(-_bd0(n, n * p) - n * q if q < 0.1 else n * math.log(p))
    lc = _stirlerr(n) - _stirlerr(x) - _stirlerr(n - x) - _bd0(x, n * p) - _bd0(n - x, n * q)
    lf = math.log(2 * math.pi) + math.log(x) + math.log1p(-x / n)
    return math.exp(lc - 0.5 * lf)


class _Binomial:
    """The Binomial(n, p) probabilities a test needs: exact for p = 1/2 (integer
    coefficients), Loader's formula otherwise."""

    def __init__(self, n: int, p: float) -> None:
        self.n, self.p = n, p
        self.exact = p == 0.5 and n <= _EXACT_HALF_MAX_N

    def weight(self, x: int) -> Any:
        """P(X = x), times ``2**n`` (an int) when exact."""
        if self.exact:
            return math.comb(self.n, x) if 0 <= x <= self.n else 0
        return _pmf_loader(x, self.n, self.p)

    def as_likely(self, x: int, observed: Any) -> bool:
        """Whether P(X = x) <= P(X = observed outcome) * (1 + 1e-7), scipy's rule."""
        w = self.weight(x)
        if self.exact:
            tie = Fraction(_RELATIVE_TIE)
            return bool(w * tie.denominator <= observed * tie.numerator)
        return bool(w <= observed * _RELATIVE_TIE)

    def tail(self, start: int, stop: int, step: int) -> Any:
        """Sum of P(X = x) for x from ``start`` towards ``stop`` (inclusive) by ``step``;
        the terms shrink away from the mode, so a negligible term ends the sum."""
        if (stop - start) * step < 0:
            return 0
        if self.exact:
            total = 0
            term = math.comb(self.n, start)
            x = start
            while True:
                total += term
                if x == stop:
                    return total
                # C(n, x +- 1) from C(n, x), exactly
                term = term * (self.n - x) // (x + 1) if step > 0 else term * x // (self.n - x + 1)
                x += step
        terms: list[float] = []
        partial = 0.0
        for x in range(start, stop + step, step):
            probability = _pmf_loader(x, self.n, self.p)
            terms.append(probability)
            partial += probability
            if probability < _TAIL_EPS * partial:
                break
        return math.fsum(terms)

    def probability(self, weight: Any) -> float:
        """A weight sum as a probability (exactly rounded when exact)."""
        if self.exact:
            return float(Fraction(weight, 1 << self.n))
        return float(weight)


def binomial_pmf(x: int, n: int, p: float = 0.5) -> float:
    """P(X = x) for X ~ Binomial(n, p) (exact for p = 1/2, see the module docstring)."""
    _check_trials(x, n, p)
    dist = _Binomial(n, p)
    return dist.probability(dist.weight(x))


def _check_trials(k: int, n: int, p: float) -> None:
    if int(n) != n or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if int(k) != k or not 0 <= k <= n:
        raise ValueError(f"k must be an integer in [0, n={n}], got {k!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")


def binomial_test(k: int, n: int, p: float = 0.5, *, alternative: str = "two-sided") -> Significance:
    """The exact binomial test of ``k`` successes in ``n`` trials against success
    probability ``p`` (``scipy.stats.binomtest(k, n, p, alternative).pvalue``).

    ``n == 0`` (no trials) is no evidence either way: p = 1 (scipy refuses it)."""
    _check_alternative(alternative)
    _check_trials(k, n, p)
    k, n = int(k), int(n)
    statistic = k / n if n else math.nan
    if n == 0:
        return Significance("binomial", statistic, 1.0, 0, "exact", alternative, {"k": 0, "p": p})
    dist = _Binomial(n, p)
    if alternative == "less":
        pvalue = dist.probability(dist.tail(k, 0, -1))
    elif alternative == "greater":
        pvalue = dist.probability(dist.tail(k, n, 1))
    else:
        pvalue = _two_sided(dist, k)
    return Significance("binomial", statistic, min(1.0, pvalue), n, "exact", alternative, {"k": k, "p": p})


def _two_sided(dist: _Binomial, k: int) -> float:
    """scipy's two-sided p-value: P(X = x) summed over every x no more likely than k."""
    n, p = dist.n, dist.p
    observed = dist.weight(k)
    mean = p * n
    if k == mean:
        return 1.0
    if k < mean:
        # the other side's tail starts at the first outcome above the mean as unlikely as k
        lo, hi = math.ceil(mean), n + 1
        while lo < hi:  # the probabilities fall towards n: binary search for the boundary
            mid = (lo + hi) // 2
            if dist.as_likely(mid, observed):
                hi = mid
            else:
                lo = mid + 1
        total = dist.tail(k, 0, -1)
        other = dist.tail(lo, n, 1) if lo <= n else 0
    else:
        lo, hi = -1, math.floor(mean)
        while lo < hi:  # the probabilities rise towards the mean: the last x as unlikely as k
            mid = (lo + hi + 1) // 2
            if dist.as_likely(mid, observed):
                lo = mid
            else:
                hi = mid - 1
        total = dist.tail(k, n, 1)
        other = dist.tail(lo, 0, -1) if lo >= 0 else 0
    if dist.exact:
        return min(1.0, dist.probability(total + other))
    return min(1.0, math.fsum((total, other)))


def mcnemar_exact(baseline_pass: Any, candidate_pass: Any, *, alternative: str = "two-sided") -> Significance:
    """McNemar's exact test of paired pass/fail outcomes (see the module docstring).

    ``statistic`` is ``c``, the pairs only the candidate passes; ``details`` has ``b`` (only
    the baseline passes) and ``c``.  ``alternative="greater"``: the candidate passes more."""
    base = _as_bool(baseline_pass, "baseline_pass")
    cand = _as_bool(candidate_pass, "candidate_pass")
    if base.shape != cand.shape:
        raise ValueError(f"{base.size} baseline outcomes but {cand.size} candidate outcomes")
    b = int(np.count_nonzero(base & ~cand))
    c = int(np.count_nonzero(~base & cand))
    result = binomial_test(c, b + c, 0.5, alternative=alternative)
    return Significance(
        "mcnemar_exact", float(c), result.p_value, b + c, "exact", alternative, {"b": b, "c": c, "pairs": base.size}
    )


def _as_bool(values: Any, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.dtype == bool:
        return array
    as_float = array.astype(np.float64)
    if not np.all((as_float == 0) | (as_float == 1)):
        raise ValueError(f"{name} must hold pass/fail values (True/False or 1/0)")
    return as_float == 1


def sign_test(differences: Any, *, alternative: str = "two-sided") -> Significance:
    """The sign test of paired differences (candidate - baseline): the binomial test of the
    positive ones among the non-zero ones (zeros dropped).  ``statistic`` is the number of
    positive differences; ``alternative="greater"``: the candidate is better."""
    d = _differences(differences)
    positive = int(np.count_nonzero(d > 0))
    negative = int(np.count_nonzero(d < 0))
    result = binomial_test(positive, positive + negative, 0.5, alternative=alternative)
    details = {"positive": positive, "negative": negative, "zeros": int(d.size - positive - negative)}
    return Significance(
        "sign_test", float(positive), result.p_value, positive + negative, "exact", alternative, details
    )


def _differences(values: Any) -> np.ndarray:
    d = np.asarray(values, dtype=np.float64).ravel()
    if d.size and not np.all(np.isfinite(d)):
        bad = int(np.flatnonzero(~np.isfinite(d))[0])
        raise ValueError(f"differences must be finite numbers (position {bad} is {d[bad]!r})")
    return d


# --------------------------------------------------------------------------- Wilcoxon


def _average_ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based, ties share their mean rank) and the size of each tie group."""
    uniques, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    mean_rank = ends - (counts - 1) / 2.0
    return mean_rank[inverse], counts


def _normal_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def wilcoxon_signed_rank(
    differences: Any,
    *,
    zero_method: str = "wilcox",
    correction: bool = False,
    method: str = "auto",
    alternative: str = "two-sided",
) -> Significance:
    """The Wilcoxon signed-rank test of paired differences (candidate - baseline), as
    ``scipy.stats.wilcoxon(differences)`` with the same options (see the module docstring).

    ``alternative="greater"``: the candidate's scores are higher."""
    _check_alternative(alternative)
    if zero_method not in ZERO_METHODS:
        raise ValueError(f"zero_method must be one of {', '.join(ZERO_METHODS)}, got {zero_method!r}")
    if method not in WILCOXON_METHODS:
        raise ValueError(f"method must be one of {', '.join(WILCOXON_METHODS)}, got {method!r}")
    d = _differences(differences)
    if d.size == 0:
        raise ValueError("the Wilcoxon test needs at least one difference")
    n_total = int(d.size)
    zero = d == 0
    n_zero = int(np.count_nonzero(zero))
    kept = d[~zero] if zero_method == "wilcox" else d
    count = int(kept.size)
    details: dict[str, Any] = {"zeros": n_zero, "zero_method": zero_method, "correction": correction}
    if n_zero == n_total:
        # nothing but zeros: no evidence of a difference in either direction
        details.update(r_plus=0.0, r_minus=0.0)
        return Significance("wilcoxon", 0.0, 1.0, 0, "exact", alternative, details)
    ranks, groups = _average_ranks(np.abs(kept))
    r_plus = float(ranks[kept > 0].sum())
    r_minus = float(ranks[kept < 0].sum())
    zero_ranks = ranks[kept == 0]
    offset = 0.0
    if zero_method == "zsplit":
        offset = float(zero_ranks.sum()) / 2
        r_plus += offset
        r_minus += offset
    has_ties = bool(np.any(groups > 1))

    chosen = method
    if chosen == "auto":
        if n_total > 50:
            chosen = "asymptotic"
        elif not has_ties and n_zero == 0:
            chosen = "exact"
        elif n_total <= 13:
            chosen = "exact"  # scipy: its permutation test, which enumerates every sign flip here
        else:
            chosen = "asymptotic"
    statistic = min(r_plus, r_minus) if alternative == "two-sided" else r_plus
    details.update(r_plus=r_plus, r_minus=r_minus)
    nonzero = int(np.count_nonzero(kept))
    if chosen == "exact":
        if nonzero > _EXACT_WILCOXON_MAX_N:
            raise ValueError(
                f"the exact Wilcoxon distribution is computed for at most {_EXACT_WILCOXON_MAX_N} non-zero "
                f"differences ({nonzero} given): use method='asymptotic'"
            )
        pvalue = _exact_signed_rank_p(ranks[kept != 0], r_plus - offset, alternative)
        label = "exact" if not has_ties and n_zero == 0 else "exact (sign flips)"
        return Significance("wilcoxon", statistic, pvalue, nonzero, label, alternative, details)

    mean = count * (count + 1.0) * 0.25
    var = count * (count + 1.0) * (2.0 * count + 1.0)
    tie_groups = groups
    if zero_method == "pratt" and n_zero:
        mean -= n_zero * (n_zero + 1.0) * 0.25
        var -= n_zero * (n_zero + 1.0) * (2.0 * n_zero + 1.0)
        tie_groups = groups[1:]  # the zeros' group is the smallest |d|: not a tie of ranks
    se = math.sqrt((var - float(np.sum(tie_groups.astype(np.float64) ** 3 - tie_groups)) / 2) / 24)
    z = (r_plus - mean) / se
    if correction:
        sign = {"greater": 1.0, "less": -1.0}.get(alternative, float(np.sign(z)))
        z -= sign * 0.5 / se
    if alternative == "greater":
        pvalue = _normal_cdf(-z)
    elif alternative == "less":
        pvalue = _normal_cdf(z)
    else:
        pvalue = min(1.0, 2 * min(_normal_cdf(z), _normal_cdf(-z)))
    details["z"] = z
    return Significance("wilcoxon", statistic, pvalue, nonzero, "asymptotic", alternative, details)


def _exact_signed_rank_p(ranks: np.ndarray, r_plus: float, alternative: str) -> float:
    """p-value of the rank sum of the positive differences under the null (every sign
    equally likely, independently): its exact distribution given the (half-integer) ranks."""
    weights = np.rint(2 * ranks).astype(np.int64)
    size = int(weights.sum()) + 1
    dist = np.zeros(size, dtype=np.float64)
    dist[0] = 1.0
    top = 0
    for w in weights:
        # halving keeps every entry count / 2**i: exact in float64 while counts < 2**53
        shifted = dist[: top + 1].copy()
        dist[: top + 1] *= 0.5
        dist[w : w + top + 1] += 0.5 * shifted
        top += int(w)
    observed = int(round(2 * r_plus))
    less = math.fsum(dist[: observed + 1])
    greater = math.fsum(dist[observed:])
    if alternative == "less":
        return min(1.0, less)
    if alternative == "greater":
        return min(1.0, greater)
    return min(1.0, 2 * min(less, greater))


# --------------------------------------------------------------------------- multiple tests


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (step-down): reject the i-th hypothesis at level alpha when its
    adjusted p-value is <= alpha; the chance of any false rejection is then <= alpha.
    NaN (a metric not tested) stays NaN and does not count among the tests."""
    values = [float(p) for p in p_values]
    for p in values:
        if not (math.isnan(p) or 0.0 <= p <= 1.0):
            raise ValueError(f"p-values must be in [0, 1] (or NaN), got {p}")
    tested = sorted((p, i) for i, p in enumerate(values) if not math.isnan(p))
    m = len(tested)
    out = [math.nan] * len(values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


# --------------------------------------------------------------------------- two samples


def _one_p(z: float, alternative: str) -> float:
    """The p-value of a standard normal statistic ``z``."""
    if alternative == "less":
        return _normal_cdf(z)
    if alternative == "greater":
        return _normal_cdf(-z)
    return min(1.0, math.erfc(abs(z) / math.sqrt(2.0)))


def two_proportion_test(
    successes_a: int, n_a: int, successes_b: int, n_b: int, *, alternative: str = "two-sided"
) -> Significance:
    """The pooled two-proportion z-test of sample b's rate against sample a's (see the
    module docstring): ``alternative="less"`` asks whether b's rate is lower.

    ``statistic`` is z; ``details`` has ``rate_a``, ``rate_b``, ``difference`` (b - a) and
    ``pooled``.  A sample with no trials is no evidence: p = 1."""
    _check_alternative(alternative)
    _check_trials(successes_a, n_a, 0.5)
    _check_trials(successes_b, n_b, 0.5)
    ka, na, kb, nb = int(successes_a), int(n_a), int(successes_b), int(n_b)
    details: dict[str, Any] = {
        "rate_a": ka / na if na else math.nan,
        "rate_b": kb / nb if nb else math.nan,
        "n_a": na,
        "n_b": nb,
    }
    details["difference"] = details["rate_b"] - details["rate_a"]
    if na == 0 or nb == 0:
        details["pooled"] = math.nan
        return Significance("two_proportion_z", 0.0, 1.0, na + nb, "asymptotic", alternative, details)
    pooled = (ka + kb) / (na + nb)
    details["pooled"] = pooled
    variance = pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb)
    z = 0.0 if variance <= 0.0 else (kb / nb - ka / na) / math.sqrt(variance)
    p = 1.0 if variance <= 0.0 else _one_p(z, alternative)
    return Significance("two_proportion_z", z, p, na + nb, "asymptotic", alternative, details)


def bootstrap_mean_difference(
    values_a: Any,
    values_b: Any,
    *,
    n_samples: int = 1000,
    seed: int | None = None,
    alternative: str = "two-sided",
    implementation: str | None = None,
) -> Significance:
    """The bootstrap test of ``mean(values_b) - mean(values_a)`` for two independent
    samples (see the module docstring): ``alternative="less"`` asks whether b's mean is lower.

    ``statistic`` is z; ``details`` has ``mean_a``, ``mean_b``, ``difference`` and ``se`` (the
    bootstrap standard error of the difference).  An empty sample is no evidence (p = 1);
    two constant samples have se = 0 and give p = 1 when their means are equal, else 0
    (for the side the difference lies on)."""
    from respeval.stats.bootstrap import DEFAULT_SEED, bootstrap_means, resolve_seed

    _check_alternative(alternative)
    a = np.asarray(values_a, dtype=np.float64).ravel()
    b = np.asarray(values_b, dtype=np.float64).ravel()
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("bootstrap_mean_difference: the values must be finite numbers (drop unscored rows first)")
    details: dict[str, Any] = {
        "mean_a": float(a.mean()) if a.size else math.nan,
        "mean_b": float(b.mean()) if b.size else math.nan,
        "n_a": int(a.size),
        "n_b": int(b.size),
        "replicates": n_samples,
    }
    details["difference"] = details["mean_b"] - details["mean_a"]
    if a.size == 0 or b.size == 0:
        details["se"] = math.nan
        return Significance(
            "bootstrap_mean_difference", 0.0, 1.0, a.size + b.size, "bootstrap (normal)", alternative, details
        )
    base = resolve_seed(DEFAULT_SEED if seed is None else seed)
    rep_a = bootstrap_means(a[:, None], n_samples, base, implementation=implementation)[:, 0]
    rep_b = bootstrap_means(b[:, None], n_samples, (base + 1) & 0xFFFFFFFFFFFFFFFF, implementation=implementation)[:, 0]
    k = min(rep_a.size, rep_b.size)  # a replicate that drew no row has no mean (tiny samples)
    se = float(np.std(rep_b[:k] - rep_a[:k], ddof=1)) if k > 1 else 0.0
    details["se"] = se
    difference = details["difference"]
    if se > 0.0:
        z = difference / se
        p = _one_p(z, alternative)
    elif difference == 0.0:
        z, p = 0.0, 1.0
    else:
        z = math.copysign(math.inf, difference)
        p = 0.0 if (alternative == "two-sided" or (alternative == "less") == (difference < 0)) else 1.0
    return Significance("bootstrap_mean_difference", z, p, a.size + b.size, "bootstrap (normal)", alternative, details)
