"""Reference (pure-Python) TER, identical to sacreBLEU 2.6.0.

TER = (word edits + block shifts) / reference length. sacreBLEU approximates Tercom with
a greedy search: repeatedly apply the block shift that lowers the edit distance most,
until none helps; the edit distance itself is a beam-restricted Levenshtein distance.
This module reproduces that search exactly, including its limits and tie-breaks:

* all costs 1; beam of 25 cells either side of the (length-ratio) diagonal, widened for
  very unequal lengths; the last DP row is always computed in full;
* cell ties prefer match/substitution, then "extra hypothesis word", then "missing
  reference word";
* shift candidates: equal word runs of length 1..10 whose start positions differ by at
  most 50, where the hypothesis run contains an error, the reference run contains an
  error, and the run is not already aligned onto itself; each is tried at every distinct
  target position derived from the alignment;
* the best candidate maximises (gain, length, -hyp start, -target); the search stops when
  the gain is <= 0 or once 1000 candidates have been evaluated in total for the segment
  (in which case the best shift of that last round is *not* applied).

Segment statistics are ``[edits, average reference length]``: the minimum edits over
the references and the mean of their lengths (a float; a whole number for one
reference). The corpus score is :func:`compute_ter` of the column sums.

sacreBLEU applies the normaliser to references **twice** and to hypotheses once; with
``normalized=True`` the second pass can split more (a possessive ``'s`` followed by
punctuation after the first pass), and :func:`segment_stats` does the same.

The Tercom normaliser (:func:`tercom_normalize`, sacreBLEU's ``TercomTokenizer``): by default it
only lowercases; ``normalized`` adds mteval-like punctuation splitting and possessive
``'s``; ``no_punct`` deletes ``.,?:;!"()``; ``asian_support`` extends both to CJK.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Union

from _helpers.reference.scores import TERResult, compute_ter
from _helpers.reference.tokenizers import tercom_normalize

__all__ = [
    "TERResult",
    "compute_ter",
    "corpus_stats",
    "corpus_ter",
    "edit_distance",
    "segment_stats",
    "sentence_ter",
    "sum_stats",
    "tercom_normalize",
    "translation_edit_rate",
]

Number = Union[int, float]

# Tercom's limits, as sacreBLEU sets them.
MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000
# Bounds the memory of the prefix cache; it never changes a result.
MAX_CACHE_ROWS = 10000
INF = int(1e16)


# =========================================================================================
# Beam edit distance with a prefix cache
# =========================================================================================

# Edit operations recorded in the DP cells, rewriting the hypothesis into the reference.
_MATCH = " "
_SUB = "s"
_EXTRA_HYP = "h"  # hypothesis word with no reference counterpart (a deletion)
_MISSING_REF = "r"  # reference word with no hypothesis counterpart (an insertion)
_UNDEF = "x"  # cell outside the beam

# One DP row: the costs and the operation that reached each cell.
Row = tuple[list[int], list[str]]


class _BeamEditDistance:
    """Word-level Levenshtein distance from many hypotheses to one reference.

    All hypotheses given to one instance must have the same length (true during the
    shift search, which only reorders words): row ``i`` of the DP matrix then depends
    only on the first ``i`` hypothesis words, so rows are cached in a trie keyed by the
    hypothesis prefix and a new hypothesis recomputes only the rows after its longest
    cached prefix.
    """

    def __init__(self, ref: Sequence[str], hyp_len: int) -> None:
        self.ref = list(ref)
        self.hyp_len = hyp_len
        n_ref = len(self.ref)
        # Row 0: reaching reference position j costs j missing reference words.
        self.first_row: Row = (list(range(n_ref + 1)), [_MISSING_REF] * (n_ref + 1))
        # Beam geometry: cells near the "diagonal" i * n_ref / n_hyp.
        self.ratio = n_ref / hyp_len if hyp_len else 1
        if BEAM_WIDTH < self.ratio / 2:
            # very unequal lengths: widen so consecutive rows still overlap
            self.beam = math.ceil(self.ratio / 2 + BEAM_WIDTH)
        else:
            self.beam = BEAM_WIDTH
        # trie: word -> (child trie, row after that word)
        self._trie: dict[str, tuple[dict, Row]] = {}
        self._cached_rows = 0

    def __call__(self, hyp: Sequence[str]) -> tuple[int, list[Row]]:
        """Return the edit distance and all DP rows (row i = after i hypothesis words)."""
        assert len(hyp) == self.hyp_len
        rows = [self.first_row]
        node = self._trie
        # reuse the rows of the longest cached prefix
        for word in hyp:
            if word not in node:
                break
            node, row = node[word]
            rows.append(row)
        # compute (and cache) the remaining rows
        for i in range(len(rows), self.hyp_len + 1):
            row = self._next_row(rows[-1], hyp[i - 1], i)
            rows.append(row)
            if self._cached_rows < MAX_CACHE_ROWS:
                child: dict = {}
                node[hyp[i - 1]] = (child, row)
                node = child
                self._cached_rows += 1
        return rows[-1][0][-1], rows

    def _next_row(self, prev: Row, word: str, i: int) -> Row:
        """DP row ``i`` from row ``i - 1`` and the ``i``-th hypothesis word."""
        ref = self.ref
        n_cells = len(ref) + 1
        prev_costs = prev[0]
        costs = [INF] * n_cells
        ops = [_UNDEF] * n_cells

        diagonal = math.floor(i * self.ratio)
        lo = max(0, diagonal - self.beam)
        hi = n_cells if i == self.hyp_len else min(n_cells, diagonal + self.beam)
        if lo == 0:
            costs[0], ops[0] = prev_costs[0] + 1, _EXTRA_HYP
            lo = 1
        for j in range(lo, hi):
            # Candidates in preference order; a later one wins only if strictly cheaper.
            # The cell starts undefined at INF, so a cell whose neighbours are all outside
            # the beam stays undefined.
            best, best_op = INF, _UNDEF
            if word == ref[j - 1]:
                cost, op = prev_costs[j - 1], _MATCH
            else:
                cost, op = prev_costs[j - 1] + 1, _SUB
            if cost < best:
                best, best_op = cost, op
            cost = prev_costs[j] + 1
            if cost < best:
                best, best_op = cost, _EXTRA_HYP
            cost = costs[j - 1] + 1
            if cost < best:
                best, best_op = cost, _MISSING_REF
            costs[j], ops[j] = best, best_op
        return costs, ops


def _backtrace(rows: list[Row]) -> list[str]:
    """Operations along the optimal path, from the top-left to the bottom-right cell."""
    i, j = len(rows) - 1, len(rows[0][0]) - 1
    path: list[str] = []
    while i > 0 or j > 0:
        op = rows[i][1][j]
        path.append(op)
        if op in (_MATCH, _SUB):
            i, j = i - 1, j - 1
        elif op == _MISSING_REF:
            j -= 1
        elif op == _EXTRA_HYP:
            i -= 1
        else:  # pragma: no cover - the optimal path never leaves the beam
            raise RuntimeError(f"undefined edit operation at cell ({i}, {j})")
    path.reverse()
    return path


def _alignment(path: Sequence[str]) -> tuple[dict[int, int], list[int], list[int]]:
    """Alignment and error flags from an edit path.

    Returns
    -------
    align : dict
        Reference position -> hypothesis position it is aligned to; a missing reference
        word maps to the last hypothesis position before it (-1 at the start).
    ref_err, hyp_err : list of int
        1 where the reference (hypothesis) word is not matched exactly.
    """
    align: dict[int, int] = {}
    ref_err: list[int] = []
    hyp_err: list[int] = []
    h = r = -1
    for op in path:
        if op in (_MATCH, _SUB):
            h += 1
            r += 1
            align[r] = h
            error = int(op == _SUB)
            hyp_err.append(error)
            ref_err.append(error)
        elif op == _EXTRA_HYP:
            h += 1
            hyp_err.append(1)
        else:  # _MISSING_REF
            r += 1
            align[r] = h
            ref_err.append(1)
    return align, ref_err, hyp_err


# =========================================================================================
# Shift search
# =========================================================================================


def _matching_runs(hyp: Sequence[str], ref: Sequence[str]) -> Iterator[tuple[int, int, int]]:
    """Yield ``(hyp_start, ref_start, length)`` for every equal word run.

    Runs start at positions at most ``MAX_SHIFT_DIST`` apart and are 1..``MAX_SHIFT_SIZE``
    words long; every prefix length of a longer run is yielded too, shortest first.
    """
    n_hyp, n_ref = len(hyp), len(ref)
    for h in range(n_hyp):
        for r in range(n_ref):
            if abs(r - h) > MAX_SHIFT_DIST:
                continue
            length = 0
            while (
                length < MAX_SHIFT_SIZE
                and h + length < n_hyp
                and r + length < n_ref
                and hyp[h + length] == ref[r + length]
            ):
                length += 1
                yield h, r, length


def _move_block(words: Sequence[str], start: int, length: int, target: int) -> list[str]:
    """Move ``words[start:start+length]`` to ``target``, as sacreBLEU defines it.

    A target before the block inserts it before ``words[target]``; a target after the
    block's end inserts it before ``words[target]`` too; a target inside
    ``[start, start+length]`` moves the block right by ``target - start`` words.
    """
    words = list(words)
    block = words[start : start + length]
    if target < start:
        return words[:target] + block + words[target:start] + words[start + length :]
    if target > start + length:
        return words[:start] + words[start + length : target] + block + words[target:]
    return words[:start] + words[start + length : length + target] + block + words[length + target :]


def _best_shift(
    hyp: list[str], ref: Sequence[str], distance: _BeamEditDistance, checked: int
) -> tuple[int, list[str], int]:
    """Find the shift that lowers the edit distance most.

    Returns
    -------
    gain : int
        Edit distance reduction of the best candidate (0 if there is no candidate).
    words : list of str
        The hypothesis after that shift (``hyp`` itself if none).
    checked : int
        Running count of candidates evaluated for this segment.
    """
    current, rows = distance(hyp)
    align, ref_err, hyp_err = _alignment(_backtrace(rows))

    best_key: tuple[int, int, int, int] | None = None
    best_words = hyp
    for h, r, length in _matching_runs(hyp, ref):
        # only move a run that is wrong where it is and fixes an error where it goes
        if not any(hyp_err[h : h + length]) or not any(ref_err[r : r + length]):
            continue
        if h <= align[r] < h + length:
            continue  # the run is already aligned onto itself

        previous_target = -1
        for offset in range(-1, length):
            if r + offset == -1:
                target = 0  # before the first word
            elif r + offset in align:
                target = align[r + offset] + 1  # after the word aligned to ref[r+offset]
            else:  # pragma: no cover - every reference position is aligned
                break
            if target == previous_target:
                continue
            previous_target = target

            shifted = _move_block(hyp, h, length, target)
            gain = current - distance(shifted)[0]
            checked += 1
            # Tercom's ranking: biggest gain, then longest run, earliest start, earliest target.
            key = (gain, length, -h, -target)
            if best_key is None or key > best_key:
                best_key, best_words = key, shifted

        if checked >= MAX_SHIFT_CANDIDATES:
            break

    if best_key is None:
        return 0, hyp, checked
    return best_key[0], best_words, checked


def translation_edit_rate(hyp: Sequence[str], ref: Sequence[str]) -> tuple[int, int]:
    """Edits (shifts + Levenshtein) to turn ``hyp`` into ``ref``, and the reference length.

    Parameters
    ----------
    hyp, ref : sequence of str
        Hypothesis and reference words.

    Returns
    -------
    (int, int)
        Number of edits, number of reference words. An empty reference costs one edit
        per hypothesis word.
    """
    if not ref:
        return len(hyp), 0
    words = list(hyp)
    distance = _BeamEditDistance(ref, len(words))
    shifts = 0
    checked = 0
    while True:
        gain, shifted, checked = _best_shift(words, ref, distance, checked)
        if checked >= MAX_SHIFT_CANDIDATES or gain <= 0:
            break  # note: a shift found in a round that hit the limit is dropped
        shifts += 1
        words = shifted
    return shifts + distance(words)[0], len(ref)


def edit_distance(hyp: Sequence[str], ref: Sequence[str]) -> int:
    """Beam-restricted word Levenshtein distance without shifts (TER's inner distance)."""
    return _BeamEditDistance(ref, len(hyp))(hyp)[0]


# =========================================================================================
# Statistics and score
# =========================================================================================


def segment_stats(
    hypothesis: str,
    references: Sequence[str | None],
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> list[Number]:
    """``[min edits over references, mean reference length]`` of one segment.

    Parameters
    ----------
    hypothesis : str
        The hypothesis.
    references : sequence of (str or None)
        References; ``None`` entries are skipped.
    normalized, no_punct, asian_support, case_sensitive
        See :func:`tercom_normalize`.

    Returns
    -------
    list
        ``[int edits, float average reference length]``.
    """
    refs = [ref for ref in references if ref is not None]
    if not refs:
        raise ValueError("a segment needs at least one reference that is not None")
    options = (normalized, no_punct, asian_support, case_sensitive)
    hyp_words = tercom_normalize(hypothesis.rstrip(), *options).split()

    best_edits = INF
    ref_length_sum = 0
    for ref in refs:
        # sacreBLEU normalises a reference twice (when caching it and again when splitting
        # it into words). With normalized=True that is not a no-op: "nima's ," becomes
        # "nima 's ," on the second pass. Hypotheses are normalised once.
        ref_words = tercom_normalize(tercom_normalize(ref.rstrip(), *options), *options).split()
        edits, ref_len = translation_edit_rate(hyp_words, ref_words)
        ref_length_sum += ref_len
        best_edits = min(best_edits, edits)
    return [best_edits, ref_length_sum / len(refs)]


def corpus_stats(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str | None]],
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> list[list[Number]]:
    """Per-segment statistics; ``references`` are streams (``None`` allowed), truncated like ``zip``."""
    options = dict(normalized=normalized, no_punct=no_punct, asian_support=asian_support, case_sensitive=case_sensitive)
    return [
        segment_stats(hypothesis, list(segment_refs), **options)
        for hypothesis, *segment_refs in zip(hypotheses, *references)
    ]


def sum_stats(rows: Sequence[Sequence[Number]]) -> list[Number]:
    """Column sums with a running ``+=``, as sacreBLEU adds rows.

    The average reference lengths are floats; a plain loop keeps the rounding identical
    to sacreBLEU's on every Python version (``sum()`` of floats is compensated in 3.12+).
    """
    if not rows:
        raise ValueError("no segments to score")
    totals = list(rows[0])
    for row in rows[1:]:
        for i, value in enumerate(row):
            totals[i] += value
    return totals


def corpus_ter(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str | None]],
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> TERResult:
    """Corpus TER, like ``TER(...).corpus_score(hypotheses, references)``."""
    rows = corpus_stats(
        hypotheses,
        references,
        normalized=normalized,
        no_punct=no_punct,
        asian_support=asian_support,
        case_sensitive=case_sensitive,
    )
    return compute_ter(sum_stats(rows))


def sentence_ter(
    hypothesis: str,
    references: Sequence[str | None],
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> TERResult:
    """Sentence TER of one hypothesis against its references."""
    return compute_ter(
        segment_stats(
            hypothesis,
            references,
            normalized=normalized,
            no_punct=no_punct,
            asian_support=asian_support,
            case_sensitive=case_sensitive,
        )
    )
