"""The MT byte scanners (cext/mt_scan.h) against the pure-Python twin and sacreBLEU.

``tokenize_13a_ids``, ``chrf_words_ids`` and ``chrf_chars`` read most texts as UTF-8
bytes classified 64 at a time, and hand a text back to the code-point path when it holds
non-ASCII whitespace (13a also: '&', '\\n', "<skipped>").  Hypothesis draws texts that
sit on every one of those edges: ASCII punctuation and digits next to '.', ',' and '-',
every Unicode whitespace, entities, newlines, long words across the 64-byte blocks, and
all three PEP 393 kinds (Latin-1, BMP, astral and lone surrogates).  Each text is
compared three ways: the native ids, the twin's ids (the same ids, since both number
tokens in first-seen order), and sacreBLEU's own tokens.  The other instruction-set
paths are compared with the portable one in test_dispatch.py.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

core = pytest.importorskip("respeval._core")
sacrebleu_13a = pytest.importorskip("sacrebleu.tokenizers.tokenizer_13a")
sacrebleu_chrf = pytest.importorskip("sacrebleu.metrics.chrf")

from respeval._core_py import bleu as twin_bleu  # noqa: E402
from respeval._core_py import chrf as twin_chrf  # noqa: E402
from respeval._core_py.common import Vocab as TwinVocab  # noqa: E402

_TOK13A = sacrebleu_13a.Tokenizer13a()
_CHRF = sacrebleu_chrf.CHRF(word_order=2)
_WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]

# pieces that reach each branch of the scanners: symbols, the three special bytes,
# digit-dash pairs, entities and <skipped> (13a's step 1), newlines, non-ASCII letters of
# each width, a lone surrogate, and words longer than a 64-byte block
_PIECES = [
    *"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
    *"0123456789",
    *_WHITESPACE,
    "a",
    "Z",
    "é",
    "ß",
    "Σ",
    "北京",
    "„",
    "“",
    "—",
    "…",
    "\U0001f600",
    "\U00020000",
    "\ud800",
    "\x00",
    "\x7f",
    "1-",
    "-1",
    "1.5",
    "1,000",
    ".5",
    "U.S.",
    "e-mail",
    "don't",
    "(hi)",
    "x.",
    ",y",
    "&amp;",
    "&quot;",
    "&lt;",
    "&gt;",
    "&amp;lt;",
    "<skipped>",
    "<skip",
    "-\n",
    "\n",
    "\r\n",
    "x" * 63,
    "y" * 64,
    "z" * 65,
    "w" * 130 + ".",
    "1" * 70 + "-",
]
texts = st.lists(st.sampled_from(_PIECES), max_size=60).map("".join) | st.text(max_size=80)


def _ids(pair: tuple[bytes, bytes]) -> tuple[np.ndarray, np.ndarray]:
    ids, off = pair
    return np.frombuffer(ids, np.int32), np.frombuffer(off, np.int64)


def _tokens(vocab, pair) -> list[list[str]]:
    ids, off = _ids(pair)
    return [[vocab.token(int(i)) for i in ids[off[k] : off[k + 1]]] for k in range(len(off) - 1)]


def _check_ids(native_fn, twin_fn, oracle, rows: list[str]) -> None:
    v, tv = core.Vocab(), TwinVocab()
    got, want = native_fn(v, rows), twin_fn(tv, rows)
    assert got == want, "native ids differ from the twin's"
    assert _tokens(v, got) == [oracle(t) for t in rows]
    assert v.tokens() == [tv.token(i) for i in range(len(tv))]


@settings(max_examples=400, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6))
def test_13a_ids_equal_the_twin_and_sacrebleu(rows):
    _check_ids(core.tokenize_13a_ids, twin_bleu.tokenize_13a_ids, lambda t: _TOK13A(t.rstrip()).split(), rows)


@settings(max_examples=400, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6))
def test_chrf_word_ids_equal_the_twin_and_sacrebleu(rows):
    _check_ids(core.chrf_words_ids, twin_chrf.chrf_words_ids, _CHRF._remove_punctuation, rows)


@settings(max_examples=300, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6), st.booleans())
def test_chrf_chars_equal_the_twin_and_sacrebleu(rows, whitespace):
    got = core.chrf_chars(rows, whitespace)
    assert got == twin_chrf.chrf_chars(rows, whitespace)
    chars, off = _ids(got)
    for k, t in enumerate(rows):
        want = t if whitespace else "".join(t.split())  # sacreBLEU's CHRF._preprocess_segment
        assert "".join(map(chr, chars[off[k] : off[k + 1]])) == want


def test_long_texts_across_many_blocks(rng):
    # one text of ~100k characters per kind, and the same words in thousands of short rows
    words = [p for p in _PIECES if p.strip()]
    for extra in ("", "\u201e", "\U0001f600"):
        long = " ".join(rng.choice(words) for _ in range(20_000)) + extra
        rows = [long, *long.split(" . ")]
        _check_ids(core.tokenize_13a_ids, twin_bleu.tokenize_13a_ids, lambda t: _TOK13A(t.rstrip()).split(), rows)
        _check_ids(core.chrf_words_ids, twin_chrf.chrf_words_ids, _CHRF._remove_punctuation, rows)
        assert core.chrf_chars(rows) == twin_chrf.chrf_chars(rows)


def test_a_word_of_only_special_bytes():
    # the regex stages on " w " for words the fast rules leave (several '.'/',', digit-dash)
    rows = ["..", ",.,", "1.-2", "a.b,c", "1-2-3", "1--2", "-.-", "9,", "9.9.", ".-", "-1.", "x" * 200 + ".,"]
    _check_ids(core.tokenize_13a_ids, twin_bleu.tokenize_13a_ids, lambda t: _TOK13A(t.rstrip()).split(), rows)
