"""sacreBLEU's ``CHRF`` and ``CHRFScore``, on respeval's chrF statistics.

Rows are ``[hyp, ref, match]`` per character order, then per word order, from
``respeval.metrics.chrf``. Each score is that module's chrF of a row of sums, one row at a
time: sacreBLEU's arithmetic mixes Python floats (its 1e-16 epsilon) with the sums' numpy
type, so only the same statements in the same order round the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from respeval.compat.sacrebleu.metrics.base import Metric, Score
from respeval.metrics import chrf as chrf_metric
from respeval.metrics import signature as metric_signature

__all__ = ["CHRF", "CHRFScore"]


class CHRFScore(Score):
    """chrF (``chrF2``), or chrF++ (``chrF2++``) with word n-grams."""

    def __init__(self, score: float, char_order: int, word_order: int, beta: int) -> None:
        self.beta, self.char_order, self.word_order = beta, char_order, word_order
        super().__init__(f"chrF{beta}" + "+" * word_order, score)


class CHRF(Metric):
    """sacreBLEU's ``CHRF`` (``corpus_score``, ``sentence_score``, ``get_signature``)."""

    CHAR_ORDER = 6
    WORD_ORDER = 0
    BETA = 2
    _ABBREVIATIONS = {"case": "c", "eff": "e", "nc": "nc", "nw": "nw", "space": "s"}

    def __init__(
        self,
        char_order: int = CHAR_ORDER,
        word_order: int = WORD_ORDER,
        beta: int = BETA,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
        references: Any = None,
    ) -> None:
        super().__init__()
        self.char_order, self.word_order, self.beta = char_order, word_order, beta
        self.order = char_order + word_order
        self.lowercase, self.whitespace, self.eps_smoothing = lowercase, whitespace, eps_smoothing
        self.metric = chrf_metric.Chrf(
            char_order=char_order,
            word_order=word_order,
            beta=beta,
            lowercase=lowercase,
            whitespace=whitespace,
            eps_smoothing=eps_smoothing,
        )
        if references is not None:
            self._ref_cache, self._ref_cache_nrefs = self._cache_references(references)

    def _prepare(self, rows: list[list[str]]) -> chrf_metric.PreparedChrfReferences:
        return self.metric.prepare(rows)

    def _statistics(self, prepared: chrf_metric.PreparedChrfReferences, hypotheses: list[str]) -> np.ndarray:
        return self.metric.row_statistics(prepared, hypotheses)

    def score_sums(self, sums: np.ndarray) -> np.ndarray:
        # one call per row, on that row's numpy scalars, as sacreBLEU scores resamples
        return np.array([self.metric.corpus_score(row) for row in np.atleast_2d(sums)])

    def compute_score(self, sums: Any) -> CHRFScore:
        return CHRFScore(
            self.metric.corpus_score(np.asarray(sums).tolist()), self.char_order, self.word_order, self.beta
        )

    def _metric_signature(self) -> metric_signature.Signature:
        assert self.num_refs is not None
        return self.metric.signature(self.num_refs)
