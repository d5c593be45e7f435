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

from respeval.validate.agreement import AGREEMENT_FIELDS, Agreement, ClassStats, Confusion, agreement
from respeval.validate.columns import MetricColumns, find_metrics, join_tables, load_table, table_column
from respeval.validate.correlation import (
    Correlation,
    correlations,
    kendall_tau_b,
    metric_human_correlation,
    pearson,
    rankdata,
    spearman,
)
from respeval.validate.pairwise import (
    PairwiseConsistency,
    VerbosityProbe,
    pairwise_consistency,
    text_length,
    verbosity_pairwise,
    verbosity_pointwise,
)
from respeval.validate.resampling import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, Interval
from respeval.validate.run import (
    PAIRWISE_SCHEMES,
    TEXT_COLUMNS,
    MetricValidation,
    PairwiseScheme,
    is_number,
    validate_pair,
    validate_table,
)

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
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
]
