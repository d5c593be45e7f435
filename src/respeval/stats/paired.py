"""Paired significance tests and bootstrap intervals over per-row statistics, with sacreBLEU's numbers.

Everything works on a statistics matrix (one row per segment, e.g. BLEU's
``[hyp_len, ref_len, correct_1..4, total_1..4]``) and a vectorised ``score_sums`` that maps
a ``(k, d)`` matrix of column sums to ``k`` corpus scores. Random streams, number types and
formulas are sacreBLEU 2.6's (``sacrebleu/significance.py``), so with the same seed the
intervals and p-values are the same floats:

* Bootstrap resamples are ``default_rng(seed).choice(N, size=(n, N))``; each resample's
  statistics are summed in **float32** (sacreBLEU converts the rows with
  ``np.array(stats, dtype="float32")``), and scores are computed from those float32 sums.
  :func:`resampled_sums` does all resamples at once: for integer statistics whose sums stay
  below 2**24 (BLEU, chrF) float32 adds exactly, so draw counts times the statistics (one
  matrix product) give the same sums; otherwise (TER) blocks of resamples are gathered and
  summed, and numpy adds their rows in the loop's order (both tested bit for bit).
* Approximate randomization draws ``rng.integers(2, size=(n, N), dtype=bool)``: per trial and
  segment, whether the two systems swap. :func:`swapped_sums` computes the pseudo-systems'
  sums; for integer statistics (BLEU, chrF) it uses float32 (float64) matrix products, which
  are exact because every partial sum is an integer below 2**24 (2**53), in blocks of trials;
  float statistics (TER) take sacreBLEU's own expression, whole, so BLAS rounds them as it
  rounds sacreBLEU's.
* ``p = (#(statistic > observed) + 1) / (n + 1)`` (multeval's rule); the paired bootstrap's
  statistic is ``|sys - base|`` centred on its mean, approximate randomization's is
  ``|score_a - score_b|``.
* 95% interval: sort, ``lo = s[n // 40]``, ``hi = s[n - n // 40 - 1]``, half-width
  ``(hi - lo) / 2``; the mean is ``ndarray.mean`` of the sorted scores in the paired tests
  (:func:`estimate_ci`) and ``statistics.mean`` in ``corpus_score(n_bootstrap=)``
  (:func:`corpus_ci`); they differ in the last bits for float32 scores.

Seeds are explicit here; sacreBLEU's environment variable and its ``seed or None`` quirk
belong to :mod:`respeval.compat.sacrebleu.significance`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_AR_TRIALS",
    "DEFAULT_BS_SAMPLES",
    "PairedResult",
    "ScoreSums",
    "approximate_randomization",
    "bootstrap_scores",
    "corpus_ci",
    "estimate_ci",
    "p_value",
    "paired_bootstrap",
    "resample_indices",
    "resampled_sums",
    "swap_mask",
    "swapped_sums",
]

DEFAULT_BS_SAMPLES = 1000
DEFAULT_AR_TRIALS = 10000

ScoreSums = Callable[[np.ndarray], np.ndarray]
"""``(k, d)`` column sums -> ``(k,)`` corpus scores."""

# Bytes of float32 rows gathered at once when summing resamples (a block of resamples).
_BLOCK_BYTES = 32 << 20
# Magnitudes below which float32 / float64 add integers exactly.
_EXACT_FLOAT32_INT = 2**24
_EXACT_FLOAT64_INT = 2**53


@dataclass
class PairedResult:
    """One system in a paired test: its score, p-value against the baseline, and interval.

    ``p_value`` is None for the baseline; ``mean``/``ci`` are None when not estimated.
    """

    score: float
    p_value: float | None = None
    mean: float | None = None
    ci: float | None = None


def _matrix(stats: Any, name: str = "stats") -> np.ndarray:
    array = np.asarray(stats)
    if array.ndim != 2 or array.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty (rows, statistics) matrix, got shape {array.shape}")
    return array


def _rng(seed: int | None | np.random.Generator) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def resample_indices(n_rows: int, n_samples: int, seed: int | None | np.random.Generator) -> np.ndarray:
    """``default_rng(seed).choice(n_rows, size=(n_samples, n_rows), replace=True)``."""
    if n_rows <= 0 or n_samples <= 0:
        raise ValueError(f"need at least one row and one sample (got {n_rows} rows, {n_samples} samples)")
    return _rng(seed).choice(n_rows, size=(n_samples, n_rows), replace=True)


def resampled_sums(stats: Any, indices: np.ndarray) -> np.ndarray:
    """float32 column sums of every resample: row ``k`` sums ``stats[indices[k]]``.

    Equal, bit for bit, to sacreBLEU's ``[s.sum(0) for s in np.float32(stats)[indices]]``.
    """
    stats = _matrix(stats)
    indices = np.asarray(indices)
    n_samples, n_rows = indices.shape
    out = np.empty((n_samples, stats.shape[1]), np.float32)
    if _exact_in_float32(stats, n_rows):
        # Every partial sum is an integer float32 holds exactly, so the order of additions cannot
        # matter: count how often each row is drawn and take one (exact) matrix product.
        block = max(1, _BLOCK_BYTES // max(1, n_rows * 8))
        offsets = np.arange(block)[:, None] * stats.shape[0]
        for start in range(0, n_samples, block):
            chunk = indices[start : start + block]
            flat = (chunk + offsets[: len(chunk)]).ravel()
            counts = np.bincount(flat, minlength=len(chunk) * stats.shape[0]).reshape(len(chunk), stats.shape[0])
            out[start : start + block] = counts.astype(np.float64) @ stats.astype(np.float64)
        return out
    stats32 = np.asarray(stats, dtype=np.float32)
    block = max(1, _BLOCK_BYTES // max(1, n_rows * stats32.shape[1] * 4))
    for start in range(0, n_samples, block):
        stop = start + block
        stats32[indices[start:stop]].sum(axis=1, out=out[start:stop])
    return out


def _exact_in_float32(stats: np.ndarray, draws: int) -> bool:
    """Whether every sum of ``draws`` rows of these integer statistics is an integer below 2**24."""
    if not np.issubdtype(stats.dtype, np.integer):
        return False
    return float(np.abs(stats).max(initial=0)) * draws < _EXACT_FLOAT32_INT


def bootstrap_scores(
    stats: Any, score_sums: ScoreSums, n_samples: int, seed: int | None | np.random.Generator
) -> np.ndarray:
    """Scores of ``n_samples`` bootstrap resamples of the rows (sacreBLEU's ``_bootstrap_resample``)."""
    stats = _matrix(stats)
    return score_sums(resampled_sums(stats, resample_indices(stats.shape[0], n_samples, seed)))


def estimate_ci(scores: np.ndarray) -> tuple[Any, Any]:
    """(mean, half-width of the 95% interval) as ``sacrebleu.significance.estimate_ci``."""
    ordered = np.sort(np.asarray(scores))
    n = len(ordered)
    if n == 0:
        raise ValueError("no scores to estimate an interval from")
    low = n // 40
    return ordered.mean(), 0.5 * (ordered[n - low - 1] - ordered[low])


def corpus_ci(scores: np.ndarray) -> tuple[Any, Any]:
    """(mean, half-width) as sacreBLEU's ``Score.estimate_ci`` (``statistics.mean`` of the scores)."""
    ordered = sorted(np.asarray(scores))
    n = len(ordered)
    if n == 0:
        raise ValueError("no scores to estimate an interval from")
    low = n // 40
    return statistics.mean(ordered), 0.5 * (ordered[n - low - 1] - ordered[low])


def p_value(sample_statistics: np.ndarray, observed: float) -> float:
    """``(#(statistic > observed) + 1) / (n + 1)``: strictly greater, so a tie is not chance."""
    sample_statistics = np.asarray(sample_statistics)
    count = int(np.sum(sample_statistics > observed))
    return (count + 1) / (len(sample_statistics) + 1)


def paired_bootstrap(baseline_scores: np.ndarray, system_scores: np.ndarray, observed_difference: float) -> float:
    """p-value of the paired bootstrap test (Koehn 2004, as Moses and sacreBLEU ``--paired-bs``).

    ``baseline_scores``/``system_scores``: scores of the same resamples (same indices) of the
    two systems; ``observed_difference``: ``|baseline score - system score|`` on the full corpus.
    """
    if len(baseline_scores) != len(system_scores):
        raise ValueError(f"{len(baseline_scores)} baseline resamples but {len(system_scores)} system resamples")
    differences = np.abs(np.asarray(system_scores) - np.asarray(baseline_scores))
    return p_value(differences - differences.mean(), observed_difference)


def swap_mask(n_rows: int, n_trials: int, rng: np.random.Generator) -> np.ndarray:
    """Per trial and row, whether the two systems swap: ``rng.integers(2, size=(n_trials, n_rows), dtype=bool)``."""
    if n_rows <= 0 or n_trials <= 0:
        raise ValueError(f"need at least one row and one trial (got {n_rows} rows, {n_trials} trials)")
    return rng.integers(2, size=(n_trials, n_rows), dtype=bool)


def _integer_bound(*matrices: np.ndarray) -> float | None:
    """An upper bound of every partial sum in ``mask @ (a - b)``; None unless all are integer."""
    if not all(np.issubdtype(m.dtype, np.integer) for m in matrices):
        return None
    return float(np.max(sum(np.abs(m).sum(axis=0, dtype=np.float64) for m in matrices)))


def swapped_sums(baseline: Any, system: Any, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column sums of the two pseudo-systems of every trial (sacreBLEU's ``_paired_ar_test``).

    ``a = mask @ baseline + ~mask @ system`` and ``b = ~mask @ baseline + mask @ system``,
    in the dtype numpy gives those expressions (int64 for integer statistics).
    """
    base, sys_ = _matrix(baseline, "baseline"), _matrix(system, "system")
    if base.shape != sys_.shape:
        raise ValueError(f"baseline statistics {base.shape} and system statistics {sys_.shape} differ in shape")
    if mask.shape[1] != base.shape[0]:
        raise ValueError(f"the swap mask has {mask.shape[1]} columns for {base.shape[0]} rows")
    bound = _integer_bound(base, sys_)
    if bound is None or bound >= _EXACT_FLOAT64_INT:
        if bound is None:
            # C-ordered float64, as numpy makes sacreBLEU's lists: BLAS may round other layouts differently
            base, sys_ = np.ascontiguousarray(base, np.float64), np.ascontiguousarray(sys_, np.float64)
        negated = ~mask
        return mask @ base + negated @ sys_, negated @ base + mask @ sys_
    # a = sys_total + mask @ (base - sys); b = base_total - mask @ (base - sys): integers, and
    # every partial sum is below the bound, so a float product (float32 when it can) is exact
    work = np.float32 if bound < _EXACT_FLOAT32_INT else np.float64
    dtype = np.result_type(base.dtype, sys_.dtype, np.int64)
    delta = (base.astype(np.int64) - sys_.astype(np.int64)).astype(work)
    moved = np.empty((mask.shape[0], base.shape[1]), dtype)
    block = max(1, _BLOCK_BYTES // max(1, mask.shape[1] * np.dtype(work).itemsize))
    for start in range(0, mask.shape[0], block):
        stop = start + block
        moved[start:stop] = np.rint(np.matmul(mask[start:stop].astype(work), delta))
    return sys_.sum(axis=0, dtype=dtype) + moved, base.sum(axis=0, dtype=dtype) - moved


def approximate_randomization(
    baseline: Any,
    system: Any,
    score_sums: ScoreSums,
    observed_difference: float,
    mask: np.ndarray,
) -> float:
    """p-value of the paired approximate randomization test (multeval; sacreBLEU ``--paired-ar``)."""
    shuffled_a, shuffled_b = swapped_sums(baseline, system, mask)
    differences = np.abs(np.asarray(score_sums(shuffled_a)) - np.asarray(score_sums(shuffled_b)))
    return p_value(differences, observed_difference)
