"""Shared pieces of the twin: the vocabulary, Porter stems, thread count, str scans
(``cext/common.pxi``)."""

from __future__ import annotations

import numpy as np

from respeval.tokenizers.porter import stem as _porter


def openmp_threads() -> int:
    """The twin runs on one thread."""
    return 1


def simd_path() -> str:
    """The twin runs no SIMD code."""
    return "python"


def simd_paths() -> list[str]:
    """The twin's one path."""
    return ["python"]


def porter_stem(word: str) -> str:
    """Porter stem (NLTK_EXTENSIONS mode) of a lowercase ASCII word."""
    word.encode("ascii")  # the core takes ASCII only (UnicodeEncodeError otherwise)
    return _porter(word)


class Vocab:
    """Token string -> dense int32 id, in first-seen order (as the native Vocab)."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._tokens: list[str] = []
        self._stem_of: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._tokens)

    def add(self, token: str) -> int:
        """Id of ``token``, adding it if new."""
        tid = self._ids.get(token)
        if tid is None:
            tid = len(self._tokens)
            self._ids[token] = tid
            self._tokens.append(token)
        return tid

    def get(self, token: str, default: int = -1) -> int:
        """Id of ``token``, or ``default`` when it was never added."""
        return self._ids.get(token, default)

    def token(self, i: int) -> str:
        """The token string with id ``i``."""
        if not 0 <= i < len(self._tokens):
            raise IndexError(f"token id {i} out of range for a vocabulary of {len(self._tokens)}")
        return self._tokens[i]

    def tokens(self) -> list[str]:
        """All token strings, in id order."""
        return list(self._tokens)

    def intern(self, tokens: list[str]) -> bytes:
        """Ids (int32 bytes buffer) of a flat list of token strings."""
        if not isinstance(tokens, list):
            raise TypeError(f"tokens must be a list, not {type(tokens).__name__}")
        for i, t in enumerate(tokens):
            if not isinstance(t, str):
                raise TypeError(f"token {i} is {type(t).__name__}, not str")
        return np.array([self.add(t) for t in tokens], dtype=np.int32).tobytes()

    def stem_id(self, i: int) -> int:
        """Id of the Porter stem of token ``i`` (interned after it; tokens of at most
        3 characters are their own stem, as rouge-score leaves them unstemmed)."""
        sid = self._stem_of.get(i)
        if sid is None:
            word = self.token(i)
            sid = self.add(porter_stem(word)) if len(word) > 3 else i
            self._stem_of[i] = sid
        return sid


def first_non_str(items: list) -> int:
    """Index of the first item that is not a str (subclasses count as str), or -1."""
    for i, item in enumerate(items):
        if not isinstance(item, str):
            return i
    return -1
