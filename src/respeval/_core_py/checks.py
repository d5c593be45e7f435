"""The core's input checks, in Python: the same rules and messages as ``cext/checks.pxi``.

Every kernel validates the buffers it is given before it touches them, so a bad
offset or token id is a ValueError that names the array and the position.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def int32_array(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.int32)


def int64_array(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def check_ids(ids: np.ndarray, vocab_size: int, name: str) -> None:
    bad = np.flatnonzero((ids < 0) | (ids >= vocab_size))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] = {ids[bad[0]]} is not a token id below vocab_size={vocab_size}")


def check_offsets(off: np.ndarray, limit: int, name: str, limit_name: str) -> None:
    if off.size < 1:
        raise ValueError(f"{name} must hold at least one value (it has length rows + 1)")
    bad = np.flatnonzero((off < 0) | (off > limit) | np.r_[False, np.diff(off) < 0])
    if bad.size:
        w = bad[0]
        raise ValueError(f"{name}[{w}] = {off[w]} breaks 0 <= offsets nondecreasing <= {limit_name} ({limit})")


def check_csr(ids: np.ndarray, off: np.ndarray, vocab_size: int, ids_name: str, off_name: str) -> None:
    """A CSR batch every kernel may index: ids below vocab_size, offsets nondecreasing within the ids."""
    check_ids(ids, vocab_size, ids_name)
    check_offsets(off, len(ids), off_name, f"len({ids_name})")


def check_pairs(pair_a: np.ndarray, pair_b: np.ndarray, na: int, nb: int) -> None:
    if len(pair_a) != len(pair_b):
        raise ValueError(f"pair arrays differ in length ({len(pair_a)} vs {len(pair_b)})")
    bad = np.flatnonzero((pair_a < 0) | (pair_a >= na) | (pair_b < 0) | (pair_b >= nb))
    if bad.size:
        w = bad[0]
        raise ValueError(
            f"pair {w} = ({pair_a[w]}, {pair_b[w]}) is out of range for {na} predictions and {nb} references"
        )


def multi_reference_rows(
    hyp_ids: Any, hyp_off: Any, ref_ids: Any, ref_off: Any, row_refs: Any, vocab_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Checked arrays of a batch of hypotheses whose row k has the reference rows
    ``row_refs[k] .. row_refs[k+1]``."""
    hyp_ids, hyp_off = int32_array(hyp_ids), int64_array(hyp_off)
    ref_ids, ref_off = int32_array(ref_ids), int64_array(ref_off)
    row_refs = int64_array(row_refs)
    check_vocab_size(vocab_size)
    check_csr(hyp_ids, hyp_off, vocab_size, "hyp_ids", "hyp_off")
    check_csr(ref_ids, ref_off, vocab_size, "ref_ids", "ref_off")
    check_offsets(row_refs, len(ref_off) - 1, "row_refs", "len(ref_off) - 1")
    if len(row_refs) != len(hyp_off):
        raise ValueError(f"row_refs must have length rows + 1 = {len(hyp_off)}")
    return hyp_ids, hyp_off, ref_ids, ref_off, row_refs


def check_vocab_size(vocab_size: int) -> None:
    if vocab_size < 0:
        raise ValueError("vocab_size must be >= 0")


def text_rows(texts: Any) -> tuple:
    """The texts as a tuple, each checked to be a str (the core's message for a bad row);
    an Arrow string array gives its values (the core reads its buffers in place)."""
    if type(texts).__module__.startswith("pyarrow") and hasattr(texts, "to_pylist"):
        texts = texts.to_pylist()
    seq = tuple(texts)
    for row, text in enumerate(seq):
        if not isinstance(text, str):
            what = "None" if text is None else type(text).__name__
            raise TypeError(f"text at row {row} is {what}, not str")
    return seq


def csr_bytes(rows: list[list[int]]) -> tuple[bytes, bytes]:
    """(int32 ids, int64 offsets) bytes buffers of a list of id rows."""
    offsets = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    ids = np.fromiter((t for r in rows for t in r), dtype=np.int32, count=int(offsets[-1]))
    return ids.tobytes(), offsets.tobytes()
