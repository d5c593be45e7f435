"""Pure-Python twin of the ROUGE part of ``respeval._core``: the readable spec.

Same names, signatures and outputs as the compiled module, so the backend
switch (``RESPEVAL_IMPLEMENTATION=python``) and the differential tests can swap
one for the other.  Everything here follows google-research ``rouge-score``
0.1.2 step by step; it is slow on purpose and only meant to be obviously right.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from respeval.tokenizers.porter import stem as porter_stem

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_SPACES = re.compile(r"\s+")
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")


def openmp_threads() -> int:
    """The reference runs on one thread."""
    return 1


class Vocab:
    """Token string -> dense id, in first-seen order (as the native Vocab)."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._tokens: list[str] = []
        self._stem_of: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._tokens)

    def add(self, token: str) -> int:
        tid = self._ids.get(token)
        if tid is None:
            tid = len(self._tokens)
            self._ids[token] = tid
            self._tokens.append(token)
        return tid

    def get(self, token: str, default: int = -1) -> int:
        return self._ids.get(token, default)

    def token(self, i: int) -> str:
        if not 0 <= i < len(self._tokens):
            raise IndexError(f"token id {i} out of range for a vocabulary of {len(self._tokens)}")
        return self._tokens[i]

    def tokens(self) -> list[str]:
        return list(self._tokens)

    def intern(self, tokens: list[str]) -> bytes:
        for i, t in enumerate(tokens):
            if not isinstance(t, str):
                raise TypeError(f"token {i} is {type(t).__name__}, not str")
        return np.array([self.add(t) for t in tokens], dtype=np.int32).tobytes()

    def stem_id(self, tid: int) -> int:
        """Id of the stem of token ``tid`` (interned after the raw token, as the core does)."""
        sid = self._stem_of.get(tid)
        if sid is None:
            word = self._tokens[tid]
            sid = self.add(porter_stem(word)) if len(word) > 3 else tid
            self._stem_of[tid] = sid
        return sid


def rouge_tokens(text: str) -> list[str]:
    """rouge-score's default tokenizer without stemming."""
    text = _NON_ALNUM.sub(" ", text.lower())
    return [t for t in _SPACES.split(text) if _VALID_TOKEN.match(t)]


def tokenize_rouge(
    vocab: Vocab, texts: list, stem: bool = False, threads: int | None = None
) -> tuple[bytes, bytes, bytes, bytes]:
    """Same contract as ``_core.tokenize_rouge``: ids, offsets, sentence offsets, row->sentences."""
    ids: list[int] = []
    offsets = [0]
    sent_offsets = [0]
    row_sents = [0]
    for row, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"text at row {row} is {type(text).__name__}, not str")
        # rougeLsum's sentences are newline-separated; the whole-text tokens are
        # the same tokens, since "\n" is itself a separator.
        for sentence in text.split("\n"):
            tokens = rouge_tokens(sentence)
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


def _ngrams(tokens: Sequence[int], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def ngram_overlap(a: Sequence[int], b: Sequence[int], n: int) -> int:
    """Clipped overlap: sum over n-grams of min(count in a, count in b)."""
    ca, cb = _ngrams(a, n), _ngrams(b, n)
    return sum(min(count, ca[g]) for g, count in cb.items())


def lcs_table(ref: Sequence[int], can: Sequence[int]) -> list[list[int]]:
    """rouge-score's full (len(ref)+1) x (len(can)+1) LCS table."""
    table = [[0] * (len(can) + 1) for _ in range(len(ref) + 1)]
    for i in range(1, len(ref) + 1):
        for j in range(1, len(can) + 1):
            if ref[i - 1] == can[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    return table


def lcs_length(a: Sequence[int], b: Sequence[int]) -> int:
    if not a or not b:
        return 0
    return lcs_table(a, b)[-1][-1]


def lcs_indices(ref: Sequence[int], can: Sequence[int]) -> list[int]:
    """Positions in ``ref`` of one LCS, chosen by rouge-score's backtrack."""
    table = lcs_table(ref, can)
    i, j = len(ref), len(can)
    found: list[int] = []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            found.append(i - 1)
            i -= 1
            j -= 1
        elif table[i][j - 1] > table[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return found[::-1]


def summary_level_lcs_hits(ref_sents: list[list[int]], can_sents: list[list[int]]) -> int:
    """rouge-score's ``_summary_level_lcs`` hit count (the union-LCS with clipping)."""
    if not ref_sents or not can_sents:
        return 0
    if not sum(map(len, ref_sents)) or not sum(map(len, can_sents)):
        return 0
    remaining_ref = Counter(t for s in ref_sents for t in s)
    remaining_can = Counter(t for s in can_sents for t in s)
    hits = 0
    for ref in ref_sents:
        union = sorted(set().union(*(lcs_indices(ref, can) for can in can_sents)))
        for tok in (ref[i] for i in union):
            if remaining_can[tok] > 0 and remaining_ref[tok] > 0:
                hits += 1
                remaining_can[tok] -= 1
                remaining_ref[tok] -= 1
    return hits


def _rows(ids, offsets) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(ids, dtype=np.int32), np.asarray(offsets, dtype=np.int64)


def _check_ids(ids: np.ndarray, vocab_size: int, name: str) -> None:
    bad = np.flatnonzero((ids < 0) | (ids >= vocab_size))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] = {ids[bad[0]]} is not a token id below vocab_size={vocab_size}")


def _check_offsets(off: np.ndarray, limit: int, name: str, limit_name: str) -> None:
    if off.size < 1:
        raise ValueError(f"{name} must hold at least one value (it has length rows + 1)")
    bad = np.flatnonzero((off < 0) | (off > limit) | np.r_[False, np.diff(off) < 0])
    if bad.size:
        w = bad[0]
        raise ValueError(f"{name}[{w}] = {off[w]} breaks 0 <= offsets nondecreasing <= {limit_name} ({limit})")


def _check_pairs(pair_a: np.ndarray, pair_b: np.ndarray, na: int, nb: int) -> None:
    if len(pair_a) != len(pair_b):
        raise ValueError(f"pair arrays differ in length ({len(pair_a)} vs {len(pair_b)})")
    bad = np.flatnonzero((pair_a < 0) | (pair_a >= na) | (pair_b < 0) | (pair_b >= nb))
    if bad.size:
        w = bad[0]
        raise ValueError(
            f"pair {w} = ({pair_a[w]}, {pair_b[w]}) is out of range for {na} predictions and {nb} references"
        )


def rouge_pair_stats(
    pred_ids,
    pred_off,
    ref_ids,
    ref_off,
    pair_pred,
    pair_ref,
    max_order: int,
    want_lcs: bool,
    vocab_size: int,
    overlaps,
    lcs,
    threads=None,
) -> None:
    """Same contract as ``_core.rouge_pair_stats``."""
    pred_ids, pred_off = _rows(pred_ids, pred_off)
    ref_ids, ref_off = _rows(ref_ids, ref_off)
    pair_pred, pair_ref = np.asarray(pair_pred, np.int64), np.asarray(pair_ref, np.int64)
    if not 0 <= max_order <= 64:
        raise ValueError(f"max_order must be in 0..64, got {max_order}")
    _check_ids(pred_ids, vocab_size, "pred_ids")
    _check_ids(ref_ids, vocab_size, "ref_ids")
    _check_offsets(pred_off, len(pred_ids), "pred_off", "len(pred_ids)")
    _check_offsets(ref_off, len(ref_ids), "ref_off", "len(ref_ids)")
    _check_pairs(pair_pred, pair_ref, len(pred_off) - 1, len(ref_off) - 1)
    for k, (pa, pr) in enumerate(zip(pair_pred, pair_ref)):
        pred = pred_ids[pred_off[pa] : pred_off[pa + 1]].tolist()
        ref = ref_ids[ref_off[pr] : ref_off[pr + 1]].tolist()
        for n in range(1, max_order + 1):
            overlaps[k, n - 1] = ngram_overlap(pred, ref, n)
        if want_lcs:
            lcs[k] = lcs_length(ref, pred)


def _sentences(ids: np.ndarray, sent_off: np.ndarray, row_sents: np.ndarray, row: int) -> list[list[int]]:
    first, last = row_sents[row], row_sents[row + 1]
    return [ids[sent_off[s] : sent_off[s + 1]].tolist() for s in range(first, last)]


def lsum_pair_stats(
    pred_ids,
    pred_sent_off,
    pred_row_sents,
    ref_ids,
    ref_sent_off,
    ref_row_sents,
    pair_pred,
    pair_ref,
    vocab_size: int,
    hits,
    threads=None,
) -> None:
    """Same contract as ``_core.lsum_pair_stats``."""
    pred_ids, pred_sent_off = _rows(pred_ids, pred_sent_off)
    ref_ids, ref_sent_off = _rows(ref_ids, ref_sent_off)
    pred_row_sents = np.asarray(pred_row_sents, np.int64)
    ref_row_sents = np.asarray(ref_row_sents, np.int64)
    pair_pred, pair_ref = np.asarray(pair_pred, np.int64), np.asarray(pair_ref, np.int64)
    _check_ids(pred_ids, vocab_size, "pred_ids")
    _check_ids(ref_ids, vocab_size, "ref_ids")
    _check_offsets(pred_sent_off, len(pred_ids), "pred_sent_off", "len(pred_ids)")
    _check_offsets(ref_sent_off, len(ref_ids), "ref_sent_off", "len(ref_ids)")
    _check_offsets(pred_row_sents, len(pred_sent_off) - 1, "pred_row_sents", "len(pred_sent_off) - 1")
    _check_offsets(ref_row_sents, len(ref_sent_off) - 1, "ref_row_sents", "len(ref_sent_off) - 1")
    _check_pairs(pair_pred, pair_ref, len(pred_row_sents) - 1, len(ref_row_sents) - 1)
    for k, (pa, pr) in enumerate(zip(pair_pred, pair_ref)):
        hits[k] = summary_level_lcs_hits(
            _sentences(ref_ids, ref_sent_off, ref_row_sents, pr),
            _sentences(pred_ids, pred_sent_off, pred_row_sents, pa),
        )


def bleu_clipped_counts(
    hyp_ids, hyp_off, ref_ids, ref_off, row_refs, max_order: int, vocab_size: int, correct, threads=None
) -> None:
    """Same contract as ``_core.bleu_clipped_counts``: sacrebleu's clipping by the
    maximum count of each n-gram over the row's references."""
    hyp_ids, hyp_off = _rows(hyp_ids, hyp_off)
    ref_ids, ref_off = _rows(ref_ids, ref_off)
    row_refs = np.asarray(row_refs, np.int64)
    if not 1 <= max_order <= 64:
        raise ValueError(f"max_order must be in 1..64, got {max_order}")
    _check_ids(hyp_ids, vocab_size, "hyp_ids")
    _check_ids(ref_ids, vocab_size, "ref_ids")
    _check_offsets(hyp_off, len(hyp_ids), "hyp_off", "len(hyp_ids)")
    _check_offsets(ref_off, len(ref_ids), "ref_off", "len(ref_ids)")
    _check_offsets(row_refs, len(ref_off) - 1, "row_refs", "len(ref_off) - 1")
    if len(row_refs) != len(hyp_off):
        raise ValueError(f"row_refs must have length rows + 1 = {len(hyp_off)}")
    for k in range(len(hyp_off) - 1):
        hyp = hyp_ids[hyp_off[k] : hyp_off[k + 1]].tolist()
        refs = [ref_ids[ref_off[j] : ref_off[j + 1]].tolist() for j in range(row_refs[k], row_refs[k + 1])]
        for n in range(1, max_order + 1):
            max_ref: Counter = Counter()
            for ref in refs:
                for gram, count in _ngrams(ref, n).items():
                    max_ref[gram] = max(max_ref[gram], count)
            correct[k, n - 1] = sum(min(count, max_ref[g]) for g, count in _ngrams(hyp, n).items())


# Exact sums and the streaming bootstrap live in their own modules; the backend serves them from here.
from respeval._reference.exact import exact_sum_bins  # noqa: E402,F401
from respeval._reference.poisson_bootstrap import poisson_bootstrap_add, poisson_weights  # noqa: E402,F401
