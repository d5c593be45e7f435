"""TER (translation edit rate with shifts) with sacreBLEU 2.6's numbers.

Runs the pure-Python reference (``respeval._reference.ter``, sacreBLEU's beam
edit distance with block shifts), with each distinct (hypothesis, reference)
pair computed once.  Not yet in the native core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from respeval._inputs import same_length, text_list
from respeval._reference import bootstrap_mt
from respeval._reference import ter as ref_ter
from respeval._version import __version__
from respeval.metrics.base import ChunkScores
from respeval.metrics.bleu import references_per_row


def signature(
    *,
    nrefs: Any,
    case_sensitive: bool,
    normalized: bool,
    no_punct: bool,
    asian_support: bool,
    bootstrap: int | None = None,
    seed: int | None = None,
) -> str:
    boot = f"|bs:{bootstrap}|seed:{seed}" if bootstrap and bootstrap > 1 else ""
    return (
        f"nrefs:{nrefs}{boot}|case:{'mixed' if case_sensitive else 'lc'}|tok:tercom"
        f"|norm:{'yes' if normalized else 'no'}|punct:{'no' if no_punct else 'yes'}"
        f"|asian:{'yes' if asian_support else 'no'}|version:respeval-{__version__}"
    )


@dataclass
class TerResult:
    stats: np.ndarray  # float64 [rows, 2]: edits, average reference length
    sentence: np.ndarray
    corpus: ref_ter.TERResult
    signature: str

    @property
    def score(self) -> float:
        return self.corpus.score

    def bootstrap(self, n: int = 1000, seed: int | None = bootstrap_mt.DEFAULT_SEED) -> tuple[float, float]:
        return bootstrap_mt.bootstrap_ci(self.stats.tolist(), lambda s: ref_ter.compute_ter(s).score, n, seed)


def row_statistics(hyps: list[str], refs: list[list[str]], **options: bool) -> np.ndarray:
    cache: dict[tuple[str, tuple[str, ...]], list] = {}
    rows = []
    for h, r in zip(hyps, refs):
        key = (h, tuple(r))
        got = cache.get(key)
        if got is None:
            got = cache[key] = ref_ter.segment_stats(h, r, **options)
        rows.append(got)
    return np.array(rows, dtype=np.float64).reshape(len(rows), 2)


def ter(
    hypotheses: Any,
    references: Any,
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> TerResult:
    """TER per row and for the corpus (``100 * sum(edits) / sum(average reference length)``)."""
    hyps = text_list(hypotheses, "hypotheses")
    refs = references_per_row(references)
    same_length(hyps, refs, "hypotheses", "references")
    options = dict(normalized=normalized, no_punct=no_punct, asian_support=asian_support, case_sensitive=case_sensitive)
    stats = row_statistics(hyps, refs, **options)
    sums = [int(stats[:, 0].sum()), float(sum(stats[:, 1].tolist()))]
    sentence = np.array([ref_ter.compute_ter(row).score for row in stats.tolist()])
    counts = {len(r) for r in refs}
    return TerResult(
        stats,
        sentence,
        ref_ter.compute_ter(sums),
        signature(nrefs=counts.pop() if len(counts) == 1 else "var", **options),
    )


class TerFamily:
    def __init__(self, **options: bool) -> None:
        self.name = "ter"
        self.options = options
        self.stat_names = ("edits", "ref_len")
        self.headline = ("ter",)

    def prepare(self, references: list) -> list[list[str]]:
        return references_per_row(references)

    def score(self, prepared: list[list[str]], predictions: list[str]) -> ChunkScores:
        stats = row_statistics(predictions, prepared, **self.options)
        return ChunkScores({"ter": np.array([ref_ter.compute_ter(r).score for r in stats.tolist()])}, stats)

    def corpus(self, sums: np.ndarray, rows: int) -> dict[str, Any]:
        sums = np.asarray(sums, dtype=np.float64)
        if sums.ndim == 1:
            return {"ter": ref_ter.compute_ter(sums.tolist()).score}
        return {"ter": np.array([ref_ter.compute_ter(s).score for s in sums.tolist()])}

    def signature(self) -> str:
        opts = {k: self.options.get(k, False) for k in ("case_sensitive", "normalized", "no_punct", "asian_support")}
        return "TER|" + signature(nrefs="var", **opts)
