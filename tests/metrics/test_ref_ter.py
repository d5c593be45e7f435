"""Reference TER against sacreBLEU 2.6.0 (live on small inputs, fixtures on WMT17)."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers.paths import FIXTURES, SHARED_DATA
from _helpers.reference import ter as T
from respeval.metrics.sacrebleu_scores import compute_ter
from respeval.tokenizers.tercom import tercom_normalize

DATA = SHARED_DATA
WMT = DATA / "wmt17_en_de"
SUBSET_STEP = 20  # fast tests check every 20th segment of every system


# --- fixtures -----------------------------------------------------------------------------------


def _fixture(name):
    path = FIXTURES / name
    if not path.is_file():
        pytest.skip(f"{path} missing: run benchmarks/make_fixtures_mt.py")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def segments():
    return _fixture("sacrebleu_wmt17_ter_segments.json")


@pytest.fixture(scope="module")
def sacrebleu_ter():
    return pytest.importorskip("sacrebleu.metrics.ter")


VARIANTS = {
    "default": {},
    "normalized": {"normalized": True},
    "no_punct": {"no_punct": True},
    "case_sensitive": {"case_sensitive": True},
    "normalized-asian": {"normalized": True, "asian_support": True},
    "normalized-no_punct-cs": {"normalized": True, "no_punct": True, "case_sensitive": True},
}


# --- tercom normaliser ----------------------------------------------------------------------------

ALL_OPTIONS = [
    dict(normalized=n, no_punct=p, asian_support=a, case_sensitive=c)
    for n in (False, True)
    for p in (False, True)
    for a in (False, True)
    for c in (False, True)
]


def _oracle_tokenizers():
    module = pytest.importorskip("sacrebleu.tokenizers.tokenizer_ter")
    return [(options, module.TercomTokenizer(**options)) for options in ALL_OPTIONS]


def test_normaliser_matches_sacrebleu_on_wmt(wmt):
    reference, systems = wmt
    lines = reference[:500] + systems["PROMT-Rule-based.4735"][:500]
    for options, oracle in _oracle_tokenizers():
        wrong = [line for line in lines if tercom_normalize(line, **options) != oracle(line)]
        assert not wrong, (options, wrong[:3])


_TRICKY = "aBc 1.2,3 -'s\"&amp;&quot;<>()?!;:\n北京の「カタカナ」、。ひらがなｶﾀ！（）．＂ \u3200\u3f22"


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(_TRICKY)) | st.characters(), max_size=30))
def test_normaliser_matches_sacrebleu_on_random_text(text):
    for options, oracle in _oracle_tokenizers():
        assert tercom_normalize(text, **options) == oracle(text), options


def test_normaliser_examples():
    assert tercom_normalize("Hello, World!") == "hello, world!"
    assert tercom_normalize("John's car, 1,000.", normalized=True) == "john 's car , 1,000 ."
    assert tercom_normalize("A (b)? c.", no_punct=True, case_sensitive=True) == "A b c"
    assert tercom_normalize("北京。", normalized=True, asian_support=True) == "北 京 。"


# --- edit distance with shifts ----------------------------------------------------------------------

_sentence = st.lists(st.sampled_from(list("abcde")), max_size=14)


@settings(max_examples=300, deadline=None)
@given(hyp=_sentence, ref=_sentence)
def test_random_word_sequences_match_sacrebleu(hyp, ref):
    lib_ter = pytest.importorskip("sacrebleu.metrics.lib_ter")
    assert T.translation_edit_rate(hyp, ref) == lib_ter.translation_edit_rate(hyp, ref)


def test_long_and_unequal_segments_match_sacrebleu():
    """Beam widening (very unequal lengths) and the 1000-candidate limit."""
    lib_ter = pytest.importorskip("sacrebleu.metrics.lib_ter")
    rng = random.Random(7)
    vocab = "a b c d e f g h".split()
    cases = [
        (rng.choices(vocab, k=2), rng.choices(vocab, k=120)),  # beam widened
        (rng.choices(vocab, k=120), rng.choices(vocab, k=3)),
        (rng.choices(vocab[:3], k=40), rng.choices(vocab[:3], k=40)),  # candidate limit
    ]
    for hyp, ref in cases:
        assert T.translation_edit_rate(hyp, ref) == lib_ter.translation_edit_rate(hyp, ref)


def test_shift_is_counted_as_one_edit():
    # moving "c d" to the front: 1 shift instead of 4 word edits
    assert T.translation_edit_rate("a b c d".split(), "c d a b".split()) == (1, 4)
    assert T.translation_edit_rate("a b c d e f".split(), "d e f a b c".split()) == (1, 6)
    assert T.edit_distance("a b c d".split(), "c d a b".split()) == 4


EDGE_CASES = [
    ("", "", 0.0),
    ("a", "", 100.0),
    ("", "a", 100.0),
    ("the the the the", "the", 300.0),
    ("A", "a", 0.0),
]


@pytest.mark.parametrize("hyp,ref,expected", EDGE_CASES)
def test_edge_cases(hyp, ref, expected):
    assert T.sentence_ter(hyp, [ref]).score == expected


def test_edge_cases_match_sacrebleu(sacrebleu_ter):
    for hyp, ref, _ in EDGE_CASES:
        for options in ({}, {"case_sensitive": True}):
            expected = sacrebleu_ter.TER(**options).sentence_score(hyp, [ref]).score
            assert T.sentence_ter(hyp, [ref], **options).score == expected


def test_references_are_normalised_twice(sacrebleu_ter):
    # the second pass splits the possessive: the reference has 5 words, the hypothesis 4
    for normalize in (T.tercom_normalize, tercom_normalize):  # the oracle's (sacreBLEU's) and respeval's
        once = normalize("Nima's, x y", normalized=True)
        assert once == "nima's , x y"
        assert normalize(once, normalized=True) == "nima 's , x y"
    assert T.segment_stats("Nima's, x y", ["Nima's, x y"], normalized=True) == [2, 5.0]
    oracle = sacrebleu_ter.TER(normalized=True)
    assert oracle._extract_corpus_statistics(["Nima's, x y"], [["Nima's, x y"]]) == [[2, 5.0]]


def test_multiple_references_take_min_edits_and_mean_length(sacrebleu_ter):
    hyp = "the cat sat on the mat"
    refs = ["the cat is on the mat", "a cat sat on a mat today", None]
    assert T.segment_stats(hyp, refs) == [1, 6.5]
    assert T.sentence_ter(hyp, refs).score == sacrebleu_ter.TER().sentence_score(hyp, refs).score


def test_multiple_references_on_wmt(wmt, sacrebleu_ter):
    reference, systems = wmt
    n = 60
    hyps = systems["online-B.0"][:n]
    ref2 = [None if i % 3 == 0 else line for i, line in enumerate(systems["uedin-nmt.4722"][:n])]
    streams = [reference[:n], ref2]
    oracle = sacrebleu_ter.TER()
    assert T.corpus_stats(hyps, streams) == oracle._extract_corpus_statistics(hyps, streams)
    assert T.corpus_ter(hyps, streams).score == oracle.corpus_score(hyps, streams).score


def test_all_references_missing_is_an_error():
    with pytest.raises(ValueError):
        T.segment_stats("a", [None])


# --- WMT17 against the fixtures -------------------------------------------------------------------


def _check_segments(wmt, segments, variant, names, step):
    reference, systems = wmt
    options = VARIANTS[variant]
    ref_lens = segments["ref_len"][variant]
    for name in names:
        edits = segments["edits"][variant][name]
        for i in range(0, len(reference), step):
            got = T.segment_stats(systems[name][i], [reference[i]], **options)
            assert got == [edits[i], ref_lens[i]], (variant, name, i)


def test_segments_every_system_subset(wmt, segments):
    _check_segments(wmt, segments, "default", list(wmt[1]), SUBSET_STEP)


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v != "default"])
def test_segments_variants_subset(wmt, segments, variant):
    _check_segments(wmt, segments, variant, list(segments["edits"][variant]), 3 * SUBSET_STEP)


@pytest.mark.parametrize("compute", [T.compute_ter, compute_ter], ids=["oracle", "respeval"])
def test_corpus_score_from_fixture_statistics(segments, corpus_fixture, compute):
    """The score is a pure function of summed [edits, ref_len]; sacreBLEU's own rows give its score."""
    ref_lens = segments["ref_len"]["default"]
    for name, edits in segments["edits"]["default"].items():
        rows = [[e, float(r)] for e, r in zip(edits, ref_lens)]
        totals = [sum(column) for column in zip(*rows)]
        result = compute(totals)
        expected = corpus_fixture[name]["ter"]
        assert (result.score, result.num_edits, result.ref_length) == (
            expected["score"],
            expected["num_edits"],
            expected["ref_length"],
        )


@pytest.mark.slow
def test_corpus_one_system(wmt, corpus_fixture):
    reference, systems = wmt
    result = T.corpus_ter(systems["online-A.0"], [reference])
    assert result.score == corpus_fixture["online-A.0"]["ter"]["score"]
    assert round(result.score / 100, 3) == 0.690  # tercom's value in sacreBLEU's test.sh


@pytest.mark.slow
def test_corpus_all_systems(wmt, corpus_fixture):
    reference, systems = wmt
    for name, hyps in systems.items():
        assert T.corpus_ter(hyps, [reference]).score == corpus_fixture[name]["ter"]["score"], name


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_segments_all(wmt, segments, variant):
    _check_segments(wmt, segments, variant, list(segments["edits"][variant]), 1)
