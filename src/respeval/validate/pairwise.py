"""Pairwise judges: position consistency, flip rate, and the verbosity probes."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from respeval.stats import DEFAULT_SEED
from respeval.validate.agreement import agreement
from respeval.validate.correlation import correlations, spearman
from respeval.validate.resampling import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    Interval,
    Label,
    Lengths,
    interval_from_samples,
    json_number,
    resample_indices,
    resampled_means,
)


@dataclass(frozen=True)
class PairwiseConsistency:
    """A pairwise judge asked in both presentation orders, over ``n`` items.

    ``consistency``: share of items with the same verdict in both orders.
    ``flip_rate``: share of items whose winner flips (a decisive verdict for each response).
    ``tie_rate``: share of all ``2 n`` verdicts that are ties.
    ``consistency_kappa``: Cohen's kappa between the two orders (LLMBar's ``kappa_agreement``).
    ``first_position_rate``: of the decisive verdicts, the share that picked whichever response
    was shown first (0.5 = no position preference); ``None`` when that is not known.
    """

    n: int
    consistency: float
    flip_rate: float
    tie_rate: float
    consistency_kappa: float
    first_position_rate: float | None
    _rows: np.ndarray = field(repr=False, compare=False)

    def bootstrap(
        self, n: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE
    ) -> dict[str, Interval]:
        """Percentile intervals of the rates (items resampled with replacement)."""
        means = resampled_means(self._rows, n, seed)
        out = {
            "consistency": interval_from_samples(self.consistency, means[:, 0], confidence),
            "flip_rate": interval_from_samples(self.flip_rate, means[:, 1], confidence),
            "tie_rate": interval_from_samples(self.tie_rate, means[:, 2] / 2, confidence),
        }
        if self.first_position_rate is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = means[:, 3] / means[:, 4]
            out["first_position_rate"] = interval_from_samples(self.first_position_rate, ratio, confidence)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "n": self.n,
            "consistency": self.consistency,
            "flip_rate": self.flip_rate,
            "tie_rate": self.tie_rate,
            "consistency_kappa": json_number(self.consistency_kappa),
            "first_position_rate": json_number(self.first_position_rate),
        }


@dataclass(frozen=True)
class VerbosityProbe:
    """Does the judge favour longer responses more than humans do?

    Pairwise (``kind="pairwise"``): ``judge`` is the share of decisive judge verdicts, on items
    whose responses differ in length, that picked the longer one; ``human`` the same share for
    the human verdicts (on the same items).  Pointwise: ``judge`` and ``human`` are Spearman
    correlations of the score with the response length in words.  ``excess = judge - human``
    (``None`` without human labels); a clearly positive excess means the judge rewards length
    beyond what humans do.
    """

    kind: Literal["pairwise", "pointwise"]
    n: int
    judge: float
    human: float | None
    excess: float | None
    intervals: dict[str, Interval] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "n": self.n,
            "judge": json_number(self.judge),
            "human": json_number(self.human),
            "excess": json_number(self.excess),
        }
        out["intervals"] = {k: v.to_dict() for k, v in self.intervals.items()}
        return out


DEFAULT_TIES: tuple[Label, ...] = ("TIE", "Tie", "tie", 0, "0")


def pairwise_consistency(
    original: Sequence[Label],
    swapped: Sequence[Label],
    *,
    ties: Iterable[Label] = DEFAULT_TIES,
    first_shown: Label | None = None,
) -> PairwiseConsistency:
    """Position consistency of a pairwise judge asked in both orders.

    ``original[i]`` is the verdict with the responses in their original order, ``swapped[i]``
    the verdict with them shown the other way round, mapped back to the original orientation
    (so a consistent judge gives equal labels).  ``ties`` are the labels meaning "tie";
    ``first_shown`` is the label of the response shown first in the original order (it is shown
    second in the swapped order), needed only for ``first_position_rate``.
    """
    a, b = list(original), list(swapped)
    if len(a) != len(b):
        raise ValueError(f"original has {len(a)} verdicts but swapped has {len(b)}")
    if not a:
        raise ValueError("pairwise_consistency needs at least one item")
    tie_set = set(ties)
    tie_a = np.array([v in tie_set for v in a])
    tie_b = np.array([v in tie_set for v in b])
    same = np.array([x == y for x, y in zip(a, b)])
    flip = ~same & ~tie_a & ~tie_b
    first_picks, decisive = _first_position_counts(a, b, tie_a, tie_b, first_shown)
    rows = np.column_stack((same, flip, tie_a.astype(int) + tie_b, first_picks, decisive)).astype(np.float64)
    first_rate = None
    if first_shown is not None:
        first_rate = float(first_picks.sum() / decisive.sum()) if decisive.sum() else math.nan
    return PairwiseConsistency(
        n=len(a),
        consistency=float(same.mean()),
        flip_rate=float(flip.mean()),
        tie_rate=float((tie_a.sum() + tie_b.sum()) / (2 * len(a))),
        consistency_kappa=agreement(b, a).cohen_kappa,
        first_position_rate=first_rate,
        _rows=rows,
    )


def _first_position_counts(
    a: list[Label], b: list[Label], tie_a: np.ndarray, tie_b: np.ndarray, first_shown: Label | None
) -> tuple[np.ndarray, np.ndarray]:
    """Per item: decisive verdicts for the response in the first slot, and decisive verdicts."""
    decisive = (~tie_a).astype(int) + (~tie_b)
    if first_shown is None:
        return np.zeros(len(a)), decisive
    # original order: the first slot holds `first_shown`; swapped order: the other response
    picks = np.array(
        [(not ta and x == first_shown) + (not tb and y != first_shown) for x, y, ta, tb in zip(a, b, tie_a, tie_b)],
        dtype=np.float64,
    )
    return picks, decisive


def text_length(texts: Iterable[str | None]) -> np.ndarray:
    """Length in whitespace-separated words (0 for a missing text)."""
    return np.array([len(t.split()) if isinstance(t, str) else 0 for t in texts], dtype=np.int64)


def verbosity_pairwise(
    judge: Sequence[Label],
    *,
    length_first: Lengths,
    length_second: Lengths,
    first: Label,
    second: Label,
    human: Sequence[Label] | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> VerbosityProbe:
    """Share of decisive verdicts that pick the longer response, judge vs human.

    ``first``/``second`` are the labels naming the responses whose lengths are
    ``length_first``/``length_second``; any other label (a tie) is not decisive.  Items with
    equal lengths are skipped.  Intervals resample items (``n_boot=0``: none).
    """
    l1, l2 = np.asarray(length_first), np.asarray(length_second)
    if not len(judge) == l1.size == l2.size or (human is not None and len(human) != len(judge)):
        raise ValueError("judge, human and the two length arrays must have one value per item")
    longer = np.where(l1 > l2, 1, np.where(l2 > l1, 2, 0))
    j_dec, j_long = _longer_picks(judge, longer, first, second)
    cols = [j_dec, j_long]
    if human is not None:
        cols += list(_longer_picks(human, longer, first, second))
    rows = np.column_stack(cols).astype(np.float64)
    judge_rate = _ratio(j_long.sum(), j_dec.sum())
    human_rate = _ratio(rows[:, 3].sum(), rows[:, 2].sum()) if human is not None else None
    excess = None if human_rate is None else judge_rate - human_rate
    intervals: dict[str, Interval] = {}
    if n_boot and rows.shape[0]:
        means = resampled_means(rows, n_boot, seed)
        with np.errstate(invalid="ignore", divide="ignore"):
            j = means[:, 1] / means[:, 0]
            intervals["judge"] = interval_from_samples(judge_rate, j, confidence)
            if human is not None:
                intervals["excess"] = interval_from_samples(excess, j - means[:, 3] / means[:, 2], confidence)
    return VerbosityProbe("pairwise", int(j_dec.sum()), judge_rate, human_rate, excess, intervals)


def _longer_picks(
    verdicts: Sequence[Label], longer: np.ndarray, first: Label, second: Label
) -> tuple[np.ndarray, np.ndarray]:
    pick = np.array([1 if v == first else 2 if v == second else 0 for v in verdicts])
    decisive = (pick > 0) & (longer > 0)
    return decisive, decisive & (pick == longer)


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den else math.nan


def verbosity_pointwise(
    judge: Sequence[float],
    lengths: Lengths,
    human: Sequence[float] | None = None,
    *,
    n_boot: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> VerbosityProbe:
    """Spearman correlation of scores with response length, judge minus human."""
    j = correlations(lengths, judge)
    intervals: dict[str, Interval] = {}
    human_rho = excess = None
    if human is not None:
        human_rho = spearman(lengths, human)
        excess = j.spearman - human_rho
    if n_boot and j.n > 1:
        intervals = _pointwise_verbosity_intervals(
            np.asarray(lengths, dtype=np.float64),
            j.y,
            None if human is None else np.asarray(human, dtype=np.float64),
            j.spearman,
            excess,
            n_boot,
            seed,
            confidence,
        )
    return VerbosityProbe("pointwise", j.n, j.spearman, human_rho, excess, intervals)


def _pointwise_verbosity_intervals(
    lengths: np.ndarray,
    judge: np.ndarray,
    human: np.ndarray | None,
    judge_rho: float,
    excess: float | None,
    n_boot: int,
    seed: int | None,
    confidence: float,
) -> dict[str, Interval]:
    j, e = np.empty(n_boot), np.full(n_boot, math.nan)
    for start, block in resample_indices(lengths.size, n_boot, seed):
        for i, idx in enumerate(block, start):
            j[i] = spearman(lengths[idx], judge[idx])
            if human is not None:
                e[i] = j[i] - spearman(lengths[idx], human[idx])
    out = {"judge": interval_from_samples(judge_rho, j, confidence)}
    if human is not None:
        out["excess"] = interval_from_samples(excess, e, confidence)
    return out
