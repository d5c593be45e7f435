"""ROUGE tokenizers: texts -> CSR batches of token ids.

``rouge``          rouge-score's default tokenizer, exactly (lowercase; anything
                   outside [a-z0-9] separates; optional Porter stemming of tokens
                   longer than 3 characters).  Runs in the native core.
``rouge-unicode``  respeval's own: the same shape, but Unicode letters, marks and
                   digits stay in tokens, and CJK ideographs, Hiragana, Katakana,
                   Hangul syllables and Thai are split into single characters,
                   so non-English text no longer scores 0.  Not rouge-score's
                   numbers, by design.
A custom tokenizer object with a ``tokenize(text) -> list[str]`` method (as
rouge-score accepts) is also supported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import regex

from respeval._backend import Kernels
from respeval.tokenizers.porter import stem as porter_stem

TOKENIZERS = ("rouge", "rouge-unicode")

# One token per character for scripts written without spaces; runs of other
# letters/marks/digits form words.
_SPLIT_SCRIPTS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}\u30FC\u3005"  # + prolonged mark, iteration mark
_UNICODE_TOKEN = regex.compile(rf"[{_SPLIT_SCRIPTS}]|(?:(?![{_SPLIT_SCRIPTS}])[\p{{L}}\p{{M}}\p{{N}}])+")


@dataclass(frozen=True)
class TokenBatch:
    """Token ids of many texts in CSR form, with newline-sentence boundaries.

    Row ``k`` is ``ids[offsets[k]:offsets[k+1]]``.  Its non-empty sentences are
    bounded by ``sent_offsets[row_sents[k] : row_sents[k+1] + 1]``.
    """

    ids: np.ndarray
    offsets: np.ndarray
    sent_offsets: np.ndarray
    row_sents: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def row(self, k: int) -> np.ndarray:
        return self.ids[self.offsets[k] : self.offsets[k + 1]]


def unicode_tokens(text: str) -> list[str]:
    """The ``rouge-unicode`` tokens of ``text`` (lowercased)."""
    return _UNICODE_TOKEN.findall(text.lower())


def _from_token_lists(vocab: Any, texts: list[str], split: Callable[[str], list[str]], stem: bool) -> TokenBatch:
    flat: list[str] = []
    offsets = [0]
    sent_offsets = [0]
    row_sents = [0]
    stems: dict[str, str] = {}
    for row, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"text at row {row} is {type(text).__name__}, not str")
        for sentence in text.split("\n"):
            tokens = split(sentence)
            if stem:
                tokens = [stems.setdefault(t, porter_stem(t)) if len(t) > 3 else t for t in tokens]
            flat.extend(tokens)
            if tokens:
                sent_offsets.append(len(flat))
        offsets.append(len(flat))
        row_sents.append(len(sent_offsets) - 1)
    ids = np.frombuffer(vocab.intern(flat), dtype=np.int32)
    return TokenBatch(ids, np.array(offsets, np.int64), np.array(sent_offsets, np.int64), np.array(row_sents, np.int64))


def tokenize(
    kernels: Kernels,
    vocab: Any,
    texts: list[str],
    tokenizer: Any = "rouge",
    stem: bool = False,
    threads: int | None = None,
) -> TokenBatch:
    """Tokenize ``texts`` into ``vocab`` with the named (or custom) tokenizer."""
    if tokenizer == "rouge":
        ids, off, sent, rows = kernels.tokenize_rouge(vocab, texts, stem, threads)
        return TokenBatch(
            np.frombuffer(ids, np.int32),
            np.frombuffer(off, np.int64),
            np.frombuffer(sent, np.int64),
            np.frombuffer(rows, np.int64),
        )
    if tokenizer == "rouge-unicode":
        return _from_token_lists(vocab, texts, unicode_tokens, stem)
    if isinstance(tokenizer, str):
        raise ValueError(f"unknown ROUGE tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")
    if not callable(getattr(tokenizer, "tokenize", None)):
        raise TypeError("a custom tokenizer needs a tokenize(text) -> list[str] method")
    # rouge-score ignores use_stemmer when a custom tokenizer is given; so do we.
    return _from_token_lists(vocab, texts, tokenizer.tokenize, False)
