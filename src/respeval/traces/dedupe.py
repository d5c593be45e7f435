"""Near-duplicate removal: MinHash over word shingles (the native core's
``minhash_signatures``, or its twin), candidates by locality-sensitive hashing, each
candidate confirmed on the whole signature.

A case's text (``on="prompt"``: its user messages; ``on="conversation"``: every message's
text) is casefolded, split into words and cut into shingles of :data:`SHINGLE` words; its
signature has :data:`NUM_PERM` MinHash values under permutations drawn from :data:`SEED`
(fixed, so that dedupe decisions do not move with the sampling seed).  Two cases are near
duplicates when the share of equal signature values (the MinHash estimate of the Jaccard
similarity of their shingle sets) is at least the threshold, :data:`THRESHOLD` = 0.8 by
default.  Candidates come from :data:`BANDS` bands of ``NUM_PERM / BANDS`` values each: a
pair with Jaccard similarity s shares a band with probability ``1 - (1 - s**8)**16``
(0.95 at s = 0.8, above 0.999 at s = 0.9), and every candidate is checked against the
threshold on the whole signature.

Cases are offered in their output order (increasing unit hash): the first of a group of
near duplicates is kept, the later ones are dropped.  A case whose text has no words is
never a duplicate (a trace that did not record its content is not a copy of another that
did not either).  The index holds every kept case's signature (``NUM_PERM * 8`` bytes) and
its band keys, so its memory grows with the cases kept: about 2 KB each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from respeval import _backend

__all__ = ["BANDS", "NUM_PERM", "SEED", "SHINGLE", "THRESHOLD", "NearDuplicates", "dedupe_text"]

THRESHOLD = 0.8
NUM_PERM = 128
BANDS = 16
SHINGLE = 3
SEED = 1
_BAND_MIX = np.array([0x9E3779B97F4A7C15 ^ (i * 0xBF58476D1CE4E5B9 & (2**64 - 1)) for i in range(64)], dtype=np.uint64)
_EMPTY = np.uint64(2**64 - 1)


def dedupe_text(messages: Sequence[Any], prompt: str, on: str = "prompt") -> str:
    """The text a case is compared by."""
    if on == "conversation":
        texts = [m.get("content") or "" for m in messages if isinstance(m, dict)]
    elif on == "prompt":
        texts = [m.get("content") or "" for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        if not texts:
            texts = [prompt]
    else:
        raise ValueError(f"dedupe on must be 'prompt' or 'conversation', not {on!r}")
    return "\n".join(t for t in texts if isinstance(t, str)).casefold()


class NearDuplicates:
    """An index of the cases kept so far; :meth:`keep` says which of a batch are new."""

    def __init__(
        self,
        threshold: float = THRESHOLD,
        *,
        num_perm: int = NUM_PERM,
        bands: int = BANDS,
        shingle: int = SHINGLE,
        seed: int = SEED,
        implementation: str | None = None,
    ) -> None:
        if not 0 < threshold <= 1:
            raise ValueError(f"the near-duplicate threshold is a number in (0, 1], got {threshold}")
        if num_perm % bands:
            raise ValueError(f"num_perm ({num_perm}) must be a multiple of bands ({bands})")
        self.threshold = threshold
        self.num_perm, self.bands, self.rows = num_perm, bands, num_perm // bands
        self.shingle, self.seed = shingle, seed
        self._kernels = _backend.get(implementation)
        self._signatures = np.empty((1024, num_perm), dtype=np.uint64)
        self._kept = 0
        self._tables: list[dict[int, int | list[int]]] = [{} for _ in range(bands)]
        self.compared = 0
        self.dropped = 0
        self.without_text = 0

    def signatures(self, texts: list[str]) -> np.ndarray:
        data = self._kernels.minhash_signatures(texts, self.shingle, self.num_perm, self.seed)
        return np.frombuffer(data, dtype=np.uint64).reshape(len(texts), self.num_perm)

    def _band_keys(self, sig: np.ndarray) -> list[list[int]]:
        shaped = sig.reshape(len(sig), self.bands, self.rows)
        with np.errstate(over="ignore"):
            keys = (shaped * _BAND_MIX[: self.rows]).sum(axis=2, dtype=np.uint64)
        return keys.tolist()

    def _store(self, sig: np.ndarray, keys: list[int]) -> None:
        if self._kept == len(self._signatures):
            grown = np.empty((2 * len(self._signatures), self.num_perm), dtype=np.uint64)
            grown[: self._kept] = self._signatures[: self._kept]
            self._signatures = grown
        index = self._kept
        self._signatures[index] = sig
        self._kept += 1
        for table, key in zip(self._tables, keys):
            found = table.get(key)
            if found is None:
                table[key] = index
            elif isinstance(found, list):
                found.append(index)
            else:
                table[key] = [found, index]

    def keep(self, texts: list[str]) -> list[bool]:
        """For each text in order: True when it is not a near duplicate of a text kept before
        (earlier in this batch included); kept texts join the index."""
        if not texts:
            return []
        sigs = self.signatures(texts)
        keys = self._band_keys(sigs)
        out = []
        need = self.threshold * self.num_perm
        for sig, band_keys in zip(sigs, keys):
            if sig[0] == _EMPTY:
                self.without_text += 1
                out.append(True)
                continue
            self.compared += 1
            candidates: set[int] = set()
            for table, key in zip(self._tables, band_keys):
                found = table.get(key)
                if found is not None:
                    if isinstance(found, list):
                        candidates.update(found)
                    else:
                        candidates.add(found)
            duplicate = False
            if candidates:
                rows = self._signatures[sorted(candidates)]
                duplicate = bool(((rows == sig).sum(axis=1) >= need).any())
            if duplicate:
                self.dropped += 1
                out.append(False)
            else:
                self._store(sig, band_keys)
                out.append(True)
        return out

    def settings(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "num_perm": self.num_perm,
            "bands": self.bands,
            "shingle_words": self.shingle,
            "seed": self.seed,
        }
