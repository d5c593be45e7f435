"""Aggregation and inference, in one module: exactly rounded sums, the seeded Poisson
bootstrap, percentile and Wilson intervals (the one :class:`Interval`), sample percentiles, the
paired tests (exact binomial, McNemar, sign, Wilcoxon signed-rank, Holm), the two-sample tests
of a monitor (two proportions, a bootstrap difference of means), the sequential test and the
alpha spending of repeated looks."""

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
from respeval.stats.sequential import (
    SEQUENTIAL_METHOD,
    SPENDING_METHOD,
    AlphaSpending,
    SequentialState,
    SequentialTest,
    spent_alpha,
)
from respeval.stats.significance import (
    Significance,
    binomial_pmf,
    binomial_test,
    bootstrap_mean_difference,
    holm,
    mcnemar_exact,
    sign_test,
    two_proportion_test,
    wilcoxon_signed_rank,
)

__all__ = [
    "DEFAULT_PERCENTILES",
    "DEFAULT_SEED",
    "SEQUENTIAL_METHOD",
    "SPENDING_METHOD",
    "AlphaSpending",
    "ExactSums",
    "Interval",
    "SequentialState",
    "SequentialTest",
    "Significance",
    "binomial_pmf",
    "binomial_test",
    "bootstrap_add",
    "bootstrap_mean_difference",
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
    "spent_alpha",
    "two_proportion_test",
    "wilcoxon_signed_rank",
    "wilson",
    "wilson_interval",
]
