"""respeval.compat.sacrebleu's BLEU equals sacreBLEU 2.6.0's: compute_bleu, float32 resample
sums, raw_corpus_bleu, scores, strings and signatures (sacreBLEU installed, run live)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import respeval.compat.sacrebleu as compat
from _helpers.corpora import load_wmt17
from _helpers.paths import shared_data
from respeval.compat.sacrebleu.metrics import BLEU
from respeval.compat.sacrebleu.metrics.bleu import bleu_from_sums

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU as TheirBLEU  # noqa: E402

SMOOTHING = [
    ("exp", None),
    ("none", None),
    ("floor", None),
    ("floor", 0.5),
    ("floor", 0.0),
    ("add-k", None),
    ("add-k", 2),
]


@st.composite
def bleu_rows(draw, max_order=4, big=60):
    """One row of (summed) BLEU statistics: correct_n <= total_n, totals shrinking with n."""
    sys_len = draw(st.integers(0, big))
    ref_len = draw(st.integers(0, big))
    totals = [max(sys_len - n, 0) for n in range(max_order)]
    if draw(st.booleans()):  # also inconsistent totals, as compute_bleu accepts any numbers
        totals = [draw(st.integers(0, big)) for _ in range(max_order)]
    correct = [draw(st.integers(0, t)) for t in totals]
    return [sys_len, ref_len, *correct, *totals]


def _theirs(row, order, smooth, value, eff):
    return TheirBLEU.compute_bleu(
        list(row[2 : 2 + order]), list(row[2 + order :]), row[0], row[1], smooth, value, eff, order
    )


@settings(max_examples=300, deadline=None)
@given(row=bleu_rows(), smoothing=st.sampled_from(SMOOTHING), eff=st.booleans())
def test_compute_bleu_equals_sacrebleu(row, smoothing, eff):
    smooth, value = smoothing
    theirs = _theirs(row, 4, smooth, value, eff)
    ours = BLEU.compute_bleu(row[2:6], row[6:10], row[0], row[1], smooth, value, eff, 4)
    assert ours.score == theirs.score
    assert ours.precisions == theirs.precisions
    assert (ours.bp, ours.sys_len, ours.ref_len) == (theirs.bp, theirs.sys_len, theirs.ref_len)
    assert ours.counts == theirs.counts and ours.totals == theirs.totals  # add-k shows in both
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("order", [1, 2, 3, 5, 6])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_compute_bleu_other_orders(order, data):
    row = data.draw(bleu_rows(max_order=order))
    smooth, value = data.draw(st.sampled_from(SMOOTHING))
    eff = data.draw(st.booleans())
    theirs = _theirs(row, order, smooth, value, eff)
    ours = BLEU.compute_bleu(row[2 : 2 + order], row[2 + order :], row[0], row[1], smooth, value, eff, order)
    assert (ours.score, ours.precisions) == (theirs.score, theirs.precisions)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(bleu_rows(big=5000), min_size=1, max_size=8),
    smoothing=st.sampled_from(SMOOTHING),
    eff=st.booleans(),
    dtype=st.sampled_from(["float32", "int64", "float64"]),
)
def test_score_sums_equal_sacrebleu_on_numpy_sums(rows, smoothing, eff, dtype):
    """Resample sums arrive as float32 (bootstrap) or int64 (approximate randomization) arrays."""
    smooth, value = smoothing
    sums = np.array(rows, dtype=dtype)
    theirs = TheirBLEU(smooth_method=smooth, smooth_value=value, effective_order=eff)
    # copies: sacreBLEU adds add-k smoothing into the row it is given
    want = np.array([theirs._compute_score_from_stats(row.copy()).score for row in sums])
    got = BLEU(smooth_method=smooth, smooth_value=value, effective_order=eff).score_sums(sums)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


def test_precisions_follow_numpys_promotion_of_float32():
    # NumPy 2 keeps `100. * float32` in float32, so sacreBLEU's bootstrap precisions are float32
    sums = np.array([[30, 31, 17, 9, 4, 2, 30, 29, 28, 27]], dtype=np.float32)
    parts = bleu_from_sums(sums)
    assert parts["precisions"].dtype == np.asarray(100.0 * np.float32(1)).dtype
    assert parts["precisions"][0].tolist() == TheirBLEU()._compute_score_from_stats(sums[0]).precisions


def test_compute_bleu_validates_its_inputs():
    with pytest.raises(ValueError, match="smooth_method"):
        BLEU.compute_bleu([1], [1], 1, 1, smooth_method="bogus", max_ngram_order=1)
    with pytest.raises(ValueError, match="columns"):
        bleu_from_sums(np.zeros((1, 5)), max_ngram_order=4)
    with pytest.raises(ValueError, match="'ja-mecab' is not provided"):
        BLEU(tokenize="ja-mecab")
    with pytest.raises(ValueError, match="sacreBLEU's default for trg_lang='ko'"):
        BLEU(trg_lang="ko")
    assert BLEU(trg_lang="zh").tokenize == "zh" and BLEU(trg_lang="de").tokenize == "13a"


# --- the function API on real text ------------------------------------------------------------


@pytest.fixture(scope="module")
def wmt():
    return load_wmt17(shared_data())


def test_raw_corpus_bleu_and_corpus_bleu_on_wmt17(wmt):
    reference, systems = wmt
    refs = [reference[:300]]
    for name in sorted(systems)[:2]:
        hyps = systems[name][:300]
        for value in (0.01, 0.0, None):
            ours = compat.raw_corpus_bleu(hyps, refs, value)
            theirs = sacrebleu.raw_corpus_bleu(hyps, refs, value)
            assert (str(ours), ours.score) == (str(theirs), theirs.score)
        for tok in ("13a", "intl", "char", "none", "zh"):
            ours = compat.corpus_bleu(hyps, refs, tokenize=tok, lowercase=tok == "13a")
            theirs = sacrebleu.corpus_bleu(hyps, refs, tokenize=tok, lowercase=tok == "13a")
            assert (str(ours), ours.score, ours.counts) == (str(theirs), theirs.score, theirs.counts), tok


def test_metric_objects_with_cached_references(wmt):
    reference, systems = wmt
    ours, theirs = BLEU(references=[reference], max_ngram_order=3), TheirBLEU(references=[reference], max_ngram_order=3)
    for name in sorted(systems)[-2:]:
        a, b = ours.corpus_score(systems[name], None), theirs.corpus_score(systems[name], None)
        assert (a.score, str(a)) == (b.score, str(b))
    strip = lambda s: str(s).rsplit("|version:", 1)[0]  # noqa: E731
    assert strip(ours.get_signature()) == strip(theirs.get_signature())
    assert (
        ours.get_signature().format(short=True).rsplit("|v:", 1)[0]
        == theirs.get_signature().format(short=True).rsplit("|v:", 1)[0]
    )
    with pytest.raises(RuntimeError, match="cache is empty"):
        BLEU().corpus_score(systems[name], None)
    with pytest.raises(ValueError, match="Number of references unknown"):
        BLEU().get_signature()


def test_sentence_bleu_and_the_compat_module(wmt):
    reference, systems = wmt
    hyps = systems[sorted(systems)[5]]
    for i in range(0, 3004, 150):
        for smooth in ("exp", "floor", "add-k", "none"):
            ours = compat.compat.sentence_bleu(hyps[i], [reference[i]], smooth_method=smooth)
            theirs = sacrebleu.compat.sentence_bleu(hyps[i], [reference[i]], smooth_method=smooth)
            assert (ours.score, str(ours)) == (theirs.score, str(theirs))
    with pytest.raises(TypeError):
        compat.sentence_bleu(hyps[0], reference[0])


def test_score_format_json_matches_sacrebleu(wmt):
    reference, systems = wmt
    hyps = systems[sorted(systems)[0]][:300]
    ours = compat.BLEU().corpus_score(hyps, [reference[:300]])
    theirs = sacrebleu.BLEU().corpus_score(hyps, [reference[:300]])
    for kwargs in ({}, {"width": 4}, {"score_only": True}, {"signature": "nrefs:1|case:mixed", "is_json": True}):
        assert ours.format(**kwargs) == theirs.format(**kwargs)
