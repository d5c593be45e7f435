"""Exact match, normalized match, token F1 and the SQuAD metrics.

``squad`` follows the official evaluate-v1.1 / v2.0 scripts: answers are
normalized (lowercase, ASCII punctuation removed, articles removed, whitespace
collapsed), EM is equality of the normalized answers and F1 the bag-of-tokens
F1, each the maximum over the gold answers; corpus values are on 0-100.  The
token work (normalized tokens -> ids, clipped overlaps) runs in the native core
when it is built; the reference path is the scripts' own logic.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from respeval import _backend
from respeval._backend import Kernels
from respeval._inputs import reference_lists, same_length, text_list
from respeval._renamed import renamed_arguments
from respeval.metrics.base import ChunkScores, MetricResult
from respeval.metrics.registry import MetricOptions, MetricSpec
from respeval.metrics.signature import Signature
from respeval.tokenizers.squad import normalize_answer, normalize_unicode

VERSIONS = ("v1", "v2")
_NORMALIZERS = {"none": None, "unicode": normalize_unicode, "squad": normalize_answer}


class SquadResult(MetricResult):
    """Per-row ``squad_em`` (0/1) and ``squad_f1`` (0..1) columns; ``exact_match`` and ``f1``
    are the corpus values on the 0-100 scale, as the official scripts print them."""

    def __init__(self, family: SquadFamily, em: np.ndarray, f1: np.ndarray, *, implementation: str) -> None:
        stats = np.column_stack([em, f1]) if len(em) else np.zeros((0, 2))
        super().__init__(family, ChunkScores({"squad_em": em, "squad_f1": f1}, stats), implementation=implementation)
        self.version = family.version

    @property
    def exact_match(self) -> float:
        return self.corpus_scores()["squad_em"] if len(self) else 0.0

    @property
    def f1(self) -> float:
        return self.corpus_scores()["squad_f1"] if len(self) else 0.0


class ExactMatchResult(MetricResult):
    """Per-row match (1.0 or 0.0; the best over a row's references) in the column named after
    the metric; ``score`` is the fraction of rows that match."""

    @property
    def score(self) -> float:
        return next(iter(self.corpus_scores().values())) if len(self) else 0.0


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


def _sequence(values: Any, name: str, what: str) -> list:
    if values is None:
        raise TypeError(f"{name} is None, expected {what}")
    if isinstance(values, str):
        raise TypeError(f"{name} is a single str, expected {what}")
    try:
        return list(values)
    except TypeError:
        raise TypeError(f"{name} is {type(values).__name__}, expected {what}") from None


@renamed_arguments(gold_answers="references")
def squad(predictions: Any, references: Any, *, version: str = "v1", implementation: str | None = None) -> SquadResult:
    """SQuAD EM and F1 per row (max over that row's gold answers) and for the corpus.

    ``predictions``: one answer (str) per question.  ``references``: per question a list of
    gold answers, or one str meaning a single gold answer.  A single str in place of either
    sequence raises (it would otherwise be read character by character).

    ``version="v1"``: evaluate-v1.1 (F1 is 0 when nothing overlaps, even two empty
    answers).  ``version="v2"``: evaluate-v2.0's empty handling (gold answers that
    normalize to nothing are dropped; an empty prediction scores 1 against an empty
    gold).  A question without a prediction is passed as ``None``: it scores 0 and
    stays in the total, as in evaluate-v1.1.
    """
    family = SquadFamily(version=version, implementation=implementation)
    raw = _sequence(predictions, "predictions", "a sequence of answers (one str per question)")
    golds = _sequence(references, "references", "a sequence with a list of gold answers per question")
    em, f1 = family.rows(raw, golds)
    return SquadResult(family, em, f1, implementation=_backend.name(implementation))


def _row_scores(
    preds_raw: list, gold_answers: list, version: str, implementation: str | None
) -> tuple[np.ndarray, np.ndarray]:
    missing = np.array([p is None for p in preds_raw], dtype=bool)
    preds = text_list(["" if p is None else p for p in preds_raw], "predictions")
    # v2.0's unanswerable questions have no gold answer: they are scored against ""
    golds = _golds(gold_answers, len(preds), allow_empty=version == "v2")
    if version == "v2":
        golds = [g or [""] for g in golds]
    em, f1 = _native_scores(_backend.get(implementation), preds, golds, version)
    # a question without a prediction scores 0 and stays in the total (evaluate-v1.1)
    return np.where(missing, 0.0, em), np.where(missing, 0.0, f1)


NORMALIZATIONS = ("none", "unicode", "squad")


def _raw_match(a: str, b: str) -> bool:
    return a == b


def _unicode_match(a: str, b: str) -> bool:
    return normalize_unicode(a) == normalize_unicode(b)


def _squad_match(a: str, b: str) -> bool:
    return normalize_answer(a) == normalize_answer(b)


def _match_fn(normalize: str) -> Any:
    fn = {"none": _raw_match, "unicode": _unicode_match, "squad": _squad_match}.get(normalize)
    if fn is None:
        raise ValueError(f"normalize must be none, unicode or squad, not {normalize!r}")
    return fn


def exact_match(predictions: Any, references: Any, *, normalize: str = "none") -> ExactMatchResult:
    """Per-row match (1.0 or 0.0) against the row's reference, or the best of its references.

    ``references``: per row a str or a non-empty list of str (several references: the row
    matches if any matches, as SQuAD and every anchor take the max).  ``normalize="none"``
    raw string equality; ``"unicode"`` after lowercasing, removing Unicode punctuation and
    collapsing whitespace; ``"squad"`` after SQuAD's normalization.
    """
    family = ExactMatchFamily(name="exact_match", normalize=normalize)
    preds = text_list(predictions, "predictions")
    refs, _ = reference_lists(references, "references")
    same_length(preds, refs, "predictions", "references")
    return ExactMatchResult(family, family.score(family.prepare(refs), preds), implementation="python")


class SquadFamily:
    """SQuAD EM/F1 (references: per row the list of gold answers, or one str)."""

    inputs = "text"

    def __init__(self, *, version: str = "v1", threads: int | None = None, implementation: str | None = None) -> None:
        if version not in VERSIONS:
            raise ValueError(f"version must be 'v1' or 'v2', not {version!r}")
        self.name = "squad"
        self.version = version
        # v2.0's unanswerable questions have no gold answer: an empty list is a row, scored against ""
        self.empty_references = version == "v2"
        self.implementation = implementation
        self.stat_names = ("em", "f1")
        self.headline = ("squad_em", "squad_f1")

    def rows(self, predictions: list, gold_answers: list) -> tuple[np.ndarray, np.ndarray]:
        """Per-row (em, f1)."""
        return _row_scores(predictions, gold_answers, self.version, self.implementation)

    def prepare(self, references: list) -> list:
        return references

    def score(self, prepared: list, predictions: list[str]) -> ChunkScores:
        em, f1 = self.rows(predictions, prepared)
        return ChunkScores({"squad_em": em, "squad_f1": f1}, np.column_stack([em, f1]) if len(em) else np.zeros((0, 2)))

    def corpus(self, sums: np.ndarray, rows: Any) -> dict[str, Any]:
        sums = np.asarray(sums, dtype=np.float64)
        n = np.maximum(np.asarray(rows, dtype=np.float64), 1)  # the row count, or one size per resample
        return {"squad_em": 100.0 * sums[..., 0] / n, "squad_f1": 100.0 * sums[..., 1] / n}

    def signature(self) -> str:
        # ``squad:``, not ``version:``: the field is SQuAD's evaluation script, the version is the package's
        return str(Signature("squad", squad=self.version, norm="official"))


class ExactMatchFamily:
    """Exact match rate; with several references a row matches if any of them does."""

    inputs = "text"

    def __init__(
        self,
        *,
        name: str = "em",
        normalize: str = "none",
        threads: int | None = None,
        implementation: str | None = None,
    ) -> None:
        self.match = _match_fn(normalize)
        self.name = name
        self.normalize = normalize
        self.stat_names = ("match",)
        self.headline = (name,)

    def prepare(self, references: list) -> list[list[str]]:
        return [[r] if isinstance(r, str) else list(r) for r in references]

    def score(self, prepared: list[list[str]], predictions: list[str]) -> ChunkScores:
        match = self.match
        m = np.array([float(any(match(p, r) for r in refs)) for p, refs in zip(predictions, prepared)])
        return ChunkScores({self.name: m}, m[:, None] if len(m) else np.zeros((0, 1)))

    def corpus(self, sums: np.ndarray, rows: Any) -> dict[str, Any]:
        n = np.maximum(np.asarray(rows, dtype=np.float64), 1)
        return {self.name: np.asarray(sums, dtype=np.float64)[..., 0] / n}

    def signature(self) -> str:
        return str(Signature(self.name, norm=self.normalize, multiref="any"))


def _build_em(names: Sequence[str], options: MetricOptions) -> ExactMatchFamily:
    return ExactMatchFamily(name=names[0], **options.for_family(names[0]))


def _build_squad(names: Sequence[str], options: MetricOptions) -> SquadFamily:
    return SquadFamily(implementation=options.implementation, **options.for_family("squad"))


EM_OPTIONS = {"normalize": "none (default: raw equality) | unicode | squad"}
METRICS = (
    MetricSpec(
        "exact_match",
        "exact_match",
        "exact string match (any reference; normalize: none|unicode|squad)",
        _build_em,
        options=EM_OPTIONS,
    ),
    MetricSpec("em", "em", "short name of exact_match (column 'em')", _build_em, options=EM_OPTIONS),
    MetricSpec(
        "squad",
        "squad",
        "SQuAD v1.1 EM and F1 (0-100), official normalization; references: gold lists",
        _build_squad,
        options={"version": "v1 (evaluate-v1.1, default) | v2 (evaluate-v2.0: unanswerable questions, [] gold)"},
    ),
)
