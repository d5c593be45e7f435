"""sacreBLEU's ``significance`` module: ``PairedTest``, ``Result``, ``estimate_ci``.

Paired bootstrap resampling (``test_type="bs"``) and approximate randomization (``"ar"``)
of several systems against the first one, with sacreBLEU 2.6's seeds and number types, so
p-values, means and intervals are the same floats. The resampling is vectorised in
:mod:`respeval.stats.paired`; with a fixed seed every system is compared on the same
resamples (as in sacreBLEU), so the baseline's resample scores are computed once.

As in sacreBLEU, the seed comes from ``SACREBLEU_SEED`` (default 12345; ``none`` for an
unseeded run) and a seed of 0 leaves the per-system tests unseeded. ``n_jobs`` is accepted
for compatibility; the tests run in this process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from respeval.compat.sacrebleu.metrics.base import Metric, Signature, column_sums, seed_from_environment
from respeval.stats import paired

__all__ = ["PairedTest", "Result", "estimate_ci"]


class Result(paired.PairedResult):
    """One system's score, p-value against the baseline (None for the baseline) and interval."""

    def __init__(
        self, score: float, p_value: float | None = None, mean: float | None = None, ci: float | None = None
    ) -> None:
        super().__init__(score, p_value, mean, ci)

    def __repr__(self) -> str:
        return ",".join(f"{k}={str(v)}" for k, v in vars(self).items())  # str(): numpy scalars print short


def estimate_ci(scores: np.ndarray) -> tuple[float, float]:
    """Mean and 95% half-width of resample scores (sacreBLEU's rule: ``n // 40`` from each end)."""
    return paired.estimate_ci(scores)


class _Baseline:
    """The baseline's statistics, result and (per seed) resample scores for one metric."""

    def __init__(self, stats: np.ndarray, result: Result) -> None:
        self.stats, self.result = stats, result
        self.resampled: np.ndarray | None = None


class PairedTest:
    """Compare ``named_systems[1:]`` with ``named_systems[0]`` on every metric.

    Parameters
    ----------
    named_systems : list of (name, hypotheses); the first is the baseline
    metrics : {name: BLEU/CHRF/TER instance}; results are keyed by score name
        (``BLEU``, ``chrF2``, ``TER``, ...)
    references : reference streams, or None to use each metric's cached references
    test_type : ``"ar"`` (approximate randomization) or ``"bs"`` (paired bootstrap)
    n_samples : trials (ar, default 10000) or resamples (bs, default 1000); 0 = default
    n_ar_confidence : bootstrap resamples for intervals with ``ar``; -1 = none, 0 = 1000
    """

    _DEFAULT_SAMPLES = {"ar": paired.DEFAULT_AR_TRIALS, "bs": paired.DEFAULT_BS_SAMPLES}

    def __init__(
        self,
        named_systems: list[tuple[str, Sequence[str]]],
        metrics: Mapping[str, Metric],
        references: Sequence[Sequence[str]] | None,
        test_type: str = "ar",
        n_samples: int = 0,
        n_ar_confidence: int = -1,
        n_jobs: int = 1,
    ) -> None:
        if test_type not in ("ar", "bs"):
            raise ValueError(f"Unknown test type {test_type!r}: use 'ar' or 'bs'")
        if not named_systems:
            raise ValueError("named_systems is empty: the first system is the baseline")
        self.test_type = test_type
        _, self._seed = seed_from_environment()
        self.n_jobs = n_jobs
        self.references = references
        self.named_systems = named_systems
        self.n_ar_confidence = n_ar_confidence if n_ar_confidence != 0 else paired.DEFAULT_BS_SAMPLES
        self.n_samples = n_samples if n_samples > 0 else self._DEFAULT_SAMPLES[test_type]
        self.n_systems = len(named_systems) - 1

        self.metrics: dict[str, Metric] = {}
        self._baselines: dict[str, _Baseline] = {}
        self._signatures: dict[str, Signature] = {}
        _, baseline_hyps = named_systems[0]
        confidence_n = self.n_samples if test_type == "bs" else self.n_ar_confidence
        for metric in metrics.values():
            stats = metric.corpus_statistics(baseline_hyps, references)
            score = metric.compute_score(column_sums(stats))
            mean = ci = None
            if confidence_n > 0:
                mean, ci = paired.estimate_ci(
                    paired.bootstrap_scores(stats, metric.score_sums, confidence_n, self._seed)
                )
            self._baselines[score.name] = _Baseline(stats, Result(score.score, mean=mean, ci=ci))
            self.metrics[score.name] = metric
            signature = metric.get_signature()
            signature.update("seed", str(self._seed).lower())
            signature.update(test_type, self.n_samples)
            if self.n_ar_confidence > 0:
                signature.update("bs", self.n_ar_confidence)
            self._signatures[score.name] = signature

    def __call__(self) -> tuple[dict[str, Signature], dict[str, list[Any]]]:
        """Run the test: (signatures, ``{"System": names, metric: [baseline Result, system Results...]}``)."""
        scores: dict[str, list[Any]] = {"System": [name for name, _ in self.named_systems]}
        for name, baseline in self._baselines.items():
            scores[name] = [baseline.result]
        seed = self._seed if self._seed else None  # sacreBLEU: a seed of 0 means unseeded here
        shared: dict[str, np.ndarray] = {}  # with a seed, every system gets the same random draws
        compare = self._bootstrap if self.test_type == "bs" else self._randomization
        for _, hypotheses in self.named_systems[1:]:
            draws = self._draws(shared, seed, len(hypotheses))
            for name, metric in self.metrics.items():
                baseline = self._baselines[name]
                stats = metric.corpus_statistics(hypotheses, self.references)
                score = metric.compute_score(column_sums(stats)).score
                p_value, mean, ci = compare(metric, baseline, stats, abs(baseline.result.score - score), draws, seed)
                scores[name].append(Result(score, p_value, mean, ci))
        return self._signatures, scores

    def _draws(self, shared: dict[str, np.ndarray], seed: int | None, n_rows: int) -> dict[str, np.ndarray]:
        if shared and seed is not None:
            return shared
        rng = np.random.default_rng(seed)
        draws = {}
        if self.test_type == "bs":
            draws["indices"] = paired.resample_indices(n_rows, self.n_samples, rng)
        else:
            draws["mask"] = paired.swap_mask(n_rows, self.n_samples, rng)
            if self.n_ar_confidence > 0:
                draws["indices"] = paired.resample_indices(n_rows, self.n_ar_confidence, rng)
        if seed is not None:
            shared.update(draws)
        return draws

    @staticmethod
    def _bootstrap(
        metric: Metric, baseline: _Baseline, stats: np.ndarray, observed: float, draws: dict, seed: int | None
    ) -> tuple[float, Any, Any]:
        """(p-value, mean, half-width) of the paired bootstrap on ``draws["indices"]``."""
        baseline_scores = baseline.resampled if seed is not None else None
        if baseline_scores is None:  # seeded, every system has the same resamples: score the baseline's once
            baseline_scores = metric.score_sums(paired.resampled_sums(baseline.stats, draws["indices"]))
            baseline.resampled = baseline_scores if seed is not None else None
        system_scores = metric.score_sums(paired.resampled_sums(stats, draws["indices"]))
        return (paired.paired_bootstrap(baseline_scores, system_scores, observed), *paired.estimate_ci(system_scores))

    def _randomization(
        self, metric: Metric, baseline: _Baseline, stats: np.ndarray, observed: float, draws: dict, seed: int | None
    ) -> tuple[float, Any, Any]:
        """(p-value, and with n_ar_confidence the mean and half-width) of approximate randomization."""
        p_value = paired.approximate_randomization(baseline.stats, stats, metric.score_sums, observed, draws["mask"])
        if self.n_ar_confidence <= 0:
            return p_value, None, None
        return (p_value, *paired.estimate_ci(metric.score_sums(paired.resampled_sums(stats, draws["indices"]))))
