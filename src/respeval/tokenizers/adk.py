"""ADK's tokenizer for ``response_match_score`` (google-adk 2.8 - 2.13), exactly.

Steps, applied to each text (``agent_semantics.md`` §2.5):

1. Unicode NFKC, then ``str.lower()``.
2. Per character: CJK ideographs (U+4E00-9FFF), Hiragana, Katakana and Hangul syllables
   become tokens of their own; in the Thai, Lao, Khmer and Myanmar blocks a combining mark
   stays with the character before it and any other character starts a new token; any other
   character that ``isalnum()`` or is a combining mark is kept; everything else separates.
3. Split on whitespace.  A piece that is pure ASCII is a ``[a-z0-9]+`` word and goes through
   rouge-score's default tokenizer with stemming (Porter, NLTK's rules, words longer than 3
   characters); a non-ASCII piece is one token, unstemmed (``für`` stays, ``Sekunde`` ->
   ``sekund``: ADK's own behaviour, reproduced on purpose).

This is not respeval's ``rouge-unicode`` tokenizer (which splits Thai per character and
stems nothing non-ASCII): the name ``adk`` (alias ``adk-unicode``) selects this one.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from respeval.tokenizers.porter import stem as _porter_stem

__all__ = ["NAMES", "AdkTokenizer", "stem_word", "tokenize"]

NAMES = ("adk", "adk-unicode")

_ASCII_WORD = re.compile(r"[a-z0-9]+")


def _cjk(code: int) -> bool:
    return 0x4E00 <= code <= 0x9FFF or 0x3040 <= code <= 0x309F or 0x30A0 <= code <= 0x30FF or 0xAC00 <= code <= 0xD7AF


def _unspaced(code: int) -> bool:
    return 0x0E00 <= code <= 0x0EFF or 0x1780 <= code <= 0x17FF or 0x1000 <= code <= 0x109F


@lru_cache(maxsize=1 << 16)
def stem_word(word: str) -> str:
    return _porter_stem(word) if len(word) > 3 else word


def _ascii_tokens(text: str) -> list[str]:
    return [stem_word(w) for w in _ASCII_WORD.findall(text)]


def tokenize(text: str) -> list[str]:
    """ADK's tokens of ``text`` (see the module docstring)."""
    if text.isascii():
        # NFKC leaves ASCII alone, and every non-alphanumeric ASCII character separates
        return _ascii_tokens(text.lower())
    text = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if _cjk(code):
            out += (" ", ch, " ")
        elif _unspaced(code):
            if unicodedata.category(ch).startswith("M"):
                out.append(ch)
            else:
                out += (" ", ch)
        elif ch.isalnum() or unicodedata.category(ch).startswith("M"):
            out.append(ch)
        else:
            out.append(" ")
    tokens: list[str] = []
    for word in "".join(out).split():
        if word.isascii():
            tokens.extend(_ascii_tokens(word))
        else:
            tokens.append(word)
    return tokens


class AdkTokenizer:
    """An object with ``tokenize(text)``, usable wherever respeval (or rouge-score) takes a
    custom tokenizer; stemming is part of the tokenizer, as in ADK."""

    name = "adk"

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text)

    def __repr__(self) -> str:
        return "AdkTokenizer()"
