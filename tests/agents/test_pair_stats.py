"""``trajectory_pair_stats``: the native kernel against the pure-Python twin on all 16
statistics and the matched flags.

The native kernel takes one of two paths per row: bit-parallel (both sides at most 64
calls: the reference side as 64-bit masks, Hyyro's LCS and Myers' edit distance) or the
sorted keys and DP rows (a side longer than 64).  The rows here sit on both sides of that
line (0, 1, 63, 64, 65 calls), with few distinct ids (duplicates, equal names with
different calls) and extreme int32 ids; the last row always ends the buffers, where the
bit-parallel path cannot read past a row's end.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from respeval._core_py import trajectory as twin

core = pytest.importorskip("respeval._core", reason="the native core is not built")

N_STATS = len(twin.TRAJECTORY_STATS)
_EDGE = (0, 1, 2, 63, 64, 65)
_IDS = (0, 1, 2, 3, -1, 2**31 - 1, -(2**31))


@st.composite
def _row(draw):
    n_pred = draw(st.sampled_from(_EDGE) | st.integers(0, 70))
    n_ref = draw(st.sampled_from(_EDGE) | st.integers(0, 70))
    ids = draw(st.sampled_from([_IDS[:1], _IDS[:2], _IDS[:4], _IDS]))
    calls = st.sampled_from(ids)
    names = st.sampled_from(ids[:2] if len(ids) > 1 else ids)
    pred = draw(st.lists(st.tuples(calls, names), min_size=n_pred, max_size=n_pred))
    ref = draw(st.lists(st.tuples(calls, names), min_size=n_ref, max_size=n_ref))
    if draw(st.booleans()) and pred:
        # the reference a shuffled or edited copy of (part of) the prediction: long matches
        k = draw(st.integers(0, len(pred)))
        ref = draw(st.permutations(pred[:k])) if draw(st.booleans()) else pred[:k] + ref[: max(0, n_ref - k)]
    return pred, ref


def _csr(sides):
    lens = [len(s) for s in sides]
    off = np.r_[0, np.cumsum(lens)].astype(np.int64)
    flat = [c for s in sides for c in s]
    calls = np.array([c for c, _ in flat], np.int32).reshape(-1)
    names = np.array([n for _, n in flat], np.int32).reshape(-1)
    return calls, names, off


def _stats(mod, pred, ref, flags=True, threads=None):
    rows = len(pred[2]) - 1
    out = np.full((rows, N_STATS), -5, np.int64)
    pm = np.full(len(pred[0]), 7, np.uint8) if flags else None
    rm = np.full(len(ref[0]), 7, np.uint8) if flags else None
    mod.trajectory_pair_stats(*pred, *ref, out, pm, rm, threads)
    return out, pm, rm


def _same(got, want):
    for name, g, w in zip(("stats", "pred_matched", "ref_matched"), got, want):
        if w is None:
            assert g is None
            continue
        if not np.array_equal(g, w):
            bad = np.argwhere(g != w)[0]
            where = f"row {bad[0]}, {twin.TRAJECTORY_STATS[bad[1]]}" if name == "stats" else f"call {bad[0]}"
            raise AssertionError(f"{name} differ at {where}: native {g[tuple(bad)]}, twin {w[tuple(bad)]}")


@settings(max_examples=250, deadline=None)
@given(rows=st.lists(_row(), min_size=1, max_size=6), flags=st.booleans())
def test_native_equals_twin_around_64_calls(rows, flags):
    pred = _csr([p for p, _ in rows])
    ref = _csr([r for _, r in rows])
    _same(_stats(core, pred, ref, flags), _stats(twin, pred, ref, flags))


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65])
def test_one_side_empty(n):
    ids = [(i % 3, i % 2) for i in range(n)]
    for pred_rows, ref_rows in (([ids], [[]]), ([[]], [ids]), ([[]], [[]])):
        pred, ref = _csr(pred_rows), _csr(ref_rows)
        _same(_stats(core, pred, ref), _stats(twin, pred, ref))


def test_many_rows_on_both_paths_and_threads_agree():
    """Enough rows for two threads (blocks of rows, each ending where later rows still
    follow in the buffers), with a long row now and then."""
    rng = np.random.default_rng(11)
    rows = 1500
    lens = rng.choice(
        [0, 1, 2, 3, 5, 8, 63, 64, 65], size=(2, rows), p=[0.1, 0.2, 0.2, 0.2, 0.15, 0.1, 0.02, 0.02, 0.01]
    )
    sides = []
    for k in range(2):
        calls = rng.integers(0, 6, lens[k].sum()).astype(np.int32)
        sides.append((calls, calls % 3, np.r_[0, np.cumsum(lens[k])].astype(np.int64)))
    pred, ref = sides
    want = _stats(twin, pred, ref)
    for threads in (1, 2):
        _same(_stats(core, pred, ref, threads=threads), want)
