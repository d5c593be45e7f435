"""rouge-score's tokenizer classes: subclass ``Tokenizer`` to give ``RougeScorer`` your own.

``DefaultTokenizer`` is rouge-score's default (lowercase ASCII words, optional Porter
stemming). ``RougeScorer`` recognises it and tokenizes in the native core; any other
``Tokenizer`` (or object with a ``tokenize(text) -> list[str]`` method) is called from Python
exactly as rouge-score calls it.
"""

from __future__ import annotations

import abc

from respeval.compat.rouge_score.tokenize import tokenize
from respeval.tokenizers import porter

__all__ = ["DefaultTokenizer", "Tokenizer"]


class Tokenizer(abc.ABC):
    """Abstract base class: subclasses implement ``tokenize(text) -> list[str]``."""

    @abc.abstractmethod
    def tokenize(self, text: str) -> list[str]:
        raise NotImplementedError("Tokenizer must override tokenize() method")


class _PorterStemmer:
    """NLTK's ``PorterStemmer()`` interface over respeval's Porter stemmer (same stems)."""

    @staticmethod
    def stem(word: str) -> str:
        return porter.stem(word.lower())


class DefaultTokenizer(Tokenizer):
    """rouge-score's default tokenizer; ``use_stemmer`` Porter-stems words longer than 3 characters."""

    def __init__(self, use_stemmer: bool = False) -> None:
        self.use_stemmer = use_stemmer
        self._stemmer = _PorterStemmer() if use_stemmer else None

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text, self._stemmer)
