"""Agreement of judge labels with human labels: accuracy, balanced accuracy, F1s, kappas, confusion."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from respeval.stats import DEFAULT_SEED
from respeval.validate.resampling import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    Interval,
    Label,
    interval_from_samples,
    json_number,
    masked_mean,
    plain_value,
    resample_indices,
    safe_div,
)


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
            "label": plain_value(self.label),
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
            "labels": [plain_value(x) for x in self.labels],
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
        return {name: interval_from_samples(point[name], stats[name], confidence) for name in AGREEMENT_FIELDS}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the scalars, the confusion matrix and the per-class table."""
        out: dict[str, Any] = {"n": self.n}
        out.update({name: json_number(getattr(self, name)) for name in AGREEMENT_FIELDS})
        out["labels"] = [plain_value(x) for x in self.labels]
        out["confusion"] = self.confusion.to_dict()
        out["per_class"] = [c.to_dict() for c in self.per_class.values()]
        return out


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
    order = tuple(labels) if labels is not None else sorted_labels(set(judge) | set(human))
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


def sorted_labels(values: Iterable[Label]) -> tuple[Label, ...]:
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
    precision = safe_div(tp, predicted)
    recall = safe_div(tp, support)
    f1 = safe_div(2 * tp, support + predicted)
    present = (support + predicted) > 0
    used = support > 0
    out = {
        "accuracy": tp.sum(axis=-1) / n,
        "balanced_accuracy": masked_mean(recall, used),
        "macro_precision": masked_mean(precision, present),
        "macro_recall": masked_mean(recall, present),
        "macro_f1": masked_mean(f1, present),
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
        out[name] = 1.0 - safe_div(observed, chance, fill=np.nan)
    return out


def _per_class(order: tuple[Label, ...], matrix: np.ndarray) -> dict[Label, ClassStats]:
    tp = np.diagonal(matrix).astype(np.float64)
    support, predicted = matrix.sum(axis=1), matrix.sum(axis=0)
    precision, recall = safe_div(tp, predicted), safe_div(tp, support)
    f1 = safe_div(2 * tp, support + predicted)
    return {
        label: ClassStats(
            label, float(precision[i]), float(recall[i]), float(f1[i]), int(support[i]), int(predicted[i])
        )
        for i, label in enumerate(order)
    }


def _resampled_confusions(codes: np.ndarray, k: int, n: int, seed: int | None) -> np.ndarray:
    """``n`` bootstrap confusion matrices of the rows encoded as ``human * k + judge``."""
    out = np.empty((n, k, k), dtype=np.int64)
    for start, idx in resample_indices(codes.size, n, seed):
        b = idx.shape[0]
        sample = codes[idx] + (np.arange(b) * (k * k))[:, None]
        out[start : start + b] = np.bincount(sample.ravel(), minlength=b * k * k).reshape(b, k, k)
    return out
