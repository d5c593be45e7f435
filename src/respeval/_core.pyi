"""Stub of the compiled core (private; the public API is in ``respeval``)."""

from typing import Any, TypeAlias

import numpy as np
from typing_extensions import Buffer as _Buffer
from typing_extensions import disjoint_base

# numpy arrays are buffers, but numpy's stubs say so only for Python >= 3.12
_Buf: TypeAlias = _Buffer | np.ndarray

def openmp_threads() -> int: ...
def simd_path() -> str: ...
def simd_paths() -> list[str]: ...
def porter_stem(word: str) -> str: ...

@disjoint_base
class Vocab:
    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def add(self, token: str) -> int: ...
    def get(self, token: str, default: int = -1) -> int: ...
    def token(self, i: int) -> str: ...
    def tokens(self) -> list[str]: ...
    def intern(self, tokens: list[str]) -> bytes: ...
    def stem_id(self, i: int) -> int: ...

def tokenize_rouge(
    vocab: Vocab, texts: list[str], stem: bool = False, threads: int | None = None
) -> tuple[bytes, bytes, bytes, bytes]: ...
def rouge_pair_stats(
    pred_ids: _Buf,
    pred_off: _Buf,
    ref_ids: _Buf,
    ref_off: _Buf,
    pair_pred: _Buf,
    pair_ref: _Buf,
    max_order: int,
    want_lcs: bool,
    vocab_size: int,
    overlaps: _Buf,
    lcs: _Buf,
    threads: int | None = None,
) -> None: ...
def rouge_text_stats(
    predictions: Any,
    references: Any,
    pair_pred: _Buf,
    pair_ref: _Buf,
    max_order: int,
    want_lcs: bool,
    want_lsum: bool,
    stem: bool,
    stats: _Buf,
    lengths: _Buf,
    threads: int | None = None,
) -> None: ...
def rouge_scores(
    stats: _Buf, lengths: _Buf, columns: _Buf, orders: _Buf, scores: _Buf, threads: int | None = None
) -> None: ...
def lsum_pair_stats(
    pred_ids: _Buf,
    pred_sent_off: _Buf,
    pred_row_sents: _Buf,
    ref_ids: _Buf,
    ref_sent_off: _Buf,
    ref_row_sents: _Buf,
    pair_pred: _Buf,
    pair_ref: _Buf,
    vocab_size: int,
    hits: _Buf,
    threads: int | None = None,
) -> None: ...
def pair_single_references(predictions: list[str], references: list[str]) -> tuple[list[str], bytes] | None: ...
def arrow_first_rows(texts: Any) -> bytes: ...
def bleu_clipped_counts(
    hyp_ids: _Buf,
    hyp_off: _Buf,
    ref_ids: _Buf,
    ref_off: _Buf,
    row_refs: _Buf,
    max_order: int,
    vocab_size: int,
    correct: _Buf,
    threads: int | None = None,
) -> None: ...
def bleu_sentence_scores(
    stats: _Buf, max_order: int, smooth: str, smooth_value: float | None, effective_order: bool, out: _Buf
) -> None: ...
def tercom_tokens(
    texts: Any, normalized: bool = False, no_punct: bool = False, asian_support: bool = False, twice: bool = False
) -> list[list[str]]: ...
def tercom_ids(
    vocab: Vocab,
    texts: Any,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    twice: bool = False,
) -> tuple[bytes, bytes]: ...
def ter_edits(
    hyp_ids: _Buf,
    hyp_off: _Buf,
    ref_ids: _Buf,
    ref_off: _Buf,
    row_refs: _Buf,
    vocab_size: int,
    edits: _Buf,
    threads: int | None = None,
) -> None: ...
def first_non_str(items: list) -> int: ...
def jsonl_field_spans(lines: list, keys: list) -> tuple[bytes, bytes]: ...
def csv_plain_rows(lines: list, ncols: int) -> list[list[str] | None]: ...
def csv_columns(lines: list, ncols: int, indices: list, kinds: bytes = b"") -> tuple[list[int], list[Any]]: ...
def jsonl_columns(lines: list, keys: list, kinds: bytes) -> tuple[list[int], list[list[Any]]]: ...
def line_block(data: _Buf, start: int, max_lines: int, final: bool) -> tuple[int, int]: ...
def jsonl_block_columns(
    block: _Buf, keys: list, kinds: bytes
) -> tuple[list[tuple[int, int, int]], list[list[Any]]]: ...
def arrow_json_texts(column: Any) -> list[str | None] | None: ...
def exact_sum_bins(values: _Buf, out: _Buf) -> int: ...
def poisson_weights(keys: _Buf, seed: int, n_replicates: int) -> bytes: ...
def poisson_bootstrap_add(stats: _Buf, keys: _Buf, seed: int, acc: _Buf, threads: int | None = None) -> None: ...
def mt_reference_rows(references: Any) -> list[list[str]]: ...
def tokenize_13a_tokens(texts: list[str]) -> list[list[str]]: ...
def squad_normalize_tokens(texts: list[str]) -> list[list[str]]: ...
def tokenize_13a_ids(vocab: Vocab, texts: list[str]) -> tuple[bytes, bytes]: ...
def squad_normalize_ids(vocab: Vocab, texts: list[str]) -> tuple[bytes, bytes]: ...
def chrf_words_ids(vocab: Vocab, texts: list[str]) -> tuple[bytes, bytes]: ...
def chrf_chars(texts: list[str], whitespace: bool = False) -> tuple[bytes, bytes]: ...

# trajectory kernels (cext/trajectory.pxi; twin: respeval._core_py.trajectory)
ARGS_MODES: tuple[str, ...]
TRAJECTORY_STATS: tuple[str, ...]

@disjoint_base
class CallTable:
    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    @property
    def n_names(self) -> int: ...
    def name(self, i: int) -> str: ...
    def names(self) -> list[str]: ...
    def name_id(self, name: str, default: int = -1) -> int: ...
    def call(self, i: int) -> tuple[str, str]: ...
    def intern(
        self,
        trajectories: object,
        name_key: str = "tool_name",
        args_key: str = "tool_input",
        args_required: bool = True,
        args_mode: str = "json",
        name_fn: object = None,
    ) -> tuple[bytes, bytes, bytes, list[tuple[int, str]]]: ...

def trajectory_pair_stats(
    pred_calls: _Buf,
    pred_names: _Buf,
    pred_off: _Buf,
    ref_calls: _Buf,
    ref_names: _Buf,
    ref_off: _Buf,
    out: _Buf,
    pred_matched: _Buf | None = None,
    ref_matched: _Buf | None = None,
    threads: int | None = None,
) -> None: ...
def name_substitutions(
    pred_names: _Buf, pred_off: _Buf, ref_names: _Buf, ref_off: _Buf
) -> tuple[bytes, bytes, bytes]: ...

# MinHash signatures of word shingles (cext/minhash.pxi; twin: respeval._core_py.minhash)
def minhash_signatures(
    texts: list[str], shingle: int, num_perm: int, seed: int, threads: int | None = None
) -> bytes: ...

# ADK EvalSet files read for their tool uses (cext/adk.pxi; twin: respeval._core_py.adk):
# case id offsets and ids, case kinds, case invocation offsets, invocation id offsets and
# ids, tool-use starts and ends; None when the Python loader must read the file
def adk_eval_set_tool_uses(data: _Buf) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes, bytes, bytes] | None: ...
