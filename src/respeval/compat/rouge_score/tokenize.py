"""rouge-score's ``tokenize.tokenize(text, stemmer)``: lowercase, keep ``[a-z0-9]`` runs, stem.

The scorer does not call this (the native core tokenizes the same way); it is here for code
that tokenizes with rouge-score's function directly.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["tokenize"]

# Anything but lowercase ASCII letters and digits separates tokens.
_SEPARATORS = re.compile(r"[^a-z0-9]+")
_TOKEN = re.compile(r"^[a-z0-9]+$")


def tokenize(text: str, stemmer: Any) -> list[str]:
    """Tokens of ``text`` as rouge-score makes them.

    Parameters
    ----------
    text : str
    stemmer : None, or an object with ``stem(word) -> str`` (e.g. NLTK's ``PorterStemmer``);
        only words longer than 3 characters are stemmed.
    """
    words = [w for w in _SEPARATORS.split(text.lower()) if w]
    if stemmer:
        words = [stemmer.stem(w) if len(w) > 3 else w for w in words]
    return [w for w in words if _TOKEN.match(w)]
