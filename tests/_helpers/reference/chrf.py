"""Reference (pure-Python) chrF and chrF++, identical to sacreBLEU 2.6.0.

Statistics per segment are integer triples per order, character orders first, then word
orders: ``[hyp_1, ref_1, match_1, hyp_2, ref_2, match_2, ...]`` (length
``3 * (char_order + word_order)``). The corpus score is :func:`chrf_score` of the column
sums, so it is a micro-average over segments.

Details that matter for exactness:

* No tokenization. Unless ``whitespace=True`` all whitespace is deleted before character
  n-grams are taken (``''.join(s.split())``), so they span word boundaries. Characters are
  code points.
* chrF++ words come from ``split()``; a word longer than one character loses *one*
  punctuation character: the last if it is ASCII punctuation, else the first if it is
  (so ``"(hi)"`` -> ``"(hi"``, ``")"``). Word n-grams are joined with a single space.
* ``hyp`` is counted as 0 for an order the reference has no n-grams of.
* With several references, the one with the highest sentence-level score (in the chosen
  mode) wins; the first one wins ties.
* Two scoring modes: the default averages P and R over the orders where both hypothesis
  and reference have n-grams, then takes F-beta; ``eps_smoothing`` (chrF++.py, NLTK,
  Moses) averages per-order F-beta over all orders with 1e-16 for empty ones.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

from _helpers.reference.scores import BETA, CHAR_ORDER, EPS, WORD_ORDER, chrf_score  # noqa: F401 - part of this module's API

__all__ = [
    "PUNCTUATION",
    "PreparedReferences",
    "best_reference_stats",
    "char_ngrams",
    "chrf_score",
    "corpus_chrf",
    "corpus_stats",
    "extract_ngrams",
    "match_stats",
    "prepare_references",
    "segment_stats",
    "sentence_chrf",
    "split_punctuation",
    "word_ngrams",
]


#: ``string.punctuation``: the only characters chrF++ splits off words.
PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

Number = Union[int, float]


# --- n-gram extraction --------------------------------------------------------------------


def char_ngrams(text: str, max_order: int, whitespace: bool = False) -> list[Counter[str]]:
    """Character n-gram counts for n = 1..max_order.

    Parameters
    ----------
    text : str
        The segment.
    max_order : int
        Highest character n-gram order.
    whitespace : bool
        Keep whitespace; by default all whitespace is deleted first.

    Returns
    -------
    list of collections.Counter
        One counter per order.
    """
    if not whitespace:
        text = "".join(text.split())
    return [Counter([text[start : start + n] for start in range(len(text) - n + 1)]) for n in range(1, max_order + 1)]


def split_punctuation(text: str) -> list[str]:
    """chrF++'s word split: ``split()``, then peel one ASCII punctuation character.

    Parameters
    ----------
    text : str
        The segment.

    Returns
    -------
    list of str
        Words, with a trailing (else leading) punctuation character of words longer than
        one character split off.

    Examples
    --------
    >>> split_punctuation("(hi) there, 'x'")
    ['(hi', ')', 'there', ',', "'x", "'"]
    """
    words: list[str] = []
    for word in text.split():
        if len(word) > 1 and word[-1] in PUNCTUATION:
            words += [word[:-1], word[-1]]
        elif len(word) > 1 and word[0] in PUNCTUATION:
            words += [word[0], word[1:]]
        else:
            words.append(word)
    return words


def word_ngrams(words: Sequence[str], n: int) -> Counter[str]:
    """Word n-gram counts of one order, n-grams joined with a space."""
    return Counter([" ".join(words[start : start + n]) for start in range(len(words) - n + 1)])


def extract_ngrams(
    text: str, char_order: int = CHAR_ORDER, word_order: int = WORD_ORDER, whitespace: bool = False
) -> list[Counter[str]]:
    """All n-gram counters of a segment: character orders, then word orders."""
    counters = char_ngrams(text, char_order, whitespace)
    if word_order > 0:
        words = split_punctuation(text)
        counters += [word_ngrams(words, n) for n in range(1, word_order + 1)]
    return counters


# --- statistics ---------------------------------------------------------------------------


def match_stats(hyp_ngrams: Sequence[Counter[str]], ref_ngrams: Sequence[Counter[str]]) -> list[int]:
    """``[hyp, ref, match]`` per order for one hypothesis/reference pair.

    ``hyp`` is 0 when the reference has no n-gram of that order, so such an order
    contributes nothing to precision either.
    """
    row: list[int] = []
    for hyp_counts, ref_counts in zip(hyp_ngrams, ref_ngrams):
        matches = 0
        for ngram in hyp_counts.keys() & ref_counts.keys():
            hyp_count, ref_count = hyp_counts[ngram], ref_counts[ngram]
            matches += hyp_count if hyp_count < ref_count else ref_count  # clipped count
        hyp_total = sum(hyp_counts.values()) if ref_counts else 0
        row += [hyp_total, sum(ref_counts.values()), matches]
    return row


def best_reference_stats(
    hyp_ngrams: Sequence[Counter[str]],
    refs_ngrams: Sequence[Sequence[Counter[str]]],
    char_order: int = CHAR_ORDER,
    word_order: int = WORD_ORDER,
    beta: float = BETA,
    eps_smoothing: bool = False,
) -> list[int]:
    """Statistics against the reference with the highest sentence-level score.

    The score is :func:`chrf_score` in the requested mode; the first reference wins ties.
    """
    if not refs_ngrams:
        raise ValueError("a segment needs at least one reference that is not None")
    best_row: list[int] = []
    best_score = -1.0
    for ref_ngrams in refs_ngrams:
        row = match_stats(hyp_ngrams, ref_ngrams)
        score = chrf_score(row, char_order, word_order, beta, eps_smoothing)
        if score > best_score:  # strictly greater: the first reference wins ties
            best_score, best_row = score, row
    return best_row


def segment_stats(
    hypothesis: str,
    references: Sequence[str | None],
    *,
    char_order: int = CHAR_ORDER,
    word_order: int = WORD_ORDER,
    beta: float = BETA,
    whitespace: bool = False,
    lowercase: bool = False,
    eps_smoothing: bool = False,
) -> list[int]:
    """Statistics of one segment against its best reference.

    Parameters
    ----------
    hypothesis : str
        The hypothesis.
    references : sequence of (str or None)
        References; ``None`` entries are skipped.
    char_order, word_order, beta, whitespace, lowercase, eps_smoothing
        As in sacreBLEU's ``CHRF``. ``beta`` and ``eps_smoothing`` only matter for
        choosing the best reference.

    Returns
    -------
    list of int
        ``3 * (char_order + word_order)`` integers.

    Raises
    ------
    ValueError
        If every reference is ``None``.

    Examples
    --------
    >>> segment_stats("ab", ["abc"], char_order=2)
    [2, 3, 2, 1, 2, 1]
    """
    refs = [ref for ref in references if ref is not None]
    if lowercase:
        hypothesis = hypothesis.lower()
        refs = [ref.lower() for ref in refs]
    return best_reference_stats(
        extract_ngrams(hypothesis, char_order, word_order, whitespace),
        [extract_ngrams(ref, char_order, word_order, whitespace) for ref in refs],
        char_order,
        word_order,
        beta,
        eps_smoothing,
    )


@dataclass(frozen=True)
class PreparedReferences:
    """Reference n-grams extracted once, to score many systems against them.

    Build with :func:`prepare_references`; pass in place of the reference streams.
    ``ngrams[i][k]`` holds the n-gram counters of the k-th reference of segment i.
    """

    ngrams: tuple[tuple[list[Counter[str]], ...], ...]
    char_order: int
    word_order: int
    whitespace: bool
    lowercase: bool


def prepare_references(
    references: Sequence[Sequence[str | None]],
    *,
    char_order: int = CHAR_ORDER,
    word_order: int = WORD_ORDER,
    whitespace: bool = False,
    lowercase: bool = False,
) -> PreparedReferences:
    """Extract the n-grams of every reference segment (``None`` segments skipped)."""
    ngrams = tuple(
        tuple(
            extract_ngrams(ref.lower() if lowercase else ref, char_order, word_order, whitespace)
            for ref in segment_refs
            if ref is not None
        )
        for segment_refs in zip(*references)
    )
    return PreparedReferences(ngrams, char_order, word_order, whitespace, lowercase)


def corpus_stats(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str | None]] | PreparedReferences,
    *,
    char_order: int = CHAR_ORDER,
    word_order: int = WORD_ORDER,
    beta: float = BETA,
    whitespace: bool = False,
    lowercase: bool = False,
    eps_smoothing: bool = False,
) -> list[list[int]]:
    """Per-segment statistics of a corpus.

    Parameters
    ----------
    hypotheses : sequence of str
        One hypothesis per segment.
    references : sequence of reference streams, or PreparedReferences
        ``[[ref1_seg1, ...], [ref2_seg1, ...]]``; ``None`` segments allowed. Truncated
        like ``zip``, as in sacreBLEU. With :class:`PreparedReferences`, its extraction
        options are used and ``char_order``, ``word_order``, ``whitespace`` and
        ``lowercase`` are ignored.
    char_order, word_order, beta, whitespace, lowercase, eps_smoothing
        See :func:`segment_stats`.

    Returns
    -------
    list of list of int
        One row per segment.
    """
    if not isinstance(references, PreparedReferences):
        references = prepare_references(
            references,
            char_order=char_order,
            word_order=word_order,
            whitespace=whitespace,
            lowercase=lowercase,
        )
    prep = references
    rows = []
    for hypothesis, refs_ngrams in zip(hypotheses, prep.ngrams):
        if prep.lowercase:
            hypothesis = hypothesis.lower()
        hyp_ngrams = extract_ngrams(hypothesis, prep.char_order, prep.word_order, prep.whitespace)
        rows.append(
            best_reference_stats(hyp_ngrams, refs_ngrams, prep.char_order, prep.word_order, beta, eps_smoothing)
        )
    return rows


# --- score ----------------------------------------------------------------------------------


# --- convenience wrappers ------------------------------------------------------------------


def corpus_chrf(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str | None]] | PreparedReferences,
    *,
    char_order: int = CHAR_ORDER,
    word_order: int = WORD_ORDER,
    beta: float = BETA,
    whitespace: bool = False,
    lowercase: bool = False,
    eps_smoothing: bool = False,
) -> float:
    """Corpus chrF (``word_order=2`` for chrF++), like ``CHRF(...).corpus_score(...).score``.

    With :class:`PreparedReferences`, its ``char_order`` and ``word_order`` are used.
    """
    if isinstance(references, PreparedReferences):
        char_order, word_order = references.char_order, references.word_order
    rows = corpus_stats(
        hypotheses,
        references,
        char_order=char_order,
        word_order=word_order,
        beta=beta,
        whitespace=whitespace,
        lowercase=lowercase,
        eps_smoothing=eps_smoothing,
    )
    if not rows:
        raise ValueError("no segments to score")
    summed = [sum(column) for column in zip(*rows)]
    return chrf_score(summed, char_order, word_order, beta, eps_smoothing)


def sentence_chrf(
    hypothesis: str,
    references: Sequence[str | None],
    *,
    char_order: int = CHAR_ORDER,
    word_order: int = WORD_ORDER,
    beta: float = BETA,
    whitespace: bool = False,
    lowercase: bool = False,
    eps_smoothing: bool = False,
) -> float:
    """Sentence chrF of one hypothesis against its (best) reference."""
    row = segment_stats(
        hypothesis,
        references,
        char_order=char_order,
        word_order=word_order,
        beta=beta,
        whitespace=whitespace,
        lowercase=lowercase,
        eps_smoothing=eps_smoothing,
    )
    return chrf_score(row, char_order, word_order, beta, eps_smoothing)
