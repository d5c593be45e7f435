"""``Score``, ``Signature`` and the ``Metric`` base of the sacreBLEU drop-in.

A metric turns segments into a statistics matrix (one row per segment, computed by
``respeval.metrics``), and scores column sums of it. ``corpus_score``, ``sentence_score``,
the bootstrap interval and :mod:`respeval.compat.sacrebleu.significance` are all built on
those two public methods, :meth:`Metric.corpus_statistics` and :meth:`Metric.score_sums`.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from respeval.metrics import signature as metric_signature
from respeval.metrics.bleu import references_per_row, streams_to_rows
from respeval.stats import paired

__all__ = ["Metric", "Score", "Signature", "seed_from_environment"]

# sacreBLEU's default for SACREBLEU_SEED
DEFAULT_SEED = 12345


def seed_from_environment() -> tuple[str, int | None]:
    """``SACREBLEU_SEED`` as sacreBLEU reads it: (its text, lowercased; the seed or None for 'none')."""
    text = os.environ.get("SACREBLEU_SEED", str(DEFAULT_SEED))
    return text.lower(), None if text.lower() == "none" else int(text)


class Score:
    """A score with sacreBLEU's ``format()``, ``str()`` and bootstrap fields."""

    def __init__(self, name: str, score: float) -> None:
        self.name = name
        self.score = score
        self._mean: Any = -1.0
        self._ci: Any = -1.0
        self._verbose = ""

    def format(self, width: int = 2, score_only: bool = False, signature: str = "", is_json: bool = False) -> str:
        """``NAME|signature = 12.34 (μ = mean ± ci) verbose``, just the number, or JSON."""
        text = f"{self.score:.{width}f}"
        info: dict[str, Any] = {"name": self.name, "score": float(text), "signature": signature}
        if self._mean > 0:
            mean, half = f"{self._mean:.{width}f}", f"{self._ci:.{width}f}"
            text += f" (μ = {mean} ± {half})"
            if is_json:
                info.update(confidence_mean=float(mean), confidence_var=float(half), confidence=f"μ = {mean} ± {half}")
        if score_only:
            return text
        line = f"{self.name}|{signature}" if signature else self.name
        line = f"{line} = {text}"
        if self._verbose:
            line += f" {self._verbose}"
            info["verbose_score"] = self._verbose
        if is_json:
            for part in signature.split("|") if signature else []:
                key, value = part.split(":", 1)
                info[key] = value
            return json.dumps(info, indent=1, ensure_ascii=False)
        return line

    def estimate_ci(self, scores: Sequence[Score]) -> None:
        """Keep the mean and 95% half-width of bootstrap resample scores (sacreBLEU's rule)."""
        self._mean, self._ci = paired.corpus_ci(np.array([s.score for s in scores]))

    def __repr__(self) -> str:
        return self.format()


# sacreBLEU's abbreviations for ``format(short=True)``
_ABBREVIATIONS = {
    "version": "v",
    "nrefs": "#",
    "test": "t",
    "lang": "l",
    "subset": "S",
    "origlang": "o",
    "bs": "bs",
    "ar": "ar",
    "seed": "rs",
}
_GLOBAL_KEYS = ("version", "nrefs", "bs", "ar", "seed", "test", "lang", "origlang", "subset")


class Signature(metric_signature.Signature):
    """sacreBLEU's ``Signature`` over respeval's one signature: ``nrefs:1|case:mixed|...|version:respeval-<version>``.

    sacreBLEU's global fields come first (``bs``, ``seed``, ... unset until given), then the
    metric's; ``info``, ``update()`` and ``format(short=True)`` with sacreBLEU's abbreviations.
    """

    def __init__(self, signature: metric_signature.Signature, abbreviations: dict[str, str]) -> None:
        super().__init__(signature.name)
        own = dict(signature.fields)
        self.fields = {key: own.pop(key, None) for key in _GLOBAL_KEYS} | own
        self.abbreviations = {**_ABBREVIATIONS, **abbreviations}

    @property
    def info(self) -> dict[str, Any]:
        return self.fields

    def update(self, key: str, value: Any) -> None:
        self.fields[key] = value


class Metric(ABC):
    """Shared behaviour of BLEU, CHRF and TER: reference caching, corpus and sentence scores."""

    _ABBREVIATIONS: dict[str, str] = {}

    def __init__(self) -> None:
        self._ref_cache: Any = None
        self._ref_cache_nrefs: int | str | None = None
        self.num_refs: int | str | None = None
        self.n_bootstrap: int | None = None
        self.seed: str | None = None

    # --- what each metric provides -----------------------------------------------------------

    @abstractmethod
    def _prepare(self, rows: list[list[str]]) -> Any:
        """References per segment -> whatever ``_statistics`` needs (tokenized once)."""

    @abstractmethod
    def _statistics(self, prepared: Any, hypotheses: list[str]) -> np.ndarray:
        """Per-segment statistics matrix of ``hypotheses`` against prepared references."""

    @abstractmethod
    def score_sums(self, sums: np.ndarray) -> np.ndarray:
        """Corpus scores of each row of a ``(k, d)`` matrix of column sums, as sacreBLEU computes them."""

    @abstractmethod
    def compute_score(self, sums: Any) -> Score:
        """The score object of one row of column sums."""

    @abstractmethod
    def _metric_signature(self) -> metric_signature.Signature:
        """This metric's signature (as ``respeval.metrics`` builds it) for ``self.num_refs``."""

    # --- shared --------------------------------------------------------------------------------

    @staticmethod
    def _nrefs(rows: list[list[str]]) -> int | str:
        counts = {len(r) for r in rows}
        return counts.pop() if len(counts) == 1 else "var"

    def _cache_references(self, references: Any) -> tuple[Any, int | str]:
        self._check_streams(references)
        rows = streams_to_rows(references, len(references[0]) if len(references) else 0)
        return self._prepare(rows), self._nrefs(rows)

    def _check_streams(self, references: Any) -> None:
        """sacreBLEU's type errors for reference streams (the same messages), before any len()."""
        prefix = type(self).__name__
        if isinstance(references, str) or not isinstance(references, Sequence):
            raise TypeError(f"{prefix}: `refs` should be a sequence of sequence of strings.")
        for stream in references:
            if isinstance(stream, str):
                # sacreBLEU would read the str as a stream of characters: a silent wrong number
                raise TypeError(
                    f"{prefix}: `refs` should be a list of reference streams (each a list of str, one "
                    "per segment), e.g. [refs] for one reference per segment, not a list of str"
                )
            if not isinstance(stream, Sequence):
                raise TypeError(f"{prefix}: Each element of `refs` should be a sequence of strings.")

    def corpus_statistics(self, hypotheses: Sequence[str], references: Any = None) -> np.ndarray:
        """Per-segment statistics (one row per hypothesis) against ``references`` or the cached ones.

        ``references`` are sacreBLEU's reference streams; ``None`` uses those given to the
        constructor. Unlike sacreBLEU, a stream whose length differs from the hypotheses'
        raises instead of being truncated.
        """
        if isinstance(hypotheses, str) or not isinstance(hypotheses, Sequence):
            raise TypeError(f"{type(self).__name__}: `hyps` should be a sequence of strings.")
        hyps = list(hypotheses)
        if any(not isinstance(h, str) for h in hyps):
            row = next(i for i, h in enumerate(hyps) if not isinstance(h, str))
            raise TypeError(f"{type(self).__name__}: hypotheses[{row}] is {type(hyps[row]).__name__}, expected str")
        if references is not None:
            self._check_streams(references)
        if references:
            rows = streams_to_rows(references, len(hyps))
            prepared, self.num_refs = self._prepare(rows), self._nrefs(rows)
        elif self._ref_cache is not None:
            prepared, self.num_refs = self._ref_cache, self._ref_cache_nrefs
            if prepared_rows(prepared) != len(hyps):
                raise ValueError(f"{len(hyps)} hypotheses but the cached references have {prepared_rows(prepared)}")
        else:
            raise RuntimeError("No references provided and the cache is empty.")
        return self._statistics(prepared, hyps)

    def corpus_score(self, hypotheses: Sequence[str], references: Any = None, n_bootstrap: int = 1) -> Any:
        """The corpus score; with ``n_bootstrap > 1`` also sacreBLEU's bootstrap mean and 95% interval."""
        stats = self.corpus_statistics(hypotheses, references)
        score = self.compute_score(column_sums(stats))
        if n_bootstrap > 1:
            self.n_bootstrap = n_bootstrap
            self.seed, seed = seed_from_environment()
            scores = paired.bootstrap_scores(stats, self.score_sums, n_bootstrap, seed)
            score._mean, score._ci = paired.corpus_ci(scores)
        return score

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> Any:
        """The score of one hypothesis against its references (a list of str)."""
        if not isinstance(hypothesis, str):
            raise TypeError(f"{type(self).__name__}: The argument `hyp` should be a string.")
        if isinstance(references, str) or not isinstance(references, Sequence):
            raise TypeError(f"{type(self).__name__}: The argument `refs` should be a sequence of strings.")
        rows = references_per_row([list(references)], 1)
        self.num_refs = len(rows[0])
        stats = self._statistics(self._prepare(rows), [hypothesis])
        return self.compute_score(stats[0])

    def get_signature(self) -> Signature:
        if self.num_refs is None:
            raise ValueError("Number of references unknown, please evaluate the metric first.")
        signature = Signature(self._metric_signature(), self._ABBREVIATIONS)
        if self.n_bootstrap is not None:
            signature.update("bs", self.n_bootstrap)
            signature.update("seed", self.seed)
        return signature


def prepared_rows(prepared: Any) -> int:
    rows = getattr(prepared, "n_rows", None)
    return len(prepared) if rows is None else int(rows)


def column_sums(stats: np.ndarray) -> np.ndarray:
    """Column sums as sacreBLEU adds rows (a running ``+=``): integers exactly, floats in row order."""
    stats = np.asarray(stats)
    if np.issubdtype(stats.dtype, np.integer):
        return stats.sum(axis=0)
    # cumsum adds strictly left to right; ndarray.sum would pair the terms up
    return np.cumsum(stats, axis=0)[-1] if len(stats) else np.zeros(stats.shape[1], stats.dtype)
