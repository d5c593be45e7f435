"""respeval.stats.paired: the vectorised resampling equals sacreBLEU's one-resample-at-a-time
arithmetic bit for bit, and the building blocks behave as documented."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from respeval.stats import paired


@settings(max_examples=60, deadline=None)
@given(
    stats=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=40),
        elements=st.floats(0, 1e4, allow_nan=False, width=32),
    ),
    n=st.integers(1, 30),
    seed=st.integers(0, 2**32),
)
def test_resampled_sums_equal_sacrebleus_loop(stats, n, seed):
    """sacreBLEU: ``[s.sum(0) for s in np.array(stats, dtype="float32")[idxs]]``."""
    indices = paired.resample_indices(stats.shape[0], n, seed)
    assert (indices == np.random.default_rng(seed).choice(stats.shape[0], size=(n, stats.shape[0]))).all()
    stats32 = np.array(stats, dtype="float32")
    want = np.array([s.sum(0) for s in stats32[indices]])
    got = paired.resampled_sums(stats, indices)
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 50),
    cols=st.integers(1, 12),
    top=st.sampled_from([1, 40, 2**24 // 50, 2**24 // 50 + 1, 2**30]),
    n=st.integers(1, 30),
    seed=st.integers(0, 999),
)
def test_resampled_sums_of_integer_statistics(rows, cols, top, n, seed):
    """Counts times statistics when float32 adds the integers exactly; gathered sums otherwise."""
    stats = np.random.default_rng(seed).integers(0, top, size=(rows, cols), endpoint=True)
    indices = paired.resample_indices(rows, n, seed)
    want = np.array([s.sum(0) for s in np.array(stats, dtype="float32")[indices]])
    assert paired.resampled_sums(stats, indices).tobytes() == want.tobytes()


def test_resampled_sums_in_several_blocks(monkeypatch):
    monkeypatch.setattr(paired, "_BLOCK_BYTES", 64)  # a block per resample or two
    rng = np.random.default_rng(1)
    indices = paired.resample_indices(37, 11, 5)
    for stats in (rng.random((37, 3)) * 50, rng.integers(0, 50, (37, 3))):
        want = np.array([s.sum(0) for s in np.float32(stats)[indices]])
        assert paired.resampled_sums(stats, indices).tobytes() == want.tobytes()


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 60), cols=st.integers(1, 6), trials=st.integers(1, 40), seed=st.integers(0, 999))
def test_swapped_sums_equal_sacrebleus_products(rows, cols, trials, seed):
    rng = np.random.default_rng(seed)
    top = rng.choice([10, 10**6, 2**40])  # float32, float64 and integer products
    base = rng.integers(0, top, size=(rows, cols))
    system = rng.integers(0, top, size=(rows, cols))
    mask = paired.swap_mask(rows, trials, np.random.default_rng(seed))
    a, b = paired.swapped_sums(base, system, mask)
    want_a = mask @ base.tolist() + ~mask @ system.tolist()  # sacreBLEU multiplies its lists of ints
    want_b = ~mask @ base.tolist() + mask @ system.tolist()
    assert a.dtype == want_a.dtype == np.int64
    assert (a == want_a).all() and (b == want_b).all()
    floats, reversed_ = rng.random((rows, cols)) * 30, (rng.random((rows, cols)) * 30)[::-1]  # not contiguous
    fa, fb = paired.swapped_sums(floats, reversed_, mask)
    assert fa.tobytes() == (mask @ floats.tolist() + ~mask @ reversed_.tolist()).tobytes()
    assert fb.tobytes() == (~mask @ floats.tolist() + mask @ reversed_.tolist()).tobytes()


def test_swapped_sums_in_several_blocks(monkeypatch):
    monkeypatch.setattr(paired, "_BLOCK_BYTES", 100)
    rng = np.random.default_rng(2)
    base, system = rng.integers(0, 99, size=(13, 4)), rng.integers(0, 99, size=(13, 4))
    mask = paired.swap_mask(13, 9, rng)
    a, b = paired.swapped_sums(base, system, mask)
    assert (a == mask @ base + ~mask @ system).all() and (b == ~mask @ base + mask @ system).all()


def test_huge_integers_take_the_exact_integer_products():
    base = np.array([[2**60], [1]], dtype=np.int64)
    system = np.array([[3], [2**60]], dtype=np.int64)
    mask = np.array([[True, False], [False, True]])
    a, b = paired.swapped_sums(base, system, mask)
    assert a[:, 0].tolist() == [2**61, 4] and b[:, 0].tolist() == [4, 2**61]


def test_p_value_counts_strictly_greater_plus_one():
    assert paired.p_value(np.array([0.1, 0.5, 0.5, 0.9]), 0.5) == 2 / 5
    assert paired.p_value(np.zeros(9), 0.0) == 0.1  # a tie is not chance: the minimum p


def test_intervals():
    scores = np.arange(1000.0)[::-1]
    assert paired.estimate_ci(scores) == (499.5, 0.5 * (974 - 25))
    mean, ci = paired.corpus_ci(np.float32([3, 1, 2]))
    assert (mean, ci) == (2.0, 0.5 * (3 - 1)) and isinstance(mean, np.float32)


def test_identical_systems_get_the_minimum_p_value():
    rows = np.array([[i % 7, 3] for i in range(40)])
    score = lambda sums: sums[:, 0] / sums[:, 1]  # noqa: E731
    scores = paired.bootstrap_scores(rows, score, 200, 1)
    assert paired.paired_bootstrap(scores, scores, 0.0) == 1 / 201
    mask = paired.swap_mask(40, 200, np.random.default_rng(0))
    assert paired.approximate_randomization(rows, rows, score, 0.0, mask) == 1 / 201


def test_a_clearly_better_system_is_significant():
    rng = np.random.default_rng(4)
    base = np.column_stack([rng.integers(0, 5, 500), np.full(500, 10)])
    better = base + np.array([3, 0])
    score = lambda sums: sums[:, 0] / sums[:, 1]  # noqa: E731
    observed = abs(score(base.sum(0)[None])[0] - score(better.sum(0)[None])[0])
    indices = paired.resample_indices(500, 300, 1)
    p = paired.paired_bootstrap(
        score(paired.resampled_sums(base, indices)), score(paired.resampled_sums(better, indices)), observed
    )
    assert p == 1 / 301
    mask = paired.swap_mask(500, 300, np.random.default_rng(1))
    assert paired.approximate_randomization(base, better, score, observed, mask) == 1 / 301


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match="matrix"):
        paired.resampled_sums(np.zeros(3), np.zeros((2, 3), int))
    with pytest.raises(ValueError, match="differ in shape"):
        paired.swapped_sums(np.zeros((3, 2)), np.zeros((4, 2)), np.zeros((1, 3), bool))
    with pytest.raises(ValueError, match="columns"):
        paired.swapped_sums(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((1, 4), bool))
    with pytest.raises(ValueError, match="resamples"):
        paired.paired_bootstrap(np.zeros(3), np.zeros(4), 0.0)
    with pytest.raises(ValueError, match="at least one"):
        paired.resample_indices(0, 5, 1)
    with pytest.raises(ValueError, match="no scores"):
        paired.estimate_ci(np.zeros(0))
