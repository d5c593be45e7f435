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

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Union

from respeval.tokenizers.sacrebleu_tokenizers import get_tokenizer

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

MAX_ORDER = 4

#: Default smoothing values (Chen & Cherry 2014); ``None`` = the method takes no value.
SMOOTH_DEFAULTS = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}

#: log(0) replacement used by sacreBLEU; keeps the geometric mean finite but ~0.
LOG_ZERO = -9999999999

Number = Union[int, float]
Ngram = tuple[str, ...]


@dataclass
class BLEUResult:
    """A BLEU score and the numbers it was computed from.

    Attributes
    ----------
    score : float
        BLEU on the 0-100 scale.
    counts : list
        Matched n-grams per order (after ``add-k`` smoothing, if used).
    totals : list
        Hypothesis n-grams per order (after ``add-k`` smoothing, if used).
    precisions : list of float
        Smoothed n-gram precisions on the 0-100 scale.
    bp : float
        Brevity penalty.
    sys_len : int
        Hypothesis length (tokens).
    ref_len : int
        Effective reference length (tokens).
    """

    score: float
    counts: list[Number]
    totals: list[Number]
    precisions: list[float]
    bp: float
    sys_len: int
    ref_len: int

    @property
    def ratio(self) -> float:
        """Hypothesis / reference length ratio (0 if the reference length is 0)."""
        return self.sys_len / self.ref_len if self.ref_len else 0

    def format(self, width: int = 2) -> str:
        """Render like sacreBLEU, e.g. ``BLEU = 20.80 54.4/26.6/14.9/8.7 (BP = 1.000 ...)``."""
        precisions = "/".join(f"{p:.1f}" for p in self.precisions)
        return (
            f"BLEU = {self.score:.{width}f} {precisions} (BP = {self.bp:.3f} "
            f"ratio = {self.ratio:.3f} hyp_len = {self.sys_len:d} "
            f"ref_len = {self.ref_len:d})"
        )


# --- pre-processing and statistics -------------------------------------------------------


def preprocess(sentence: str, tokenize: str = "13a", lowercase: bool = False) -> list[str]:
    """Turn a segment into BLEU tokens exactly as sacreBLEU does.

    Parameters
    ----------
    sentence : str
        The raw segment.
    tokenize : str
        Tokenizer name (see :func:`respeval.tokenizers.sacrebleu_tokenizers.get_tokenizer`).
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


def my_log(value: float) -> float:
    """Natural log with ``log(0)`` replaced by ``-9999999999`` (sacreBLEU's ``my_log``)."""
    if value == 0.0:
        return LOG_ZERO
    return math.log(value)


def brevity_penalty(sys_len: int, ref_len: int) -> float:
    """``1`` if the hypothesis is not shorter, else ``exp(1 - r/c)``; ``0`` if empty."""
    if sys_len >= ref_len:
        return 1.0
    if sys_len == 0:
        return 0.0
    return math.exp(1 - ref_len / sys_len)


def compute_bleu(
    stats: Sequence[Number],
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    max_order: int = MAX_ORDER,
) -> BLEUResult:
    """BLEU from (summed) sufficient statistics, exactly as sacreBLEU's ``compute_bleu``.

    Parameters
    ----------
    stats : sequence of numbers
        ``[sys_len, ref_len, correct_1..N, total_1..N]``; a single segment's row or the
        sum of many rows. Not modified.
    smooth_method : {"exp", "floor", "add-k", "none"}
        ``exp``: the k-th zero-match order gets precision ``100 / (2**k * total)``
        (mteval NIST smoothing). ``floor``: ``100 * value / total`` for zero matches.
        ``add-k``: ``value`` added to correct and total for orders >= 2. ``none``.
    smooth_value : float, optional
        The value for ``floor`` (default 0.1) and ``add-k`` (default 1).
    effective_order : bool
        Average over orders 1..eff only, eff being the highest order with at least one
        hypothesis n-gram (sentence-level BLEU).
    max_order : int
        N.

    Returns
    -------
    BLEUResult
        The score and its components.
    """
    if smooth_method not in SMOOTH_DEFAULTS:
        raise ValueError(f"unknown smooth_method {smooth_method!r}")
    if smooth_value is None:
        smooth_value = SMOOTH_DEFAULTS[smooth_method]

    # Lists of the caller's elements (ints, floats or numpy scalars): add-k modifies them.
    correct = list(stats[2 : 2 + max_order])
    total = list(stats[2 + max_order : 2 + 2 * max_order])
    sys_len, ref_len = int(stats[0]), int(stats[1])

    bp = brevity_penalty(sys_len, ref_len)
    precisions = [0.0] * max_order

    # No match at any order: 0 whatever the smoothing (sacreBLEU #141). Counts unsmoothed.
    if not any(correct):
        return BLEUResult(0.0, correct, total, precisions, bp, sys_len, ref_len)

    zero_match_factor = 1.0  # exp smoothing: doubles at every zero-match order
    eff_order = max_order
    for n in range(1, max_order + 1):
        i = n - 1
        if smooth_method == "add-k" and n > 1:
            correct[i] += smooth_value
            total[i] += smooth_value
        if total[i] == 0:
            break  # the hypothesis is shorter than n tokens: no higher order exists
        if effective_order:
            eff_order = n
        # Keep sacreBLEU's operation order (100. * c / t etc.): with float32 inputs the
        # rounding of every intermediate matters for bit-identical bootstrap scores.
        if correct[i] == 0:
            if smooth_method == "exp":
                zero_match_factor *= 2
                precisions[i] = 100.0 / (zero_match_factor * total[i])
            elif smooth_method == "floor":
                precisions[i] = 100.0 * smooth_value / total[i]
            # "none" and "add-k" leave the precision at 0.0
        else:
            precisions[i] = 100.0 * correct[i] / total[i]

    log_sum = sum([my_log(p) for p in precisions[:eff_order]])
    score = bp * math.exp(log_sum / eff_order)
    return BLEUResult(score, correct, total, precisions, bp, sys_len, ref_len)


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
