"""Reference BLEU and sacreBLEU tokenizers against sacreBLEU 2.6.0.

Oracles: the live ``sacrebleu`` package (skipped if missing), the WMT17 en-de data and its
``expected_scores_verified.json`` in ``../shared/data`` (skipped if missing), and the
fixtures written by ``benchmarks/make_fixtures_mt.py``.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers.paths import SHARED_DATA
from _helpers.reference import bleu as B
from respeval.metrics import sacrebleu_scores
from respeval.tokenizers import sacrebleu_tokenizers as T

# The oracle's score arithmetic and the product's, each checked against sacreBLEU and the
# semantics below (the oracle has its own: it shares nothing with the product).
COMPUTE_BLEU = pytest.mark.parametrize(
    "compute_bleu", [B.compute_bleu, sacrebleu_scores.compute_bleu], ids=["oracle", "respeval"]
)
MY_LOG = pytest.mark.parametrize("my_log", [B.my_log, sacrebleu_scores.my_log], ids=["oracle", "respeval"])

DATA = SHARED_DATA
WMT = DATA / "wmt17_en_de"
FAST_SYSTEMS = ["C-3MA.4959", "uedin-nmt.4722"]


# --- helpers and fixtures -------------------------------------------------------------------


@pytest.fixture(scope="module")
def sacrebleu_metrics():
    return pytest.importorskip("sacrebleu.metrics")


_PREPARED: dict = {}


def _prepared(reference, **options):
    """Reference statistics shared by all systems (cached per option set)."""
    key = tuple(sorted(options.items()))
    if key not in _PREPARED:
        _PREPARED[key] = B.prepare_references([reference], **options)
    return _PREPARED[key]


# --- tokenizers -----------------------------------------------------------------------------

TOKENIZER_CASES = [
    ("13a", "Hello, World! It's 3.14", "Hello , World ! It's 3.14"),
    ("13a", "don't e-mail 1990-2000.", "don't e-mail 1990 - 2000 ."),
    ("13a", "a &amp; b &lt;c&gt; &quot;d&quot;", 'a & b < c > " d "'),
    ("13a", "x<skipped>y hy-\nphen\nline", "xy hyphen line"),
    ("13a", "„Anführung“ – so…", "„Anführung“ – so…"),
    ("13a", "北京欢迎你", "北京欢迎你"),
    ("13a", "1,000.50 and 5.", "1,000.50 and 5 ."),
    ("intl", "don't e-mail 1990-2000.", "don ' t e - mail 1990-2000."),
    ("intl", "in 1990. Then, in 1990.", "in 1990 . Then , in 1990."),
    ("intl", "„Anführung“ – 5€", "„ Anführung “ – 5 €"),
    ("intl", "3.14 $5", "3.14 $ 5"),
    ("zh", "北京欢迎你", "北 京 欢 迎 你"),
    ("zh", "“hi”—ok…", "“ hi ” — ok …"),  # U+2001..U+2A6D are "CJK" by the literal bug
    ("zh", "\U00020000\U00020001", "\U00020000\U00020001"),  # real Ext. B is not split
    ("zh", "  end 5.", "end 5."),  # stripped and not padded: a final "5." stays
    ("13a", "  end 5.", "end 5 ."),
    ("char", "a b", "a   b"),
    ("char", "ab", "a b"),
    ("none", " a  b ", " a  b "),
]


@pytest.mark.parametrize("name,text,expected", TOKENIZER_CASES)
def test_tokenizer_examples(name, text, expected):
    assert T.get_tokenizer(name)(text) == expected


def test_get_tokenizer_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown tokenizer"):
        T.get_tokenizer("ja-mecab")


def _sacrebleu_tokenizers():
    pytest.importorskip("sacrebleu")
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    from sacrebleu.tokenizers.tokenizer_char import TokenizerChar
    from sacrebleu.tokenizers.tokenizer_intl import TokenizerV14International
    from sacrebleu.tokenizers.tokenizer_none import NoneTokenizer
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    return {
        "13a": Tokenizer13a(),
        "intl": TokenizerV14International(),
        "zh": TokenizerZh(),
        "char": TokenizerChar(),
        "none": NoneTokenizer(),
    }


def test_tokenizers_match_sacrebleu_on_wmt(wmt):
    oracle = _sacrebleu_tokenizers()
    reference, systems = wmt
    lines = reference[:1500] + systems["PROMT-Rule-based.4735"][:1500]
    for name, theirs in oracle.items():
        ours = T.get_tokenizer(name)
        mismatches = [line for line in lines if ours(line) != theirs(line)]
        assert not mismatches, (name, mismatches[:3])


_TRICKY = "abcAB01 9.,;:-'\"&<>()[]{}/\\$€%‘’“”„–—…·、。，「」！？北京欢迎你한국어ｶﾀ\u00a0\u2009\t\n"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(_TRICKY)) | st.characters(), max_size=40))
def test_tokenizers_match_sacrebleu_on_random_text(text):
    for name, theirs in _sacrebleu_tokenizers().items():
        assert T.get_tokenizer(name)(text) == theirs(text), name


def test_zh_ranges_match_sacrebleu_for_every_code_point():
    from_zh = pytest.importorskip("sacrebleu.tokenizers.tokenizer_zh")
    check = from_zh.TokenizerZh._is_chinese_char
    # every range ends below U+30000; above it, a sample is enough
    codes = [c for c in range(0x30000) if not 0xD800 <= c < 0xE000] + list(range(0x30000, 0x110000, 97))
    wrong = [hex(code) for code in codes if check(chr(code)) != T.is_zh_char(chr(code))]
    assert not wrong


# --- corpus BLEU on WMT17 ---------------------------------------------------------------------


def _assert_bleu_equals_fixture(result, expected):
    assert result.score == expected["score"]
    assert result.counts == expected["counts"]
    assert result.totals == expected["totals"]
    assert (result.sys_len, result.ref_len) == (expected["sys_len"], expected["ref_len"])


def test_corpus_bleu_13a_all_systems(wmt, verified, corpus_fixture):
    reference, systems = wmt
    prepared = _prepared(reference)
    assert len(systems) == 16
    for name, hyps in systems.items():
        result = B.corpus_bleu(hyps, prepared)
        assert result.score == verified[name]["sacrebleu_bleu"], name
        # mteval-v13a.pl, to the 2 decimals it prints
        assert round(result.score, 2) == pytest.approx(verified[name]["mteval_v13a_expected_2dp"]), name
        _assert_bleu_equals_fixture(result, corpus_fixture[name]["bleu"]["13a"])


_VARIANTS = {
    "intl": {"tokenize": "intl"},
    "char": {"tokenize": "char"},
    "13a-lc": {"lowercase": True},
    "zh": {"tokenize": "zh"},
    "none": {"tokenize": "none"},
}


def _check_variant(wmt, corpus_fixture, variant, names):
    reference, systems = wmt
    prepared = _prepared(reference, **_VARIANTS[variant])
    for name in names:
        result = B.corpus_bleu(systems[name], prepared)
        _assert_bleu_equals_fixture(result, corpus_fixture[name]["bleu"][variant])


@pytest.mark.parametrize("variant", list(_VARIANTS))
def test_corpus_bleu_variants_some_systems(wmt, corpus_fixture, variant):
    _check_variant(wmt, corpus_fixture, variant, FAST_SYSTEMS)


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(_VARIANTS))
def test_corpus_bleu_variants_all_systems(wmt, corpus_fixture, variant):
    _check_variant(wmt, corpus_fixture, variant, list(wmt[1]))


def test_corpus_bleu_live_against_sacrebleu(wmt, sacrebleu_metrics):
    reference, systems = wmt
    hyps, refs = systems["online-F.0"][:1000], [reference[:1000]]
    for options in ({}, {"tokenize": "intl", "lowercase": True}):
        theirs = sacrebleu_metrics.BLEU(**options).corpus_score(hyps, refs)
        ours = B.corpus_bleu(hyps, refs, **options)
        assert (ours.score, ours.counts, ours.totals) == (theirs.score, theirs.counts, theirs.totals)
        assert ours.format() == str(theirs)


# --- sentence level ---------------------------------------------------------------------------

SMOOTHING_GRID = [
    (method, value, effective)
    for method, value in (("exp", None), ("floor", None), ("floor", 0.5), ("add-k", None), ("add-k", 2), ("none", None))
    for effective in (True, False)
]


@COMPUTE_BLEU
@pytest.mark.parametrize("system", ["online-G.0", "PROMT-Rule-based.4735"])
def test_sentence_stats_and_scores_every_line(wmt, sacrebleu_metrics, system, compute_bleu):
    reference, systems = wmt
    hyps = systems[system]
    oracle = sacrebleu_metrics.BLEU()
    # sacreBLEU's per-segment statistics (what sentence_score and corpus_score use)
    theirs = oracle._extract_corpus_statistics(hyps, [reference])
    ours = B.corpus_stats(hyps, _prepared(reference))
    assert ours == theirs
    for method, value, effective in SMOOTHING_GRID:
        for row in ours:
            expected = sacrebleu_metrics.BLEU.compute_bleu(
                list(row[2:6]),
                list(row[6:10]),
                row[0],
                row[1],
                smooth_method=method,
                smooth_value=value,
                effective_order=effective,
            )
            got = compute_bleu(row, method, value, effective)
            assert (got.score, got.precisions, got.counts, got.totals, got.bp) == (
                expected.score,
                expected.precisions,
                expected.counts,
                expected.totals,
                expected.bp,
            ), (row, method, value, effective)


def test_sentence_bleu_public_api_every_line(wmt):
    sacrebleu = pytest.importorskip("sacrebleu")
    reference, systems = wmt
    for hyp, ref in zip(systems["xmu.4910"][:1000], reference):
        assert B.sentence_bleu(hyp, [ref]).score == sacrebleu.sentence_bleu(hyp, [ref]).score


# --- multiple and missing references ----------------------------------------------------------


def test_multiple_references_with_gaps(wmt, sacrebleu_metrics):
    reference, systems = wmt
    n = 400
    hyps = systems["online-B.0"][:n]
    ref2 = [None if i % 3 == 0 else line for i, line in enumerate(systems["uedin-nmt.4722"][:n])]
    ref3 = [None if i % 5 == 1 else line for i, line in enumerate(systems["KIT.4950"][:n])]
    streams = [reference[:n], ref2, ref3]
    oracle = sacrebleu_metrics.BLEU()
    assert B.corpus_stats(hyps, streams) == oracle._extract_corpus_statistics(hyps, streams)
    theirs = oracle.corpus_score(hyps, streams)
    ours = B.corpus_bleu(hyps, streams)
    assert (ours.score, ours.counts, ours.totals, ours.ref_len) == (
        theirs.score,
        theirs.counts,
        theirs.totals,
        theirs.ref_len,
    )
    # None can also sit in the first stream
    streams = [ref2, reference[:n]]
    assert B.corpus_bleu(hyps, streams).score == oracle.corpus_score(hyps, streams).score


def test_all_references_missing_is_an_error():
    with pytest.raises(ValueError):
        B.corpus_bleu(["a b"], [[None]])


def test_zip_truncates_like_sacrebleu():
    # 2 hypotheses, 1 reference stream of length 1: only the first is scored
    result = B.corpus_bleu(["a b c d", "x y z w"], [["a b c d"]])
    assert result.score == pytest.approx(100.0)
    assert result.sys_len == 4


def test_closest_reference_length_ties_to_shorter():
    assert B.closest_ref_length(3, [4, 2]) == 2
    assert B.closest_ref_length(3, [2, 4]) == 2
    assert B.segment_stats(["a", "b", "c"], [["a", "b"], ["a", "b", "c", "d"]])[1] == 2
    assert B.segment_stats(["a"], [["a", "b", "c"], ["a", "b"], None])[1] == 2


# --- compute_bleu semantics -------------------------------------------------------------------


@COMPUTE_BLEU
def test_add_k_mutation_is_visible_in_counts_and_totals(compute_bleu):
    row = [3, 3, 1, 0, 0, 0, 3, 2, 1, 0]
    before = list(row)
    result = compute_bleu(row, "add-k")
    assert result.counts == [1, 1, 1, 1]
    assert result.totals == [3, 3, 2, 1]
    assert row == before  # the caller's statistics are not modified


@COMPUTE_BLEU
def test_no_match_returns_zero_without_smoothing_mutation(compute_bleu):
    result = compute_bleu([2, 2, 0, 0, 0, 0, 2, 1, 0, 0], "add-k")
    assert result.score == 0.0
    assert result.counts == [0, 0, 0, 0] and result.totals == [2, 1, 0, 0]


@COMPUTE_BLEU
def test_effective_order_counts_orders_with_hypothesis_ngrams(compute_bleu):
    # two tokens, unigram match only: eff = 2 (bigram exists), not 1 (orders with a match)
    row = B.segment_stats(["a", "x"], [["a", "b"]])
    result = compute_bleu(row, "exp", effective_order=True)
    p1, p2 = 50.0, 100.0 / (2 * 1)
    assert result.score == pytest.approx(math.exp((math.log(p1) + math.log(p2)) / 2))


@MY_LOG
def test_my_log_floor(my_log):
    assert my_log(0.0) == -9999999999
    assert my_log(math.e) == 1.0


@COMPUTE_BLEU
def test_unknown_smoothing_method(compute_bleu):
    with pytest.raises(ValueError):
        compute_bleu([1, 1, 1, 0, 0, 0, 1, 0, 0, 0], "bogus")


# Edge-case table of semantics.md (BLEU with effective order, exp smoothing).
EDGE_CASES = [
    ("", "", {}, 0.0),
    ("a", "", {}, 0.0),
    ("", "a", {}, 0.0),
    ("a", "a", {}, 100.00000000000004),
    ("a", "a", {"effective_order": False}, 0.0),
    ("a b c d", "a b c d", {}, 100.0),
    ("a b c d", "a b c d", {"effective_order": False}, 100.0),
    ("Hello", "hello", {}, 0.0),
    ("北京欢迎你", "北京欢迎你", {}, 100.00000000000004),
    ("北京欢迎你", "北京欢迎您", {}, 0.0),
]


@pytest.mark.parametrize("hyp,ref,options,expected", EDGE_CASES)
def test_edge_cases(hyp, ref, options, expected):
    assert B.sentence_bleu(hyp, [ref], **options).score == pytest.approx(expected, abs=1e-12)


def test_edge_case_repeated_tokens():
    def score(method):
        return B.sentence_bleu("the the the the", ["the"], smooth_method=method).score

    assert score("exp") == pytest.approx(15.9736, abs=5e-5)
    assert score("floor") == pytest.approx(8.0343, abs=5e-5)
    assert score("add-k") == pytest.approx(31.9472, abs=5e-5)


def test_edge_case_zh_tokenizer_partial_credit():
    result = B.sentence_bleu("北京欢迎你", ["北京欢迎您"], tokenize="zh")
    assert result.score == pytest.approx(66.87, abs=5e-3)
    assert result.counts == [4, 3, 2, 1] and result.totals == [5, 4, 3, 2]


def test_edge_cases_match_sacrebleu(sacrebleu_metrics):
    for hyp, ref, options, _ in EDGE_CASES:
        options = {"effective_order": True, **options}
        theirs = sacrebleu_metrics.BLEU(**options).sentence_score(hyp, [ref]).score
        assert B.sentence_bleu(hyp, [ref], **options).score == theirs


# --- random differential test -----------------------------------------------------------------

_words = st.lists(st.sampled_from(["a", "b", "c", "d", "."]), max_size=9).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(
    hyp=_words,
    refs=st.lists(_words, min_size=1, max_size=3),
    method=st.sampled_from(["exp", "floor", "add-k", "none"]),
    effective=st.booleans(),
    max_order=st.integers(1, 5),
)
def test_random_sentences_match_sacrebleu(hyp, refs, method, effective, max_order):
    metrics = pytest.importorskip("sacrebleu.metrics")
    options = dict(smooth_method=method, effective_order=effective, max_ngram_order=max_order)
    theirs = metrics.BLEU(**options).sentence_score(hyp, refs)
    ours = B.sentence_bleu(hyp, refs, smooth_method=method, effective_order=effective, max_order=max_order)
    assert (ours.score, ours.counts, ours.totals, ours.sys_len, ours.ref_len) == (
        theirs.score,
        theirs.counts,
        theirs.totals,
        theirs.sys_len,
        theirs.ref_len,
    )
