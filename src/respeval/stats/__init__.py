"""Aggregation: exactly rounded sums, the seeded Poisson bootstrap, percentile intervals, paired tests."""

from respeval.stats.bootstrap import (
    DEFAULT_SEED,
    bootstrap_add,
    bootstrap_means,
    new_accumulator,
    percentile_interval,
    replicate_sums,
    resolve_seed,
)
from respeval.stats.exact import ExactSums, exact_mean, exact_sum

__all__ = [
    "DEFAULT_SEED",
    "ExactSums",
    "bootstrap_add",
    "bootstrap_means",
    "exact_mean",
    "exact_sum",
    "new_accumulator",
    "percentile_interval",
    "replicate_sums",
    "resolve_seed",
]
