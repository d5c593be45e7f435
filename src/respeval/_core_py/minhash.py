"""MinHash signatures of word shingles in Python (``cext/minhash.pxi``, ``cext/minhash.h``).

A text's words are the maximal runs of word bytes of its UTF-8 (ASCII letters and digits,
and every byte >= 0x80), ASCII letters lowered; each word is hashed with 64-bit FNV-1a.  A
shingle is ``shingle`` consecutive words (fewer words than that, but at least one: one
shingle of all of them), valued ``x = mix64(... mix64(INIT ^ w1) ^ w2 ...) mod P`` with
``P = 2**61 - 1``.  Permutation ``i`` is ``h_i(x) = (a_i * x + b_i) mod P`` with ``(a_i,
b_i)`` drawn from splitmix64 seeded with ``seed``; the signature is the minimum of each
``h_i`` over the shingles, or ``2**64 - 1`` everywhere for a text without words.
"""

from __future__ import annotations

import numpy as np

PRIME = (1 << 61) - 1
EMPTY = (1 << 64) - 1
_MASK = (1 << 64) - 1
_SHINGLE_INIT = 0x9E3779B97F4A7C15
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_WORD_BYTES = frozenset(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") | frozenset(
    range(0x80, 0x100)
)


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def coefficients(seed: int, num_perm: int) -> list[tuple[int, int]]:
    """The ``(a_i, b_i)`` of each permutation."""
    state = seed & _MASK
    out = []
    for _ in range(num_perm):
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        a = 1 + _mix64(state) % (PRIME - 1)
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        b = _mix64(state) % PRIME
        out.append((a, b))
    return out


def word_hashes(text: bytes) -> list[int]:
    """FNV-1a of each word of ``text`` (UTF-8 bytes), ASCII letters lowered."""
    out = []
    h = -1
    for c in text:
        if c in _WORD_BYTES:
            if h < 0:
                h = _FNV_OFFSET
            if 65 <= c <= 90:
                c += 32
            h = ((h ^ c) * _FNV_PRIME) & _MASK
        elif h >= 0:
            out.append(h)
            h = -1
    if h >= 0:
        out.append(h)
    return out


def shingle_values(words: list[int], shingle: int) -> list[int]:
    if not words:
        return []
    k = min(shingle, len(words))
    values = []
    for s in range(len(words) - k + 1):
        x = _SHINGLE_INIT
        for w in words[s : s + k]:
            x = _mix64(x ^ w)
        values.append(x % PRIME)
    return values


def minhash_signatures(texts: list, shingle: int, num_perm: int, seed: int, threads=None) -> bytes:
    """Same contract as ``_core.minhash_signatures`` (and the same signatures)."""
    if not isinstance(texts, list):
        raise TypeError(f"texts must be a list, not {type(texts).__name__}")
    if shingle < 1:
        raise ValueError(f"shingle must be >= 1, got {shingle}")
    if num_perm < 1:
        raise ValueError(f"num_perm must be >= 1, got {num_perm}")
    if not 0 <= seed < 1 << 64:
        raise OverflowError("seed must be an unsigned 64-bit integer")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is a {type(t).__name__}, expected a str")
    coef = coefficients(seed, num_perm)
    a = np.array([c[0] for c in coef], dtype=object)
    b = np.array([c[1] for c in coef], dtype=object)
    out = np.full((len(texts), num_perm), EMPTY, dtype=np.uint64)
    for row, text in enumerate(texts):
        values = shingle_values(word_hashes(text.encode("utf-8", "surrogatepass")), shingle)
        if values:
            # Python integers: (a * x + b) needs 122 bits
            out[row] = np.array([min((ai * x + bi) % PRIME for x in values) for ai, bi in zip(a, b)], dtype=np.uint64)
    return out.tobytes()  # native byte order, as the core writes them
