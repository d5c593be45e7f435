"""BLEU in Python (``cext/bleu.pxi``): sacreBLEU's 13a tokens and the clipped n-gram
matches against the maximum count over a row's references."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from respeval._core_py.checks import csr_bytes, multi_reference_rows, text_rows
from respeval._core_py.common import Vocab
from respeval.tokenizers.sacrebleu_tokenizers import tokenize_13a


def tokenize_13a_tokens(texts: Any) -> list[list[str]]:
    """sacrebleu 2.6.0's ``Tokenizer13a()(t.rstrip()).split()`` for every text
    (lowercase the texts first for ``lowercase=True``)."""
    return [tokenize_13a(t.rstrip()).split() for t in text_rows(texts)]


def tokenize_13a_ids(vocab: Vocab, texts: Any) -> tuple[bytes, bytes]:
    """sacreBLEU's ``tokenize_13a(text.rstrip()).split()`` of every text, as
    ``(int32 ids, int64 offsets)`` bytes buffers of ``vocab``."""
    return csr_bytes([[vocab.add(t) for t in row] for row in tokenize_13a_tokens(texts)])


def mt_reference_rows(references: Any) -> list[list[str]]:
    """References per row for BLEU, chrF and TER: a row's entry is a str or a sequence
    of str and None (None skipped: a row with fewer references); every row needs one."""
    if isinstance(references, str):
        raise TypeError("references must be a sequence (one entry per row), not a single str")
    out: list[list[str]] = []
    for i, item in enumerate(references):
        refs = [item] if isinstance(item, str) else (list(item) if item is not None else [])
        kept = []
        for j, r in enumerate(refs):
            if r is None:
                continue
            if not isinstance(r, str):
                raise TypeError(f"references[{i}][{j}] is {type(r).__name__}, expected str or None")
            kept.append(r)
        if not kept:
            raise ValueError(f"references[{i}] has no reference (every one is None or the list is empty)")
        out.append(kept)
    return out


def _ngrams(tokens: list[int], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def bleu_clipped_counts(
    hyp_ids: Any,
    hyp_off: Any,
    ref_ids: Any,
    ref_off: Any,
    row_refs: Any,
    max_order: int,
    vocab_size: int,
    correct: Any,
    threads: int | None = None,
) -> None:
    """sacreBLEU's clipped n-gram matches per row, clipping by the maximum count over
    the row's references (reference rows ``row_refs[k] .. row_refs[k+1]``);
    ``correct`` is ``int64[rows, max_order]``."""
    if not 1 <= max_order <= 64:
        raise ValueError(f"max_order must be in 1..64, got {max_order}")
    hyp_ids, hyp_off, ref_ids, ref_off, row_refs = multi_reference_rows(
        hyp_ids, hyp_off, ref_ids, ref_off, row_refs, vocab_size
    )
    n = len(hyp_off) - 1
    if correct.shape[0] != n or (n > 0 and correct.shape[1] != max_order):
        raise ValueError(f"correct must have shape ({n}, {max_order})")
    for k in range(n):
        hyp = hyp_ids[hyp_off[k] : hyp_off[k + 1]].tolist()
        refs = [ref_ids[ref_off[j] : ref_off[j + 1]].tolist() for j in range(row_refs[k], row_refs[k + 1])]
        for order in range(1, max_order + 1):
            max_ref: Counter = Counter()
            for ref in refs:
                max_ref |= _ngrams(ref, order)  # | keeps the maximum count
            correct[k, order - 1] = sum((_ngrams(hyp, order) & max_ref).values())


_SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}


def _sentence_score(row: list[int], max_order: int, smooth: str, value: Any, effective_order: bool) -> float:
    """sacreBLEU's ``compute_bleu`` of one row, step for step (the same Python arithmetic)."""
    sys_len, ref_len = row[0], row[1]
    correct, total = row[2 : 2 + max_order], row[2 + max_order : 2 + 2 * max_order]
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    if not any(correct):
        return 0.0
    precisions = [0.0] * max_order
    smooth_mteval = 1.0
    eff_order = max_order
    for n in range(1, max_order + 1):
        if smooth == "add-k" and n > 1:
            correct[n - 1] += value
            total[n - 1] += value
        if total[n - 1] == 0:
            break
        if effective_order:
            eff_order = n
        if correct[n - 1] == 0:
            if smooth == "exp":
                smooth_mteval *= 2
                precisions[n - 1] = 100.0 / (smooth_mteval * total[n - 1])
            elif smooth == "floor":
                precisions[n - 1] = 100.0 * value / total[n - 1]
        else:
            precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1]
    logs = [-9999999999 if p == 0.0 else math.log(p) for p in precisions[:eff_order]]
    return bp * math.exp(sum(logs) / eff_order)


def bleu_sentence_scores(
    stats: Any, max_order: int, smooth: str, smooth_value: Any, effective_order: bool, out: Any
) -> None:
    """sacreBLEU's ``BLEU.compute_bleu(...).score`` of every row of ``stats``
    (``int64[rows, 2 + 2 * max_order]``) into ``out``, in sacreBLEU's float order."""
    if not 1 <= max_order <= 64:
        raise ValueError(f"max_order must be in 1..64, got {max_order}")
    if smooth not in _SMOOTH_DEFAULTS:
        raise ValueError(f"Unknown smooth_method {smooth!r}")
    value = _SMOOTH_DEFAULTS[smooth] if smooth_value is None else float(smooth_value)
    n = stats.shape[0]
    if n > 0 and stats.shape[1] != 2 + 2 * max_order:
        raise ValueError(f"stats must have {2 + 2 * max_order} columns for max_order={max_order}")
    if out.shape[0] != n:
        raise ValueError(f"out must have {n} rows")
    for k, row in enumerate(stats.tolist()):
        out[k] = _sentence_score(row, max_order, smooth, value, bool(effective_order))
