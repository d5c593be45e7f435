"""The one place that decides which implementation of the kernels runs.

``RESPEVAL_IMPLEMENTATION`` = ``auto`` (default: the compiled core when it is
built, else the pure-Python twin), ``native`` (the compiled core, or an
ImportError) or ``python`` (the twin, ``respeval._core_py``).  Tests and
benchmarks pass ``implementation=`` explicitly to run both side by side.

Both implementations satisfy :class:`Kernels`, the typed protocol every call
site sees: the same functions with the same parameters (a test pins that), so a
metric runs the same Python code whichever implementation is underneath.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from typing import TypeAlias

    import numpy as np
    from typing_extensions import Buffer

    # numpy arrays are buffers, but numpy's stubs say so only for Python >= 3.12
    BufferLike: TypeAlias = Buffer | np.ndarray

IMPLEMENTATIONS = ("native", "python")


class VocabLike(Protocol):
    """Token string -> dense int32 id, in first-seen order."""

    def __len__(self) -> int: ...
    def add(self, token: str) -> int: ...
    def get(self, token: str, default: int = -1) -> int: ...
    def token(self, i: int) -> str: ...
    def tokens(self) -> list[str]: ...
    def intern(self, tokens: list[str]) -> bytes: ...
    def stem_id(self, i: int) -> int: ...


class Kernels(Protocol):
    """The kernel functions of ``respeval._core`` and ``respeval._core_py`` (see ``_core.pyi``)."""

    def Vocab(self) -> VocabLike: ...  # noqa: N802 - the class, called to make a vocabulary
    def openmp_threads(self) -> int: ...
    def simd_path(self) -> str: ...
    def simd_paths(self) -> list[str]: ...
    def porter_stem(self, word: str) -> str: ...
    def first_non_str(self, items: list) -> int: ...
    def jsonl_field_spans(self, lines: list, keys: list) -> tuple[bytes, bytes]: ...
    def csv_plain_rows(self, lines: list, ncols: int) -> list[list[str] | None]: ...
    def csv_columns(
        self, lines: list, ncols: int, indices: list, kinds: bytes = b""
    ) -> tuple[list[int], list[Any]]: ...
    def jsonl_columns(self, lines: list, keys: list, kinds: bytes) -> tuple[list[int], list[Any]]: ...
    def line_block(self, data: BufferLike, start: int, max_lines: int, final: bool) -> tuple[int, int]: ...
    def jsonl_block_columns(
        self, block: BufferLike, keys: list, kinds: bytes
    ) -> tuple[list[tuple[int, int, int]], list[Any]]: ...
    def arrow_json_texts(self, column: Any) -> list[str | None] | None: ...
    def pair_single_references(self, predictions: list, references: list) -> tuple[list[str], bytes] | None: ...
    def arrow_first_rows(self, texts: Any) -> bytes: ...
    def tokenize_rouge(
        self, vocab: Any, texts: list, stem: bool = False, threads: int | None = None
    ) -> tuple[bytes, bytes, bytes, bytes]: ...
    def rouge_pair_stats(
        self,
        pred_ids: BufferLike,
        pred_off: BufferLike,
        ref_ids: BufferLike,
        ref_off: BufferLike,
        pair_pred: BufferLike,
        pair_ref: BufferLike,
        max_order: int,
        want_lcs: bool,
        vocab_size: int,
        overlaps: BufferLike,
        lcs: BufferLike,
        threads: int | None = None,
    ) -> None: ...
    def rouge_text_stats(
        self,
        predictions: Any,
        references: Any,
        pair_pred: BufferLike,
        pair_ref: BufferLike,
        max_order: int,
        want_lcs: bool,
        want_lsum: bool,
        stem: bool,
        stats: BufferLike,
        lengths: BufferLike,
        threads: int | None = None,
    ) -> None: ...
    def rouge_scores(
        self,
        stats: BufferLike,
        lengths: BufferLike,
        columns: BufferLike,
        orders: BufferLike,
        scores: BufferLike,
        threads: int | None = None,
    ) -> None: ...
    def lsum_pair_stats(
        self,
        pred_ids: BufferLike,
        pred_sent_off: BufferLike,
        pred_row_sents: BufferLike,
        ref_ids: BufferLike,
        ref_sent_off: BufferLike,
        ref_row_sents: BufferLike,
        pair_pred: BufferLike,
        pair_ref: BufferLike,
        vocab_size: int,
        hits: BufferLike,
        threads: int | None = None,
    ) -> None: ...
    def mt_reference_rows(self, references: Any) -> list[list[str]]: ...
    def tokenize_13a_tokens(self, texts: Any) -> list[list[str]]: ...
    def tokenize_13a_ids(self, vocab: Any, texts: Any) -> tuple[bytes, bytes]: ...
    def bleu_clipped_counts(
        self,
        hyp_ids: BufferLike,
        hyp_off: BufferLike,
        ref_ids: BufferLike,
        ref_off: BufferLike,
        row_refs: BufferLike,
        max_order: int,
        vocab_size: int,
        correct: BufferLike,
        threads: int | None = None,
    ) -> None: ...
    def bleu_sentence_scores(
        self,
        stats: BufferLike,
        max_order: int,
        smooth: str,
        smooth_value: float | None,
        effective_order: bool,
        out: BufferLike,
    ) -> None: ...
    def chrf_chars(self, texts: Any, whitespace: bool = False) -> tuple[bytes, bytes]: ...
    def chrf_words_ids(self, vocab: Any, texts: Any) -> tuple[bytes, bytes]: ...
    def squad_normalize_tokens(self, texts: Any) -> list[list[str]]: ...
    def squad_normalize_ids(self, vocab: Any, texts: Any) -> tuple[bytes, bytes]: ...
    def tercom_tokens(
        self,
        texts: Any,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        twice: bool = False,
    ) -> list[list[str]]: ...
    def tercom_ids(
        self,
        vocab: Any,
        texts: Any,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        twice: bool = False,
    ) -> tuple[bytes, bytes]: ...
    def ter_edits(
        self,
        hyp_ids: BufferLike,
        hyp_off: BufferLike,
        ref_ids: BufferLike,
        ref_off: BufferLike,
        row_refs: BufferLike,
        vocab_size: int,
        edits: BufferLike,
        threads: int | None = None,
    ) -> None: ...
    def exact_sum_bins(self, values: BufferLike, out: BufferLike) -> int: ...
    def poisson_weights(self, keys: BufferLike, seed: int, n_replicates: int) -> bytes: ...
    def poisson_bootstrap_add(
        self, stats: BufferLike, keys: BufferLike, seed: int, acc: BufferLike, threads: int | None = None
    ) -> None: ...

    # trajectory kernels: tool calls interned to ids, per-row statistics, name alignments
    @property
    def ARGS_MODES(self) -> tuple[str, ...]: ...  # noqa: N802 - the module constant
    @property
    def TRAJECTORY_STATS(self) -> tuple[str, ...]: ...  # noqa: N802 - the module constant

    def CallTable(self) -> Any: ...  # noqa: N802 - the class, called to make a call table
    def trajectory_pair_stats(
        self,
        pred_calls: BufferLike,
        pred_names: BufferLike,
        pred_off: BufferLike,
        ref_calls: BufferLike,
        ref_names: BufferLike,
        ref_off: BufferLike,
        out: BufferLike,
        pred_matched: BufferLike | None = None,
        ref_matched: BufferLike | None = None,
        threads: int | None = None,
    ) -> None: ...
    def name_substitutions(
        self, pred_names: BufferLike, pred_off: BufferLike, ref_names: BufferLike, ref_off: BufferLike
    ) -> tuple[bytes, bytes, bytes]: ...

    # ADK EvalSet files: cases, invocations and their tool-use lists as JSON text (buffers)
    def adk_eval_set_tool_uses(
        self, data: BufferLike
    ) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes, bytes, bytes] | None: ...

    # MinHash signatures of word shingles (near-duplicate removal, respeval.traces)
    def minhash_signatures(
        self, texts: list, shingle: int, num_perm: int, seed: int, threads: int | None = None
    ) -> bytes: ...


def _load_native() -> Kernels:
    from respeval import _core

    return _core


def _load_python() -> Kernels:
    from respeval import _core_py

    return _core_py


def native_available() -> bool:
    try:
        _load_native()
    except ImportError:
        return False
    return True


def get(implementation: str | None = None) -> Kernels:
    """The kernels for ``implementation`` (None = the environment's choice)."""
    choice = (implementation or os.environ.get("RESPEVAL_IMPLEMENTATION") or "auto").lower()
    if choice == "native":
        return _load_native()
    if choice == "python":
        return _load_python()
    if choice == "auto":
        try:
            return _load_native()
        except ImportError:
            return _load_python()
    raise ValueError(f"RESPEVAL_IMPLEMENTATION must be auto, native or python, not {choice!r}")


def name_of(kernels: Kernels) -> str:
    """``"native"`` or ``"python"``: which implementation ``kernels`` is (the twin is not
    imported to find out: ``kernels`` cannot be it when it was never loaded)."""
    twin = sys.modules.get("respeval._core_py")
    return "python" if twin is not None and kernels is twin else "native"


def name(implementation: str | None = None) -> str:
    """``"native"`` or ``"python"``: what ``get(implementation)`` resolves to."""
    return name_of(get(implementation))
