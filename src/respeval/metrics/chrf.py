"""chrF and chrF++ with sacreBLEU 2.6's numbers, n-gram matches from the native core.

Character n-grams are n-grams of code points (whitespace removed unless
``whitespace=True``), word n-grams (chrF++) are n-grams of sacreBLEU's
punctuation-split words; both are clipped overlaps computed by the same kernel
as ROUGE-N.  Per row and order the statistics are ``[hyp, ref, match]``, with
``hyp`` 0 where the reference has no n-gram of that order; with several
references the one with the best sentence score wins (the first on ties).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from respeval import _backend
from respeval._backend import Kernels
from respeval._inputs import same_length, text_list
from respeval._renamed import renamed_arguments
from respeval.metrics import sacrebleu_scores
from respeval.metrics.base import ChunkScores, MetricResult
from respeval.metrics.bleu import references_per_row
from respeval.metrics.registry import MetricOptions, MetricSpec
from respeval.metrics.signature import Signature
from respeval.stats import sacrebleu as bootstrap_mt

EPS = sacrebleu_scores.EPS


def _codepoints(texts: list[str], whitespace: bool, kernels: Kernels) -> tuple[np.ndarray, np.ndarray]:
    ids, off = kernels.chrf_chars(texts, whitespace)
    return np.frombuffer(ids, np.int32), np.frombuffer(off, np.int64)


def _words(vocab: Any, texts: list[str], kernels: Kernels) -> tuple[np.ndarray, np.ndarray]:
    ids, off = kernels.chrf_words_ids(vocab, texts)
    return np.frombuffer(ids, np.int32), np.frombuffer(off, np.int64)


def scores(stats: np.ndarray, char_order: int, word_order: int, beta: float, eps_smoothing: bool) -> np.ndarray:
    """sacreBLEU's chrF of every row of ``stats`` (its arithmetic, statement by statement).

    The per-order values are computed for every order at once (elementwise, the same
    operations); the sums over orders stay one order at a time, in sacreBLEU's order."""
    stats = np.asarray(stats, dtype=np.float64)
    n = stats.shape[0]
    orders = char_order + word_order
    factor = beta**2
    h, r, m = stats[:, 0 : 3 * orders : 3], stats[:, 1 : 3 * orders : 3], stats[:, 2 : 3 * orders : 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(h > 0, m / np.where(h > 0, h, 1), EPS)
        rc = np.where(r > 0, m / np.where(r > 0, r, 1), EPS)
    if eps_smoothing:
        with np.errstate(divide="ignore", invalid="ignore"):
            den = factor * p + rc
            f = np.where(den > 0, (1 + factor) * p * rc / np.where(den > 0, den, 1), EPS)
        eps_sum = np.zeros(n)
        for i in range(orders):
            eps_sum = eps_sum + f[:, i]
        return 100 * eps_sum / orders
    both = (h > 0) & (r > 0)
    p_kept, rc_kept = np.where(both, p, 0.0), np.where(both, rc, 0.0)  # x + 0.0 == x: the skipped orders
    sum_p = np.zeros(n)
    sum_r = np.zeros(n)
    for i in range(orders):
        sum_p = sum_p + p_kept[:, i]
        sum_r = sum_r + rc_kept[:, i]
    eff = both.sum(axis=1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        avg_p = sum_p / np.where(eff > 0, eff, 1)
        avg_r = sum_r / np.where(eff > 0, eff, 1)
        score = (1 + factor) * avg_p * avg_r
        score = score / np.where((factor * avg_p) + avg_r != 0, (factor * avg_p) + avg_r, 1)
    ok = (eff > 0) & ((avg_p + avg_r) != 0)
    return np.where(ok, 100 * score, 0.0)


@dataclass
class PreparedChrfReferences:
    kernels: Kernels
    vocab: Any
    chars: tuple[np.ndarray, np.ndarray]
    words: tuple[np.ndarray, np.ndarray] | None
    pair_row: np.ndarray
    n_rows: int


class Chrf:
    """chrF/chrF++ options and the scoring of prepared references."""

    def __init__(
        self,
        *,
        char_order: int = 6,
        word_order: int = 0,
        beta: float = 2,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
        threads: int | None = None,
        implementation: str | None = None,
    ) -> None:
        if char_order < 1 or char_order > 64 or word_order < 0 or word_order > 64:
            raise ValueError("char_order must be in 1..64 and word_order in 0..64")
        self.char_order, self.word_order, self.beta = char_order, word_order, beta
        self.lowercase, self.whitespace, self.eps_smoothing = lowercase, whitespace, eps_smoothing
        self.threads, self.implementation = threads, implementation

    def _texts(self, texts: list[str]) -> list[str]:
        return [t.lower() for t in texts] if self.lowercase else texts

    def prepare(self, refs_per_row: list[list[str]]) -> PreparedChrfReferences:
        kernels = _backend.get(self.implementation)
        vocab = kernels.Vocab()
        flat = self._texts([r for refs in refs_per_row for r in refs])
        pair_row = np.repeat(np.arange(len(refs_per_row)), [len(r) for r in refs_per_row]).astype(np.int64)
        words = _words(vocab, flat, kernels) if self.word_order else None
        return PreparedChrfReferences(
            kernels, vocab, _codepoints(flat, self.whitespace, kernels), words, pair_row, len(refs_per_row)
        )

    def row_statistics(self, prepared: PreparedChrfReferences, hypotheses: list[str]) -> np.ndarray:
        """int64 ``[rows, 3 * (char_order + word_order)]`` against each row's best reference."""
        k = prepared.kernels
        hyps = self._texts(hypotheses)
        pair_pred = prepared.pair_row
        pair_ref = np.arange(len(pair_pred), dtype=np.int64)
        blocks = []
        h_chars = _codepoints(hyps, self.whitespace, k)
        blocks.append(
            self._pair_stats(
                k,
                h_chars,
                prepared.chars,
                pair_pred,
                pair_ref,
                self.char_order,
                max(int(h_chars[0].max(initial=0)), int(prepared.chars[0].max(initial=0))) + 1,
            )
        )
        if self.word_order:
            assert prepared.words is not None  # prepared with word_order
            h_words = _words(prepared.vocab, hyps, k)
            blocks.append(
                self._pair_stats(k, h_words, prepared.words, pair_pred, pair_ref, self.word_order, len(prepared.vocab))
            )
        pair_stats = np.concatenate(blocks, axis=1)
        n = len(hyps)
        if len(pair_pred) == n:  # one reference per row
            return pair_stats
        pair_scores = scores(pair_stats, self.char_order, self.word_order, self.beta, self.eps_smoothing)
        starts = np.searchsorted(pair_pred, np.arange(n))
        best = np.maximum.reduceat(pair_scores, starts)
        cand = np.where(pair_scores == best[pair_pred], np.arange(len(pair_pred)), len(pair_pred))
        return pair_stats[np.minimum.reduceat(cand, starts)]

    def _pair_stats(
        self, k: Any, hyp: tuple, ref: tuple, pair_pred: np.ndarray, pair_ref: np.ndarray, order: int, vocab_size: int
    ) -> np.ndarray:
        npairs = len(pair_pred)
        matches = np.zeros((npairs, order), np.int64)
        k.rouge_pair_stats(
            hyp[0],
            hyp[1],
            ref[0],
            ref[1],
            pair_pred,
            pair_ref,
            order,
            False,
            vocab_size,
            matches,
            np.zeros(0, np.int64),
            self.threads,
        )
        hl = np.diff(hyp[1])[pair_pred]
        rl = np.diff(ref[1])[pair_ref]
        out = np.zeros((npairs, 3 * order), np.int64)
        for i in range(order):
            ref_total = np.maximum(rl - i, 0)
            out[:, 3 * i] = np.where(ref_total > 0, np.maximum(hl - i, 0), 0)
            out[:, 3 * i + 1] = ref_total
            out[:, 3 * i + 2] = matches[:, i]
        return out

    def scores(self, stats: np.ndarray) -> np.ndarray:
        return scores(stats, self.char_order, self.word_order, self.beta, self.eps_smoothing)

    def corpus_score(self, stats_sum: Any) -> float:
        return sacrebleu_scores.chrf_score(
            list(stats_sum), self.char_order, self.word_order, self.beta, self.eps_smoothing
        )

    def name(self) -> str:
        return f"chrF{self.beta:g}" + "+" * self.word_order

    def signature(self, nrefs: int | str = 1) -> Signature:
        """sacreBLEU's chrF signature fields (same names, same order), versioned as respeval."""
        return Signature(
            nrefs=nrefs,
            case="lc" if self.lowercase else "mixed",
            eff=not self.eps_smoothing,
            nc=self.char_order,
            nw=self.word_order,
            space=self.whitespace,
        )


class ChrfResult(MetricResult):
    """Per-row chrF statistics and sentence scores (column ``chrf`` or ``chrf++``), and the corpus score."""

    def __init__(self, family: ChrfFamily, stats: np.ndarray, *, nrefs: int | str, implementation: str) -> None:
        sentence = family.metric.scores(stats)
        super().__init__(family, ChunkScores({family.name: sentence}, stats), implementation=implementation)
        self.family: ChrfFamily = family
        self.sentence = sentence
        self.score = family.metric.corpus_score(stats.sum(axis=0).tolist())
        self.name = family.metric.name()
        self.signature = str(family.metric.signature(nrefs))
        self.metric = family.metric

    def sacrebleu_interval(self, n: int = 1000, seed: int | None = bootstrap_mt.DEFAULT_SEED) -> tuple[float, float]:
        """sacreBLEU's bootstrap: (mean of resample scores, half-width of the 95% interval)."""
        return bootstrap_mt.bootstrap_ci(self.stats.tolist(), self.metric.corpus_score, n, seed)


@renamed_arguments(hypotheses="predictions")
def chrf(
    predictions: Any,
    references: Any,
    *,
    char_order: int = 6,
    word_order: int = 0,
    beta: float = 2,
    lowercase: bool = False,
    whitespace: bool = False,
    eps_smoothing: bool = False,
    threads: int | None = None,
    implementation: str | None = None,
) -> ChrfResult:
    """chrF (``word_order=0``) or chrF++ (``word_order=2``) per row and for the corpus.

    ``eps_smoothing=True`` gives chrF++.py's (and NLTK's, Moses') averaging instead of
    sacreBLEU's default effective-order averaging.
    """
    family = ChrfFamily(
        char_order=char_order,
        word_order=word_order,
        beta=beta,
        lowercase=lowercase,
        whitespace=whitespace,
        eps_smoothing=eps_smoothing,
        threads=threads,
        implementation=implementation,
    )
    hyps = text_list(predictions, "predictions")
    refs = references_per_row(references)
    same_length(hyps, refs, "predictions", "references")
    stats = family.metric.row_statistics(family.metric.prepare(refs), hyps)
    counts = {len(r) for r in refs}
    nrefs = counts.pop() if len(counts) == 1 else "var"
    return ChrfResult(family, stats, nrefs=nrefs, implementation=_backend.name(implementation))


class ChrfFamily:
    """chrF for the bulk pipeline (corpus value from summed integer statistics)."""

    inputs = "text"

    def __init__(
        self,
        *,
        char_order: int = 6,
        word_order: int = 0,
        beta: float = 2,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
        threads: int | None = None,
        implementation: str | None = None,
    ) -> None:
        self.metric = Chrf(
            char_order=char_order,
            word_order=word_order,
            beta=beta,
            lowercase=lowercase,
            whitespace=whitespace,
            eps_smoothing=eps_smoothing,
            threads=threads,
            implementation=implementation,
        )
        self.name = "chrf++" if word_order else "chrf"
        self.stat_names = tuple(
            f"{k}_{i}" for i in range(self.metric.char_order + word_order) for k in ("hyp", "ref", "match")
        )
        self.headline = (self.name,)

    def prepare(self, references: list) -> PreparedChrfReferences:
        return self.metric.prepare(references_per_row(references))

    def score(self, prepared: PreparedChrfReferences, predictions: list[str]) -> ChunkScores:
        stats = self.metric.row_statistics(prepared, predictions)
        return ChunkScores({self.name: self.metric.scores(stats)}, stats)

    def corpus(self, sums: np.ndarray, rows: Any) -> dict[str, Any]:
        # integer statistics: exact as int64, and as float64 (bootstrap replicates) below 2**53
        sums = np.asarray(sums)
        if sums.ndim == 1:
            return {self.name: self.metric.corpus_score(sums.tolist())}
        return {self.name: np.array([self.metric.corpus_score(s) for s in sums.tolist()])}

    def signature(self) -> str:
        """Before a run (the references not yet seen): ``nrefs:var``."""
        return self.signature_for_run("var")

    def signature_for_run(self, nrefs: int | str) -> str:
        """After a run, with the references per row it saw (one count, or ``var``)."""
        return str(self.metric.signature(nrefs).named(self.metric.name()))


def _build_chrf(names: Sequence[str], options: MetricOptions) -> ChrfFamily:
    return ChrfFamily(threads=options.threads, implementation=options.implementation, **options.for_family("chrf"))


def _build_chrf_pp(names: Sequence[str], options: MetricOptions) -> ChrfFamily:
    params = {"word_order": 2, **options.for_family("chrf++")}
    return ChrfFamily(threads=options.threads, implementation=options.implementation, **params)


OPTIONS = {
    "char_order": "character n-gram order (default 6)",
    "word_order": "word n-gram order (chrf 0, chrf++ 2)",
    "beta": "recall weight of the F-score (default 2)",
    "lowercase": "true: lowercase first",
    "whitespace": "true: keep whitespace in character n-grams",
    "eps_smoothing": "true: chrF++.py's averaging (sacreBLEU's default: false)",
}
METRICS = (
    MetricSpec(
        "chrf",
        "chrf",
        "chrF: character 6-gram F-beta (beta 2) from summed statistics, sacreBLEU's numbers",
        _build_chrf,
        options=OPTIONS,
    ),
    MetricSpec(
        "chrf++",
        "chrf++",
        "chrF++: chrF plus word 1- and 2-grams, sacreBLEU's numbers",
        _build_chrf_pp,
        options=OPTIONS,
    ),
)
