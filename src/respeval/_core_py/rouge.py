"""ROUGE in Python (``cext/rouge.pxi``): rouge-score's tokenizer to ids, clipped n-gram
overlaps, bit-parallel LCS and the summary-level union LCS, on the same CSR buffers as
the native core.

The LCS runs on Python integers as bit vectors, the same recurrence the core runs on
64-bit words (Hyyro's bit-parallel LCS): bit j of the row vector V_i is set while the
LCS table does *not* step up at column j, so ``T[i][j] = j - popcount(V_i mod 2**j)``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from respeval._core_py.checks import (
    check_csr,
    check_offsets,
    check_pairs,
    check_vocab_size,
    int32_array,
    int64_array,
    text_rows,
)
from respeval._core_py.common import Vocab
from respeval.limits import LCS_MAX_CELLS, RowTooLongError

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def _tokens(text: str) -> list[str]:
    """rouge-score's default tokenizer without stemming: lowercase, runs of [a-z0-9]."""
    return _NON_ALNUM.sub(" ", text.lower()).split()


def tokenize_rouge(
    vocab: Vocab, texts: list, stem: bool = False, threads: int | None = None
) -> tuple[bytes, bytes, bytes, bytes]:
    """Tokenize ``texts`` with rouge-score's default tokenizer into ``vocab`` ids:
    ``(ids, offsets, sent_offsets, row_sents)``, bytes of int32, int64, int64, int64."""
    ids: list[int] = []
    offsets = [0]
    sent_offsets = [0]
    row_sents = [0]
    for row, text in enumerate(texts):
        if not isinstance(text, str):
            what = "None" if text is None else type(text).__name__
            raise TypeError(f"text at row {row} is {what}, not str")
        # rougeLsum's sentences are newline-separated; "\n" is itself a separator, so
        # the sentences' tokens are the whole text's tokens
        for sentence in text.split("\n"):
            tokens = _tokens(sentence)
            for tok in tokens:
                tid = vocab.add(tok)
                ids.append(vocab.stem_id(tid) if stem else tid)
            if tokens:
                sent_offsets.append(len(ids))
        offsets.append(len(ids))
        row_sents.append(len(sent_offsets) - 1)
    return (
        np.array(ids, dtype=np.int32).tobytes(),
        np.array(offsets, dtype=np.int64).tobytes(),
        np.array(sent_offsets, dtype=np.int64).tobytes(),
        np.array(row_sents, dtype=np.int64).tobytes(),
    )


def pair_single_references(predictions: list, references: list) -> tuple[list[str], bytes] | None:
    """``(distinct_references, pair_ref)`` for one str reference per row (pair k is
    row k, ``pair_ref`` int64 bytes), or None when a row is not a plain str."""
    if len(predictions) != len(references) or not all(isinstance(p, str) for p in predictions):
        return None
    index: dict[str, int] = {}
    pair_ref = []
    for r in references:
        if not isinstance(r, str):
            return None
        pair_ref.append(index.setdefault(r, len(index)))
    return list(index), np.array(pair_ref, dtype=np.int64).tobytes()


def arrow_first_rows(texts: Any) -> bytes:
    """For each row of an Arrow string array (no nulls), the first row holding the same
    text, as int64 bytes: the rows sharing a reference point at one of them, so it is
    tokenized once (the kernels take the array itself as the references)."""
    if not (type(texts).__module__.startswith("pyarrow") and str(getattr(texts, "type", "")) in _ARROW_STRINGS):
        raise TypeError(f"expected an Arrow string array, got {type(texts).__name__}")
    seen: dict[str, int] = {}
    first = [seen.setdefault(text, i) for i, text in enumerate(text_rows(texts))]
    return np.array(first, dtype=np.int64).tobytes()


_ARROW_STRINGS = ("string", "large_string")


def _ngrams(tokens: Sequence[int], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _overlap(a: Sequence[int], b: Sequence[int], n: int) -> int:
    """Clipped overlap: sum over n-grams of min(count in a, count in b)."""
    return sum((_ngrams(a, n) & _ngrams(b, n)).values())


def _match_masks(tokens: Sequence[int]) -> dict[int, int]:
    """token -> the bit set of its positions in ``tokens``."""
    masks: dict[int, int] = {}
    for j, t in enumerate(tokens):
        masks[t] = masks.get(t, 0) | (1 << j)
    return masks


def _lcs_rows(rows_of: Sequence[int], bits_of: Sequence[int], masks: dict[int, int] | None = None) -> list[int]:
    """V_0 .. V_len(rows_of) of the bit-parallel LCS, bits over ``bits_of``."""
    full = (1 << len(bits_of)) - 1
    masks = _match_masks(bits_of) if masks is None else masks
    v = full
    out = [v]
    for t in rows_of:
        m = masks.get(t, 0)
        u = v & m
        v = ((v + u) | (v - u)) & full
        out.append(v)
    return out


def _lcs_length(a: Sequence[int], b: Sequence[int]) -> int:
    if not a or not b:
        return 0
    return len(b) - _lcs_rows(a, b)[-1].bit_count()


def rouge_pair_stats(
    pred_ids: Any,
    pred_off: Any,
    ref_ids: Any,
    ref_off: Any,
    pair_pred: Any,
    pair_ref: Any,
    max_order: int,
    want_lcs: bool,
    vocab_size: int,
    overlaps: Any,
    lcs: Any,
    threads: int | None = None,
) -> None:
    """Clipped n-gram overlaps (orders 1..max_order) and LCS lengths per pair: pair k
    compares prediction row ``pair_pred[k]`` with reference row ``pair_ref[k]``."""
    pred_ids, pred_off = int32_array(pred_ids), int64_array(pred_off)
    ref_ids, ref_off = int32_array(ref_ids), int64_array(ref_off)
    pair_pred, pair_ref = int64_array(pair_pred), int64_array(pair_ref)
    if not 0 <= max_order <= 64:
        raise ValueError(f"max_order must be in 0..64, got {max_order}")
    check_vocab_size(vocab_size)
    check_csr(pred_ids, pred_off, vocab_size, "pred_ids", "pred_off")
    check_csr(ref_ids, ref_off, vocab_size, "ref_ids", "ref_off")
    check_pairs(pair_pred, pair_ref, len(pred_off) - 1, len(ref_off) - 1)
    npairs = len(pair_pred)
    if overlaps.shape[0] != npairs or (npairs > 0 and overlaps.shape[1] != max_order):
        raise ValueError(f"overlaps must have shape ({npairs}, {max_order})")
    if want_lcs and lcs.shape[0] != npairs:
        raise ValueError(f"lcs must have length {npairs}")
    for k, (pa, pr) in enumerate(zip(pair_pred.tolist(), pair_ref.tolist())):
        pred = pred_ids[pred_off[pa] : pred_off[pa + 1]].tolist()
        ref = ref_ids[ref_off[pr] : ref_off[pr + 1]].tolist()
        for n in range(1, max_order + 1):
            overlaps[k, n - 1] = _overlap(pred, ref, n)
        if want_lcs:
            lcs[k] = _lcs_length(ref, pred)


def _sentences(ids: np.ndarray, sent_off: np.ndarray, row_sents: np.ndarray, row: int) -> list[list[int]]:
    first, last = row_sents[row], row_sents[row + 1]
    return [ids[sent_off[s] : sent_off[s + 1]].tolist() for s in range(first, last)]


def _union_lcs_hits(ref_sents: list[list[int]], cand_sents: list[list[int]]) -> int:
    """rouge-score's summary-level LCS hits: per reference sentence, the union of the
    positions rouge-score's backtrack picks against every candidate sentence, then
    clipped by the tokens of both texts left to match."""
    marked = [[False] * len(s) for s in ref_sents]
    for cand in cand_sents:
        masks = _match_masks(cand)
        for ref, mark in zip(ref_sents, marked):
            rows = _lcs_rows(ref, cand, masks)
            i, j = len(ref), len(cand)
            while i > 0 and j > 0:
                if ref[i - 1] == cand[j - 1]:
                    mark[i - 1] = True
                    i -= 1
                    j -= 1
                # T[i][j-1] > T[i-1][j], with T[i][j] = j - popcount(V_i mod 2**j)
                elif (j - 1) - (rows[i] & ((1 << (j - 1)) - 1)).bit_count() > j - (
                    rows[i - 1] & ((1 << j) - 1)
                ).bit_count():
                    j -= 1
                else:
                    i -= 1
    left_ref = Counter(t for s in ref_sents for t in s)
    left_cand = Counter(t for s in cand_sents for t in s)
    hits = 0
    for ref, mark in zip(ref_sents, marked):
        for t, m in zip(ref, mark):
            if m and left_ref[t] > 0 and left_cand[t] > 0:
                hits += 1
                left_ref[t] -= 1
                left_cand[t] -= 1
    return hits


def lsum_pair_stats(
    pred_ids: Any,
    pred_sent_off: Any,
    pred_row_sents: Any,
    ref_ids: Any,
    ref_sent_off: Any,
    ref_row_sents: Any,
    pair_pred: Any,
    pair_ref: Any,
    vocab_size: int,
    hits: Any,
    threads: int | None = None,
) -> None:
    """rouge-score's summary-level union-LCS hits per pair (ROUGE-Lsum)."""
    pred_ids, pred_sent_off = int32_array(pred_ids), int64_array(pred_sent_off)
    ref_ids, ref_sent_off = int32_array(ref_ids), int64_array(ref_sent_off)
    pred_row_sents, ref_row_sents = int64_array(pred_row_sents), int64_array(ref_row_sents)
    pair_pred, pair_ref = int64_array(pair_pred), int64_array(pair_ref)
    check_vocab_size(vocab_size)
    check_csr(pred_ids, pred_sent_off, vocab_size, "pred_ids", "pred_sent_off")
    check_csr(ref_ids, ref_sent_off, vocab_size, "ref_ids", "ref_sent_off")
    check_offsets(pred_row_sents, len(pred_sent_off) - 1, "pred_row_sents", "len(pred_sent_off) - 1")
    check_offsets(ref_row_sents, len(ref_sent_off) - 1, "ref_row_sents", "len(ref_sent_off) - 1")
    check_pairs(pair_pred, pair_ref, len(pred_row_sents) - 1, len(ref_row_sents) - 1)
    if hits.shape[0] != len(pair_pred):
        raise ValueError(f"hits must have length {len(pair_pred)}")
    for k, (pa, pr) in enumerate(zip(pair_pred.tolist(), pair_ref.tolist())):
        hits[k] = _union_lcs_hits(
            _sentences(ref_ids, ref_sent_off, ref_row_sents, pr),
            _sentences(pred_ids, pred_sent_off, pred_row_sents, pa),
        )


def rouge_text_stats(
    predictions: Any,
    references: Any,
    pair_pred: Any,
    pair_ref: Any,
    max_order: int,
    want_lcs: bool,
    want_lsum: bool,
    stem: bool,
    stats: Any,
    lengths: Any,
    threads: int | None = None,
) -> None:
    """ROUGE statistics of (prediction, reference) pairs, straight from the texts:
    ``stats[k]`` = clipped n-gram hits of orders 1..max_order, then the LCS length
    (``want_lcs``), then rougeLsum's union-LCS hits (``want_lsum``); ``lengths[k]`` =
    the prediction's and the reference's token counts."""
    pair_pred, pair_ref = int64_array(pair_pred), int64_array(pair_ref)
    if not 0 <= max_order <= 64:
        raise ValueError(f"max_order must be in 0..64, got {max_order}")
    npairs, ncols = len(pair_pred), max_order + want_lcs + want_lsum
    if stats.shape[0] != npairs or (npairs > 0 and stats.shape[1] != ncols):
        raise ValueError(f"stats must have shape ({npairs}, {ncols})")
    if lengths.shape[0] != npairs or (npairs > 0 and lengths.shape[1] != 2):
        raise ValueError(f"lengths must have shape ({npairs}, 2)")
    preds, refs = text_rows(predictions), text_rows(references)
    check_pairs(pair_pred, pair_ref, len(preds), len(refs))
    vocab = Vocab()
    cache: dict[tuple[int, int], list[list[int]]] = {}

    def sentences(side: int, row: int) -> list[list[int]]:
        got = cache.get((side, row))
        if got is None:
            text = (preds, refs)[side][row]
            got = []
            for sentence in text.split("\n"):
                tokens = [vocab.add(t) for t in _tokens(sentence)]
                got.append([vocab.stem_id(t) for t in tokens] if stem else tokens)
            cache[(side, row)] = got
        return got

    for k, (pa, pr) in enumerate(zip(pair_pred.tolist(), pair_ref.tolist())):
        pred_sents, ref_sents = sentences(0, pa), sentences(1, pr)
        pred = [t for s in pred_sents for t in s]
        ref = [t for s in ref_sents for t in s]
        lengths[k] = len(pred), len(ref)
        if (want_lcs or want_lsum) and len(pred) * len(ref) > LCS_MAX_CELLS:
            raise RowTooLongError(
                pa,
                f"the LCS table of the prediction ({len(pred):,} tokens) and its reference ({len(ref):,} tokens)",
                len(pred) * len(ref),
                LCS_MAX_CELLS,
                "ROUGE-L" if want_lcs else "ROUGE-Lsum",
                "cells",
            )
        row = [_overlap(pred, ref, n) for n in range(1, max_order + 1)]
        if want_lcs:
            row.append(_lcs_length(ref, pred))
        if want_lsum:
            row.append(_union_lcs_hits([s for s in ref_sents if s], [s for s in pred_sents if s]))
        stats[k] = row


def rouge_scores(stats: Any, lengths: Any, columns: Any, orders: Any, scores: Any, threads: int | None = None) -> None:
    """rouge-score's precision, recall and F of every pair for each type t: its hits are
    ``stats[:, columns[t]]``; ``orders[t]`` is n for rouge-N (totals: token counts
    minus n - 1) or 0 for rougeL / rougeLsum (totals: the token counts); ``lengths``
    holds each pair's prediction and reference token counts.  ``scores`` is
    ``float64[3 * types, pairs]``: rows p, r, f of type 0, then of type 1, ..."""
    stats, lengths = np.asarray(stats, np.int64), np.asarray(lengths, np.int64)
    columns, orders = int64_array(columns), int64_array(orders)
    npairs, ntypes = stats.shape[0], len(columns)
    if lengths.shape[0] != npairs or (npairs > 0 and lengths.shape[1] != 2):
        raise ValueError(f"lengths must have shape ({npairs}, 2)")
    if len(orders) != ntypes:
        raise ValueError(f"orders must have one entry per column ({ntypes})")
    if scores.shape[0] != 3 * ntypes or (ntypes > 0 and scores.shape[1] != npairs):
        raise ValueError(f"scores must have shape ({3 * ntypes}, {npairs})")
    for t in range(ntypes):
        if not 0 <= columns[t] < stats.shape[1]:
            raise ValueError(f"columns[{t}] = {columns[t]} is not a column of stats ({stats.shape[1]} columns)")
        if not 0 <= orders[t] <= 64:
            raise ValueError(f"orders[{t}] = {orders[t]} is not in 0..64")
    if npairs == 0:
        return
    for t in range(ntypes):
        hits = stats[:, columns[t]]
        shorter = max(int(orders[t]) - 1, 0)  # an n-gram is n - 1 tokens shorter than the text
        p = hits / np.maximum(lengths[:, 0] - shorter, 1)
        r = hits / np.maximum(lengths[:, 1] - shorter, 1)
        total = p + r
        scores[3 * t] = p
        scores[3 * t + 1] = r
        scores[3 * t + 2] = np.where(total > 0, 2 * p * r / np.where(total > 0, total, 1.0), 0.0)
