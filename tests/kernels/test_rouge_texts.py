"""ROUGE straight from texts (``rouge_text_stats``): the native core == the twin on
fuzzed texts and pairs, on every size class of the kernels (one machine word, a few
words, hash n-grams, position-list LCS masks, checkpointed rougeLsum rows), and rows
beyond the documented limit raise a named error instead of exhausting memory."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _helpers.reference import rouge as oracle
from respeval import _backend, _core_py
from respeval.limits import LCS_MAX_CELLS, RowTooLongError

core = pytest.importorskip("respeval._core", reason="respeval._core is not built")
SETTINGS = settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

words = st.sampled_from(["a", "b", "c", "running", "runs", "Ran", "x1", "\u0130x", "\u212a", "abcdefghijklmnopq"])
text = st.lists(words | st.sampled_from([" ", "\n", ". ", "!!"]), max_size=40).map("".join)


def _stats(module, preds, refs, pair_pred, pair_ref, max_order, want_lcs, want_lsum, stem, threads=None):
    n = len(pair_pred)
    stats = np.zeros((n, max_order + want_lcs + want_lsum), np.int64)
    lengths = np.zeros((n, 2), np.int64)
    module.rouge_text_stats(
        preds,
        refs,
        np.asarray(pair_pred, np.int64),
        np.asarray(pair_ref, np.int64),
        max_order,
        want_lcs,
        want_lsum,
        stem,
        stats,
        lengths,
        threads,
    )
    return stats, lengths


@SETTINGS
@given(
    st.lists(text, min_size=1, max_size=6),
    st.lists(text, min_size=1, max_size=4),
    st.data(),
    st.integers(0, 4),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_native_equals_twin(preds, refs, data, max_order, want_lcs, want_lsum, stem):
    npairs = data.draw(st.integers(0, 10))
    pair_pred = data.draw(st.lists(st.integers(0, len(preds) - 1), min_size=npairs, max_size=npairs))
    pair_ref = data.draw(st.lists(st.integers(0, len(refs) - 1), min_size=npairs, max_size=npairs))
    args = (preds, refs, pair_pred, pair_ref, max_order, want_lcs, want_lsum, stem)
    got, want = _stats(core, *args), _stats(_core_py, *args)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def _random_text(rng, n_tokens, alphabet, newline_every=0):
    toks = [f"w{rng.randrange(alphabet)}" for _ in range(n_tokens)]
    if newline_every:
        toks = [t + ("\n" if (i + 1) % newline_every == 0 else "") for i, t in enumerate(toks)]
    return " ".join(toks)


@pytest.mark.parametrize(
    "pred_len, ref_len, alphabet",
    [
        (1, 1, 2),
        (64, 64, 5),
        (65, 63, 5),
        (130, 300, 8),
        (511, 512, 20),
        (513, 200, 20),
        (700, 900, 50),
        (40, 2000, 30),
    ],
)
def test_size_classes_equal_twin_and_oracle(pred_len, ref_len, alphabet, rng):
    """One word a side, several words, and past RV_GROUP_MASK_WORDS (hash n-grams)."""
    refs = [_random_text(rng, ref_len, alphabet, newline_every=37)]
    preds = [_random_text(rng, pred_len, alphabet, newline_every=29) for _ in range(3)]
    pairs = ([0, 1, 2], [0, 0, 0])
    got = _stats(core, preds, refs, *pairs, 4, True, True, False)
    want = _stats(_core_py, preds, refs, *pairs, 4, True, True, False)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    # and the readable oracle on the first pair (plain token lists)
    p, r = oracle.rouge_tokens(preds[0]), oracle.rouge_tokens(refs[0])
    assert got[0][0, :4].tolist() == [oracle.ngram_overlap(p, r, n) for n in range(1, 5)]
    assert got[0][0, 4] == oracle.lcs_length(r, p)


def test_threads_and_reference_groups_do_not_change_results(rng):
    refs = [_random_text(rng, rng.randrange(0, 80), 12, 9) for _ in range(40)]
    preds = [_random_text(rng, rng.randrange(0, 80), 12, 7) for _ in range(600)]
    pair_pred = list(range(600))
    pair_ref = [rng.randrange(40) for _ in range(600)]
    one = _stats(core, preds, refs, pair_pred, pair_ref, 3, True, True, True, threads=1)
    two = _stats(core, preds, refs, pair_pred, pair_ref, 3, True, True, True, threads=2)
    assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])


def test_lcs_with_position_list_masks():
    """A reference whose dense masks would exceed the budget (distinct x words > 2**21)."""
    n = 20_000
    ref = " ".join(f"t{i}" for i in range(n))
    preds = [ref, " ".join(f"t{i}" for i in reversed(range(n))), " ".join(f"t{i}" for i in range(0, n, 2))]
    stats, lengths = _stats(core, preds, [ref], [0, 1, 2], [0, 0, 0], 1, True, False, False)
    assert stats[:, 1].tolist() == [n, 1, n // 2]
    assert stats[:, 0].tolist() == [n, n, n // 2]


def test_lsum_with_checkpointed_rows(rng):
    """A candidate sentence long enough that rougeLsum keeps only every K-th row."""
    # rows x words = 30,001 x 150 > 2**22: every K-th row is kept, blocks are recomputed
    pred = _random_text(rng, 9_600, 40)
    ref = _random_text(rng, 30_000, 40)
    got = _stats(core, [pred], [ref], [0], [0], 0, False, True, False)
    want = _stats(_core_py, [pred], [ref], [0], [0], 0, False, True, False)
    assert got[0].tolist() == want[0].tolist()


def test_long_prediction_against_two_words_scores_in_linear_memory():
    """rougeLsum of a 1M-token prediction against 2 words (issue 12, point 8)."""
    pred = "the cat " * 500_000
    stats, lengths = _stats(core, [pred], ["the dog"], [0], [0], 2, True, True, False)
    assert lengths.tolist() == [[1_000_000, 2]]
    assert stats.tolist() == [[1, 0, 1, 1]]


@pytest.mark.parametrize("want_lcs, want_lsum", [(True, False), (False, True)])
def test_a_row_beyond_the_lcs_limit_is_a_named_error(impl, want_lcs, want_lsum):
    side = 1 << 20
    big = "a " * (side + 1)
    preds, refs = ["a b", big], ["a", "b " * side]
    with pytest.raises(RowTooLongError, match="row 1: the LCS table") as err:
        _stats(_backend.get(impl), preds, refs, [0, 1], [0, 1], 1, want_lcs, want_lsum, False)
    assert err.value.row == 1 and err.value.limit == LCS_MAX_CELLS and isinstance(err.value, ValueError)


def test_rouge_n_alone_has_no_lcs_limit():
    side = 1 << 20
    stats, lengths = _stats(core, ["a " * (side + 1)], ["a " * side], [0], [0], 2, False, False, False)
    assert stats.tolist() == [[side, side - 1]] and lengths.tolist() == [[side + 1, side]]


arrays64 = st.lists(st.integers(-2, 6), max_size=6).map(lambda v: np.array(v, np.int64))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(text, max_size=4), st.lists(text, max_size=4), arrays64, arrays64, st.integers(-1, 5), st.integers(0, 6)
)
def test_fuzz_invalid_arguments_never_crash(preds, refs, pair_pred, pair_ref, max_order, out_rows):
    results = []
    for module in (core, _core_py):
        stats = np.zeros((out_rows, max(max_order, 0) + 2), np.int64)
        lengths = np.zeros((out_rows, 2), np.int64)
        try:
            module.rouge_text_stats(preds, refs, pair_pred, pair_ref, max_order, True, True, False, stats, lengths)
            results.append((stats.tolist(), lengths.tolist()))
        except ValueError as exc:
            results.append(str(exc))
    assert results[0] == results[1]


def test_non_str_texts_name_their_row(impl):
    with pytest.raises(TypeError, match="text at row 1 is None"):
        _stats(_backend.get(impl), ["a", None], ["a"], [0], [0], 1, False, False, False)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.lists(st.tuples(st.integers(0, 70), st.integers(0, 70), st.integers(0, 70)), max_size=30),
    st.lists(st.sampled_from([(0, 1), (1, 2), (2, 0), (2, 0), (0, 4)]), min_size=1, max_size=4),
)
def test_scores_native_equal_twin_bit_for_bit(rows, types):
    stats = np.array([[min(a, b, c)] * 3 for a, b, c in rows], np.int64).reshape(len(rows), 3)
    lengths = np.array([[b, c] for _, b, c in rows], np.int64).reshape(len(rows), 2)
    columns = np.array([c for c, _ in types], np.int64)
    orders = np.array([o for _, o in types], np.int64)
    got = np.empty((3 * len(types), len(rows)))
    want = np.empty((3 * len(types), len(rows)))
    core.rouge_scores(stats, lengths, columns, orders, got, 2)
    _core_py.rouge_scores(stats, lengths, columns, orders, want)
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64))
    for k, (hits, plen, rlen) in enumerate(zip(stats[:, 0], lengths[:, 0], lengths[:, 1])):
        for t, (_, n) in enumerate(types):
            p = hits / max(plen - max(n - 1, 0), 1)
            r = hits / max(rlen - max(n - 1, 0), 1)
            f = 2 * p * r / (p + r) if p + r > 0 else 0.0
            assert got[3 * t : 3 * t + 3, k].tolist() == [p, r, f]


def test_scores_reject_bad_columns(impl):
    kernels = _backend.get(impl)
    with pytest.raises(ValueError, match="columns\\[0\\] = 5 is not a column"):
        kernels.rouge_scores(
            np.zeros((2, 3), np.int64), np.zeros((2, 2), np.int64), np.array([5]), np.array([1]), np.empty((3, 2))
        )


LONG_ROWS = r"""
import random, resource, sys
import respeval
rng = random.Random(5)
words = [f"w{rng.randrange(50000)}" for _ in range(400_000)]
pred, ref = " ".join(words), " ".join(reversed(words))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
res = respeval.rouge([pred], [ref], ("rouge1", "rouge2", "rougeL"), threads=1)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024, res["rougeL_r"][0] > 0)
"""


@pytest.mark.slow
def test_rouge_l_of_400k_by_400k_tokens_in_linear_memory():
    """rougeL of two 400,000-token texts (issue 12, point 8): the dense bit table would be
    1.6e11 bits; position-list masks keep the growth to tens of MB."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", LONG_ROWS], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    grown_mb, scored = done.stdout.split()
    assert scored == "True" and int(grown_mb) < 200, done.stdout
