"""TER (translation edit rate with shifts) with sacreBLEU 2.6's numbers.

Words come from sacreBLEU's Tercom normaliser (references normalised twice, as
sacreBLEU does); the edits (beam edit distance and greedy block shifts, every
limit and tie-break of sacreBLEU's) are counted by the core's ``ter_edits``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from respeval import _backend
from respeval._inputs import same_length, text_list
from respeval._renamed import renamed_arguments
from respeval.metrics import sacrebleu_scores
from respeval.metrics.base import ChunkScores, MetricResult
from respeval.metrics.bleu import references_per_row
from respeval.metrics.registry import MetricOptions, MetricSpec
from respeval.metrics.signature import Signature
from respeval.stats import sacrebleu as bootstrap_mt


def signature(*, nrefs: Any, case_sensitive: bool, normalized: bool, no_punct: bool, asian_support: bool) -> Signature:
    """sacreBLEU's TER signature fields (same names, same order), versioned as respeval."""
    return Signature(
        nrefs=nrefs,
        case="mixed" if case_sensitive else "lc",
        tok="tercom",
        norm=normalized,
        punct=not no_punct,
        asian=asian_support,
    )


class TerResult(MetricResult):
    """Per-row TER (column ``ter``) and statistics (edits, average reference length), and the corpus TER."""

    def __init__(self, family: TerFamily, stats: np.ndarray, *, nrefs: int | str, implementation: str) -> None:
        sentence = family.sentence_scores(stats)
        super().__init__(family, ChunkScores({"ter": sentence}, stats), implementation=implementation)
        self.sentence = sentence
        self.corpus = sacrebleu_scores.compute_ter([int(stats[:, 0].sum()), float(sum(stats[:, 1].tolist()))])
        self.signature = str(signature(nrefs=nrefs, **family.flags()))

    @property
    def score(self) -> float:
        return self.corpus.score

    def sacrebleu_interval(self, n: int = 1000, seed: int | None = bootstrap_mt.DEFAULT_SEED) -> tuple[float, float]:
        """sacreBLEU's bootstrap: (mean of resample scores, half-width of the 95% interval)."""
        return bootstrap_mt.bootstrap_ci(self.stats.tolist(), lambda s: sacrebleu_scores.compute_ter(s).score, n, seed)


def row_statistics(
    hyps: list[str],
    refs: list[list[str]],
    *,
    threads: int | None = None,
    implementation: str | None = None,
    **options: bool,
) -> np.ndarray:
    """float64 ``[rows, 2]``: the fewest edits over the row's references, and the mean
    of their lengths (sacreBLEU's ``[edits, ref_len]``)."""
    kernels = _backend.get(implementation)
    normalized, no_punct, asian = (options.get(k, False) for k in ("normalized", "no_punct", "asian_support"))
    flat = [r for rs in refs for r in rs]
    if not options.get("case_sensitive", False):
        hyps, flat = [h.lower() for h in hyps], [r.lower() for r in flat]
    vocab = kernels.Vocab()
    hyp_ids, hyp_off = (
        np.frombuffer(b, t)
        for b, t in zip(kernels.tercom_ids(vocab, hyps, normalized, no_punct, asian), (np.int32, np.int64))
    )
    # sacreBLEU normalises a reference twice (when it caches it, then again when it splits it)
    ref_ids, ref_off = (
        np.frombuffer(b, t)
        for b, t in zip(kernels.tercom_ids(vocab, flat, normalized, no_punct, asian, True), (np.int32, np.int64))
    )
    row_refs = np.zeros(len(refs) + 1, np.int64)
    np.cumsum([len(rs) for rs in refs], out=row_refs[1:])
    edits = np.zeros(len(hyps), np.int64)
    kernels.ter_edits(hyp_ids, hyp_off, ref_ids, ref_off, row_refs, len(vocab), edits, threads)
    stats = np.zeros((len(hyps), 2), np.float64)
    stats[:, 0] = edits
    if len(hyps):
        # sum of the integer lengths, then one division: sacreBLEU's ref_length_sum / len(refs)
        stats[:, 1] = np.add.reduceat(np.diff(ref_off), row_refs[:-1]) / np.diff(row_refs)
    return stats


@renamed_arguments(hypotheses="predictions")
def ter(
    predictions: Any,
    references: Any,
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
    threads: int | None = None,
    implementation: str | None = None,
) -> TerResult:
    """TER per row and for the corpus (``100 * sum(edits) / sum(average reference length)``)."""
    hyps = text_list(predictions, "predictions")
    refs = references_per_row(references)
    same_length(hyps, refs, "predictions", "references")
    family = TerFamily(
        normalized=normalized,
        no_punct=no_punct,
        asian_support=asian_support,
        case_sensitive=case_sensitive,
        threads=threads,
        implementation=implementation,
    )
    stats = row_statistics(hyps, refs, threads=threads, implementation=implementation, **family.flags())
    counts = {len(r) for r in refs}
    return TerResult(
        family, stats, nrefs=counts.pop() if len(counts) == 1 else "var", implementation=_backend.name(implementation)
    )


class TerFamily:
    """TER for the bulk pipeline: edits and average reference lengths are summed."""

    inputs = "text"

    def __init__(
        self,
        *,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
        threads: int | None = None,
        implementation: str | None = None,
    ) -> None:
        self.name = "ter"
        self.normalized, self.no_punct = normalized, no_punct
        self.asian_support, self.case_sensitive = asian_support, case_sensitive
        self.threads, self.implementation = threads, implementation
        self.stat_names = ("edits", "ref_len")
        self.headline = ("ter",)

    def flags(self) -> dict[str, bool]:
        return dict(
            normalized=self.normalized,
            no_punct=self.no_punct,
            asian_support=self.asian_support,
            case_sensitive=self.case_sensitive,
        )

    def sentence_scores(self, stats: np.ndarray) -> np.ndarray:
        return np.array([sacrebleu_scores.compute_ter(r).score for r in stats.tolist()])

    def prepare(self, references: list) -> list[list[str]]:
        return references_per_row(references)

    def score(self, prepared: list[list[str]], predictions: list[str]) -> ChunkScores:
        stats = row_statistics(
            predictions, prepared, threads=self.threads, implementation=self.implementation, **self.flags()
        )
        return ChunkScores({"ter": self.sentence_scores(stats)}, stats)

    def corpus(self, sums: np.ndarray, rows: Any) -> dict[str, Any]:
        sums = np.asarray(sums, dtype=np.float64)
        if sums.ndim == 1:
            return {"ter": sacrebleu_scores.compute_ter(sums.tolist()).score}
        return {"ter": np.array([sacrebleu_scores.compute_ter(s).score for s in sums.tolist()])}

    def signature(self) -> str:
        """Before a run (the references not yet seen): ``nrefs:var``."""
        return self.signature_for_run("var")

    def signature_for_run(self, nrefs: int | str) -> str:
        """After a run, with the references per row it saw (one count, or ``var``)."""
        return str(signature(nrefs=nrefs, **self.flags()).named("TER"))


def _build(names: Sequence[str], options: MetricOptions) -> TerFamily:
    return TerFamily(threads=options.threads, implementation=options.implementation, **options.for_family("ter"))


OPTIONS = {
    "normalized": "true: tercom's normalization",
    "no_punct": "true: remove punctuation",
    "asian_support": "true: split Asian characters (with normalized)",
    "case_sensitive": "true: keep case (default: lowercase)",
}
METRICS = (
    MetricSpec(
        "ter", "ter", "TER: translation edit rate with shifts (tercom), sacreBLEU's numbers", _build, options=OPTIONS
    ),
)
