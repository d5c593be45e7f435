"""SQuAD's answer normalization in Python (``cext/squad.pxi``)."""

from __future__ import annotations

from typing import Any

from respeval._core_py.checks import csr_bytes, text_rows
from respeval._core_py.common import Vocab
from respeval.tokenizers.squad import lowercased_answer_tokens


def squad_normalize_tokens(texts: Any) -> list[list[str]]:
    """SQuAD v1.1 ``normalize_answer(t).split()`` for texts ALREADY lowercased."""
    return [lowercased_answer_tokens(t) for t in text_rows(texts)]


def squad_normalize_ids(vocab: Vocab, texts: Any) -> tuple[bytes, bytes]:
    """``normalize_answer(text).split()`` of every (already lowercased) text, as
    ``(int32 ids, int64 offsets)`` bytes buffers of ``vocab``."""
    return csr_bytes([[vocab.add(t) for t in row] for row in squad_normalize_tokens(texts)])
