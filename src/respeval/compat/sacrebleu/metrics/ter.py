"""sacreBLEU's ``TER`` and ``TERScore``, on respeval's TER statistics.

Rows are ``[edits, average reference length]`` from ``respeval.metrics.ter``; the corpus
score is ``100 * edits / reference length`` of the column sums (100 when the references
are empty and the hypotheses not, 0 when both are).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from respeval.compat.sacrebleu.metrics.base import Metric, Score
from respeval.compat.sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer
from respeval.metrics import signature as metric_signature
from respeval.metrics import ter as ter_metric

__all__ = ["TER", "TERScore"]


class TERScore(Score):
    """TER with its total edits and total (average) reference length."""

    def __init__(self, score: float, num_edits: float, ref_length: float) -> None:
        super().__init__("TER", score)
        self.num_edits = int(num_edits)
        self.ref_length = ref_length


def _rate(edits: Any, ref_length: Any) -> Any:
    """``100 * edits / ref_length`` in the sums' own number type (sacreBLEU's statements)."""
    if ref_length > 0:
        return 100 * (edits / ref_length)
    return 100 * (1.0 if edits > 0 else 0.0)


class TER(Metric):
    """sacreBLEU's ``TER`` (``corpus_score``, ``sentence_score``, ``get_signature``)."""

    _ABBREVIATIONS = {"case": "c", "tok": "t", "norm": "nr", "punct": "pn", "asian": "as"}

    def __init__(
        self,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
        references: Any = None,
    ) -> None:
        super().__init__()
        self.normalized, self.no_punct = normalized, no_punct
        self.asian_support, self.case_sensitive = asian_support, case_sensitive
        self.options: dict[str, bool] = dict(
            normalized=normalized, no_punct=no_punct, asian_support=asian_support, case_sensitive=case_sensitive
        )
        self.tokenizer = TercomTokenizer(**self.options)
        self.tokenizer_signature = self.tokenizer.signature()
        if references is not None:
            self._ref_cache, self._ref_cache_nrefs = self._cache_references(references)

    def _prepare(self, rows: list[list[str]]) -> list[list[str]]:
        return rows

    def _statistics(self, prepared: list[list[str]], hypotheses: list[str]) -> np.ndarray:
        return ter_metric.row_statistics(
            hypotheses,
            prepared,
            normalized=self.normalized,
            no_punct=self.no_punct,
            asian_support=self.asian_support,
            case_sensitive=self.case_sensitive,
        )

    def score_sums(self, sums: np.ndarray) -> np.ndarray:
        return np.array([_rate(row[0], row[1]) for row in np.atleast_2d(sums)])

    def compute_score(self, sums: Any) -> TERScore:
        edits, ref_length = np.asarray(sums).tolist()
        edits = int(edits) if float(edits).is_integer() else edits
        return TERScore(_rate(edits, ref_length), edits, ref_length)

    def _metric_signature(self) -> metric_signature.Signature:
        assert self.num_refs is not None
        return ter_metric.signature(nrefs=self.num_refs, **self.options)
