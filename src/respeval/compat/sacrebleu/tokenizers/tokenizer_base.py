"""The base of sacreBLEU's tokenizer classes."""

from __future__ import annotations

__all__ = ["BaseTokenizer"]


class BaseTokenizer:
    """A callable ``line -> tokenized line`` with a ``signature()`` (subclass and override both)."""

    def signature(self) -> str:
        raise NotImplementedError()

    def __call__(self, line: str) -> str:
        raise NotImplementedError()
