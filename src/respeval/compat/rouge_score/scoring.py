"""Drop-in for ``rouge_score.scoring``: ``Score``, ``AggregateScore``, ``BaseScorer``,
``BootstrapAggregator`` and ``fmeasure``.

``BootstrapAggregator`` resamples exactly as rouge-score does, from numpy's
global RNG, so with the same ``np.random.seed`` it returns the same intervals.
Pass ``seed=`` to make it reproducible without touching global state.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

import numpy as np

from respeval.metrics.rouge import AggregateScore, Score

__all__ = ["AggregateScore", "BaseScorer", "BootstrapAggregator", "Score", "fmeasure"]


class BaseScorer(abc.ABC):
    """Base class of scorers: ``score(target, prediction) -> {score type: Score}``."""

    @abc.abstractmethod
    def score(self, target: str, prediction: str) -> dict[str, Score]:
        """Scores of ``prediction`` against ``target``."""


def fmeasure(precision: float, recall: float) -> float:
    """Harmonic mean of precision and recall (0 when both are 0)."""
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


class BootstrapAggregator:
    """Bootstrap confidence intervals over per-example scores.

    Parameters
    ----------
    confidence_interval : float in [0, 1]
    n_samples : number of bootstrap resamples (> 0)
    seed : None (default) resamples from numpy's global RNG like rouge-score;
        an int uses a private ``RandomState(seed)``, so results repeat.
    """

    def __init__(self, confidence_interval: float = 0.95, n_samples: int = 1000, seed: int | None = None) -> None:
        if confidence_interval < 0 or confidence_interval > 1:
            raise ValueError("confidence_interval must be in range [0, 1]")
        if n_samples <= 0:
            raise ValueError("n_samples must be positive")
        self._n_samples = n_samples
        self._confidence_interval = confidence_interval
        self._seed = seed
        self._scores: dict[str, list[Any]] = {}

    def add_scores(self, scores: Mapping[str, Any]) -> None:
        """Add one example's ``{type: Score}`` dict."""
        for score_type, score in scores.items():
            self._scores.setdefault(score_type, []).append(score)

    def _resample(self, matrix: np.ndarray) -> np.ndarray:
        rows = matrix.shape[0]
        rng = np.random if self._seed is None else np.random.RandomState(self._seed)
        means = np.zeros((self._n_samples, matrix.shape[1]))
        for i in range(self._n_samples):
            # One choice() call per resample, as rouge-score, so the global RNG
            # stream is consumed identically.
            idx = rng.choice(np.arange(rows), size=rows)
            means[i, :] = np.mean(matrix[idx, :], axis=0)
        delta = (1 - self._confidence_interval) / 2
        q = 100 * np.array([delta, 0.5, 1 - delta])
        return np.percentile(means, q, axis=0)

    def aggregate(self) -> dict[str, AggregateScore]:
        """``{type: AggregateScore(low, mid, high)}``; mid is the median resample mean."""
        result = {}
        for score_type, scores in self._scores.items():
            q = self._resample(np.vstack(tuple(scores)))
            low, mid, high = (scores[0].__class__(*q[j, :]) for j in range(3))
            result[score_type] = AggregateScore(low=low, mid=mid, high=high)
        return result
