"""Score by metric name (``respeval.REGISTRY``): what the MLflow metrics and the pytest
assertions share.  Per-row values, their mean, and the corpus value from summed statistics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from respeval.metrics import REGISTRY, MetricFamily, MetricOptions, MetricResult
from respeval.stats.exact import mean_of


def build_family(name: str, options: Mapping[str, Any]) -> MetricFamily:
    spec = REGISTRY[name]
    if spec.inputs != "text":
        raise ValueError(f"{name} takes {spec.inputs} inputs; this adapter scores text against a reference")
    rest = dict(options)
    shared = {k: rest.pop(k) for k in ("tokenizer", "stemmer") if k in rest}
    (family,) = REGISTRY.build_families([name], MetricOptions(**shared, params={spec.family: rest}))
    return family


def _column(family: MetricFamily, name: str, columns: Mapping[str, np.ndarray]) -> str:
    for candidate in (f"{name}_f", name, *family.headline):
        if candidate in columns:
            return candidate
    return next(iter(columns))


def score_rows(name: str, predictions: Sequence[Any], references: Sequence[Any], **options: Any) -> dict[str, Any]:
    """Per-row scores (None where a row could not be scored), their mean and the corpus value.

    The corpus value is the family's score of the summed statistics (``MetricResult.corpus_scores``):
    the mean for ROUGE, corpus BLEU/chrF/TER for those.
    """
    family = build_family(name, options)
    result = MetricResult(family, family.score(family.prepare(list(references)), [str(p) for p in predictions]))
    column = _column(family, name, result.columns)
    scores = [None if i in result.errors else float(v) for i, v in enumerate(result[column])]
    values = [s for s in scores if s is not None]
    corpus = result.corpus_scores() if values else {}
    corpus_value = corpus.get(column, corpus.get(name, next(iter(corpus.values()), None)))
    return {
        "scores": scores,
        "column": column,
        "mean": mean_of(values),
        "corpus": float(corpus_value) if corpus_value is not None else None,
    }


__all__ = ["build_family", "score_rows"]
