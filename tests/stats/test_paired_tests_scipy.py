"""The paired tests of respeval.stats equal scipy.stats to 1e-12 (issue 30, acceptance 2):
200 seeded random cases with ties and zero differences, for the binomial test, McNemar's
exact test (scipy's binomtest of the discordant pairs), the sign test and Wilcoxon
signed-rank with scipy's defaults; then the named variants."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from respeval.stats import binomial_pmf, binomial_test, holm, mcnemar_exact, sign_test, wilcoxon_signed_rank

scipy_stats = pytest.importorskip("scipy.stats")

TOL = 1e-12
SEED = 20260301


def _differences(rng: np.random.Generator, i: int) -> np.ndarray:
    """Paired differences of five kinds: continuous, small integers (ties and zeros),
    rounded (ties), mostly zero, and scores in [0, 1] like a per-row metric's."""
    n = int(rng.integers(1, 14)) if i % 3 == 0 else int(rng.integers(14, 121))
    kind = i % 5
    if kind == 0:
        d = rng.normal(0.1, 1.0, size=n)
    elif kind == 1:
        d = rng.integers(-3, 4, size=n).astype(np.float64)
    elif kind == 2:
        d = np.round(rng.normal(0.0, 1.0, size=n), 1)
    elif kind == 3:
        d = np.where(rng.random(n) < 0.6, 0.0, rng.choice([-0.5, 0.5, 1.0], size=n))
    else:
        a, b = rng.random(n).round(2), rng.random(n).round(2)
        d = b - a
    if np.all(d == 0):
        d[0] = 1.0  # scipy's normal approximation is NaN for all-zero differences (tested on its own)
    return d


def _cases() -> list[np.ndarray]:
    rng = np.random.default_rng(SEED)
    return [_differences(rng, i) for i in range(200)]


CASES = _cases()


def test_the_cases_include_ties_zeros_and_every_wilcoxon_path():
    zeros = sum(bool(np.any(d == 0)) for d in CASES)
    ties = sum(len(np.unique(np.abs(d[d != 0]))) < np.count_nonzero(d) for d in CASES)
    methods = {wilcoxon_signed_rank(d).method for d in CASES}
    assert zeros >= 50 and ties >= 100
    assert methods == {"exact", "exact (sign flips)", "asymptotic"}


@pytest.mark.parametrize("i", range(len(CASES)))
def test_wilcoxon_sign_and_mcnemar_equal_scipy(i):
    d = CASES[i]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns about ties and small samples
        expected = scipy_stats.wilcoxon(d)
    got = wilcoxon_signed_rank(d)
    assert abs(got.p_value - float(expected.pvalue)) <= TOL
    assert abs(got.statistic - float(expected.statistic)) <= TOL

    positive, negative = int(np.sum(d > 0)), int(np.sum(d < 0))
    sign = sign_test(d)
    assert abs(sign.p_value - scipy_stats.binomtest(positive, positive + negative, 0.5).pvalue) <= TOL
    assert (sign.statistic, sign.n) == (positive, positive + negative)

    # pass/fail pairs from the same draw: baseline passes where d <= 0, candidate where d >= 0
    base, cand = d <= 0, d >= 0
    b, c = int(np.sum(base & ~cand)), int(np.sum(~base & cand))
    mc = mcnemar_exact(base, cand)
    assert (mc.details["b"], mc.details["c"]) == (b, c)
    expected_p = scipy_stats.binomtest(c, b + c, 0.5).pvalue if b + c else 1.0
    assert abs(mc.p_value - expected_p) <= TOL


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_binomial_test_equals_scipy(alternative):
    rng = np.random.default_rng(SEED + 1)
    for i in range(200):
        n = int(rng.integers(1, 600))
        k = int(rng.integers(0, n + 1))
        p = 0.5 if i % 2 else float(rng.uniform(0.01, 0.99))
        expected = scipy_stats.binomtest(k, n, p, alternative=alternative).pvalue
        assert abs(binomial_test(k, n, p, alternative=alternative).p_value - expected) <= TOL, (k, n, p)


def test_binomial_test_at_the_mode_and_for_large_n():
    """k at the mean (p = 1), the plateau of odd n, and n beyond the exact-integer range
    (Loader's formula) all as scipy."""
    assert binomial_test(5, 10).p_value == 1.0
    assert abs(binomial_test(7, 15).p_value - scipy_stats.binomtest(7, 15).pvalue) <= TOL
    for n, k, p in ((25_000, 12_300, 0.5), (40_001, 20_400, 0.5), (30_000, 9_100, 0.3)):
        assert abs(binomial_test(k, n, p).p_value - scipy_stats.binomtest(k, n, p).pvalue) <= TOL


def test_binomial_pmf_equals_scipy():
    for n, k, p in ((10, 3, 0.5), (200, 61, 0.3), (1000, 999, 0.999), (17, 0, 0.05), (30_000, 9_000, 0.3)):
        assert math.isclose(binomial_pmf(k, n, p), scipy_stats.binom.pmf(k, n, p), rel_tol=1e-12)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("correction", [False, True])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_wilcoxon_variants_equal_scipy(zero_method, correction, alternative):
    for d in CASES[1::7]:  # 29 cases of every kind and size
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = scipy_stats.wilcoxon(d, zero_method=zero_method, correction=correction, alternative=alternative)
        got = wilcoxon_signed_rank(d, zero_method=zero_method, correction=correction, alternative=alternative)
        assert abs(got.p_value - float(expected.pvalue)) <= TOL
        assert abs(got.statistic - float(expected.statistic)) <= TOL


def test_wilcoxon_named_methods():
    rng = np.random.default_rng(SEED + 2)
    d = rng.normal(size=40)  # no ties, no zeros: scipy's exact distribution
    assert abs(wilcoxon_signed_rank(d, method="exact").p_value - scipy_stats.wilcoxon(d, method="exact").pvalue) <= TOL
    expected = scipy_stats.wilcoxon(d, method="asymptotic")
    got = wilcoxon_signed_rank(d, method="asymptotic")
    assert abs(got.p_value - expected.pvalue) <= TOL and abs(got.details["z"] - expected.zstatistic) <= TOL


def test_wilcoxon_with_only_zero_differences_is_no_evidence():
    """The documented difference: scipy's normal approximation gives NaN, here p = 1."""
    result = wilcoxon_signed_rank(np.zeros(30))
    assert result.p_value == 1.0 and result.n == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(scipy_stats.wilcoxon(np.zeros(30)).pvalue)


def test_mcnemar_without_discordant_pairs_and_bad_input():
    assert mcnemar_exact([1, 0, 1], [1, 0, 1]).p_value == 1.0
    with pytest.raises(ValueError, match="pass/fail"):
        mcnemar_exact([0.5], [1])
    with pytest.raises(ValueError, match="2 baseline outcomes but 1"):
        mcnemar_exact([1, 0], [1])


def _holm_reference(p: list[float], alpha: float) -> set[int]:
    """Holm's procedure as stated: reject in increasing order while p_(j) <= alpha / (m - j)."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    rejected = set()
    for j, i in enumerate(order):
        if p[i] > alpha / (len(p) - j):
            break
        rejected.add(i)
    return rejected


def test_holm_rejects_what_the_procedure_rejects():
    rng = np.random.default_rng(SEED + 3)
    for _ in range(300):
        m = int(rng.integers(1, 8))
        p = list(rng.choice([rng.random(), rng.random() * 0.02, 0.01, 0.0125], size=m))
        adjusted = holm(p)
        for alpha in (0.05, 0.01):
            assert {i for i, a in enumerate(adjusted) if a <= alpha} == _holm_reference(p, alpha)
        assert all(a >= q for a, q in zip(adjusted, p))


def test_holm_leaves_untested_metrics_out():
    assert holm([0.01, math.nan, 0.04]) == pytest.approx([0.02, math.nan, 0.04], nan_ok=True)
    with pytest.raises(ValueError):
        holm([1.5])
