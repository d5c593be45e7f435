"""The sequential test's decisions and its error rates (respeval.stats.sequential)."""

from __future__ import annotations

import numpy as np
import pytest

from respeval.stats import SequentialTest


def _run(outcomes, alpha=0.05, margin=0.1):
    test = SequentialTest(alpha, margin)
    for x in outcomes:
        if test.update(x) is not None:
            break
    return test


def test_identical_outcomes_settle_no_change_and_a_clear_effect_settles_its_direction():
    none = _run(np.zeros(500))
    assert none.decision == "no_change" and none.decided_at < 200
    low, high = none.interval()
    assert -0.1 <= low < 0 < high <= 0.1
    better = _run(np.ones(100))
    assert better.decision == "improved" and better.decided_at < 20
    worse = _run(-(np.arange(500) % 10 == 0).astype(float))  # the baseline wins one case in ten
    assert worse.decision == "regressed"
    assert worse.state().p_value <= 0.05


def _error_rate(draw, decided_wrong, repeats=300, horizon=400, alpha=0.1, margin=0.1, seed=0):
    rng = np.random.default_rng(seed)
    wrong = 0
    for _ in range(repeats):
        test = _run(draw(rng, horizon), alpha, margin)
        wrong += decided_wrong(test.decision)
    return wrong


@pytest.mark.parametrize("ties", [0.0, 0.5, 0.9])
def test_false_alarms_stay_below_alpha_when_the_systems_are_alike(ties):
    """mu = 0: improved or regressed at most alpha of the time (+2 sigma for 300 repeats)."""
    p = (1 - ties) / 2

    def draw(rng, n):
        return rng.choice([-1.0, 0.0, 1.0], p=[p, ties, p], size=n)

    wrong = _error_rate(draw, lambda d: d in ("improved", "regressed"))
    assert wrong <= 300 * 0.1 + 2 * (300 * 0.1 * 0.9) ** 0.5


def test_no_change_is_rarely_claimed_when_the_change_is_as_large_as_the_margin():
    """|mu| = margin: no_change at most alpha of the time."""

    def draw(rng, n):
        return rng.choice([-1.0, 0.0, 1.0], p=[0.2, 0.4, 0.4], size=n) * 0.5  # mu = 0.1

    wrong = _error_rate(draw, lambda d: d == "no_change")
    assert wrong <= 300 * 0.1 + 2 * (300 * 0.1 * 0.9) ** 0.5


def test_a_peeking_fixed_sample_test_would_fail_the_same_check():
    """The check above can fail: a z-test looked at after every case (the mistake an
    always-valid test avoids) raises far more false alarms than alpha."""
    rng = np.random.default_rng(1)
    alarms = 0
    for _ in range(300):
        x = rng.choice([-1.0, 1.0], size=400)
        z = np.cumsum(x) / np.sqrt(np.arange(1, 401))
        alarms += bool(np.any(np.abs(z[9:]) > 1.645))
    assert alarms > 300 * 0.1 + 2 * (300 * 0.1 * 0.9) ** 0.5


def test_bad_arguments():
    with pytest.raises(ValueError, match="alpha"):
        SequentialTest(0.0)
    with pytest.raises(ValueError, match="margin"):
        SequentialTest(0.05, 1.0)
    with pytest.raises(ValueError, match="in \\[-1, 1\\]"):
        SequentialTest().update(2.0)
