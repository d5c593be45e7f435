"""Stub of the compiled core (private; the public API is in ``respeval``)."""

from typing import Any, TypeAlias

import numpy as np
from typing_extensions import Buffer as _Buffer

# numpy arrays are buffers, but numpy's stubs say so only for Python >= 3.12
Buffer: TypeAlias = _Buffer | np.ndarray

def openmp_threads() -> int: ...
def simd_path() -> str: ...
def simd_paths() -> list[str]: ...
def porter_stem(word: str) -> str: ...

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
    pred_ids: Buffer,
    pred_off: Buffer,
    ref_ids: Buffer,
    ref_off: Buffer,
    pair_pred: Buffer,
    pair_ref: Buffer,
    max_order: int,
    want_lcs: bool,
    vocab_size: int,
    overlaps: Buffer,
    lcs: Buffer,
    threads: int | None = None,
) -> None: ...
def rouge_text_stats(
    predictions: Any,
    references: Any,
    pair_pred: Buffer,
    pair_ref: Buffer,
    max_order: int,
    want_lcs: bool,
    want_lsum: bool,
    stem: bool,
    stats: Buffer,
    lengths: Buffer,
    threads: int | None = None,
) -> None: ...
def rouge_scores(
    stats: Buffer, lengths: Buffer, columns: Buffer, orders: Buffer, scores: Buffer, threads: int | None = None
) -> None: ...
def lsum_pair_stats(
    pred_ids: Buffer,
    pred_sent_off: Buffer,
    pred_row_sents: Buffer,
    ref_ids: Buffer,
    ref_sent_off: Buffer,
    ref_row_sents: Buffer,
    pair_pred: Buffer,
    pair_ref: Buffer,
    vocab_size: int,
    hits: Buffer,
    threads: int | None = None,
) -> None: ...
def pair_single_references(predictions: list[str], references: list[str]) -> tuple[list[str], bytes] | None: ...
def bleu_clipped_counts(
    hyp_ids: Buffer,
    hyp_off: Buffer,
    ref_ids: Buffer,
    ref_off: Buffer,
    row_refs: Buffer,
    max_order: int,
    vocab_size: int,
    correct: Buffer,
    threads: int | None = None,
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
    hyp_ids: Buffer,
    hyp_off: Buffer,
    ref_ids: Buffer,
    ref_off: Buffer,
    row_refs: Buffer,
    vocab_size: int,
    edits: Buffer,
    threads: int | None = None,
) -> None: ...
def first_non_str(items: list) -> int: ...
def exact_sum_bins(values: Buffer, out: Buffer) -> int: ...
def poisson_weights(keys: Buffer, seed: int, n_replicates: int) -> bytes: ...
def poisson_bootstrap_add(stats: Buffer, keys: Buffer, seed: int, acc: Buffer, threads: int | None = None) -> None: ...
def mt_reference_rows(references: Any) -> list[list[str]]: ...
def tokenize_13a_tokens(texts: list[str]) -> list[list[str]]: ...
def squad_normalize_tokens(texts: list[str]) -> list[list[str]]: ...
def tokenize_13a_ids(vocab: Vocab, texts: list[str]) -> tuple[bytes, bytes]: ...
def squad_normalize_ids(vocab: Vocab, texts: list[str]) -> tuple[bytes, bytes]: ...
def chrf_words_ids(vocab: Vocab, texts: list[str]) -> tuple[bytes, bytes]: ...
def chrf_chars(texts: list[str], whitespace: bool = False) -> tuple[bytes, bytes]: ...
