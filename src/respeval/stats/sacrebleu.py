"""sacreBLEU 2.6's bootstrap confidence intervals and paired significance tests, with its numbers.

Everything works on per-segment statistics rows (BLEU, chrF or TER rows from the
sibling modules) and a ``score_fn`` that maps a summed row to a score, e.g.
``lambda s: compute_bleu(s).score``. The procedures, random streams and number types are
sacreBLEU's, so the intervals and p-values come out identical:

* RNG: ``numpy.random.default_rng(seed)``, default seed 12345 (sacreBLEU reads it from
  ``SACREBLEU_SEED``; here it is a parameter, ``None`` meaning unseeded).
* Bootstrap resamples: one ``rng.choice(N, size=(n_samples, N))`` matrix; each resample's
  statistics are summed as **float32** (sacreBLEU converts rows with
  ``np.array(stats, dtype='float32')``), so scores are computed from float32 sums, and
  chrF/TER scores even come out as float32 scalars.
* 95% interval: sort the scores, ``lo = s[n // 40]``, ``hi = s[n - n // 40 - 1]``,
  ``ci = (hi - lo) / 2``; the mean is ``statistics.mean`` for ``corpus_score(n_bootstrap=)``
  and ``ndarray.mean`` in the paired tests (they differ in the last bits for float32).
* Paired bootstrap (``--paired-bs``, Koehn 2004 as in Moses): the *same* resample indices
  for baseline and system; statistic ``|sys - base|`` per resample, centred on its mean;
  ``p = (#(centred > |observed difference|) + 1) / (n + 1)``.
* Approximate randomization (``--paired-ar``, multeval): ``rng.integers(2, size=(n, N),
  dtype=bool)`` decides per segment whether the two systems swap; pseudo-system statistics
  are integer matrix products; same p-value formula on ``|score_a - score_b|`` (not centred).
  With ``n_ar_confidence > 0`` the system CI uses ``rng.choice`` drawn *after* the swap
  mask from the same generator.

Note: sacreBLEU's ``PairedTest`` passes ``seed if seed else None`` to each test, so a seed
of 0 makes its paired tests unseeded; here 0 is an ordinary seed.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

__all__ = [
    "DEFAULT_SEED",
    "PairedResult",
    "baseline_result",
    "bootstrap_ci",
    "bootstrap_scores",
    "estimate_ci",
    "paired_approximate_randomization",
    "paired_bootstrap",
    "p_value",
    "resample_indices",
    "sum_rows",
]

DEFAULT_SEED = 12345
DEFAULT_BS_SAMPLES = 1000
DEFAULT_AR_SAMPLES = 10000

Number = Union[int, float]
Stats = Sequence[Sequence[Number]]
ScoreFn = Callable[[Sequence[Any]], Any]


@dataclass
class PairedResult:
    """One system's row in a paired significance test.

    Attributes
    ----------
    score : float
        The system's actual corpus score.
    p_value : float or None
        p-value against the baseline (None for the baseline itself).
    mean, ci : float or None
        Bootstrap mean and 95% half-width (None when not estimated).
    """

    score: float
    p_value: float | None = None
    mean: float | None = None
    ci: float | None = None


def sum_rows(stats: Stats) -> list[Number]:
    """Column sums with a running ``+=`` (sacreBLEU's ``sum_of_lists``), in Python numbers."""
    if not stats:
        raise ValueError("no statistics rows")
    totals = list(stats[0])
    for row in stats[1:]:
        for i, value in enumerate(row):
            totals[i] += value
    return totals


def resample_indices(n_rows: int, n_samples: int, seed: int | None = DEFAULT_SEED) -> np.ndarray:
    """``default_rng(seed).choice(n_rows, size=(n_samples, n_rows), replace=True)``."""
    rng = np.random.default_rng(seed)
    return rng.choice(n_rows, size=(n_samples, n_rows), replace=True)


def _scores_of_resamples(stats32: np.ndarray, indices: np.ndarray, score_fn: ScoreFn) -> list[Any]:
    """Score every resample from its float32 column sums.

    ``stats32[row_indices]`` is the same C-ordered (N, k) block sacreBLEU gets from
    ``stats32[indices]`` one resample at a time, so ``.sum(0)`` rounds identically, while
    never materialising the (n_samples, N, k) array.
    """
    return [score_fn(stats32[row_indices].sum(0)) for row_indices in indices]


def bootstrap_scores(
    stats: Stats, score_fn: ScoreFn, n_samples: int = DEFAULT_BS_SAMPLES, seed: int | None = DEFAULT_SEED
) -> list[Any]:
    """Scores of ``n_samples`` bootstrap resamples of the segments (sacreBLEU's ``_bootstrap_resample``).

    Parameters
    ----------
    stats : sequence of rows
        Per-segment statistics.
    score_fn : callable
        Summed statistics -> score.
    n_samples : int
        Number of resamples.
    seed : int or None
        RNG seed; None for OS entropy.

    Returns
    -------
    list
        One score per resample, in resample order.
    """
    indices = resample_indices(len(stats), n_samples, seed)
    return _scores_of_resamples(np.array(stats, dtype="float32"), indices, score_fn)


def _interval_bounds(sorted_scores: Sequence[Any] | np.ndarray) -> tuple[Any, Any]:
    """The 2.5% and 97.5% order statistics as sacreBLEU picks them (n // 40 from each end)."""
    n = len(sorted_scores)
    lower_index = n // 40
    upper_index = n - lower_index - 1
    return sorted_scores[lower_index], sorted_scores[upper_index]


def bootstrap_ci(
    stats: Stats, score_fn: ScoreFn, n_samples: int = DEFAULT_BS_SAMPLES, seed: int | None = DEFAULT_SEED
) -> tuple[Any, Any]:
    """Bootstrap mean and 95% half-width, as ``corpus_score(..., n_bootstrap=n_samples)``.

    Returns
    -------
    (mean, ci)
        ``statistics.mean`` of the resample scores and half the distance between the
        2.5% and 97.5% order statistics (sacreBLEU's ``Score.estimate_ci``).
    """
    scores = sorted(bootstrap_scores(stats, score_fn, n_samples, seed))
    lower, upper = _interval_bounds(scores)
    return statistics.mean(scores), 0.5 * (upper - lower)


def estimate_ci(scores: Sequence[Any] | np.ndarray) -> tuple[Any, Any]:
    """Mean and 95% half-width of scores with numpy (sacreBLEU ``significance.estimate_ci``)."""
    ordered = np.sort(np.array(scores))
    lower, upper = _interval_bounds(ordered)
    return ordered.mean(), 0.5 * (upper - lower)


def p_value(sample_statistics: np.ndarray, observed: float) -> float:
    """``(#(samples > observed) + 1) / (n + 1)``.

    Strictly greater, so a system compared with itself is not "significant" by chance;
    the +1 keeps the false rejection rate at most the nominal level (multeval).
    """
    exceeding = np.sum(sample_statistics > observed).item()
    return (exceeding + 1) / (len(sample_statistics) + 1)


def baseline_result(
    baseline_stats: Stats,
    score_fn: ScoreFn,
    *,
    test: str = "bs",
    n_samples: int = 0,
    n_ar_confidence: int = -1,
    seed: int | None = DEFAULT_SEED,
) -> PairedResult:
    """The baseline row of a paired test (score and, if requested, its bootstrap CI).

    Parameters
    ----------
    baseline_stats : sequence of rows
        Baseline statistics.
    score_fn : callable
        Summed statistics -> score.
    test : {"bs", "ar"}
        The test that the table is for.
    n_samples : int
        Resamples (bs) or trials (ar); 0 selects the default (1000 or 10000).
    n_ar_confidence : int
        For ar: bootstrap resamples for CIs; -1 disables, 0 selects 1000.
    seed : int or None
        RNG seed.
    """
    if test not in ("bs", "ar"):
        raise ValueError(f"unknown test {test!r}")
    n_samples = n_samples or (DEFAULT_BS_SAMPLES if test == "bs" else DEFAULT_AR_SAMPLES)
    n_ar_confidence = n_ar_confidence if n_ar_confidence != 0 else DEFAULT_BS_SAMPLES
    confidence_n = n_samples if test == "bs" else n_ar_confidence
    result = PairedResult(score_fn(sum_rows(baseline_stats)))
    if confidence_n > 0:
        result.mean, result.ci = estimate_ci(bootstrap_scores(baseline_stats, score_fn, confidence_n, seed))
    return result


def paired_bootstrap(
    baseline_stats: Stats,
    system_stats: Stats,
    score_fn: ScoreFn,
    *,
    n_samples: int = DEFAULT_BS_SAMPLES,
    seed: int | None = DEFAULT_SEED,
) -> PairedResult:
    """Paired bootstrap resampling test of a system against the baseline (``--paired-bs``).

    Parameters
    ----------
    baseline_stats, system_stats : sequence of rows
        Per-segment statistics of the two systems on the same segments.
    score_fn : callable
        Summed statistics -> score.
    n_samples : int
        Number of resamples.
    seed : int or None
        RNG seed (the same resamples are used for every system).

    Returns
    -------
    PairedResult
        The system's score, p-value, and bootstrap mean and CI.
    """
    if len(baseline_stats) != len(system_stats):
        raise ValueError("baseline and system must have the same number of segments")
    indices = resample_indices(len(system_stats), n_samples, seed)

    baseline_score = score_fn(sum_rows(baseline_stats))
    system_score = score_fn(sum_rows(system_stats))
    observed = abs(baseline_score - system_score)

    scores_baseline = np.array(_scores_of_resamples(np.array(baseline_stats, dtype="float32"), indices, score_fn))
    scores_system = np.array(_scores_of_resamples(np.array(system_stats, dtype="float32"), indices, score_fn))
    mean, ci = estimate_ci(scores_system)

    differences = np.abs(scores_system - scores_baseline)
    centred = differences - differences.mean()  # the null: no difference on average
    return PairedResult(system_score, p_value(centred, observed), mean, ci)


def paired_approximate_randomization(
    baseline_stats: Stats,
    system_stats: Stats,
    score_fn: ScoreFn,
    *,
    n_samples: int = DEFAULT_AR_SAMPLES,
    n_ar_confidence: int = -1,
    seed: int | None = DEFAULT_SEED,
) -> PairedResult:
    """Paired approximate randomization test against the baseline (``--paired-ar``).

    Parameters
    ----------
    baseline_stats, system_stats : sequence of rows
        Per-segment statistics of the two systems on the same segments.
    score_fn : callable
        Summed statistics -> score.
    n_samples : int
        Number of randomization trials.
    n_ar_confidence : int
        Bootstrap resamples for the system's CI; <= 0 disables it (sacreBLEU's
        ``PairedTest`` maps 0 to 1000 before calling the test).
    seed : int or None
        RNG seed.

    Returns
    -------
    PairedResult
        The system's score and p-value (and mean/CI if requested).
    """
    n_rows = len(system_stats)
    if len(baseline_stats) != n_rows:
        raise ValueError("baseline and system must have the same number of segments")
    rng = np.random.default_rng(seed)
    # True: the segment keeps its system; False: the two systems swap this segment.
    keep = rng.integers(2, size=(n_samples, n_rows), dtype=bool)
    swap = ~keep
    bootstrap_indices = None
    if n_ar_confidence > 0:
        bootstrap_indices = rng.choice(n_rows, size=(n_ar_confidence, n_rows), replace=True)

    baseline_score = score_fn(sum_rows(baseline_stats))
    system_score = score_fn(sum_rows(system_stats))
    observed = abs(baseline_score - system_score)

    # Exact sums (int64 for integer rows; float64 when a column is fractional, e.g. TER).
    baseline_matrix = np.asarray(baseline_stats)
    system_matrix = np.asarray(system_stats)
    pseudo_a = keep @ baseline_matrix + swap @ system_matrix
    pseudo_b = swap @ baseline_matrix + keep @ system_matrix
    scores_a = np.array([score_fn(row) for row in pseudo_a])
    scores_b = np.array([score_fn(row) for row in pseudo_b])

    result = PairedResult(system_score, p_value(np.abs(scores_a - scores_b), observed))
    if bootstrap_indices is not None:
        result.mean, result.ci = estimate_ci(
            _scores_of_resamples(np.array(system_stats, dtype="float32"), bootstrap_indices, score_fn)
        )
    return result
