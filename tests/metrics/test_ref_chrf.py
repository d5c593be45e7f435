"""Reference chrF / chrF++ against sacreBLEU 2.6.0 and the published chrF++.py values."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers.paths import SHARED_DATA
from _helpers.reference import chrf as C
from respeval.metrics import sacrebleu_scores

# The oracle's score arithmetic and the product's, each checked against sacreBLEU and the
# published values (the oracle has its own: it shares nothing with the product).
CHRF_SCORE = pytest.mark.parametrize(
    "chrf_score", [C.chrf_score, sacrebleu_scores.chrf_score], ids=["oracle", "respeval"]
)

DATA = SHARED_DATA
WMT = DATA / "wmt17_en_de"
# The two systems with published chrF++.py values, and the two of the sentence-level tests.
FAST_SYSTEMS = ["C-3MA.4959", "FBK.4870", "online-G.0", "PROMT-Rule-based.4735"]
N_CHAR_STATS = 3 * 6  # the chrF (word_order=0) part of a chrF++ row


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sacrebleu_metrics():
    return pytest.importorskip("sacrebleu.metrics")


class _LazyStats(dict):
    """system name -> chrF++ statistics rows, computed on first access."""

    def __init__(self, reference, systems):
        super().__init__()
        self.systems = systems
        self.prepared = C.prepare_references([reference], word_order=2)

    def __missing__(self, name):
        self[name] = C.corpus_stats(self.systems[name], self.prepared)
        return self[name]


@pytest.fixture(scope="module")
def chrfpp_stats(wmt):
    """chrF++ statistics rows per system (their first 18 columns are chrF's)."""
    return _LazyStats(*wmt)


def _column_sums(rows):
    return [sum(column) for column in zip(*rows)]


# --- corpus scores on WMT17 -------------------------------------------------------------------


def _check_all_modes(chrfpp_stats, verified, corpus_fixture, names, chrf_score):
    for name in names:
        totals = _column_sums(chrfpp_stats[name])
        char_totals = totals[:N_CHAR_STATS]
        expected = verified[name]
        sacre = corpus_fixture[name]["chrf"]
        assert chrf_score(char_totals) == expected["chrF_default"] == sacre["chrF"], name
        assert chrf_score(char_totals, eps_smoothing=True) == expected["chrF_eps"] == sacre["chrF-eps"]
        assert chrf_score(totals, word_order=2, eps_smoothing=True) == expected["chrF++_eps"]
        assert chrf_score(totals, word_order=2, eps_smoothing=True) == sacre["chrF++-eps"]
        assert chrf_score(totals, word_order=2) == sacre["chrF++"]


@CHRF_SCORE
def test_all_modes_some_systems(chrfpp_stats, verified, corpus_fixture, chrf_score):
    _check_all_modes(chrfpp_stats, verified, corpus_fixture, FAST_SYSTEMS, chrf_score)


@pytest.mark.slow
@CHRF_SCORE
def test_all_modes_all_systems(wmt, chrfpp_stats, verified, corpus_fixture, chrf_score):
    assert len(wmt[1]) == 16
    _check_all_modes(chrfpp_stats, verified, corpus_fixture, list(wmt[1]), chrf_score)


@pytest.mark.parametrize(
    "name,chrf,chrfpp",
    [("C-3MA.4959", 51.9533, 49.1683), ("FBK.4870", 54.7152, 52.2330)],
)
@CHRF_SCORE
def test_official_chrfpp_script_values(chrfpp_stats, name, chrf, chrfpp, chrf_score):
    """chrF++.py's test.sh values are reproduced by the eps-smoothing mode (4 decimals)."""
    totals = _column_sums(chrfpp_stats[name])
    assert round(chrf_score(totals[:N_CHAR_STATS], eps_smoothing=True), 4) == chrf
    assert round(chrf_score(totals, word_order=2, eps_smoothing=True), 4) == chrfpp


@CHRF_SCORE
def test_default_mode_chrfpp_differs_from_script(chrfpp_stats, chrf_score):
    totals = _column_sums(chrfpp_stats["C-3MA.4959"])
    assert round(chrf_score(totals, word_order=2), 4) == 49.1698


def test_prepared_references_equal_plain_streams(wmt, chrfpp_stats):
    reference, systems = wmt
    plain = C.corpus_stats(systems["FBK.4870"][:500], [reference[:500]], word_order=2)
    assert plain == chrfpp_stats["FBK.4870"][:500]


_VARIANTS = {
    "chrF-ws": {"whitespace": True},
    "chrF-lc": {"lowercase": True},
    "chrF1-c4": {"beta": 1, "char_order": 4},
}


def _check_variants(wmt, corpus_fixture, names, variants=tuple(_VARIANTS)):
    reference, systems = wmt
    for key in variants:
        options = _VARIANTS[key]
        extraction = {k: v for k, v in options.items() if k != "beta"}
        prepared = C.prepare_references([reference], **extraction)
        for name in names:
            got = C.corpus_chrf(systems[name], prepared, beta=options.get("beta", 2))
            assert got == corpus_fixture[name]["chrf"][key], (key, name)


def test_variants_some_systems(wmt, corpus_fixture):
    _check_variants(wmt, corpus_fixture, ["C-3MA.4959"], ("chrF-ws", "chrF-lc"))


@pytest.mark.slow
def test_variants_all_systems(wmt, corpus_fixture):
    _check_variants(wmt, corpus_fixture, list(wmt[1]))


def test_corpus_live_against_sacrebleu(wmt, sacrebleu_metrics):
    reference, systems = wmt
    hyps = systems["online-A.0"][:500]
    refs = [reference[:500]]
    for options in (
        {"word_order": 2, "lowercase": True},
        {"whitespace": True, "eps_smoothing": True, "beta": 3},
    ):
        theirs = sacrebleu_metrics.CHRF(**options).corpus_score(hyps, refs).score
        assert C.corpus_chrf(hyps, refs, **options) == theirs


# --- sentence level -------------------------------------------------------------------------------


@CHRF_SCORE
@pytest.mark.parametrize("system", ["online-G.0", "PROMT-Rule-based.4735"])
def test_sentence_stats_and_scores_every_line(wmt, chrfpp_stats, sacrebleu_metrics, system, chrf_score):
    reference, systems = wmt
    hyps = systems[system]
    theirs = sacrebleu_metrics.CHRF(word_order=2)._extract_corpus_statistics(hyps, [reference])
    ours = chrfpp_stats[system]
    assert ours == theirs
    scorers = {
        (word_order, eps): sacrebleu_metrics.CHRF(word_order=word_order, eps_smoothing=eps)
        for word_order in (0, 2)
        for eps in (False, True)
    }
    for row in ours:
        for (word_order, eps), scorer in scorers.items():
            part = row if word_order else row[:N_CHAR_STATS]
            expected = scorer._compute_score_from_stats(part).score
            assert chrf_score(part, word_order=word_order, eps_smoothing=eps) == expected


def test_sentence_chrf_public_api_every_line(wmt):
    sacrebleu = pytest.importorskip("sacrebleu")
    reference, systems = wmt
    for hyp, ref in zip(systems["xmu.4910"][:1000], reference):
        assert C.sentence_chrf(hyp, [ref]) == sacrebleu.sentence_chrf(hyp, [ref]).score


# --- multiple references: best-reference rule -------------------------------------------------


@pytest.mark.parametrize("eps", [False, True])
def test_best_reference_selection(wmt, sacrebleu_metrics, eps):
    reference, systems = wmt
    n = 150
    hyps = systems["online-B.0"][:n]
    ref2 = [None if i % 4 == 0 else line for i, line in enumerate(systems["uedin-nmt.4722"][:n])]
    streams = [ref2, reference[:n], systems["online-B.0"][:n][::-1]]
    oracle = sacrebleu_metrics.CHRF(word_order=2, eps_smoothing=eps)
    ours = C.corpus_stats(hyps, streams, word_order=2, eps_smoothing=eps)
    assert ours == oracle._extract_corpus_statistics(hyps, streams)
    expected = oracle.corpus_score(hyps, streams).score
    assert C.corpus_chrf(hyps, streams, word_order=2, eps_smoothing=eps) == expected


def test_first_reference_wins_ties():
    # both references score 0 but give different statistics: the first one is kept
    assert C.segment_stats("a", ["x", "yz"], char_order=2) == [1, 1, 0, 0, 0, 0]
    assert C.segment_stats("a", ["yz", "x"], char_order=2) == [1, 2, 0, 0, 1, 0]
    # a strictly better later reference replaces an earlier one
    assert C.segment_stats("ab", ["zz", "ab"], char_order=2) == C.segment_stats("ab", ["ab"], char_order=2)


def test_all_references_missing_is_an_error():
    with pytest.raises(ValueError):
        C.segment_stats("a", [None])


# --- details ----------------------------------------------------------------------------------------


def test_whitespace_is_deleted_before_character_ngrams():
    assert C.char_ngrams("a b\tc", 2)[1] == {"ab": 1, "bc": 1}
    assert C.char_ngrams("a b", 2, whitespace=True)[1] == {"a ": 1, " b": 1}


def test_punctuation_split_is_single_and_ascii_only():
    assert C.split_punctuation("(hi) „x“ ,a a, .") == ["(hi", ")", "„x“", ",", "a", "a", ",", "."]


def test_hyp_count_zero_when_reference_lacks_the_order():
    # reference "ab" has no 3-grams: the hypothesis trigram count is reported as 0
    row = C.segment_stats("abc", ["ab"], char_order=3)
    assert row == [3, 2, 2, 2, 1, 1, 0, 0, 0]


EDGE_CASES = [
    ("", "", False, 0.0),
    ("a", "", False, 0.0),
    ("", "a", False, 0.0),
    ("a", "a", False, 100.0),
    ("a", "a", True, 100 / 6),
    ("the the the the", "the", False, 51.86),
]


@pytest.mark.parametrize("hyp,ref,eps,expected", EDGE_CASES)
def test_edge_cases(hyp, ref, eps, expected):
    assert C.sentence_chrf(hyp, [ref], eps_smoothing=eps) == pytest.approx(expected, abs=5e-3)


def test_edge_cases_match_sacrebleu(sacrebleu_metrics):
    for hyp, ref, eps, _ in EDGE_CASES:
        for word_order in (0, 2):
            oracle = sacrebleu_metrics.CHRF(eps_smoothing=eps, word_order=word_order)
            theirs = oracle.sentence_score(hyp, [ref])
            assert C.sentence_chrf(hyp, [ref], eps_smoothing=eps, word_order=word_order) == theirs.score


_text = st.text(alphabet=st.sampled_from(list("ab c.,(Ää\t北")), max_size=14)


@settings(max_examples=300, deadline=None)
@given(
    hyp=_text,
    refs=st.lists(_text, min_size=1, max_size=3),
    char_order=st.integers(1, 6),
    word_order=st.integers(0, 3),
    beta=st.sampled_from([1, 2, 3]),
    whitespace=st.booleans(),
    eps=st.booleans(),
)
def test_random_segments_match_sacrebleu(hyp, refs, char_order, word_order, beta, whitespace, eps):
    metrics = pytest.importorskip("sacrebleu.metrics")
    options = dict(char_order=char_order, word_order=word_order, beta=beta, whitespace=whitespace, eps_smoothing=eps)
    oracle = metrics.CHRF(**options)
    expected_row = oracle._extract_corpus_statistics([hyp], [[r] for r in refs])[0]
    assert C.segment_stats(hyp, refs, **options) == expected_row
    assert C.sentence_chrf(hyp, refs, **options) == oracle.sentence_score(hyp, refs).score
