"""SQuAD's answer normalization (``normalize_answer`` of the official evaluate-v1.1 /
v2.0 scripts) and the Unicode-aware variant behind ``exact_match(normalize="unicode")``.

The native core runs the same normalization on lowercased text
(``squad_normalize_ids``); these functions are what the pure-Python twin and the
string-level matchers use.
"""

from __future__ import annotations

import re
import string
import unicodedata

__all__ = ["lowercased_answer_tokens", "normalize_answer", "normalize_unicode"]

_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)
# `\b` is Unicode-aware for str patterns, so "a" inside "naïve a" is a word of its own
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def lowercased_answer_tokens(text: str) -> list[str]:
    """``normalize_answer(text).split()`` for a text that is already lowercased:
    ASCII punctuation deleted, the words a/an/the removed, split on whitespace."""
    return _ARTICLES.sub(" ", text.translate(_ASCII_PUNCTUATION)).split()


def normalize_answer(text: str) -> str:
    """The official SQuAD normalization: lowercase, delete ASCII punctuation (Unicode
    punctuation such as curly quotes stays), remove articles, collapse whitespace."""
    return " ".join(lowercased_answer_tokens(text.lower()))


def normalize_unicode(text: str) -> str:
    """Lowercase, delete Unicode punctuation (categories P*), collapse whitespace:
    curly quotes, dashes and CJK punctuation go too; articles and symbols stay."""
    text = "".join(c for c in text.lower() if not unicodedata.category(c).startswith("P"))
    return " ".join(text.split())
