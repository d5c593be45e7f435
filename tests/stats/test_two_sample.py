"""The two-sample tests a monitor uses (two proportions, a bootstrap difference of means)
and the alpha spending of its repeated looks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from respeval.stats import (
    AlphaSpending,
    bootstrap_mean_difference,
    spent_alpha,
    two_proportion_test,
)

scipy_stats = pytest.importorskip("scipy.stats")


def _cases(n: int, seed: int) -> list[tuple[int, int, int, int]]:
    rng = np.random.default_rng(seed)
    out = [(0, 10, 10, 10), (5, 10, 5, 10), (1, 1, 0, 1), (300, 400, 240, 380), (7, 1000, 3, 20)]
    for _ in range(n):
        na, nb = int(rng.integers(1, 3000)), int(rng.integers(1, 3000))
        out.append((int(rng.integers(0, na + 1)), na, int(rng.integers(0, nb + 1)), nb))
    return out


@pytest.mark.parametrize("case", _cases(60, 3))
def test_two_proportion_test_equals_scipy(case):
    ka, na, kb, nb = case
    table = [[ka, na - ka], [kb, nb - kb]]
    pooled = (ka + kb) / (na + nb)
    result = two_proportion_test(ka, na, kb, nb)
    if pooled in (0.0, 1.0):  # scipy's chi-square refuses an empty column; here: no evidence
        assert result.p_value == 1.0 and result.statistic == 0.0
        return
    chi2 = scipy_stats.chi2_contingency(table, correction=False)
    assert result.p_value == pytest.approx(chi2.pvalue, rel=1e-9, abs=1e-12)
    assert result.statistic**2 == pytest.approx(chi2.statistic, rel=1e-9, abs=1e-12)
    less = two_proportion_test(ka, na, kb, nb, alternative="less")
    greater = two_proportion_test(ka, na, kb, nb, alternative="greater")
    assert less.p_value == pytest.approx(scipy_stats.norm.cdf(result.statistic), rel=1e-9, abs=1e-15)
    assert greater.p_value == pytest.approx(scipy_stats.norm.sf(result.statistic), rel=1e-9, abs=1e-15)
    # the sign: b below a is a negative z
    assert (result.statistic < 0) == (kb / nb < ka / na) or result.statistic == 0


def test_two_proportion_test_edges_and_bad_input():
    assert two_proportion_test(0, 0, 5, 10).p_value == 1.0
    assert two_proportion_test(10, 10, 10, 10).p_value == 1.0  # pooled rate 1: se 0
    r = two_proportion_test(90, 100, 60, 100, alternative="less")
    assert r.details["difference"] == pytest.approx(-0.3) and r.p_value < 1e-5
    with pytest.raises(ValueError):
        two_proportion_test(11, 10, 1, 10)
    with pytest.raises(ValueError):
        two_proportion_test(1, 10, 1, 10, alternative="smaller")


def test_bootstrap_mean_difference_standard_error_and_seed():
    rng = np.random.default_rng(7)
    a = rng.normal(0.6, 0.2, 800)
    b = rng.normal(0.5, 0.3, 600)
    r = bootstrap_mean_difference(a, b, n_samples=2000, seed=11, alternative="less")
    analytic = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert r.details["se"] == pytest.approx(analytic, rel=0.08)
    assert r.details["difference"] == pytest.approx(b.mean() - a.mean())
    assert r.statistic == pytest.approx(r.details["difference"] / r.details["se"])
    assert r.p_value == pytest.approx(scipy_stats.norm.cdf(r.statistic), rel=1e-12)
    again = bootstrap_mean_difference(a, b, n_samples=2000, seed=11, alternative="less")
    assert again == r
    other = bootstrap_mean_difference(a, b, n_samples=2000, seed=12, alternative="less")
    assert other.details["se"] != r.details["se"]


def test_bootstrap_mean_difference_is_the_same_on_both_implementations():
    rng = np.random.default_rng(1)
    a, b = rng.random(300), rng.random(250)
    native = bootstrap_mean_difference(a, b, n_samples=500, seed=3)
    twin = bootstrap_mean_difference(a, b, n_samples=500, seed=3, implementation="python")
    assert native.details["se"] == pytest.approx(twin.details["se"], rel=1e-12)
    assert native.p_value == pytest.approx(twin.p_value, rel=1e-12)


def test_bootstrap_mean_difference_degenerate_samples():
    assert bootstrap_mean_difference([], [1.0, 2.0]).p_value == 1.0
    same = bootstrap_mean_difference([1.0] * 20, [1.0] * 30, alternative="less")
    assert same.p_value == 1.0
    lower = bootstrap_mean_difference([1.0] * 20, [0.0] * 30, alternative="less")
    assert lower.p_value == 0.0
    assert bootstrap_mean_difference([1.0] * 20, [0.0] * 30, alternative="greater").p_value == 1.0
    with pytest.raises(ValueError, match="finite"):
        bootstrap_mean_difference([1.0, math.nan], [1.0])


def test_alpha_spending_sums_to_alpha_and_never_more():
    levels = [spent_alpha(0.05, k) for k in range(1, 10_001)]
    assert math.fsum(levels) == pytest.approx(0.05 * 10_000 / 10_001, rel=1e-12)
    assert all(x > y for x, y in zip(levels, levels[1:]))
    spending = AlphaSpending(0.05)
    assert spending.spent(0) == 0 and spending.spent(11) == pytest.approx(math.fsum(levels[:11]))
    assert spending.level(7) == pytest.approx(0.05 / 56)
    with pytest.raises(ValueError):
        spent_alpha(0.05, 0)
    with pytest.raises(ValueError):
        AlphaSpending(1.5)
