"""Computed metrics of both systems on the same cases, and their paired statistics.

Each metric is computed by its family from the registry, both systems against one prepared
set of references.  Per metric:

* each system's **value** is the family's corpus value (summed per-row statistics: the mean
  for ROUGE and exact match, corpus BLEU, chrF and TER for sacreBLEU's metrics);
* the **difference** (candidate - baseline) has a seeded paired Poisson-bootstrap interval:
  each resample reweights the cases, the same weights for both systems, and the corpus
  difference is recomputed from the reweighted statistics (weights keyed by case id, so the
  interval does not depend on the order of the rows);
* the **test**: for sacreBLEU's corpus metrics (BLEU, chrF, chrF++, TER), whose corpus value
  is not a mean of sentence scores, sacreBLEU's paired approximate randomization of the
  corpus difference (10,000 seeded trials, ``p = (exceeding + 1) / (trials + 1)``); for the
  others the per-row scores: McNemar's exact test when every per-row score is 0 or 1
  (pass/fail data), else the Wilcoxon signed-rank test of the per-row differences (scipy's
  defaults).  The sign test of the per-row differences is reported beside it.

Rows a family cannot score (a reference it refuses) are left out of that metric, for both
systems, and counted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from respeval.metrics import REGISTRY, MetricOptions
from respeval.metrics.registry import CORPUS_LEVEL, LOWER_IS_BETTER
from respeval.stats import (
    Interval,
    Significance,
    bootstrap_add,
    exact_sum,
    mcnemar_exact,
    new_accumulator,
    percentile_interval,
    replicate_sums,
    sign_test,
    wilcoxon_signed_rank,
)
from respeval.stats.paired import DEFAULT_AR_TRIALS, swap_mask, swapped_sums

__all__ = ["CORPUS_LEVEL", "LOWER_IS_BETTER", "MetricRows", "case_keys", "compute_metric", "paired_interval"]

AR_TRIALS = DEFAULT_AR_TRIALS
_AR_BLOCK_CELLS = 1 << 24  # trial x row cells of one block of the swap mask


def case_keys(ids: Sequence[str]) -> np.ndarray:
    """A 64-bit bootstrap key per case, from its id alone."""
    out = np.empty(len(ids), dtype=np.int64)
    for i, case in enumerate(ids):
        out[i] = int.from_bytes(hashlib.blake2b(case.encode("utf-8"), digest_size=8).digest(), "little", signed=True)
    return out


@dataclass
class MetricRows:
    """One computed metric on the scored cases of both systems."""

    metric: str
    column: str
    baseline_value: float
    candidate_value: float
    baseline_rows: np.ndarray  # per-row headline scores of the scored cases
    candidate_rows: np.ndarray
    scored: np.ndarray  # bool per case
    difference: Interval
    test: Significance
    sign: Significance
    pass_fail: bool
    higher_is_better: bool
    unscored_reasons: dict[str, int]


def _headline(family: Any, name: str) -> str:
    for col in family.headline:
        if col == name or col.startswith(name + "_"):
            return str(col)
    return str(family.headline[0])


def paired_interval(
    baseline_stats: np.ndarray,
    candidate_stats: np.ndarray,
    corpus: Any,
    keys: np.ndarray,
    *,
    n_samples: int,
    seed: int,
    confidence: float,
    observed: float,
) -> Interval:
    """The seeded paired Poisson-bootstrap percentile interval of ``corpus(candidate) -
    corpus(baseline)``; ``corpus(sums, sizes)`` maps replicate sums to corpus values."""
    if n_samples <= 0 or baseline_stats.shape[0] < 2:
        return Interval(float("nan"), observed, float("nan"), confidence, "paired poisson bootstrap percentile")
    width = baseline_stats.shape[1]
    # rows in the order of their keys: the replicate sums (float additions) are then the same
    # bits whatever the order of the input rows
    order = np.argsort(keys, kind="stable")
    matrix = np.hstack([baseline_stats, candidate_stats]).astype(np.float64)[order]
    acc = new_accumulator(matrix.shape[1], n_samples)
    bootstrap_add(acc, matrix, keys[order], seed)
    sums, sizes = replicate_sums(acc)
    differences = np.asarray(corpus(sums[:, width:], sizes), dtype=np.float64) - np.asarray(
        corpus(sums[:, :width], sizes), dtype=np.float64
    )
    low, _, high = percentile_interval(differences, confidence)
    return Interval(float(low), observed, float(high), confidence, "paired poisson bootstrap percentile")


def compute_metric(
    name: str,
    baseline: Sequence[str],
    candidate: Sequence[str],
    references: Sequence[Any] | None,
    keys: np.ndarray,
    *,
    options: MetricOptions | None = None,
    n_samples: int,
    seed: int,
    confidence: float,
) -> MetricRows:
    """Score both systems with metric ``name`` and compare them (see the module docstring)."""
    spec = REGISTRY[name]
    if spec.inputs != "text":
        raise ValueError(
            f"metric {name!r} reads {spec.inputs} inputs (tool calls), not response text: compare computes text "
            "metrics (respeval metrics lists them)"
        )
    if spec.reference and references is None:
        raise ValueError(f"metric {name!r} compares each response with a reference: give the reference field")
    (family,) = REGISTRY.build_families([name], options)
    column = _headline(family, name)
    refs = list(references) if references is not None else [None] * len(baseline)
    prepared = family.prepare(refs)
    scores = [family.score(prepared, list(texts)) for texts in (baseline, candidate)]
    n = len(baseline)
    scored = np.ones(n, dtype=bool)
    reasons: dict[str, int] = {}
    for result in scores:
        for row, reason in result.errors.items():
            if scored[row]:
                scored[row] = False
                key = str(reason).split(":", 1)[0]
                reasons[key] = reasons.get(key, 0) + 1
    rows = [np.asarray(s.columns[column], dtype=np.float64)[scored] for s in scores]
    stats = [np.asarray(s.stats, dtype=np.float64)[scored] for s in scores]
    m = int(scored.sum())
    if m == 0:
        raise ValueError(f"metric {name!r}: no case could be scored for both systems ({reasons})")

    def corpus(sums: np.ndarray, sizes: Any) -> np.ndarray:
        return np.asarray(family.corpus(sums, sizes)[column], dtype=np.float64)

    values = [
        float(corpus(np.array([exact_sum(np.ascontiguousarray(st[:, j])) for j in range(st.shape[1])]), m))
        for st in stats
    ]
    observed = values[1] - values[0]
    interval = paired_interval(
        stats[0],
        stats[1],
        corpus,
        keys[scored],
        n_samples=n_samples,
        seed=seed,
        confidence=confidence,
        observed=observed,
    )
    both = np.concatenate(rows)
    differences = rows[1] - rows[0]
    pass_fail = False
    if spec.family in CORPUS_LEVEL:
        order = np.argsort(keys[scored], kind="stable")  # the same swaps whatever the row order
        test = approximate_randomization_test(
            stats[0][order], stats[1][order], corpus, observed, trials=AR_TRIALS, seed=seed
        )
    else:
        pass_fail = bool(np.all((both == 0) | (both == 1)))
        test = mcnemar_exact(rows[0] == 1, rows[1] == 1) if pass_fail else wilcoxon_signed_rank(differences)
    return MetricRows(
        metric=name,
        column=column,
        baseline_value=values[0],
        candidate_value=values[1],
        baseline_rows=rows[0],
        candidate_rows=rows[1],
        scored=scored,
        difference=interval,
        test=test,
        sign=sign_test(differences),
        pass_fail=pass_fail,
        higher_is_better=name not in LOWER_IS_BETTER,
        unscored_reasons=reasons,
    )


def approximate_randomization_test(
    baseline_stats: np.ndarray, candidate_stats: np.ndarray, corpus: Any, observed: float, *, trials: int, seed: int
) -> Significance:
    """Paired approximate randomization of a corpus difference (sacreBLEU's ``--paired-ar``):
    each trial swaps every case's statistics between the systems with probability 1/2;
    ``p = (#(|trial difference| >= |observed|) + 1) / (trials + 1)``.  ``statistic`` is the
    observed difference; ``details["direction"]`` its sign."""
    rows = baseline_stats.shape[0]
    rng = np.random.default_rng(seed)
    exceed = 0
    block = max(1, _AR_BLOCK_CELLS // max(1, rows))
    target = abs(observed) - 1e-12 * max(1.0, abs(observed))  # equal up to rounding counts as reaching it
    for start in range(0, trials, block):
        mask = swap_mask(rows, min(block, trials - start), rng)
        a, b = swapped_sums(baseline_stats, candidate_stats, mask)
        spread = np.abs(np.asarray(corpus(a, rows), dtype=np.float64) - np.asarray(corpus(b, rows), dtype=np.float64))
        exceed += int(np.count_nonzero(spread >= target))
    return Significance(
        "paired_ar",
        observed,
        (exceed + 1) / (trials + 1),
        rows,
        "approximate randomization",
        "two-sided",
        {"trials": trials, "direction": float(np.sign(observed))},
    )
