"""TER in Python (``cext/ter.pxi``): sacreBLEU's Tercom normaliser to word ids, and its
beam edit distance and greedy block-shift search on those ids, with every limit and
tie-break of ``sacrebleu/metrics/lib_ter.py`` (the tests' oracle
``tests/_helpers/reference/ter.py`` is the readable spec).

The one change of formulation, shared with the native core: where sacreBLEU caches DP
rows in a trie of hypothesis prefixes, a shifted candidate here recomputes rows only
from its first changed position, reusing the current hypothesis' rows before it (row
``i`` depends on the first ``i`` words only), which is the same arithmetic.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from respeval._core_py.checks import csr_bytes, multi_reference_rows, text_rows
from respeval._core_py.common import Vocab
from respeval.limits import TER_MAX_WORDS, RowTooLongError
from respeval.tokenizers.tercom import tercom_normalize


def tercom_tokens(
    texts: Any, normalized: bool = False, no_punct: bool = False, asian_support: bool = False, twice: bool = False
) -> list[list[str]]:
    """sacrebleu 2.6.0's ``TercomTokenizer(...)(t.rstrip()).split()`` of every text,
    for texts already lowercased (unless TER is case-sensitive); ``twice`` runs the
    normaliser a second time on the joined words, as sacreBLEU does to references."""
    out = []
    for text in text_rows(texts):
        words = tercom_normalize(text.rstrip(), normalized, no_punct, asian_support, True)
        if twice:
            words = tercom_normalize(words, normalized, no_punct, asian_support, True)
        out.append(words.split())
    return out


def tercom_ids(
    vocab: Vocab,
    texts: Any,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    twice: bool = False,
) -> tuple[bytes, bytes]:
    """``tercom_tokens`` of every text as ids of ``vocab``: ``(int32 ids, int64 offsets)``."""
    rows = tercom_tokens(texts, normalized, no_punct, asian_support, twice)
    return csr_bytes([[vocab.add(w) for w in row] for row in rows])


MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000
_INF = 1 << 40
# edit operations of the DP cells (rewriting the hypothesis into the reference)
_MATCH, _SUB, _EXTRA_HYP, _MISSING_REF, _UNDEF = range(5)


class _Table:
    """DP rows of the beam edit distance of one hypothesis length against one reference."""

    def __init__(self, ref: list[int], n: int) -> None:
        self.ref, self.n, self.m = ref, n, len(ref)
        ratio = self.m / n if n else 1
        self.ratio = ratio
        self.beam = math.ceil(ratio / 2 + BEAM_WIDTH) if BEAM_WIDTH < ratio / 2 else BEAM_WIDTH

    def row(self, prev: list[int], word: int, i: int, ops: list[int] | None) -> list[int]:
        """Row ``i`` from row ``i - 1`` and the i-th word; ``ops`` receives each cell's
        operation (ties: match/substitution, then extra hypothesis word, then missing
        reference word; a later candidate wins only when strictly cheaper)."""
        ref, m1 = self.ref, self.m + 1
        cur = [_INF] * m1
        diagonal = math.floor(i * self.ratio)
        lo = max(0, diagonal - self.beam)
        hi = m1 if i == self.n else min(m1, diagonal + self.beam)
        if lo == 0:
            cur[0] = prev[0] + 1
            if ops is not None:
                ops[0] = _EXTRA_HYP
            lo = 1
        for j in range(lo, hi):
            eq = word == ref[j - 1]
            best, op = prev[j - 1] + (not eq), _MATCH if eq else _SUB
            if best >= _INF:
                best, op = _INF, _UNDEF
            if prev[j] + 1 < best:
                best, op = prev[j] + 1, _EXTRA_HYP
            if cur[j - 1] + 1 < best:
                best, op = cur[j - 1] + 1, _MISSING_REF
            cur[j] = best
            if ops is not None:
                ops[j] = op
        return cur

    def full(self, words: list[int]) -> tuple[list[list[int]], list[list[int]]]:
        rows = [list(range(self.m + 1))]
        ops = [[_MISSING_REF] * (self.m + 1)]
        for i in range(1, self.n + 1):
            op = [_UNDEF] * (self.m + 1)
            rows.append(self.row(rows[-1], words[i - 1], i, op))
            ops.append(op)
        return rows, ops

    def distance_from(self, rows: list[list[int]], words: list[int], start: int) -> int:
        """Distance of ``words``, equal to the words of ``rows`` before position ``start``."""
        prev = rows[start]
        for i in range(start + 1, self.n + 1):
            prev = self.row(prev, words[i - 1], i, None)
        return prev[self.m]


def _alignment(ops: list[list[int]], n: int, m: int) -> tuple[list[int], list[bool], list[bool]]:
    """Backtrace: reference position -> the hypothesis position aligned to it (a missing
    reference word maps to the hypothesis position before it), and the error flags."""
    path = []
    i, j = n, m
    while i > 0 or j > 0:
        op = ops[i][j]
        path.append(op)
        if op in (_MATCH, _SUB):
            i, j = i - 1, j - 1
        elif op == _MISSING_REF:
            j -= 1
        elif op == _EXTRA_HYP:
            i -= 1
        else:  # pragma: no cover - the optimal path never leaves the beam
            raise RuntimeError(f"undefined edit operation at cell ({i}, {j})")
    align = [0] * m
    ref_err: list[bool] = []
    hyp_err: list[bool] = []
    h = r = -1
    for op in reversed(path):
        if op in (_MATCH, _SUB):
            h, r = h + 1, r + 1
            align[r] = h
            hyp_err.append(op == _SUB)
            ref_err.append(op == _SUB)
        elif op == _EXTRA_HYP:
            h += 1
            hyp_err.append(True)
        else:
            r += 1
            align[r] = h
            ref_err.append(True)
    return align, ref_err, hyp_err


def _move(words: list[int], start: int, length: int, target: int) -> list[int]:
    """sacreBLEU's block move of ``words[start:start+length]`` to ``target``."""
    block = words[start : start + length]
    if target < start:
        return words[:target] + block + words[target:start] + words[start + length :]
    if target > start + length:
        return words[:start] + words[start + length : target] + block + words[target:]
    return words[:start] + words[start + length : length + target] + block + words[length + target :]


def _edits(hyp: list[int], ref: list[int]) -> int:
    """Shifts plus beam edit distance that turn ``hyp`` into ``ref`` (sacreBLEU's
    ``translation_edit_rate``); an empty reference costs one edit per hypothesis word."""
    if not ref:
        return len(hyp)
    n, m = len(hyp), len(ref)
    table = _Table(ref, n)
    words = list(hyp)
    shifts = checked = 0
    while True:
        rows, ops = table.full(words)
        current = rows[n][m]
        align, ref_err, hyp_err = _alignment(ops, n, m)
        best: tuple[int, int, int, int] | None = None
        best_words = words
        stop = False
        for h in range(n):
            for r in range(max(0, h - MAX_SHIFT_DIST), min(m, h + MAX_SHIFT_DIST + 1)):
                herr = rerr = False
                length = 0
                while length < MAX_SHIFT_SIZE and h + length < n and r + length < m:
                    if words[h + length] != ref[r + length]:
                        break
                    herr |= hyp_err[h + length]
                    rerr |= ref_err[r + length]
                    length += 1
                    # only a run that is wrong where it is, fixes an error where it goes
                    # and is not aligned onto itself already
                    if not herr or not rerr or h <= align[r] < h + length:
                        continue
                    previous_target = -1
                    for offset in range(-1, length):
                        target = 0 if r + offset == -1 else align[r + offset] + 1
                        if target == previous_target:
                            continue
                        previous_target = target
                        shifted = _move(words, h, length, target)
                        gain = current - table.distance_from(rows, shifted, min(h, target))
                        checked += 1
                        # Tercom's ranking: gain, then length, earliest start, earliest target
                        key = (gain, length, -h, -target)
                        if best is None or key > best:
                            best, best_words = key, shifted
                    if checked >= MAX_SHIFT_CANDIDATES:
                        stop = True
                        break
                if stop:
                    break
            if stop:
                break
        # a round that reached the limit drops its best shift (as sacreBLEU)
        if checked >= MAX_SHIFT_CANDIDATES or best is None or best[0] <= 0:
            return shifts + current
        shifts += 1
        words = best_words


def ter_edits(
    hyp_ids: Any,
    hyp_off: Any,
    ref_ids: Any,
    ref_off: Any,
    row_refs: Any,
    vocab_size: int,
    edits: Any,
    threads: int | None = None,
) -> None:
    """sacreBLEU's TER edits per row: the minimum over the row's references (reference
    rows ``row_refs[k] .. row_refs[k+1]``, at least one) of shifts + edit distance.
    ``edits`` is ``int64[rows]``."""
    hyp_ids, hyp_off, ref_ids, ref_off, row_refs = multi_reference_rows(
        hyp_ids, hyp_off, ref_ids, ref_off, row_refs, vocab_size
    )
    n = len(hyp_off) - 1
    if np.any(np.diff(row_refs) < 1):
        k = int(np.flatnonzero(np.diff(row_refs) < 1)[0])
        raise ValueError(f"row {k} has no reference (row_refs[{k}] == row_refs[{k + 1}])")
    if edits.shape[0] != n:
        raise ValueError(f"edits must have length {n}")
    hyp_len, ref_len = np.diff(hyp_off), np.diff(ref_off)
    for k in range(n):
        if hyp_len[k] > TER_MAX_WORDS:
            raise RowTooLongError(k, "the hypothesis", int(hyp_len[k]), TER_MAX_WORDS, "TER")
        longest = int(ref_len[row_refs[k] : row_refs[k + 1]].max())
        if longest > TER_MAX_WORDS:
            raise RowTooLongError(k, "the reference", longest, TER_MAX_WORDS, "TER")
    for k in range(n):
        hyp = hyp_ids[hyp_off[k] : hyp_off[k + 1]].tolist()
        edits[k] = min(
            _edits(hyp, ref_ids[ref_off[j] : ref_off[j + 1]].tolist()) for j in range(row_refs[k], row_refs[k + 1])
        )
