"""Check a judge (or a metric) against human labels, with every number named for what it is.

Agreement between judge labels and human labels (:func:`agreement`)
    ``accuracy``; ``balanced_accuracy`` (mean recall over the classes humans used);
    per-class precision, recall, F1 and support; ``macro_precision``, ``macro_recall``,
    ``macro_f1`` (unweighted means over the classes that occur on either side);
    ``weighted_f1`` (**support-weighted** F1: per-class F1 weighted by how often humans used
    the class — what Vertex calls "balanced F1", which it is not); Cohen's kappa unweighted,
    linear and quadratic; the confusion matrix (rows: human, columns: judge) with its label
    order.  ``Agreement.bootstrap(n, seed)`` gives seeded percentile intervals.  Every number
    equals scikit-learn's (``accuracy_score``, ``balanced_accuracy_score``, ``f1_score``
    macro/weighted, ``precision_recall_fscore_support``, ``cohen_kappa_score`` with each
    weighting, ``confusion_matrix``) with its defaults: undefined precision or recall counts as
    0, an undefined kappa is NaN.

Correlation of numbers (:func:`correlations`, :func:`metric_human_correlation`)
    Pearson, Spearman (average ranks for ties) and Kendall's tau-b (tie-corrected, O(n log² n)),
    implemented with numpy; equal to scipy's ``pearsonr``, ``spearmanr`` and ``kendalltau``.
    ``metric_human_correlation(..., level="system")`` correlates per-system means (as REALSumm
    and WMT report them); ``level="segment"`` pools every row.

Pairwise judges (:func:`pairwise_consistency`, :func:`verbosity_pairwise`)
    A pairwise judge asked twice, with the two responses shown in both orders: position
    consistency, flip rate, tie rate, the kappa between the two orders, and how often it picks
    whichever response it was shown first.  The verbosity probe asks whether the judge picks the
    longer response more often than humans do; :func:`verbosity_pointwise` asks the same of
    scores (Spearman correlation with length, judge minus human).

Intervals
    Every interval here is a seeded percentile bootstrap over rows (items, or systems at system
    level): ``n`` resamples of the row indices with replacement from
    ``numpy.random.default_rng(seed)``, each scored exactly like the full data; the same seed
    always gives the same interval.

Files (:func:`load_table`, :func:`find_metrics`, :func:`validate_table`)
    JSONL, JSON, CSV and Parquet.  Column names follow Vertex's convention:

    =====================================  =============================================
    judge column                           human column
    =====================================  =============================================
    ``{metric}/score``                     ``{metric}/human_rating``
    ``{metric}/pairwise_choice``           ``{metric}/human_pairwise_choice``
    =====================================  =============================================

    respeval adds ``{metric}/pairwise_choice_swapped``: the judge's verdict with the two
    responses shown in the other order, *expressed in the original orientation* (a verdict for
    the same response keeps the same label).  Rows where the judge or the human value is missing
    (absent, ``None``, NaN or an empty string — an unparseable verdict is missing, never a
    default) are dropped from both sides together and counted.

Label schemes for pairwise choices (the first label names the response in the first text
column; which one was *shown* first is only known for ``A``/``B`` and ``1``/``2`` unless given):

==========  ==================================  =====================================  ==============
scheme      first, second, tie labels           text columns (first, second)           shown first
==========  ==================================  =====================================  ==============
ab          ``A``, ``B``, ``TIE``               ``response_a``, ``response_b``         ``A``
numbered    ``1``, ``2``, ``0`` (int or str)    ``response1``/``output_1``, ``…2``     ``1``
vertex      ``CANDIDATE``, ``BASELINE``, ``TIE``  ``response``, ``baseline_model_response``  not known
==========  ==================================  =====================================  ==============
"""

from __future__ import annotations

import csv
import json
import math
import numbers
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from respeval.stats import DEFAULT_SEED

__all__ = [
    "AGREEMENT_FIELDS",
    "PAIRWISE_SCHEMES",
    "TEXT_COLUMNS",
    "Agreement",
    "ClassStats",
    "Confusion",
    "Correlation",
    "Interval",
    "MetricColumns",
    "MetricValidation",
    "PairwiseConsistency",
    "PairwiseScheme",
    "VerbosityProbe",
    "agreement",
    "correlations",
    "find_metrics",
    "is_number",
    "join_tables",
    "kendall_tau_b",
    "load_table",
    "metric_human_correlation",
    "pairwise_consistency",
    "pearson",
    "rankdata",
    "spearman",
    "table_column",
    "text_length",
    "validate_pair",
    "validate_table",
    "verbosity_pairwise",
    "verbosity_pointwise",
]

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 1000
# Bootstrap resamples are gathered in blocks of about this many rows (bounded memory).
_BLOCK_ROWS = 2_000_000
# Longest text kept per field in a disagreement record (the report shows it folded).
_TEXT_LIMIT = 4000

Label = Hashable
Lengths = Sequence[int] | np.ndarray


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Interval:
    """A point estimate on all rows and a seeded percentile bootstrap interval around it."""

    estimate: float
    low: float
    high: float
    confidence: float

    def to_dict(self) -> dict[str, float | None]:
        """JSON-ready form (NaN as ``None``)."""
        return {
            "estimate": _num(self.estimate),
            "low": _num(self.low),
            "high": _num(self.high),
            "confidence": self.confidence,
        }


@dataclass(frozen=True)
class ClassStats:
    """Precision, recall and F1 of one label (the judge predicting what humans said).

    ``precision`` is 0 when the judge never gave the label, ``recall`` is 0 when humans never
    gave it (scikit-learn's ``zero_division=0``); ``support`` counts the human uses.
    """

    label: Label
    precision: float
    recall: float
    f1: float
    support: int
    predicted: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "label": _plain(self.label),
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "support": self.support,
            "predicted": self.predicted,
        }


@dataclass(frozen=True)
class Confusion:
    """Counts of (human label, judge label): ``matrix[i, j]`` is how often humans said
    ``labels[i]`` and the judge said ``labels[j]`` (scikit-learn's ``confusion_matrix(human,
    judge)`` layout)."""

    labels: tuple[Label, ...]
    matrix: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "labels": [_plain(x) for x in self.labels],
            "matrix": self.matrix.tolist(),
            "rows": "human",
            "columns": "judge",
        }


# Scalar agreement statistics, in report order, with their honest names.
AGREEMENT_FIELDS: dict[str, str] = {
    "accuracy": "accuracy",
    "balanced_accuracy": "balanced accuracy (mean per-class recall)",
    "macro_precision": "macro precision",
    "macro_recall": "macro recall",
    "macro_f1": "macro F1",
    "weighted_f1": "support-weighted F1",
    "cohen_kappa": "Cohen's kappa",
    "cohen_kappa_linear": "Cohen's kappa, linear weights",
    "cohen_kappa_quadratic": "Cohen's kappa, quadratic weights",
}


@dataclass(frozen=True)
class Agreement:
    """How well judge labels agree with human labels; see the module docstring for definitions.

    The weighted kappas treat the label order (``confusion.labels``) as ordinal and use index
    distances, like scikit-learn: give ``labels=`` to :func:`agreement` to include unused
    rating levels.
    """

    n: int
    accuracy: float
    balanced_accuracy: float
    macro_precision: float
    macro_recall: float
    macro_f1: float
    weighted_f1: float
    cohen_kappa: float
    cohen_kappa_linear: float
    cohen_kappa_quadratic: float
    confusion: Confusion
    per_class: dict[Label, ClassStats]
    _codes: np.ndarray = field(repr=False, compare=False)

    @property
    def labels(self) -> tuple[Label, ...]:
        """The label order of the confusion matrix and of the weighted kappas."""
        return self.confusion.labels

    def bootstrap(
        self, n: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE
    ) -> dict[str, Interval]:
        """Seeded percentile intervals of every scalar statistic.

        Rows (judge label and human label together) are resampled with replacement ``n``
        times from ``numpy.random.default_rng(seed)``; each resample is scored exactly like the
        full data (macro averages over the labels occurring in that resample).  Resamples where
        a statistic is undefined (e.g. kappa with one label) are left out of its interval.
        """
        k = len(self.labels)
        mats = _resampled_confusions(self._codes, k, n, seed)
        stats = _confusion_stats(mats)
        point = {name: getattr(self, name) for name in AGREEMENT_FIELDS}
        return {name: _interval(point[name], stats[name], confidence) for name in AGREEMENT_FIELDS}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the scalars, the confusion matrix and the per-class table."""
        out: dict[str, Any] = {"n": self.n}
        out.update({name: _num(getattr(self, name)) for name in AGREEMENT_FIELDS})
        out["labels"] = [_plain(x) for x in self.labels]
        out["confusion"] = self.confusion.to_dict()
        out["per_class"] = [c.to_dict() for c in self.per_class.values()]
        return out


@dataclass(frozen=True)
class Correlation:
    """Pearson, Spearman and Kendall tau-b of ``n`` (x, y) pairs; NaN when undefined (a
    constant side).  ``level`` says what a pair is: a row (``segment``) or a system mean."""

    n: int
    pearson: float
    spearman: float
    kendall_tau_b: float
    level: str = "segment"
    units: tuple[str, ...] = ()
    _x: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)
    _y: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)

    def bootstrap(
        self, n: int = DEFAULT_RESAMPLES, seed: int | None = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE
    ) -> dict[str, Interval]:
        """Percentile intervals from resampling the correlated pairs (rows, or systems at
        system level) with replacement."""
        samples = {name: np.empty(n) for name in ("pearson", "spearman", "kendall_tau_b")}
        for start, block in _resample_indices(self.n, n, seed):
            for i, idx in enumerate(block, start):
                x, y = self._x[idx], self._y[idx]
                samples["pearson"][i] = pearson(x, y)
                samples["spearman"][i] = spearman(x, y)
                samples["kendall_tau_b"][i] = kendall_tau_b(x, y)
        return {name: _interval(getattr(self, name), s, confidence) for name, s in samples.items()}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out: dict[str, Any] = {
            "n": self.n,
            "level": self.level,
            "pearson": _num(self.pearson),
            "spearman": _num(self.spearman),
            "kendall_tau_b": _num(self.kendall_tau_b),
        }
        if self.units:
            out["units"] = list(self.units)
        return out


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
        means = _resampled_means(self._rows, n, seed)
        out = {
            "consistency": _interval(self.consistency, means[:, 0], confidence),
            "flip_rate": _interval(self.flip_rate, means[:, 1], confidence),
            "tie_rate": _interval(self.tie_rate, means[:, 2] / 2, confidence),
        }
        if self.first_position_rate is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = means[:, 3] / means[:, 4]
            out["first_position_rate"] = _interval(self.first_position_rate, ratio, confidence)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "n": self.n,
            "consistency": self.consistency,
            "flip_rate": self.flip_rate,
            "tie_rate": self.tie_rate,
            "consistency_kappa": _num(self.consistency_kappa),
            "first_position_rate": _num(self.first_position_rate),
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
            "judge": _num(self.judge),
            "human": _num(self.human),
            "excess": _num(self.excess),
        }
        out["intervals"] = {k: v.to_dict() for k, v in self.intervals.items()}
        return out


# --------------------------------------------------------------------------- agreement


def agreement(
    judge_labels: Iterable[Label], human_labels: Iterable[Label], *, labels: Sequence[Label] | None = None
) -> Agreement:
    """Agreement of ``judge_labels`` with ``human_labels`` (same length, no missing values).

    ``labels`` fixes the label order (default: sorted union of both sides) and may add labels
    neither side used (they get an empty confusion row and column; macro averages still run
    over the labels that occur).  Raises ``ValueError`` on a length mismatch, an empty input or
    a value outside ``labels``.

    >>> a = agreement(["A", "B", "A", "TIE"], ["A", "B", "B", "TIE"])
    >>> a.accuracy, a.confusion.labels
    (0.75, ('A', 'B', 'TIE'))
    """
    judge, human = list(judge_labels), list(human_labels)
    if len(judge) != len(human):
        raise ValueError(f"judge has {len(judge)} labels but human has {len(human)}")
    if not judge:
        raise ValueError("agreement needs at least one labelled row")
    order = tuple(labels) if labels is not None else _sorted_labels(set(judge) | set(human))
    index = {label: i for i, label in enumerate(order)}
    if len(index) != len(order):
        raise ValueError(f"labels has duplicates: {list(order)}")
    k = len(order)
    codes = _codes(human, index, "human") * k + _codes(judge, index, "judge")
    matrix = np.bincount(codes, minlength=k * k).reshape(k, k)
    stats = _confusion_stats(matrix)
    per_class = _per_class(order, matrix)
    return Agreement(
        n=len(judge),
        confusion=Confusion(order, matrix),
        per_class=per_class,
        _codes=codes,
        **{name: float(stats[name]) for name in AGREEMENT_FIELDS},
    )


def _codes(values: list[Label], index: Mapping[Label, int], side: str) -> np.ndarray:
    try:
        return np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values))
    except KeyError as exc:
        raise ValueError(f"{side} label {exc.args[0]!r} is not in labels {list(index)}") from None


def _sorted_labels(values: Iterable[Label]) -> tuple[Label, ...]:
    values = list(values)
    try:
        return tuple(sorted(values))  # type: ignore[type-var]  # labels of one type compare
    except TypeError:
        raise ValueError(
            f"labels of different types cannot be ordered: {values!r}; pass labels= to give their order"
        ) from None


def _confusion_stats(mats: np.ndarray) -> dict[str, np.ndarray]:
    """Every agreement statistic of one confusion matrix ``(k, k)`` or a stack ``(b, k, k)``."""
    mats = np.asarray(mats, dtype=np.float64)
    k = mats.shape[-1]
    tp = np.diagonal(mats, axis1=-2, axis2=-1)
    support = mats.sum(axis=-1)  # human uses of each label
    predicted = mats.sum(axis=-2)  # judge uses of each label
    n = support.sum(axis=-1)
    precision = _safe_div(tp, predicted)
    recall = _safe_div(tp, support)
    f1 = _safe_div(2 * tp, support + predicted)
    present = (support + predicted) > 0
    used = support > 0
    out = {
        "accuracy": tp.sum(axis=-1) / n,
        "balanced_accuracy": _masked_mean(recall, used),
        "macro_precision": _masked_mean(precision, present),
        "macro_recall": _masked_mean(recall, present),
        "macro_f1": _masked_mean(f1, present),
        "weighted_f1": (f1 * support).sum(axis=-1) / n,
    }
    expected = support[..., :, None] * predicted[..., None, :] / n[..., None, None]
    idx = np.arange(k)
    distance = np.abs(idx[:, None] - idx[None, :]).astype(np.float64)
    weights = {
        "cohen_kappa": (distance > 0).astype(np.float64),
        "cohen_kappa_linear": distance,
        "cohen_kappa_quadratic": distance**2,
    }
    for name, w in weights.items():
        observed = (w * mats).sum(axis=(-2, -1))
        chance = (w * expected).sum(axis=(-2, -1))
        out[name] = 1.0 - _safe_div(observed, chance, fill=np.nan)
    return out


def _safe_div(num: np.ndarray, den: np.ndarray, fill: float = 0.0) -> np.ndarray:
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64))
    out = np.full(num.shape, fill)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _masked_mean(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return _safe_div((values * mask).sum(axis=-1), mask.sum(axis=-1), fill=np.nan)


def _per_class(order: tuple[Label, ...], matrix: np.ndarray) -> dict[Label, ClassStats]:
    tp = np.diagonal(matrix).astype(np.float64)
    support, predicted = matrix.sum(axis=1), matrix.sum(axis=0)
    precision, recall = _safe_div(tp, predicted), _safe_div(tp, support)
    f1 = _safe_div(2 * tp, support + predicted)
    return {
        label: ClassStats(
            label, float(precision[i]), float(recall[i]), float(f1[i]), int(support[i]), int(predicted[i])
        )
        for i, label in enumerate(order)
    }


def _resample_indices(rows: int, n: int, seed: int | None) -> Iterator[tuple[int, np.ndarray]]:
    """Every validation bootstrap's resamples: ``n`` draws of ``rows`` row indices with
    replacement from ``numpy.random.default_rng(seed)``, yielded as ``(first replicate, indices
    of shape (b, rows))`` blocks of bounded size.  Block size does not change the draws."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if rows <= 0:
        raise ValueError("bootstrap needs at least one row")
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK_ROWS // rows)
    for start in range(0, n, block):
        yield start, rng.integers(0, rows, size=(min(n, start + block) - start, rows))


def _resampled_confusions(codes: np.ndarray, k: int, n: int, seed: int | None) -> np.ndarray:
    """``n`` bootstrap confusion matrices of the rows encoded as ``human * k + judge``."""
    out = np.empty((n, k, k), dtype=np.int64)
    for start, idx in _resample_indices(codes.size, n, seed):
        b = idx.shape[0]
        sample = codes[idx] + (np.arange(b) * (k * k))[:, None]
        out[start : start + b] = np.bincount(sample.ravel(), minlength=b * k * k).reshape(b, k, k)
    return out


def _resampled_means(matrix: np.ndarray, n: int, seed: int | None) -> np.ndarray:
    """Column means of ``n`` bootstrap resamples of the rows of ``matrix``: shape ``(n, cols)``."""
    out = np.empty((n, matrix.shape[1]))
    for start, idx in _resample_indices(matrix.shape[0], n, seed):
        out[start : start + idx.shape[0]] = matrix[idx].mean(axis=1)
    return out


def _interval(estimate: float | None, samples: np.ndarray, confidence: float) -> Interval:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    samples = np.asarray(samples, dtype=np.float64)
    samples = samples[~np.isnan(samples)]
    delta = (1 - confidence) / 2
    low, high = np.percentile(samples, [100 * delta, 100 * (1 - delta)]) if samples.size else (math.nan, math.nan)
    est = math.nan if estimate is None else float(estimate)
    return Interval(est, float(low), float(high), confidence)


# --------------------------------------------------------------------------- correlation


def _as_float_pair(x: Iterable[float], y: Iterable[float]) -> tuple[np.ndarray, np.ndarray]:
    xa = np.asarray(x if isinstance(x, np.ndarray) else list(x), dtype=np.float64)
    ya = np.asarray(y if isinstance(y, np.ndarray) else list(y), dtype=np.float64)
    if xa.ndim != 1 or xa.shape != ya.shape:
        raise ValueError(f"x and y must be 1-D of the same length, got {xa.shape} and {ya.shape}")
    if np.isnan(xa).any() or np.isnan(ya).any():
        raise ValueError("x and y must not contain NaN (drop missing rows first)")
    return xa, ya


def pearson(x: Iterable[float], y: Iterable[float]) -> float:
    """Pearson's r (NaN when fewer than 2 pairs or a side is constant); equals scipy's
    ``pearsonr(x, y).statistic``."""
    xa, ya = _as_float_pair(x, y)
    if xa.size < 2:
        return math.nan
    xm, ym = xa - xa.mean(), ya - ya.mean()
    nx, ny = np.linalg.norm(xm), np.linalg.norm(ym)
    if nx == 0 or ny == 0:
        return math.nan
    return float(np.clip(np.dot(xm / nx, ym / ny), -1.0, 1.0))


def rankdata(a: Iterable[float]) -> np.ndarray:
    """1-based ranks, ties sharing their average rank (scipy's ``rankdata(method="average")``)."""
    arr = np.asarray(a, dtype=np.float64)
    n = arr.size
    sorter = np.argsort(arr, kind="mergesort")
    inverse = np.empty(n, dtype=np.intp)
    inverse[sorter] = np.arange(n)
    ordered = arr[sorter]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    dense = np.cumsum(starts)[inverse]
    bounds = np.r_[np.nonzero(starts)[0], n]
    return 0.5 * (bounds[dense] + bounds[dense - 1] + 1)


def spearman(x: Iterable[float], y: Iterable[float]) -> float:
    """Spearman's rho: Pearson's r of average ranks; equals scipy's ``spearmanr``."""
    xa, ya = _as_float_pair(x, y)
    return pearson(rankdata(xa), rankdata(ya))


def _tie_pairs(sorted_values: np.ndarray) -> int:
    """Pairs of equal values in an already sorted 1-D array (or rows of a 2-D one)."""
    if sorted_values.shape[0] == 0:
        return 0
    if sorted_values.ndim == 1:
        change = sorted_values[1:] != sorted_values[:-1]
    else:
        change = (sorted_values[1:] != sorted_values[:-1]).any(axis=1)
    bounds = np.nonzero(np.r_[True, change, True])[0]
    counts = np.diff(bounds).astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


def _count_inversions(y: np.ndarray) -> int:
    """Pairs ``i < j`` with ``y[i] > y[j]``, by merging halves level by level (vectorised)."""
    n = y.size
    pos = np.arange(n, dtype=np.int64)
    levels = np.unique(y, return_inverse=True)[1].astype(np.int64).ravel()  # dense ranks
    m = int(levels.max()) + 1 if n else 1
    total, width = 0, 1
    while width < n:
        block = pos // (2 * width)
        is_left = (pos // width) % 2 == 0
        # one integer key: by block, then value, left half before right half on equal values
        order = np.argsort((block * m + levels) * 2 + ~is_left)
        left_sorted, block_sorted = is_left[order], block[order]
        left_per_block = np.bincount(block[is_left], minlength=block[-1] + 1)
        left_before_block = np.r_[0, np.cumsum(left_per_block)[:-1]]
        left_upto = np.cumsum(left_sorted) - left_before_block[block_sorted]
        right = ~left_sorted
        greater_left = left_per_block[block_sorted[right]] - left_upto[right]
        total += int(greater_left.sum())
        width *= 2
    return total


def kendall_tau_b(x: Iterable[float], y: Iterable[float]) -> float:
    """Kendall's tau-b (ties corrected on both sides); equals scipy's ``kendalltau`` default.

    O(n log² n): discordant pairs are counted as inversions of ``y`` ordered by ``(x, y)``.
    NaN when fewer than 2 pairs or either side is constant.
    """
    xa, ya = _as_float_pair(x, y)
    n = xa.size
    if n < 2:
        return math.nan
    perm = np.lexsort((ya, xa))
    xs, ys = xa[perm], ya[perm]
    discordant = _count_inversions(ys)
    x_ties = _tie_pairs(xs)
    y_ties = _tie_pairs(np.sort(ya))
    joint_ties = _tie_pairs(np.column_stack((xs, ys)))
    pairs = n * (n - 1) // 2
    if x_ties == pairs or y_ties == pairs:
        return math.nan
    con_minus_dis = pairs - x_ties - y_ties + joint_ties - 2 * discordant
    tau = con_minus_dis / math.sqrt(pairs - x_ties) / math.sqrt(pairs - y_ties)
    return float(min(1.0, max(-1.0, tau)))


def correlations(x: Iterable[float], y: Iterable[float]) -> Correlation:
    """Pearson, Spearman and Kendall tau-b of paired values (row by row)."""
    xa, ya = _as_float_pair(x, y)
    return Correlation(
        n=int(xa.size),
        pearson=pearson(xa, ya),
        spearman=spearman(xa, ya),
        kendall_tau_b=kendall_tau_b(xa, ya),
        _x=xa,
        _y=ya,
    )


def metric_human_correlation(
    metric: Iterable[float],
    human: Iterable[float],
    *,
    systems: Iterable[Hashable] | None = None,
    level: Literal["segment", "system"] = "segment",
) -> Correlation:
    """Correlation of an automatic metric with human scores.

    ``level="segment"`` pools every row; ``level="system"`` first averages metric and human
    scores per system (``systems`` gives each row's system; the order of first appearance is
    kept in ``units``) and correlates the means — e.g. REALSumm's system-level Kendall tau of
    ROUGE-2 against LitePyramid recall.
    """
    xa, ya = _as_float_pair(metric, human)
    if level == "segment":
        return correlations(xa, ya)
    if level != "system":
        raise ValueError(f"level must be 'segment' or 'system', got {level!r}")
    if systems is None:
        raise ValueError("level='system' needs systems (one system name per row)")
    names = list(systems)
    if len(names) != xa.size:
        raise ValueError(f"systems has {len(names)} rows but the scores have {xa.size}")
    units = list(dict.fromkeys(names))
    code = {s: i for i, s in enumerate(units)}
    idx = np.fromiter((code[s] for s in names), dtype=np.int64, count=len(names))
    counts = np.bincount(idx, minlength=len(units))
    mx = np.bincount(idx, weights=xa, minlength=len(units)) / counts
    my = np.bincount(idx, weights=ya, minlength=len(units)) / counts
    c = correlations(mx, my)
    return Correlation(
        c.n, c.pearson, c.spearman, c.kendall_tau_b, level="system", units=tuple(str(u) for u in units), _x=mx, _y=my
    )


# --------------------------------------------------------------------------- pairwise


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
        means = _resampled_means(rows, n_boot, seed)
        with np.errstate(invalid="ignore", divide="ignore"):
            j = means[:, 1] / means[:, 0]
            intervals["judge"] = _interval(judge_rate, j, confidence)
            if human is not None:
                intervals["excess"] = _interval(excess, j - means[:, 3] / means[:, 2], confidence)
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
            j._y,
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
    for start, block in _resample_indices(lengths.size, n_boot, seed):
        for i, idx in enumerate(block, start):
            j[i] = spearman(lengths[idx], judge[idx])
            if human is not None:
                e[i] = j[i] - spearman(lengths[idx], human[idx])
    out = {"judge": _interval(judge_rho, j, confidence)}
    if human is not None:
        out["excess"] = _interval(excess, e, confidence)
    return out


# --------------------------------------------------------------------------- files and columns


@dataclass(frozen=True)
class MetricColumns:
    """Where one judged metric lives in a table (Vertex's naming, or chosen by hand)."""

    name: str
    kind: Literal["pointwise", "pairwise"]
    judge: str
    human: str
    swapped: str | None = None


def find_metrics(columns: Iterable[str]) -> list[MetricColumns]:
    """Metrics with both a judge and a human column under Vertex's convention, in column order.

    A judge column without its human column (or the reverse) is not a validatable metric and
    is skipped.
    """
    cols = list(columns)
    present = set(cols)
    found: list[MetricColumns] = []
    for col in cols:
        name, _, suffix = col.rpartition("/")
        if not name:
            continue
        if suffix == "score" and f"{name}/human_rating" in present:
            found.append(MetricColumns(name, "pointwise", col, f"{name}/human_rating"))
        elif suffix == "pairwise_choice" and f"{name}/human_pairwise_choice" in present:
            swapped = f"{name}/pairwise_choice_swapped"
            found.append(
                MetricColumns(
                    name, "pairwise", col, f"{name}/human_pairwise_choice", swapped if swapped in present else None
                )
            )
    return found


def load_table(path: str | Path) -> dict[str, list[Any]]:
    """A whole table as columns: ``.jsonl``/``.ndjson`` (one object per line), ``.json`` (a list
    of objects, or an object of equal-length lists), ``.csv`` (numbers parsed, empty cells
    missing) or ``.parquet``.  Rows lacking a column hold ``None`` there."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return _rows_to_columns(_jsonl_rows(p), p)
    if suffix == ".json":
        return _json_table(p)
    if suffix == ".csv":
        return _csv_table(p)
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        return pq.read_table(p).to_pydict()
    raise ValueError(f"{p}: unknown table format {suffix!r} (expected .jsonl, .json, .csv or .parquet)")


def _jsonl_rows(p: Path) -> list[dict[str, Any]]:
    rows = []
    with p.open(encoding="utf-8-sig") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{p}:{lineno}: invalid JSON: {exc.msg}") from None
            if not isinstance(row, dict):
                raise ValueError(f"{p}:{lineno}: expected a JSON object, got {type(row).__name__}")
            rows.append(row)
    return rows


def _json_table(p: Path) -> dict[str, list[Any]]:
    data = json.loads(p.read_text(encoding="utf-8-sig"))
    if isinstance(data, list):
        return _rows_to_columns(data, p)
    if isinstance(data, dict) and all(isinstance(v, list) for v in data.values()):
        lengths = {len(v) for v in data.values()}
        if len(lengths) > 1:
            raise ValueError(f"{p}: columns have different lengths {sorted(lengths)}")
        return {str(k): list(v) for k, v in data.items()}
    raise ValueError(f"{p}: expected a list of objects or an object of columns")


def _rows_to_columns(rows: Sequence[Any], p: Path) -> dict[str, list[Any]]:
    names: dict[str, None] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ValueError(f"{p}: row {i} is {type(row).__name__}, expected an object")
        names.update(dict.fromkeys(row))
    return {name: [row.get(name) for row in rows] for name in names}


def _csv_table(p: Path) -> dict[str, list[Any]]:
    with p.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
        names = reader.fieldnames or []
    return {name: _parse_csv_column([row.get(name) for row in rows]) for name in names}


def _parse_csv_column(cells: list[str | None]) -> list[Any]:
    values: list[Any] = [None if c is None or not c.strip() else c for c in cells]
    for cast in (int, float):
        try:
            return [None if v is None else cast(v) for v in values]
        except ValueError:
            continue
    return values


def join_tables(
    results: Mapping[str, list[Any]], labels: Mapping[str, list[Any]], *, id_field: str | None = None
) -> dict[str, list[Any]]:
    """Columns of ``results`` and ``labels`` side by side, row by row, or matched on
    ``id_field`` (every results row keeps its place; a row with no label gets ``None``, which
    validation then drops and counts).  A column in both tables keeps the results' values."""
    n_res = _n_rows(results)
    if id_field is None:
        if n_res != _n_rows(labels):
            raise ValueError(
                f"results has {n_res} rows but labels has {_n_rows(labels)}; give an id field to match them"
            )
        order: list[int | None] = list(range(n_res))
    else:
        for name, table in (("results", results), ("labels", labels)):
            if id_field not in table:
                raise ValueError(f"{name} has no id field {id_field!r}")
        where = _id_index(labels[id_field], "labels", id_field)
        _id_index(results[id_field], "results", id_field)  # one label must never serve two rows
        order = [where.get(_plain(key)) for key in results[id_field]]
    joined = dict(results)
    for name, column in labels.items():
        if name not in joined:
            joined[name] = [None if i is None else column[i] for i in order]
    return joined


def _id_index(ids: list[Any], table: str, id_field: str) -> dict[Any, int]:
    index: dict[Any, int] = {}
    repeated: dict[Any, None] = {}
    for i, key in enumerate(ids):
        key = _plain(key)
        if key in index:
            repeated[key] = None
        index.setdefault(key, i)
    if repeated:
        shown = ", ".join(repr(k) for k in list(repeated)[:10]) + (" ..." if len(repeated) > 10 else "")
        raise ValueError(f"{table}: {len(repeated)} {id_field!r} value(s) appear more than once: {shown}")
    return index


def _n_rows(table: Mapping[str, list[Any]]) -> int:
    return len(next(iter(table.values()))) if table else 0


def table_column(table: Mapping[str, list[Any]], name: str) -> list[Any]:
    """A column by name, or by a dotted path into nested objects (``scores.litepyramid``)."""
    if name in table:
        return list(table[name])
    head, _, rest = name.partition(".")
    if rest and head in table:
        out = []
        for value in table[head]:
            for part in rest.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            out.append(value)
        return out
    raise ValueError(f"no column {name!r} (columns: {', '.join(list(table)[:20])})")


# --------------------------------------------------------------------------- one metric, end to end


TEXT_COLUMNS = (
    "prompt",
    "instruction",
    "input",
    "reference",
    "response",
    "baseline_model_response",
    "response_a",
    "response_b",
    "response1",
    "response2",
    "output_1",
    "output_2",
)


@dataclass(frozen=True)
class PairwiseScheme:
    """How a family of pairwise verdicts is spelled (see the module docstring's table)."""

    first: Label
    second: Label
    tie: Label
    first_texts: tuple[str, ...]  # columns holding the response ``first`` names
    second_texts: tuple[str, ...]
    shown_first: Label | None  # the label of the response shown first, if known

    @property
    def labels(self) -> frozenset[Label]:
        """The three labels of the scheme."""
        return frozenset((self.first, self.second, self.tie))


PAIRWISE_SCHEMES = (
    PairwiseScheme("A", "B", "TIE", ("response_a",), ("response_b",), "A"),
    PairwiseScheme(1, 2, 0, ("response1", "output_1"), ("response2", "output_2"), 1),
    PairwiseScheme("CANDIDATE", "BASELINE", "TIE", ("response",), ("baseline_model_response",), None),
)


@dataclass
class MetricValidation:
    """Everything :func:`validate_pair` found for one metric; ``to_dict()`` is the
    ``validation`` entry of a report run summary (see :mod:`respeval.report`)."""

    name: str
    kind: str
    judge_column: str
    human_column: str
    rows: int
    used: int
    dropped: dict[str, int]
    agreement: Agreement | None = None
    agreement_intervals: dict[str, Interval] = field(default_factory=dict)
    agreement_note: str | None = None
    correlation: Correlation | None = None
    correlation_intervals: dict[str, Interval] = field(default_factory=dict)
    pairwise: PairwiseConsistency | None = None
    pairwise_intervals: dict[str, Interval] = field(default_factory=dict)
    pairwise_note: str | None = None
    verbosity: VerbosityProbe | None = None
    distribution: dict[str, Any] | None = None
    disagreements: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (labels as plain values, NaN as ``null``)."""
        out: dict[str, Any] = {
            "metric": self.name,
            "kind": self.kind,
            "judge_column": self.judge_column,
            "human_column": self.human_column,
            "rows": self.rows,
            "used": self.used,
            "dropped": dict(self.dropped),
        }
        out["agreement"] = _with_intervals(self.agreement, self.agreement_intervals)
        out["agreement_note"] = self.agreement_note
        out["correlation"] = _with_intervals(self.correlation, self.correlation_intervals)
        out["pairwise"] = _with_intervals(self.pairwise, self.pairwise_intervals)
        out["pairwise_note"] = self.pairwise_note
        out["verbosity"] = self.verbosity.to_dict() if self.verbosity else None
        out["distribution"] = self.distribution
        out["disagreements"] = self.disagreements
        return out


def _with_intervals(result: Any, intervals: Mapping[str, Interval]) -> dict[str, Any] | None:
    if result is None:
        return None
    out = result.to_dict()
    out["intervals"] = {k: v.to_dict() for k, v in intervals.items()}
    return out


def validate_pair(
    judge: Sequence[Any],
    human: Sequence[Any],
    *,
    name: str = "judge",
    kind: Literal["pointwise", "pairwise"] | None = None,
    judge_column: str = "",
    human_column: str = "",
    swapped: Sequence[Any] | None = None,
    texts: Mapping[str, Sequence[Any]] | None = None,
    first_shown: Label | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    max_disagreements: int = 10,
) -> MetricValidation:
    """Validate one judged metric against human values, end to end.

    Drops rows where either side is missing (counted in ``dropped``); numeric-looking strings
    become numbers.  Computes:

    * agreement, when both sides are labels (strings, or integers with at most 20 distinct
      values — a mean rating like 3.67 is not a label and is never rounded);
    * correlations, when both sides are numbers (pointwise only: pairwise choices are nominal);
    * pairwise consistency, when ``swapped`` verdicts are given;
    * the verbosity probe, when the response texts are among ``texts``;
    * the score distributions, and the worst disagreements with their ``texts``.

    ``kind`` defaults to ``pairwise`` when ``swapped`` is given, else ``pointwise``.
    """
    if len(judge) != len(human):
        raise ValueError(f"{name}: judge has {len(judge)} rows but human has {len(human)}")
    kind = kind or ("pairwise" if swapped is not None else "pointwise")
    keep, dropped = _complete_rows(judge, human)
    j = _coerce([judge[i] for i in keep])
    h = _coerce([human[i] for i in keep])
    result = MetricValidation(name, kind, judge_column, human_column, rows=len(judge), used=len(keep), dropped=dropped)
    if not keep:
        result.agreement_note = "no row has both a judge and a human value"
        return result
    boot = {"n": n_boot, "seed": seed, "confidence": confidence}
    _add_agreement(result, j, h, boot)
    if kind == "pointwise":  # pairwise choices are nominal, even when coded 0/1/2
        _add_correlation(result, j, h, boot)
    kept_texts = {k: [v[i] for i in keep] for k, v in (texts or {}).items()}
    if kind == "pairwise":
        _add_pairwise(
            result, j, h, None if swapped is None else [swapped[i] for i in keep], kept_texts, first_shown, boot
        )
    else:
        _add_pointwise_verbosity(result, j, h, kept_texts, boot)
    result.distribution = _distribution(j, h)
    result.disagreements = _disagreements(j, h, keep, kept_texts, kind, max_disagreements)
    return result


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _complete_rows(judge: Sequence[Any], human: Sequence[Any]) -> tuple[list[int], dict[str, int]]:
    keep: list[int] = []
    counts = {"judge_missing": 0, "human_missing": 0, "both_missing": 0}
    for i, (a, b) in enumerate(zip(judge, human)):
        ma, mb = _is_missing(a), _is_missing(b)
        if ma and mb:
            counts["both_missing"] += 1
        elif ma:
            counts["judge_missing"] += 1
        elif mb:
            counts["human_missing"] += 1
        else:
            keep.append(i)
    counts["total"] = len(judge) - len(keep)
    return keep, counts


def is_number(value: Any) -> bool:
    """A real number that is not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _coerce(values: list[Any]) -> list[Any]:
    """Plain Python values; a side made only of numbers or numeric strings becomes numbers
    (whole floats become ints, so ``4.0`` and ``"4"`` are the label ``4``)."""
    plain = [_plain(v) for v in values]
    numbers_ = [_try_float(v) for v in plain]
    if all(is_number(v) for v in numbers_):
        return [_int_if_whole(v) for v in numbers_]
    return plain


def _try_float(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _int_if_whole(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _are_labels(values: list[Any]) -> bool:
    if all(isinstance(v, (str, bool)) for v in values):
        return True
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values) and len(set(values)) <= 20


def _add_agreement(result: MetricValidation, j: list[Any], h: list[Any], boot: dict[str, Any]) -> None:
    if not (_are_labels(j) and _are_labels(h)):
        result.agreement_note = (
            "not computed: the values are not labels (non-integer numbers or more than 20 levels); see the correlations"
        )
        return
    try:
        result.agreement = agreement(j, h)
    except ValueError as exc:
        result.agreement_note = f"not computed: {exc}"
        return
    if boot["n"]:
        result.agreement_intervals = result.agreement.bootstrap(**boot)


def _add_correlation(result: MetricValidation, j: list[Any], h: list[Any], boot: dict[str, Any]) -> None:
    if not (all(is_number(v) for v in j) and all(is_number(v) for v in h)):
        return
    result.correlation = correlations(j, h)
    if boot["n"] and len(j) > 1:
        result.correlation_intervals = result.correlation.bootstrap(**boot)


def _pairwise_scheme(values: Iterable[Label]) -> PairwiseScheme | None:
    """The first known scheme spelling every value, if any."""
    seen = set(values)
    return next((scheme for scheme in PAIRWISE_SCHEMES if seen <= scheme.labels), None)


def _add_pairwise(
    result: MetricValidation,
    j: list[Any],
    h: list[Any],
    swapped: list[Any] | None,
    texts: Mapping[str, list[Any]],
    first_shown: Label | None,
    boot: dict[str, Any],
) -> None:
    scheme = _pairwise_scheme(j + h)
    ties = DEFAULT_TIES if scheme is None else (scheme.tie,)
    shown = first_shown if first_shown is not None else (scheme.shown_first if scheme else None)
    if swapped is None:
        result.pairwise_note = (
            "position consistency needs the verdicts in the swapped order ({metric}/pairwise_choice_swapped)"
        )
    else:
        both = [i for i, v in enumerate(swapped) if not _is_missing(v)]
        if both:
            sw = _coerce([swapped[i] for i in both])
            result.pairwise = pairwise_consistency([j[i] for i in both], sw, ties=ties, first_shown=shown)
            if boot["n"]:
                result.pairwise_intervals = result.pairwise.bootstrap(**boot)
            if len(both) < len(j):
                result.pairwise_note = f"{len(j) - len(both)} rows without a swapped verdict left out"
    if scheme is None:
        return
    first = next((c for c in scheme.first_texts if c in texts), None)
    second = next((c for c in scheme.second_texts if c in texts), None)
    if first and second:
        result.verbosity = verbosity_pairwise(
            j,
            human=h,
            length_first=text_length(texts[first]),
            length_second=text_length(texts[second]),
            first=scheme.first,
            second=scheme.second,
            n_boot=boot["n"],
            seed=boot["seed"],
            confidence=boot["confidence"],
        )


def _add_pointwise_verbosity(
    result: MetricValidation, j: list[Any], h: list[Any], texts: Mapping[str, list[Any]], boot: dict[str, Any]
) -> None:
    if "response" not in texts or not all(is_number(v) for v in j) or len(j) < 3:
        return
    human = h if all(is_number(v) for v in h) else None
    result.verbosity = verbosity_pointwise(
        j, text_length(texts["response"]), human, n_boot=boot["n"], seed=boot["seed"], confidence=boot["confidence"]
    )


def _distribution(j: list[Any], h: list[Any]) -> dict[str, Any]:
    """Counts per label (categorical) or a shared-bin histogram (numeric) of both sides."""
    if _are_labels(j) and _are_labels(h):
        try:
            labels = _sorted_labels(set(j) | set(h))
        except ValueError:
            labels = tuple(dict.fromkeys(j + h))
        return {
            "kind": "categorical",
            "labels": [_plain(x) for x in labels],
            "series": [
                {"name": side, "counts": [vals.count(x) for x in labels]} for side, vals in (("judge", j), ("human", h))
            ],
        }
    if all(is_number(v) for v in j + h):
        bins = min(30, max(5, int(math.sqrt(len(j)))))
        edges = np.histogram_bin_edges(np.asarray(j + h, dtype=np.float64), bins=bins)
        return {
            "kind": "numeric",
            "edges": edges.tolist(),
            "series": [
                {"name": side, "counts": np.histogram(vals, bins=edges)[0].tolist()}
                for side, vals in (("judge", j), ("human", h))
            ],
        }
    return {"kind": "none"}


def _disagreement_size(a: Any, b: Any, kind: str, ties: set[Label]) -> float:
    """0 when equal; pairwise: 2 for opposite winners, 1 for a tie against a winner; numbers:
    the absolute difference; other labels: 1."""
    if a == b:
        return 0.0
    if kind == "pairwise":
        return 1.0 if (a in ties or b in ties) else 2.0
    if is_number(a) and is_number(b):
        return abs(float(a) - float(b))
    return 1.0


def _disagreements(
    j: list[Any], h: list[Any], keep: list[int], texts: Mapping[str, list[Any]], kind: str, limit: int
) -> list[dict[str, Any]]:
    """The ``limit`` rows where judge and human differ most (largest gap first, then row)."""
    ties = set(DEFAULT_TIES)
    sizes = [_disagreement_size(a, b, kind, ties) for a, b in zip(j, h)]
    worst = sorted((i for i, s in enumerate(sizes) if s > 0), key=lambda i: (-sizes[i], i))[:limit]
    return [
        {
            "row": keep[i],
            "judge": j[i],
            "human": h[i],
            "gap": sizes[i],
            "texts": {k: _clip(v[i]) for k, v in texts.items() if not _is_missing(v[i])},
        }
        for i in worst
    ]


def _clip(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(_plain(value), default=str)
    return text if len(text) <= _TEXT_LIMIT else text[:_TEXT_LIMIT] + " […]"


def validate_table(
    table: Mapping[str, list[Any]],
    *,
    metrics: Sequence[MetricColumns] | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    first_shown: Label | None = None,
    max_disagreements: int = 10,
) -> list[MetricValidation]:
    """Validate every metric of a table (default: :func:`find_metrics` on its columns).

    Text columns for the verbosity probe and the disagreements are taken from
    :data:`TEXT_COLUMNS` and ``{metric}/explanation`` when present.
    """
    found = list(metrics) if metrics is not None else find_metrics(table)
    if not found:
        raise ValueError(
            "no metric with both a judge and a human column: expected "
            "{metric}/score with {metric}/human_rating, or {metric}/pairwise_choice "
            f"with {{metric}}/human_pairwise_choice; columns: {', '.join(list(table)[:20])}"
        )
    out = []
    for m in found:
        texts = {c: table_column(table, c) for c in TEXT_COLUMNS if c in table}
        if f"{m.name}/explanation" in table:
            texts["explanation"] = list(table[f"{m.name}/explanation"])
        out.append(
            validate_pair(
                table_column(table, m.judge),
                table_column(table, m.human),
                name=m.name,
                kind=m.kind,
                judge_column=m.judge,
                human_column=m.human,
                swapped=table_column(table, m.swapped) if m.swapped else None,
                texts=texts,
                first_shown=first_shown,
                n_boot=n_boot,
                seed=seed,
                confidence=confidence,
                max_disagreements=max_disagreements,
            )
        )
    return out


# --------------------------------------------------------------------------- JSON helpers


def _plain(value: Any) -> Any:
    """numpy scalars as Python values (for hashing with Python values and for JSON)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def _num(value: float | None) -> float | None:
    """A float for JSON: NaN and None become ``None``."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value
