"""Aggregation and inference, in one module: exactly rounded sums, the seeded Poisson
bootstrap, percentile and Wilson intervals, sample percentiles (the one :class:`Interval`), the paired tests
(exact binomial, McNemar, sign, Wilcoxon signed-rank, Holm) and the sequential test."""

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
from respeval.stats.intervals import Interval, wilson, wilson_interval
from respeval.stats.quantiles import DEFAULT_PERCENTILES, percentiles
from respeval.stats.sequential import SEQUENTIAL_METHOD, SequentialState, SequentialTest
from respeval.stats.significance import (
    Significance,
    binomial_pmf,
    binomial_test,
    holm,
    mcnemar_exact,
    sign_test,
    wilcoxon_signed_rank,
)

__all__ = [
    "DEFAULT_PERCENTILES",
    "DEFAULT_SEED",
    "SEQUENTIAL_METHOD",
    "ExactSums",
    "Interval",
    "SequentialState",
    "SequentialTest",
    "Significance",
    "binomial_pmf",
    "binomial_test",
    "bootstrap_add",
    "bootstrap_means",
    "exact_mean",
    "exact_sum",
    "holm",
    "mcnemar_exact",
    "new_accumulator",
    "percentile_interval",
    "percentiles",
    "replicate_sums",
    "resolve_seed",
    "sign_test",
    "wilcoxon_signed_rank",
    "wilson",
    "wilson_interval",
]
