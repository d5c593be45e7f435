"""Reference (pure-Python) BLEU, identical to sacreBLEU 2.6.0.

The computation is split the way the rest of respeval is built:

1. :func:`preprocess` turns a segment into tokens (optional ``lower()``, ``rstrip()``,
   tokenizer, ``split()``).
2. :func:`segment_stats` turns one hypothesis and its references into a row of integers
   ``[hyp_len, ref_len, correct_1..N, total_1..N]``.
3. :func:`compute_bleu` turns a (summed) row into a score. Corpus BLEU is
   ``compute_bleu(sum of rows)``; sentence BLEU is ``compute_bleu(row)``.

Everything follows sacreBLEU's arithmetic step for step, including its quirks, so the
resulting floats are bit-identical (also when the statistics arrive as numpy ``float32``
sums, as in sacreBLEU's bootstrap):

* ``ref_len`` is the closest reference length, ties going to the **shorter** reference.
* The reference n-gram table is the maximum count over the references.
* If no n-gram matches at all the score is 0.0 whatever the smoothing (sacreBLEU #141).
* ``add-k`` adds ``k`` to correct and total for n > 1, and the returned ``counts`` and
  ``totals`` show the added ``k``.
* With ``effective_order`` the geometric mean runs over orders 1..eff where eff is the
  highest order at which the hypothesis has at least one n-gram (not "has a match").
* ``log(0)`` is floored to ``-9999999999``, so a zero precision gives a score of 0.0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Union

from _helpers.reference.scores import LOG_ZERO, MAX_ORDER, SMOOTH_DEFAULTS, BLEUResult, compute_bleu, my_log  # noqa: F401 - part of this module's API
from _helpers.reference.tokenizers import get_tokenizer

__all__ = [
    "BLEUResult",
    "MAX_ORDER",
    "PreparedReferences",
    "ReferenceInfo",
    "SMOOTH_DEFAULTS",
    "closest_ref_length",
    "compute_bleu",
    "corpus_bleu",
    "corpus_stats",
    "extract_ngrams",
    "my_log",
    "prepare_references",
    "preprocess",
    "reference_info",
    "segment_stats",
    "sentence_bleu",
    "stats_from_info",
    "sum_stats",
]

Number = Union[int, float]
Ngram = tuple[str, ...]


# --- pre-processing and statistics -------------------------------------------------------


def preprocess(sentence: str, tokenize: str = "13a", lowercase: bool = False) -> list[str]:
    """Turn a segment into BLEU tokens exactly as sacreBLEU does.

    Parameters
    ----------
    sentence : str
        The raw segment.
    tokenize : str
        Tokenizer name (sacreBLEU's: ``13a``, ``intl``, ``zh``, ``char``, ``none``).
    lowercase : bool
        Apply Python's Unicode ``str.lower()`` first.

    Returns
    -------
    list of str
        ``tokenizer(sentence.rstrip()).split()``, lowercased first if requested.
    """
    if lowercase:
        sentence = sentence.lower()
    return get_tokenizer(tokenize)(sentence.rstrip()).split()


def extract_ngrams(tokens: Sequence[str], max_order: int = MAX_ORDER) -> Counter[Ngram]:
    """Count every n-gram of order 1..max_order.

    Parameters
    ----------
    tokens : sequence of str
        The token list.
    max_order : int
        Highest n-gram order.

    Returns
    -------
    collections.Counter
        Token tuples to counts (all orders in one table; the tuple length is the order).
    """
    tokens = tuple(tokens)
    return Counter([tokens[start : start + n] for n in range(1, max_order + 1) for start in range(len(tokens) - n + 1)])


def closest_ref_length(hyp_len: int, ref_lens: Iterable[int]) -> int:
    """Return the reference length closest to ``hyp_len``; ties go to the shorter one.

    Parameters
    ----------
    hyp_len : int
        Hypothesis length.
    ref_lens : iterable of int
        Reference lengths (at least one).

    Returns
    -------
    int
        The chosen reference length.
    """
    return min(ref_lens, key=lambda ref_len: (abs(hyp_len - ref_len), ref_len))


@dataclass(frozen=True)
class ReferenceInfo:
    """What BLEU needs from the references of one segment.

    Attributes
    ----------
    max_counts : collections.Counter
        For every n-gram, its maximum count in any single reference (the clipping table).
    lengths : tuple of int
        The length of every reference.
    """

    max_counts: Counter[Ngram]
    lengths: tuple[int, ...]


def reference_info(refs_tokens: Sequence[Sequence[str] | None], max_order: int = MAX_ORDER) -> ReferenceInfo:
    """Build the clipping table and lengths of one segment's references.

    Parameters
    ----------
    refs_tokens : sequence of (sequence of str or None)
        Reference token lists. ``None`` entries are skipped, which is how a segment gets
        fewer references than the others.
    max_order : int
        Highest n-gram order.

    Raises
    ------
    ValueError
        If every reference is ``None`` (sacreBLEU fails on this too).
    """
    refs = [ref for ref in refs_tokens if ref is not None]
    if not refs:
        raise ValueError("a segment needs at least one reference that is not None")
    max_counts: Counter[Ngram] = Counter()
    for ref in refs:
        for ngram, count in extract_ngrams(ref, max_order).items():
            if count > max_counts[ngram]:
                max_counts[ngram] = count
    return ReferenceInfo(max_counts, tuple(len(ref) for ref in refs))


def stats_from_info(hyp_tokens: Sequence[str], info: ReferenceInfo, max_order: int = MAX_ORDER) -> list[int]:
    """Sufficient statistics of a hypothesis against prepared references.

    Returns
    -------
    list of int
        ``[hyp_len, ref_len, correct_1..N, total_1..N]`` (length ``2 + 2N``).
    """
    correct = [0] * max_order
    total = [0] * max_order
    for ngram, count in extract_ngrams(hyp_tokens, max_order).items():
        order_index = len(ngram) - 1
        total[order_index] += count
        # clipped count: at most as often as in the reference that has it most often
        correct[order_index] += min(count, info.max_counts.get(ngram, 0))
    hyp_len = len(hyp_tokens)
    return [hyp_len, closest_ref_length(hyp_len, info.lengths)] + correct + total


def segment_stats(
    hyp_tokens: Sequence[str],
    refs_tokens: Sequence[Sequence[str] | None],
    max_order: int = MAX_ORDER,
) -> list[int]:
    """Sufficient statistics of one segment.

    Parameters
    ----------
    hyp_tokens : sequence of str
        Hypothesis tokens.
    refs_tokens : sequence of (sequence of str or None)
        Reference token lists; ``None`` entries are skipped.
    max_order : int
        Highest n-gram order N.

    Returns
    -------
    list of int
        ``[hyp_len, ref_len, correct_1..N, total_1..N]`` where ``ref_len`` is the closest
        reference length (ties to the shorter) and ``correct_n`` the clipped matches.

    Examples
    --------
    >>> segment_stats("a b c".split(), ["a b".split(), "a b c d".split()])
    [3, 2, 3, 2, 1, 0, 3, 2, 1, 0]
    """
    return stats_from_info(hyp_tokens, reference_info(refs_tokens, max_order), max_order)


@dataclass(frozen=True)
class PreparedReferences:
    """Reference streams pre-processed once, to score many systems against them.

    Build with :func:`prepare_references`; pass in place of the reference streams.
    """

    infos: tuple[ReferenceInfo, ...]
    tokenize: str
    lowercase: bool
    max_order: int


def prepare_references(
    references: Sequence[Sequence[str | None]],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    max_order: int = MAX_ORDER,
) -> PreparedReferences:
    """Tokenize reference streams and build each segment's :class:`ReferenceInfo`."""
    infos = tuple(
        reference_info(
            [None if ref is None else preprocess(ref, tokenize, lowercase) for ref in segment_refs],
            max_order,
        )
        for segment_refs in zip(*references)
    )
    return PreparedReferences(infos, tokenize, lowercase, max_order)


def corpus_stats(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str | None]] | PreparedReferences,
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    max_order: int = MAX_ORDER,
) -> list[list[int]]:
    """Per-segment statistics of a corpus.

    Parameters
    ----------
    hypotheses : sequence of str
        One hypothesis per segment.
    references : sequence of reference streams, or PreparedReferences
        ``[[ref1_seg1, ref1_seg2, ...], [ref2_seg1, ...]]`` as in sacreBLEU. A segment
        may be ``None`` in a stream. Like sacreBLEU (which uses ``zip``), the corpus is
        silently truncated to the shortest of the hypotheses and the streams.
        With :class:`PreparedReferences`, its own options are used and the keyword
        arguments below are ignored.
    tokenize, lowercase, max_order
        See :func:`preprocess` and :func:`segment_stats`.

    Returns
    -------
    list of list of int
        One row per segment.
    """
    if not isinstance(references, PreparedReferences):
        references = prepare_references(references, tokenize=tokenize, lowercase=lowercase, max_order=max_order)
    prepared = references
    return [
        stats_from_info(preprocess(hypothesis, prepared.tokenize, prepared.lowercase), info, prepared.max_order)
        for hypothesis, info in zip(hypotheses, prepared.infos)
    ]


def sum_stats(rows: Sequence[Sequence[Number]]) -> list[Number]:
    """Column sums of statistics rows (the corpus statistics are plain sums)."""
    if not rows:
        raise ValueError("no statistics rows to sum")
    return [sum(column) for column in zip(*rows)]


# --- score ------------------------------------------------------------------------------


# --- convenience wrappers ---------------------------------------------------------------


def corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str | None]] | PreparedReferences,
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    max_order: int = MAX_ORDER,
) -> BLEUResult:
    """Corpus BLEU (sacreBLEU ``BLEU(...).corpus_score`` defaults).

    Parameters
    ----------
    hypotheses : sequence of str
        System outputs.
    references : sequence of reference streams, or PreparedReferences
        ``[[ref1_seg1, ...], [ref2_seg1, ...]]``; ``None`` segments allowed.
    tokenize, lowercase, smooth_method, smooth_value, effective_order, max_order
        As in :func:`corpus_stats` and :func:`compute_bleu`.

    Returns
    -------
    BLEUResult
    """
    if isinstance(references, PreparedReferences):
        max_order = references.max_order
    rows = corpus_stats(hypotheses, references, tokenize=tokenize, lowercase=lowercase, max_order=max_order)
    return compute_bleu(sum_stats(rows), smooth_method, smooth_value, effective_order, max_order)


def sentence_bleu(
    hypothesis: str,
    references: Sequence[str | None],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = True,
    max_order: int = MAX_ORDER,
) -> BLEUResult:
    """Sentence BLEU of one hypothesis against its references.

    The default ``effective_order=True`` matches sacreBLEU's ``sentence_bleu`` function
    (the ``BLEU`` class defaults to ``False``; pass it explicitly to mimic that).
    """
    refs_tokens = [None if ref is None else preprocess(ref, tokenize, lowercase) for ref in references]
    row = segment_stats(preprocess(hypothesis, tokenize, lowercase), refs_tokens, max_order)
    return compute_bleu(row, smooth_method, smooth_value, effective_order, max_order)
