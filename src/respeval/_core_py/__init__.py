"""The pure-Python twin of ``respeval._core``: the same functions, name for name and
parameter for parameter, on the same buffers, with the same results and errors.

``RESPEVAL_IMPLEMENTATION=python`` (or ``implementation="python"``) runs the metrics
on this package; the differential tests run both and compare.  One module per
family, mirroring the core's ``cext/*.pxi``: a new kernel family adds a module here
and one import line below.
"""

from respeval._core_py.adk import adk_eval_set_tool_uses
from respeval._core_py.bleu import (
    bleu_clipped_counts,
    bleu_sentence_scores,
    mt_reference_rows,
    tokenize_13a_ids,
    tokenize_13a_tokens,
)
from respeval._core_py.bootstrap import exact_sum_bins, poisson_bootstrap_add, poisson_weights
from respeval._core_py.chrf import chrf_chars, chrf_words_ids
from respeval._core_py.common import Vocab, first_non_str, openmp_threads, porter_stem, simd_path, simd_paths
from respeval._core_py.csvline import csv_columns, csv_plain_rows
from respeval._core_py.jsonl import jsonl_block_columns, jsonl_columns, jsonl_field_spans, line_block
from respeval._core_py.minhash import minhash_signatures
from respeval._core_py.rouge import (
    arrow_first_rows,
    lsum_pair_stats,
    pair_single_references,
    rouge_pair_stats,
    rouge_scores,
    rouge_text_stats,
    tokenize_rouge,
)
from respeval._core_py.squad import squad_normalize_ids, squad_normalize_tokens
from respeval._core_py.ter import ter_edits, tercom_ids, tercom_tokens
from respeval._core_py.trajectory import (
    ARGS_MODES,
    TRAJECTORY_STATS,
    CallTable,
    arrow_json_texts,
    name_substitutions,
    trajectory_pair_stats,
)

__all__ = [
    "ARGS_MODES",
    "TRAJECTORY_STATS",
    "CallTable",
    "Vocab",
    "adk_eval_set_tool_uses",
    "arrow_first_rows",
    "arrow_json_texts",
    "bleu_clipped_counts",
    "bleu_sentence_scores",
    "chrf_chars",
    "chrf_words_ids",
    "csv_columns",
    "csv_plain_rows",
    "exact_sum_bins",
    "first_non_str",
    "jsonl_block_columns",
    "jsonl_columns",
    "jsonl_field_spans",
    "line_block",
    "lsum_pair_stats",
    "minhash_signatures",
    "mt_reference_rows",
    "openmp_threads",
    "pair_single_references",
    "poisson_bootstrap_add",
    "poisson_weights",
    "porter_stem",
    "rouge_pair_stats",
    "rouge_scores",
    "rouge_text_stats",
    "simd_path",
    "simd_paths",
    "squad_normalize_ids",
    "squad_normalize_tokens",
    "ter_edits",
    "tercom_ids",
    "tercom_tokens",
    "name_substitutions",
    "trajectory_pair_stats",
    "tokenize_13a_ids",
    "tokenize_13a_tokens",
    "tokenize_rouge",
]
