"""Semantic similarity: the cosine of the response's and the reference's embeddings, per row,
and the corpus mean with a seeded Poisson-bootstrap interval (:mod:`respeval.stats`).

Embeddings come from :mod:`respeval.judge.embeddings` (an OpenAI-compatible
``/v1/embeddings`` endpoint or a Python callable), batched, deduplicated and cached in the
judge cache.  With several references per row the row's value is the highest cosine (the
reference used is reported), as respeval's lexical metrics take the best reference.  A row
without text to embed is unscored with the reason (never a 0).  Library:
:func:`semantic_similarity`; ``respeval evaluate``: the ``semantic_similarity`` metric
(``{embedding: semantic_similarity, embeddings: openai:MODEL}`` in a spec).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from respeval._sync import run_sync
from respeval.judge.cache import JudgeCache
from respeval.judge.embeddings import Embedder, EmbeddingOptions, EmbedStats, aembed, cosine, load_embedder
from respeval.judge.errors import JudgeError
from respeval.judge.results import SCORED, UNSCORED, BatchSettled, MultiStepRow, Spend
from respeval.metrics.signature import Signature
from respeval.stats import DEFAULT_SEED, Interval, bootstrap_means, exact_sum, percentile_interval

__all__ = ["SemanticSimilarity", "SimilarityResult", "SimilarityRow", "asemantic_similarity", "semantic_similarity"]


def _references(value: Any, i: int) -> list[str]:
    refs = [value] if isinstance(value, str) else value
    if not isinstance(refs, (list, tuple)) or not refs or not all(isinstance(r, str) for r in refs):
        raise ValueError(f"references[{i}]: expected text or a non-empty list of texts")
    if not any(r.strip() for r in refs):
        raise ValueError(f"references[{i}]: empty")
    return list(refs)


@dataclass
class SimilarityResult:
    """Per-row cosines (NaN where unscored, ``reasons`` saying why), the reference each row
    used, and the corpus mean with its interval."""

    scores: np.ndarray
    best_reference: list[int | None]
    reasons: dict[int, str]
    mean: Interval | None
    signature: str
    embeddings: EmbedStats = field(default_factory=EmbedStats)

    @property
    def scored(self) -> int:
        return int(np.count_nonzero(~np.isnan(self.scores)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": int(self.scores.size),
            "scored": self.scored,
            "mean": None if self.mean is None else self.mean.to_dict(),
            "unscored": {str(k): v for k, v in sorted(self.reasons.items())},
            "signature": self.signature,
            "embeddings": self.embeddings.to_json(),
        }


def _interval(values: np.ndarray, n_bootstrap: int, confidence: float, seed: int | None) -> Interval | None:
    good = values[~np.isnan(values)]
    if good.size == 0:
        return None
    mean = exact_sum(good) / good.size
    if good.size > 1 and n_bootstrap:
        low, _, high = percentile_interval(bootstrap_means(good[:, None], n_bootstrap, seed), confidence)[:, 0]
        return Interval(float(low), mean, float(high), confidence, "poisson bootstrap percentile")
    return Interval(math.nan, mean, math.nan, confidence, "poisson bootstrap percentile")


async def asemantic_similarity(
    predictions: Sequence[Any],
    references: Sequence[Any],
    embedder: Embedder | str,
    *,
    cache: JudgeCache | None = None,
    options: EmbeddingOptions | None = None,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int | None = DEFAULT_SEED,
) -> SimilarityResult:
    """The per-row cosines and the corpus mean (see the module docstring).  The embedder is
    opened and closed here.  ``predictions`` and ``references`` must have the same length."""
    if len(predictions) != len(references):
        raise ValueError(f"predictions has {len(predictions)} rows but references has {len(references)}")
    model = load_embedder(embedder) if isinstance(embedder, str) else embedder
    n = len(predictions)
    reasons: dict[int, str] = {}
    rows: list[tuple[int, str, list[str]]] = []
    for i, (p, r) in enumerate(zip(predictions, references)):
        if not isinstance(p, str) or not p.strip():
            reasons[i] = f"predictions[{i}]: " + (
                "missing" if p is None else "empty" if isinstance(p, str) else "not text"
            )
            continue
        try:
            rows.append((i, p, _references(r, i)))
        except ValueError as exc:
            reasons[i] = str(exc)
    texts = [t for _, p, refs in rows for t in (p, *refs)]
    scores = np.full(n, np.nan)
    best: list[int | None] = [None] * n
    async with model:
        vectors, stats = await aembed(texts, model, cache=cache, options=options)
    at = 0
    for i, _, refs in rows:
        p_vec = vectors[at : at + 1]
        r_vecs = vectors[at + 1 : at + 1 + len(refs)]
        at += 1 + len(refs)
        sims = cosine(np.repeat(p_vec, len(refs), axis=0), r_vecs)
        if np.isnan(sims).all():
            reasons[i] = "a zero embedding vector (cosine undefined)"
            continue
        k = int(np.nanargmax(sims))
        scores[i], best[i] = float(sims[k]), k
    signature = similarity_signature(model.model_id)
    return SimilarityResult(scores, best, reasons, _interval(scores, n_bootstrap, confidence, seed), signature, stats)


def similarity_signature(model_id: str, threshold: float | None = None) -> str:
    """The library function's and the metric's one signature (the metric's names its threshold)."""
    return str(
        Signature(
            "semantic_similarity",
            embeddings=model_id,
            similarity="cosine",
            multiref="max",
            threshold=None if threshold is None else f"{threshold:g}",
        )
    )


def semantic_similarity(
    predictions: Sequence[Any], references: Sequence[Any], embedder: Embedder | str, **kwargs: Any
) -> SimilarityResult:
    """The synchronous :func:`asemantic_similarity`."""
    return run_sync(asemantic_similarity(predictions, references, embedder, **kwargs), thread_name="respeval-embed")


@dataclass
class SimilarityRow(MultiStepRow):
    """One record's cosine (``respeval evaluate``'s multi-step protocol)."""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "row": self.row, "score": self.score, "status": self.status,
                "unscored_reason": self.unscored_reason}  # fmt: skip


@dataclass
class SimilarityReport(BatchSettled):
    rows: list[SimilarityRow]
    spend: Spend
    signature: str
    embeddings: dict[str, Any]
    stop_reason: str | None = None
    stop_kind: str | None = None
    batch: Any = None

    def to_json(self) -> dict[str, Any]:
        scored = [r.score for r in self.rows if r.scored and r.score is not None]
        return {
            "metric": "semantic_similarity",
            "signature": self.signature,
            "rows": len(self.rows),
            "scored": len(scored),
            "mean_score": math.fsum(scored) / len(scored) if scored else None,
            "embeddings": self.embeddings,
            **self.spend.to_json(),
        }

    def format(self) -> str:
        data = self.to_json()
        mean = data["mean_score"]
        return (
            f"semantic_similarity: {data['scored']} of {data['rows']} rows scored, mean "
            f"{'n/a' if mean is None else f'{mean:.4f}'}\n{self.spend.format()}\nsignature   {self.signature}"
        )


class SemanticSimilarity:
    """``semantic_similarity`` as a ``respeval evaluate`` metric: the response against the
    reference; needs no judge model.  ``threshold`` (optional) gives a ``pass`` column."""

    kind = "multi-step"
    needs_judge = False
    metric = "semantic_similarity"
    context_field = "context"
    max_tokens = None
    seed = None
    input_fields = ("response", "reference")

    def __init__(
        self,
        *,
        embeddings: Embedder | str | None = None,
        name: str | None = None,
        threshold: float | None = None,
        batch_size: int = 64,
        embeddings_base_url: str | None = None,
        embeddings_api_key_env: str | None = None,
        embeddings_dimensions: int | None = None,
    ) -> None:
        if embeddings is None:
            raise ValueError(
                "semantic_similarity needs an embedding model (embeddings=, e.g. openai:text-embedding-3-small)"
            )
        if isinstance(embeddings, str):
            embeddings = load_embedder(
                embeddings,
                base_url=embeddings_base_url,
                api_key_env=embeddings_api_key_env,
                dimensions=embeddings_dimensions,
            )
        self.embedder = embeddings
        self.name = name or self.metric
        if threshold is not None and not -1.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be in [-1, 1], got {threshold}")
        self.threshold = threshold
        self.options = EmbeddingOptions(batch_size=batch_size)

    def signature(self) -> str:
        return similarity_signature(self.embedder.model_id, self.threshold)

    async def arun(
        self,
        records: Sequence[Mapping[str, Any]],
        model: Any = None,
        *,
        cache: JudgeCache | None = None,
        options: Any = None,
        fields: Mapping[str, str] | None = None,
        on_row: Callable[[SimilarityRow], None] | None = None,
    ) -> SimilarityReport:
        rename = dict(fields or {})
        response = rename.get("response", "response")
        reference = rename.get("reference", "reference")
        preds = [r.get(response) for r in records]
        refs = [r.get(reference) for r in records]
        spend = Spend()
        try:
            result = await asemantic_similarity(
                preds, refs, self.embedder, cache=cache, options=self.options, n_bootstrap=0
            )
        except JudgeError as exc:
            rows = [
                SimilarityRow(k, r.get("id", k), UNSCORED, unscored_reason=f"embeddings: {exc}")
                for k, r in enumerate(records)
            ]
            return SimilarityReport(rows, spend, self.signature(), {})
        spend.calls, spend.cache_hits, spend.tokens_in = (
            result.embeddings.calls,
            result.embeddings.cache_hits,
            result.embeddings.tokens_in,
        )
        rows = []
        for k, record in enumerate(records):
            value = result.scores[k]
            if np.isnan(value):
                rows.append(
                    SimilarityRow(k, record.get("id", k), UNSCORED, unscored_reason=result.reasons.get(k, "unscored"))
                )
                continue
            passed = None if self.threshold is None else bool(value >= self.threshold)
            details = [{"reference": result.best_reference[k]}] if isinstance(refs[k], (list, tuple)) else []
            rows.append(SimilarityRow(k, record.get("id", k), SCORED, float(value), passed, None, details))
        if on_row is not None:
            for row in rows:
                on_row(row)
        return SimilarityReport(rows, spend, self.signature(), result.embeddings.to_json())
