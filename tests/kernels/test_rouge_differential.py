"""Native core == pure-Python reference, on random inputs (hypothesis), plus fuzzing
of the native entry points with invalid buffers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _helpers.reference import rouge as oracle
from respeval import _backend
from respeval import _core_py as ref
from respeval.metrics.rouge import rouge

core = pytest.importorskip("respeval._core", reason="respeval._core is not built")

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

# Alphabets from 2 to 40 tokens: small ones give long runs and repeated n-grams
# (the hard cases for clipping), large ones give misses.
token_seq = st.sampled_from([1, 2, 3, 5, 40]).flatmap(lambda k: st.lists(st.integers(0, k), max_size=150))


def _csr(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ids = np.array([t for r in rows for t in r], dtype=np.int32)
    off = np.zeros(len(rows) + 1, dtype=np.int64)
    off[1:] = np.cumsum([len(r) for r in rows])
    return ids, off


def _stats(module, preds, refs, max_order=4):
    p_ids, p_off = _csr(preds)
    r_ids, r_off = _csr(refs)
    n = len(preds)
    pair = np.arange(n, dtype=np.int64)
    overlaps = np.zeros((n, max_order), np.int64)
    lcs = np.zeros(n, np.int64)
    vocab = int(max(p_ids.max(initial=0), r_ids.max(initial=0))) + 1
    module.rouge_pair_stats(p_ids, p_off, r_ids, r_off, pair, pair, max_order, True, vocab, overlaps, lcs)
    return overlaps, lcs


@SETTINGS
@given(st.lists(st.tuples(token_seq, token_seq), min_size=1, max_size=12))
def test_ngram_and_lcs_stats_equal_reference(pairs):
    preds = [p for p, _ in pairs]
    refs = [r for _, r in pairs]
    assert all(np.array_equal(a, b) for a, b in zip(_stats(core, preds, refs), _stats(ref, preds, refs)))


@pytest.mark.parametrize("alphabet", [1, 2, 3, 8])
def test_ngram_stats_small_alphabets_seeded(alphabet, rng):
    """Many short pairs over tiny alphabets: every repeated-n-gram pattern shows up."""
    preds = [[rng.randrange(alphabet) for _ in range(rng.randrange(0, 30))] for _ in range(300)]
    refs = [[rng.randrange(alphabet) for _ in range(rng.randrange(0, 30))] for _ in range(300)]
    for got, want in zip(_stats(core, preds, refs, max_order=9), _stats(ref, preds, refs, max_order=9)):
        assert np.array_equal(got, want)


def _numpy_lcs(a: list[int], b: list[int]) -> int:
    """LCS length by rows of the DP table: T_i = prefix-max(max(T_{i-1}, T_{i-1}[j-1] + eq))."""
    if not a or not b:
        return 0
    bb = np.array(b)
    prev = np.zeros(len(b) + 1, np.int64)
    for x in a:
        diag = prev[:-1] + (bb == x)
        cur = np.maximum(prev[1:], diag)
        prev = np.concatenate(([0], np.maximum.accumulate(cur)))
    return int(prev[-1])


@pytest.mark.parametrize("la, lb", [(1, 1), (63, 64), (64, 65), (65, 200), (127, 129), (1000, 1500), (3000, 12000)])
def test_bit_parallel_lcs_across_word_boundaries(la, lb, rng):
    for alphabet in (2, 4, 50):
        a = [rng.randrange(alphabet) for _ in range(la)]
        b = [rng.randrange(alphabet) for _ in range(lb)]
        _, lcs = _stats(core, [a, b], [b, a], max_order=1)
        want = _numpy_lcs(a, b)
        assert lcs.tolist() == [want, want], (la, lb, alphabet)


def test_long_identical_and_disjoint_sequences():
    seq = list(range(20000))
    _, lcs = _stats(core, [seq, seq, seq[::-1]], [seq, [20001] * 5, seq], max_order=2)
    assert lcs.tolist() == [20000, 0, 1]


sentence = st.lists(st.integers(0, 6), min_size=0, max_size=80)
document = st.lists(sentence, min_size=0, max_size=8)


def _doc_batch(docs: list[list[list[int]]]):
    ids, sent_off, row_sents = [], [0], [0]
    for doc in docs:
        for s in doc:
            if s:  # token-less sentences are never recorded
                ids.extend(s)
                sent_off.append(len(ids))
        row_sents.append(len(sent_off) - 1)
    return np.array(ids, np.int32), np.array(sent_off, np.int64), np.array(row_sents, np.int64)


def _lsum(module, preds, refs):
    p = _doc_batch(preds)
    r = _doc_batch(refs)
    pair = np.arange(len(preds), dtype=np.int64)
    hits = np.zeros(len(preds), np.int64)
    module.lsum_pair_stats(*p, *r, pair, pair, 64, hits)
    return hits


@SETTINGS
@given(st.lists(st.tuples(document, document), min_size=1, max_size=6))
def test_lsum_hits_equal_reference(pairs):
    preds = [p for p, _ in pairs]
    refs = [r for _, r in pairs]
    assert _lsum(core, preds, refs).tolist() == _lsum(ref, preds, refs).tolist()


def test_lsum_long_sentences_cross_word_boundaries(rng):
    preds = [[[rng.randrange(5) for _ in range(rng.randrange(60, 200))] for _ in range(3)] for _ in range(4)]
    refs = [[[rng.randrange(5) for _ in range(rng.randrange(60, 200))] for _ in range(3)] for _ in range(4)]
    assert _lsum(core, preds, refs).tolist() == _lsum(ref, preds, refs).tolist()


text = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("aBc 123\n\n\u0130\u212aİK-_."), max_size=60)


@SETTINGS
@given(st.lists(text, max_size=8), st.booleans())
def test_tokenizer_equals_reference(texts, stem):
    nv, rv = core.Vocab(), ref.Vocab()
    got = [np.frombuffer(b, np.uint8) for b in core.tokenize_rouge(nv, texts, stem)]
    want = [np.frombuffer(b, np.uint8) for b in ref.tokenize_rouge(rv, texts, stem)]
    assert nv.tokens() == rv.tokens()
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_tokenizer_every_code_point():
    """Each code point between letters: only U+0130 and the Kelvin sign lower into [a-z0-9]."""
    texts = []
    for block in range(0, 0x110000, 0x400):
        texts.append(" ".join(f"a{chr(cp)}Z" for cp in range(block, block + 0x400) if not 0xD800 <= cp < 0xE000))
    nv, rv = core.Vocab(), ref.Vocab()
    got = core.tokenize_rouge(nv, texts, False)
    want = ref.tokenize_rouge(rv, texts, False)
    assert nv.tokens() == rv.tokens()
    assert got == want


def test_lone_surrogates_are_separators():
    texts = ["ab\ud800cd", "x\udfffy z"]
    nv, rv = core.Vocab(), ref.Vocab()
    assert core.tokenize_rouge(nv, texts, False) == ref.tokenize_rouge(rv, texts, False)
    assert nv.tokens() == ["ab", "cd", "x", "y", "z"]


@SETTINGS
@given(st.lists(st.tuples(text, st.lists(text, min_size=1, max_size=3)), min_size=1, max_size=6), st.booleans())
def test_public_rouge_native_equals_python(rows, stem):
    preds = [p for p, _ in rows]
    refs = [r for _, r in rows]
    types = ("rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum")
    a = rouge(preds, refs, types, stemmer=stem, implementation="native")
    b = rouge(preds, refs, types, stemmer=stem, implementation="python")
    for col in a.keys():
        assert np.array_equal(a[col], b[col]), col


@SETTINGS
@given(st.lists(st.tuples(token_seq, token_seq), min_size=1, max_size=8))
def test_twin_kernels_equal_the_oracle(pairs):
    """The twin's bit-parallel LCS and Counter overlaps == rouge-score's table and counts."""
    preds = [p for p, _ in pairs]
    refs = [r for _, r in pairs]
    overlaps, lcs = _stats(ref, preds, refs, max_order=3)
    for k, (p, r) in enumerate(pairs):
        assert overlaps[k].tolist() == [oracle.ngram_overlap(p, r, n) for n in (1, 2, 3)]
        assert lcs[k] == oracle.lcs_length(r, p)


@SETTINGS
@given(st.lists(st.tuples(document, document), min_size=1, max_size=4))
def test_twin_lsum_equals_the_oracle(pairs):
    preds = [p for p, _ in pairs]
    refs = [r for _, r in pairs]
    want = [oracle.summary_level_lcs_hits([s for s in r if s], [s for s in p if s]) for p, r in pairs]
    assert _lsum(ref, preds, refs).tolist() == want


@SETTINGS
@given(st.lists(st.tuples(text, text), min_size=1, max_size=6), st.booleans())
def test_public_rouge_equals_the_oracle(rows, stem):
    types = ("rouge1", "rouge2", "rougeL", "rougeLsum")
    got = rouge([p for p, _ in rows], [r for _, r in rows], types, stemmer=stem, implementation="python")
    for k, (p, r) in enumerate(rows):
        want = oracle.score(r, p, types, stem)
        for t in types:
            assert tuple(got[f"{t}_{x}"][k] for x in "prf") == want[t], (t, p, r)


# ----------------------------------------------------------------- fuzzing


def _valid_inputs():
    p_ids, p_off = _csr([[1, 2, 3], [4], []])
    r_ids, r_off = _csr([[1, 2], [4, 4, 5]])
    pair_p = np.array([0, 1, 2], np.int64)
    pair_r = np.array([0, 1, 1], np.int64)
    return dict(p_ids=p_ids, p_off=p_off, r_ids=r_ids, r_off=r_off, pair_p=pair_p, pair_r=pair_r)


def _call(module, d, max_order=2, vocab=8, out_rows=None):
    n = len(d["pair_p"]) if out_rows is None else out_rows
    overlaps = np.zeros((n, max_order), np.int64)
    lcs = np.zeros(n, np.int64)
    module.rouge_pair_stats(
        d["p_ids"], d["p_off"], d["r_ids"], d["r_off"], d["pair_p"], d["pair_r"], max_order, True, vocab, overlaps, lcs
    )
    return overlaps, lcs


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("p_ids", np.array([1, 2, 99, 4], np.int32), "not a token id"),
        ("p_ids", np.array([1, -2, 3, 4], np.int32), "not a token id"),
        ("p_off", np.array([0, 3, 2, 4], np.int64), "nondecreasing"),
        ("p_off", np.array([0, 3, 4, 9], np.int64), "nondecreasing"),
        ("p_off", np.array([-1, 3, 4, 4], np.int64), "nondecreasing"),
        ("p_off", np.array([], np.int64), "at least one value"),
        ("pair_p", np.array([0, 1, 3], np.int64), "out of range"),
        ("pair_r", np.array([0, 1, -1], np.int64), "out of range"),
        ("pair_r", np.array([0, 1], np.int64), "differ in length"),
    ],
)
def test_invalid_buffers_raise_value_error(impl, field, value, message):
    module = _backend.get(impl)
    d = _valid_inputs()
    d[field] = value
    with pytest.raises(ValueError, match=message):
        _call(module, d)


def test_wrong_output_shape_and_dtype_raise():
    d = _valid_inputs()
    with pytest.raises(ValueError):
        _call(core, d, out_rows=2)
    with pytest.raises((ValueError, TypeError)):
        core.rouge_pair_stats(
            d["p_ids"].astype(np.int64),
            d["p_off"],
            d["r_ids"],
            d["r_off"],
            d["pair_p"],
            d["pair_r"],
            2,
            True,
            8,
            np.zeros((3, 2), np.int64),
            np.zeros(3, np.int64),
        )


def _outcome(call, outputs):
    """What one implementation did with possibly invalid arrays: ``("ValueError", None)`` or
    ``("ok", the output arrays)``; any other exception (or a crash) fails the test."""
    try:
        call(*outputs)
    except ValueError:
        return "ValueError", None
    return "ok", [o.tolist() for o in outputs]


def assert_same_outcome(call, make_outputs):
    """Both implementations reject the input (``ValueError``) or both fill the same outputs."""
    got, want = (_outcome(lambda *o, m=m: call(m, *o), make_outputs()) for m in (core, ref))
    assert got == want


arrays32 = st.lists(st.integers(-3, 12), max_size=12).map(lambda v: np.array(v, np.int32))
arrays64 = st.lists(st.integers(-3, 12), max_size=6).map(lambda v: np.array(v, np.int64))


@settings(max_examples=400, deadline=None, derandomize=True)
@given(arrays32, arrays64, arrays32, arrays64, arrays64, arrays64, st.integers(-1, 70), st.integers(-1, 14))
def test_fuzz_rouge_pair_stats_never_crashes(p_ids, p_off, r_ids, r_off, pair_p, pair_r, max_order, vocab):
    n, order = len(pair_p), max(max_order, 0)
    assert_same_outcome(
        lambda m, counts, lengths: m.rouge_pair_stats(
            p_ids, p_off, r_ids, r_off, pair_p, pair_r, order, True, vocab, counts, lengths
        ),
        lambda: (np.zeros((n, order), np.int64), np.zeros(n, np.int64)),
    )


@settings(max_examples=400, deadline=None, derandomize=True)
@given(arrays32, arrays64, arrays64, arrays32, arrays64, arrays64, arrays64, arrays64, st.integers(-1, 14))
def test_fuzz_lsum_pair_stats_never_crashes(p_ids, p_sent, p_rows, r_ids, r_sent, r_rows, pair_p, pair_r, vocab):
    assert_same_outcome(
        lambda m, out: m.lsum_pair_stats(p_ids, p_sent, p_rows, r_ids, r_sent, r_rows, pair_p, pair_r, vocab, out),
        lambda: (np.zeros(len(pair_p), np.int64),),
    )


# ----------------------------------------------------------------- BLEU kernel

ref_lists = st.lists(st.lists(st.integers(0, 4), max_size=25), min_size=1, max_size=4)


@SETTINGS
@given(
    st.lists(st.tuples(st.lists(st.integers(0, 4), max_size=25), ref_lists), min_size=1, max_size=8), st.integers(1, 6)
)
def test_bleu_clipped_counts_equal_reference(rows, max_order):
    hyps = [h for h, _ in rows]
    refs = [r for _, rs in rows for r in rs]
    h_ids, h_off = _csr(hyps)
    r_ids, r_off = _csr(refs)
    row_refs = np.zeros(len(rows) + 1, np.int64)
    row_refs[1:] = np.cumsum([len(rs) for _, rs in rows])
    got = np.zeros((len(rows), max_order), np.int64)
    want = np.zeros((len(rows), max_order), np.int64)
    core.bleu_clipped_counts(h_ids, h_off, r_ids, r_off, row_refs, max_order, 5, got)
    ref.bleu_clipped_counts(h_ids, h_off, r_ids, r_off, row_refs, max_order, 5, want)
    assert np.array_equal(got, want)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(arrays32, arrays64, arrays32, arrays64, arrays64, st.integers(-1, 8), st.integers(-1, 14))
def test_fuzz_bleu_clipped_counts_never_crashes(h_ids, h_off, r_ids, r_off, row_refs, max_order, vocab):
    n = max(len(h_off) - 1, 0)
    assert_same_outcome(
        lambda m, out: m.bleu_clipped_counts(h_ids, h_off, r_ids, r_off, row_refs, max_order, vocab, out),
        lambda: (np.zeros((n, max(max_order, 1)), np.int64),),
    )
