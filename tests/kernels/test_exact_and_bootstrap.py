"""Exact sums and the streaming Poisson bootstrap: native == reference, bit for bit,
whatever the chunking or thread count; and the weights are Poisson(1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers import implementations
from respeval import _core_py as ref
from respeval._core_py import bootstrap as ref_pb
from respeval.stats import bootstrap_means
from respeval.stats.exact import ExactSums, exact_mean, exact_sum

core = pytest.importorskip("respeval._core", reason="respeval._core is not built")

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(finite, max_size=60))
def test_exact_sum_equals_fsum(values):
    try:
        want = math.fsum(values)
    except OverflowError:  # fsum gives up on intermediate overflow; the exact sum does not
        return
    for impl in implementations.available():
        assert exact_sum(np.array(values, dtype=np.float64), impl) == want


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=80), st.integers(1, 9))
def test_exact_sums_do_not_depend_on_the_split(values, pieces):
    x = np.array(values)
    whole = ExactSums(1)
    whole.add(x[:, None])
    split = ExactSums(1)
    for part in np.array_split(x, pieces):
        split.add(part[:, None])
    assert split.values()[0] == whole.values()[0] == math.fsum(values)
    assert exact_mean(x) == math.fsum(values) / len(values)


def test_subnormals_huge_values_and_non_finite():
    tiny = np.array([5e-324, 5e-324, 1.0, -1.0])
    huge = np.array([1.7e308, 1.7e308, -1.7e308])
    for impl in implementations.available():
        assert exact_sum(tiny, impl) == 1e-323
        assert exact_sum(huge, impl) == 1.7e308  # math.fsum overflows here
        with pytest.raises(ValueError, match=r"non-finite value \(nan at position 2\)"):
            exact_sum(np.array([0.5, 1.0, np.nan]), impl)
        with pytest.raises(ValueError, match="inf"):
            exact_sum(np.array([np.inf]), impl)


def test_thresholds_are_the_poisson_tail():
    tail = ref_pb.tail_thresholds()
    assert tail[0] == round((1 - math.exp(-1)) * 2**32)
    # P(X >= k) from the series, compared in float: the constants in the C header agree
    keys = np.arange(200_000, dtype=np.int64)
    w = np.frombuffer(core.poisson_weights(keys, 7, 10), np.uint8).reshape(-1, 10)
    for k in range(1, 6):
        p = 1 - sum(math.exp(-1) / math.factorial(j) for j in range(k))
        assert abs((w >= k).mean() - p) < 5 * math.sqrt(p * (1 - p) / w.size)  # 5 sigma, fixed seed


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.lists(st.integers(0, 2**62), min_size=0, max_size=50, unique=True), st.integers(0, 2**64 - 1), st.integers(0, 40)
)
def test_weights_native_equal_reference(keys, seed, n_rep):
    keys = np.array(keys, dtype=np.int64)
    assert core.poisson_weights(keys, seed, n_rep) == ref.poisson_weights(keys, seed, n_rep)


@pytest.mark.parametrize("n_rep", [255, 256, 257, 511, 1000, 1031])
def test_replicate_sums_span_blocks_of_replicates_bit_identically(n_rep):
    """The native sums draw a tile's weights 256 replicates at a time, four 8-wide sums
    at once: replicate counts around and past those blocks give the twin's sums."""
    rng = np.random.default_rng(n_rep)
    rows, cols = 27, 3
    x = rng.random((rows, cols)) * 10.0 ** rng.integers(-5, 5, size=(rows, cols))
    keys = np.arange(5, 5 + rows, dtype=np.int64)
    want = np.zeros((cols + 1, n_rep))
    ref.poisson_bootstrap_add(x, keys, 7, want)
    for threads in (1, 2):
        got = np.zeros((cols + 1, n_rep))
        core.poisson_bootstrap_add(x, keys, 7, got, threads)
        assert np.array_equal(got, want), threads
    assert want[-1].sum() > 0


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(1, 120), st.integers(1, 5), st.integers(1, 70), st.integers(1, 9), st.integers(0, 2**63))
def test_replicate_sums_are_bit_identical_across_split_threads_and_implementation(rows, cols, n_rep, pieces, seed):
    rng = np.random.default_rng(seed % 2**32)
    x = rng.random((rows, cols)) * 10.0 ** rng.integers(-5, 5, size=(rows, cols))
    keys = np.sort(rng.choice(10 * rows, size=rows, replace=False)).astype(np.int64)
    want = np.zeros((cols + 1, n_rep))
    ref.poisson_bootstrap_add(x, keys, seed, want)
    for threads in (1, 2):
        got = np.zeros((cols + 1, n_rep))
        for idx in np.array_split(np.arange(rows), pieces):
            core.poisson_bootstrap_add(np.ascontiguousarray(x[idx]), keys[idx], seed, got, threads)
        assert np.array_equal(got, want), (threads, pieces)
    # last row: the resample sizes, the weights' sums
    w = np.frombuffer(core.poisson_weights(keys, seed, n_rep), np.uint8).reshape(rows, n_rep)
    assert np.array_equal(want[-1], w.sum(axis=0))


def test_bootstrap_add_rejects_bad_shapes():
    for module in (core, ref):
        with pytest.raises(ValueError, match="keys"):
            module.poisson_bootstrap_add(np.zeros((3, 2)), np.arange(2, dtype=np.int64), 1, np.zeros((3, 4)))
        with pytest.raises(ValueError, match="acc must have 3 rows"):
            module.poisson_bootstrap_add(np.zeros((3, 2)), np.arange(3, dtype=np.int64), 1, np.zeros((2, 4)))


def test_bootstrap_interval_covers_the_mean_and_shrinks_with_rows():
    rng = np.random.default_rng(3)
    widths = []
    for n in (100, 10_000):
        x = rng.random((n, 1))
        means = bootstrap_means(x, 500, seed=11)
        lo, hi = np.percentile(means[:, 0], [2.5, 97.5])
        assert lo < x.mean() < hi
        # the bootstrap standard error of a mean is sigma / sqrt(n), within 15%
        assert means[:, 0].std() == pytest.approx(x.std() / math.sqrt(n), rel=0.15)
        widths.append(hi - lo)
    assert widths[1] < widths[0] / 5


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(0, 6), st.integers(0, 4), st.integers(0, 8), st.integers(0, 6), st.integers(0, 12), st.booleans())
def test_fuzz_bootstrap_and_exact_entry_points_never_crash(rows, cols, key_rows, acc_rows, n_rep, strided):
    """Mismatched shapes are refused with ValueError before any native loop runs."""
    stats = np.ones((rows, cols))
    keys = np.arange(key_rows, dtype=np.int64)
    acc = np.zeros((acc_rows, n_rep))
    for module in (core, ref):
        try:
            module.poisson_bootstrap_add(stats, keys, 3, acc, 2)
        except ValueError:
            assert key_rows != rows or acc_rows != cols + 1
        else:
            assert key_rows == rows and acc_rows == cols + 1
    values = np.arange(rows * 2, dtype=np.float64)[:: 2 if strided else 1]
    for module in (core, ref):
        bins = np.zeros((3, 2048), np.int64) if acc_rows % 2 else np.zeros((3, 2047), np.int64)
        try:
            assert module.exact_sum_bins(values, bins) == -1
        except ValueError:
            assert bins.shape != (3, 2048)
    assert core.first_non_str(["a"] * rows + [None] * cols) == (rows if cols else -1)
