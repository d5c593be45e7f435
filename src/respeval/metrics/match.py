"""Exact match, normalized match, token F1 and the SQuAD metrics.

``squad`` follows the official evaluate-v1.1 / v2.0 scripts: answers are
normalized (lowercase, ASCII punctuation removed, articles removed, whitespace
collapsed), EM is equality of the normalized answers and F1 the bag-of-tokens
F1, each the maximum over the gold answers; corpus values are on 0-100.  The
token work (normalized tokens -> ids, clipped overlaps) runs in the native core
when it is built; the reference path is the scripts' own logic.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from respeval import _backend
from respeval._backend import Kernels
from respeval._inputs import same_length, text_list
from respeval.metrics.base import ChunkScores
from respeval.tokenizers.squad import normalize_answer, normalize_unicode

VERSIONS = ("v1", "v2")
_NORMALIZERS = {"none": None, "unicode": normalize_unicode, "squad": normalize_answer}


@dataclass
class SquadResult:
    """Per-row ``em`` (0/1) and ``f1`` (0..1), and the corpus values on the 0-100 scale."""

    em: np.ndarray
    f1: np.ndarray
    version: str

    def __len__(self) -> int:
        return len(self.em)

    @property
    def exact_match(self) -> float:
        return 100.0 * float(np.sum(self.em)) / len(self.em) if len(self.em) else 0.0

    @property
    def f1_score(self) -> float:
        return 100.0 * float(np.sum(self.f1)) / len(self.f1) if len(self.f1) else 0.0


def _golds(gold_answers: Any, n: int, allow_empty: bool = False) -> list[list[str]]:
    rows = gold_answers if isinstance(gold_answers, list) else list(gold_answers)
    if len(rows) != n:
        raise ValueError(f"predictions has {n} rows but gold_answers has {len(rows)}")
    out = [[g] if isinstance(g, str) else (g if isinstance(g, list) else list(g)) for g in rows]
    # the common case checked at C speed; the slow loop only runs to name a bad row
    if set(map(type, chain.from_iterable(out))) <= {str} and (allow_empty or all(out)):
        return out
    for i, answers in enumerate(out):
        if not answers and not allow_empty:
            raise ValueError(f"gold_answers[{i}] is empty: the SQuAD scripts need at least one gold answer")
        for j, a in enumerate(answers):
            if not isinstance(a, str):
                raise TypeError(f"gold_answers[{i}][{j}] is {type(a).__name__}, expected str")
    return out


def _native_scores(
    kernels: Kernels, preds: list[str], golds: list[list[str]], version: str
) -> tuple[np.ndarray, np.ndarray]:
    """EM and F1 per question from normalized token ids (gold lists as given: for v2 the
    answers that normalize to nothing are dropped here, keeping one empty answer)."""
    tokenize = kernels.squad_normalize_ids
    n = len(preds)
    vocab = kernels.Vocab()
    p_ids, p_off = (
        np.frombuffer(b, t) for b, t in zip(tokenize(vocab, list(map(str.lower, preds))), (np.int32, np.int64))
    )
    flat = list(map(str.lower, chain.from_iterable(golds)))
    g_ids, g_off = (np.frombuffer(b, t) for b, t in zip(tokenize(vocab, flat), (np.int32, np.int64)))
    owner = np.repeat(np.arange(n), list(map(len, golds))).astype(np.int64)
    glen = np.diff(g_off)
    if version == "v2":
        # v2.0 drops answers that normalize to nothing; a question left without any
        # keeps one empty answer (its first), so it is scored against ""
        keep = glen > 0
        has_any = np.bincount(owner, weights=keep, minlength=n) > 0
        first = np.r_[True, owner[1:] != owner[:-1]] if len(owner) else np.zeros(0, bool)
        keep |= first & ~has_any[owner]
        sel = np.flatnonzero(keep)
    else:
        sel = np.arange(len(owner))
    pair_pred = owner[sel]
    pair_gold = sel.astype(np.int64)
    npairs = len(pair_pred)
    if npairs == 0:
        return np.zeros(n), np.zeros(n)
    same = np.zeros((npairs, 1), np.int64)
    kernels.rouge_pair_stats(
        p_ids, p_off, g_ids, g_off, pair_pred, pair_gold, 1, False, len(vocab), same, np.zeros(0, np.int64), None
    )
    ns = same[:, 0].astype(np.float64)
    lp = np.diff(p_off)[pair_pred]
    lg = glen[pair_gold]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 1.0 * ns / lp
        r = 1.0 * ns / lg
        f1 = (2 * p * r) / (p + r)
    f1 = np.where(ns > 0, f1, 0.0)
    if version == "v2":
        empty = (lp == 0) | (lg == 0)
        f1 = np.where(empty, ((lp == 0) & (lg == 0)).astype(np.float64), f1)
    # EM: equal normalized strings <=> equal token id sequences
    same_len = lp == lg
    idx = np.flatnonzero(same_len & (lp > 0))
    lengths = lp[idx]
    pos_pair = np.repeat(idx, lengths)
    k = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    differs = p_ids[p_off[pair_pred[pos_pair]] + k] != g_ids[g_off[pair_gold[pos_pair]] + k]
    mismatches = np.bincount(pos_pair, weights=differs, minlength=npairs)
    em = (same_len & (mismatches == 0)).astype(np.float64)
    starts = np.searchsorted(pair_pred, np.arange(n))
    return np.maximum.reduceat(em, starts), np.maximum.reduceat(f1, starts)


def squad(
    predictions: Any, gold_answers: Any, *, version: str = "v1", implementation: str | None = None
) -> SquadResult:
    """SQuAD EM and F1 per row (max over that row's gold answers) and for the corpus.

    ``version="v1"``: evaluate-v1.1 (F1 is 0 when nothing overlaps, even two empty
    answers).  ``version="v2"``: evaluate-v2.0's empty handling (gold answers that
    normalize to nothing are dropped; an empty prediction scores 1 against an empty
    gold).  A question without a prediction is passed as ``None``: it scores 0 and
    stays in the total, as in evaluate-v1.1.
    """
    if version not in VERSIONS:
        raise ValueError(f"version must be 'v1' or 'v2', not {version!r}")
    raw = list(predictions)
    missing = np.array([p is None for p in raw], dtype=bool)
    preds = text_list(["" if p is None else p for p in raw], "predictions")
    # v2.0's unanswerable questions have no gold answer: they are scored against ""
    golds = _golds(gold_answers, len(preds), allow_empty=version == "v2")
    if version == "v2":
        golds = [g or [""] for g in golds]
    em, f1 = _native_scores(_backend.get(implementation), preds, golds, version)
    # a question without a prediction scores 0 and stays in the total (evaluate-v1.1)
    return SquadResult(np.where(missing, 0.0, em), np.where(missing, 0.0, f1), version)


def exact_match(predictions: Any, references: Any, *, normalize: str = "none") -> np.ndarray:
    """Per-row match (1.0 or 0.0): ``normalize="none"`` raw string equality;
    ``"unicode"`` after lowercasing, removing Unicode punctuation and collapsing
    whitespace (``normalized_match``); ``"squad"`` after SQuAD's normalization."""
    preds = text_list(predictions, "predictions")
    refs = text_list(references, "references")
    same_length(preds, refs, "predictions", "references")
    if normalize not in _NORMALIZERS:
        raise ValueError(f"normalize must be none, unicode or squad, not {normalize!r}")
    fn = _NORMALIZERS[normalize]
    if fn is None:
        return np.array([float(p == r) for p, r in zip(preds, refs)])
    return np.array([float(fn(p) == fn(r)) for p, r in zip(preds, refs)])


class SquadFamily:
    """SQuAD EM/F1 for the bulk pipeline (references may be lists of gold answers)."""

    def __init__(self, version: str = "v1") -> None:
        self.name = "squad"
        self.version = version
        self.stat_names = ("em", "f1")
        self.headline = ("squad_em", "squad_f1")

    def prepare(self, references: list) -> list:
        return references

    def score(self, prepared: list, predictions: list[str]) -> ChunkScores:
        res = squad(predictions, prepared, version=self.version)
        return ChunkScores({"squad_em": res.em, "squad_f1": res.f1}, np.column_stack([res.em, res.f1]))

    def corpus(self, sums: np.ndarray, rows: int) -> dict[str, Any]:
        sums = np.asarray(sums, dtype=np.float64)
        n = np.maximum(np.asarray(rows, dtype=np.float64), 1)  # the row count, or one size per resample
        return {"squad_em": 100.0 * sums[..., 0] / n, "squad_f1": 100.0 * sums[..., 1] / n}

    def signature(self) -> str:
        return f"squad|version:{self.version}|norm:official"


class ExactMatchFamily:
    """Raw exact match rate for the bulk pipeline."""

    def __init__(self, normalize: str = "none") -> None:
        self.name = "em"
        self.normalize = normalize
        self.stat_names = ("match",)
        self.headline = ("em",)

    def prepare(self, references: list) -> list:
        return [r if isinstance(r, str) else r[0] for r in references]

    def score(self, prepared: list, predictions: list[str]) -> ChunkScores:
        m = exact_match(predictions, prepared, normalize=self.normalize)
        return ChunkScores({"em": m}, m[:, None])

    def corpus(self, sums: np.ndarray, rows: int) -> dict[str, Any]:
        return {"em": np.asarray(sums, dtype=np.float64)[..., 0] / np.maximum(np.asarray(rows, dtype=np.float64), 1)}

    def signature(self) -> str:
        return f"em|norm:{self.normalize}"
