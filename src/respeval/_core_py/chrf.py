"""chrF's inputs in Python (``cext/chrf.pxi``): code points and chrF++'s words."""

from __future__ import annotations

from typing import Any

import numpy as np

from respeval._core_py.checks import csr_bytes, text_rows
from respeval._core_py.common import Vocab

# string.punctuation: the only characters chrF++ splits off a word
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def chrf_chars(texts: Any, whitespace: bool = False) -> tuple[bytes, bytes]:
    """Code points of every text (whitespace removed unless ``whitespace``):
    ``(int32 code points, int64 offsets)`` bytes buffers."""
    rows = [t if whitespace else "".join(t.split()) for t in text_rows(texts)]
    offsets = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    # code points are < 0x110000, so they fit int32 ids as they are
    ids = np.frombuffer("".join(rows).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int32)
    return ids.tobytes(), offsets.tobytes()


def _words(text: str) -> list[str]:
    """str.split(), then a word longer than one character loses one punctuation
    character: the last if it is one, else the first ("(hi)" -> "(hi", ")")."""
    out = []
    for word in text.split():
        if len(word) > 1 and word[-1] in _PUNCTUATION:
            out += [word[:-1], word[-1]]
        elif len(word) > 1 and word[0] in _PUNCTUATION:
            out += [word[0], word[1:]]
        else:
            out.append(word)
    return out


def chrf_words_ids(vocab: Vocab, texts: Any) -> tuple[bytes, bytes]:
    """chrF++'s punctuation-split words of every text, as ``(int32 ids, int64 offsets)``."""
    return csr_bytes([[vocab.add(w) for w in _words(t)] for t in text_rows(texts)])
