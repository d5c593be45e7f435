"""TER's edit counting: the native core == the twin == the readable reference (which
tests/metrics/test_ref_ter.py holds against sacreBLEU), on fuzzed word sequences, the
search's limits and invalid buffers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _helpers.reference import ter as T
from respeval import _backend, _core_py
from respeval.limits import TER_MAX_WORDS, RowTooLongError

core = pytest.importorskip("respeval._core", reason="respeval._core is not built")
SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _csr(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ids = np.array([t for r in rows for t in r], dtype=np.int32)
    off = np.zeros(len(rows) + 1, dtype=np.int64)
    off[1:] = np.cumsum([len(r) for r in rows])
    return ids, off


def _edits(module, hyps: list[list[int]], refs_per_row: list[list[list[int]]], threads=None) -> list[int]:
    h_ids, h_off = _csr(hyps)
    r_ids, r_off = _csr([r for refs in refs_per_row for r in refs])
    row_refs = np.zeros(len(hyps) + 1, np.int64)
    row_refs[1:] = np.cumsum([len(r) for r in refs_per_row])
    vocab = int(max(h_ids.max(initial=0), r_ids.max(initial=0))) + 1
    out = np.zeros(len(hyps), np.int64)
    module.ter_edits(h_ids, h_off, r_ids, r_off, row_refs, vocab, out, threads)
    return out.tolist()


def _reference(hyp: list[int], refs: list[list[int]]) -> int:
    return min(T.translation_edit_rate([str(t) for t in hyp], [str(t) for t in r])[0] for r in refs)


words = st.sampled_from([2, 3, 5, 12]).flatmap(lambda k: st.lists(st.integers(0, k), max_size=18))


@SETTINGS
@given(st.lists(st.tuples(words, st.lists(words, min_size=1, max_size=3)), min_size=1, max_size=6))
def test_native_and_twin_equal_the_reference(rows):
    hyps = [h for h, _ in rows]
    refs = [r for _, r in rows]
    want = [_reference(h, r) for h, r in rows]
    assert _edits(core, hyps, refs) == want
    assert _edits(_core_py, hyps, refs) == want


def test_beam_widening_candidate_limit_and_long_rows(rng):
    cases = [
        ([rng.randrange(8) for _ in range(2)], [rng.randrange(8) for _ in range(300)]),  # beam widened
        ([rng.randrange(8) for _ in range(300)], [rng.randrange(8) for _ in range(3)]),
        ([rng.randrange(3) for _ in range(40)], [rng.randrange(3) for _ in range(40)]),  # 1000 candidates
        ([rng.randrange(40) for _ in range(150)], [rng.randrange(40) for _ in range(170)]),  # beyond the beam
        ([], [1, 2, 3]),
        ([1, 2, 3], []),
        ([], []),
    ]
    hyps = [h for h, _ in cases]
    refs = [[r] for _, r in cases]
    want = [_reference(h, r) for h, r in zip(hyps, refs)]
    assert _edits(core, hyps, refs, threads=1) == want
    assert _edits(core, hyps, refs, threads=2) == want
    assert _edits(_core_py, hyps, refs) == want


def test_many_rows_on_two_threads_equal_one(rng):
    hyps = [[rng.randrange(6) for _ in range(rng.randrange(0, 40))] for _ in range(400)]
    refs = [[[rng.randrange(6) for _ in range(rng.randrange(0, 40))]] for _ in range(400)]
    assert _edits(core, hyps, refs, threads=2) == _edits(core, hyps, refs, threads=1)


@pytest.mark.parametrize("side", ["hypothesis", "reference"])
def test_a_row_beyond_the_limit_is_a_named_error(impl, side):
    long = list(range(7)) * (TER_MAX_WORDS // 7 + 1)
    hyps, refs = [[1, 2], [1]], [[[1, 2]], [[1]]]
    if side == "hypothesis":
        hyps[1] = long
    else:
        refs[1] = [[1], long]
    with pytest.raises(RowTooLongError, match="row 1: the " + side) as err:
        _edits(_backend.get(impl), hyps, refs)
    assert isinstance(err.value, ValueError) and err.value.row == 1 and err.value.limit == TER_MAX_WORDS


def test_a_row_without_reference_is_rejected(impl):
    h_ids, h_off = _csr([[1], [2]])
    r_ids, r_off = _csr([[1]])
    with pytest.raises(ValueError, match="row 1 has no reference"):
        _backend.get(impl).ter_edits(
            h_ids, h_off, r_ids, r_off, np.array([0, 1, 1], np.int64), 3, np.zeros(2, np.int64)
        )


arrays32 = st.lists(st.integers(-3, 12), max_size=12).map(lambda v: np.array(v, np.int32))
arrays64 = st.lists(st.integers(-3, 12), max_size=6).map(lambda v: np.array(v, np.int64))


@settings(max_examples=400, deadline=None, derandomize=True)
@given(arrays32, arrays64, arrays32, arrays64, arrays64, st.integers(-1, 14), st.integers(0, 6))
def test_fuzz_ter_edits_never_crashes(h_ids, h_off, r_ids, r_off, row_refs, vocab, out_len):
    results = []
    for module in (core, _core_py):
        try:
            out = np.zeros(out_len, np.int64)
            module.ter_edits(h_ids, h_off, r_ids, r_off, row_refs, vocab, out)
            results.append(out.tolist())
        except ValueError as exc:
            results.append(str(exc))
    assert results[0] == results[1]


# ----------------------------------------------------------------- Tercom normaliser

FLAGS = [(n, p, a, t) for n in (False, True) for p in (False, True) for a in (False, True) for t in (False, True)]
_TRICKY = "aBc 1.2,3 -'s\"&amp;&quot;&lt;<>()?!;:\n北京の「カタカナ」、。ひらがなｶﾀ！（）．＂ \u3200\u3f22\u0130"


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.text(alphabet=st.sampled_from(list(_TRICKY)) | st.characters(), max_size=40), max_size=6))
def test_native_tercom_equals_twin(texts):
    texts = [t.lower() for t in texts]
    for flags in FLAGS:
        assert core.tercom_tokens(texts, *flags) == _core_py.tercom_tokens(texts, *flags), flags


def test_native_tercom_equals_sacrebleu_on_wmt(wmt):
    tokenizer_ter = pytest.importorskip("sacrebleu.tokenizers.tokenizer_ter")
    reference, systems = wmt
    lines = reference[::7] + systems[sorted(systems)[5]][::7]
    for n, p, a in [(False, False, False), (True, False, False), (False, True, False), (True, True, True)]:
        theirs = tokenizer_ter.TercomTokenizer(normalized=n, no_punct=p, asian_support=a)
        once = [theirs(line.rstrip()).split() for line in lines]
        twice = [theirs(theirs(line.rstrip())).split() for line in lines]
        lowered = [line.lower() for line in lines]
        assert core.tercom_tokens(lowered, n, p, a) == once
        assert core.tercom_tokens(lowered, n, p, a, True) == twice


def test_tercom_ids_share_one_vocabulary(impl):
    kernels = _backend.get(impl)
    vocab = kernels.Vocab()
    ids, off = kernels.tercom_ids(vocab, ["a b.", "b a"], True)
    assert np.frombuffer(ids, np.int32).tolist() == [0, 1, 2, 1, 0]
    assert np.frombuffer(off, np.int64).tolist() == [0, 3, 5]
    assert vocab.tokens() == ["a", "b", "."]


_WORDS = st.sampled_from(["a", "b", "c", "A", "the", "The", "x's", "1,000", "2.5", "-", "(b)", "c.", "&amp;", "北京"])
_SEGMENT = st.lists(_WORDS, max_size=16).map(" ".join)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.lists(st.tuples(_SEGMENT, _SEGMENT), min_size=1, max_size=4), st.sampled_from(FLAGS))
def test_native_ter_equals_live_sacrebleu(rows, flags):
    """The public TER (native tokenizer and edits) against sacreBLEU itself, every option set."""
    ter_metric = pytest.importorskip("sacrebleu.metrics.ter")
    from respeval.metrics.ter import ter

    normalized, no_punct, asian, case_sensitive = flags
    options = dict(normalized=normalized, no_punct=no_punct, asian_support=asian, case_sensitive=case_sensitive)
    hyps, refs = [h for h, _ in rows], [r for _, r in rows]
    theirs = ter_metric.TER(**options)
    got = ter(hyps, refs, implementation="native", **options)
    assert got.score == theirs.corpus_score(hyps, [refs]).score
    for k, (h, r) in enumerate(rows):
        want = theirs.sentence_score(h, [r])
        assert (int(got.stats[k, 0]), float(got.stats[k, 1])) == (want.num_edits, want.ref_length)
