"""BLEU with sacreBLEU 2.6's numbers, statistics from the native core.

Per row: ``[hyp_len, ref_len, correct_1..N, total_1..N]`` (integers), where
``correct_n`` clips each hypothesis n-gram by its highest count in any of the
row's references and ``ref_len`` is the closest reference length (ties to the
shorter).  The corpus score is sacreBLEU's ``compute_bleu`` of the column sums;
sentence scores apply it to each row.
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
from respeval.metrics.registry import MetricOptions, MetricSpec
from respeval.metrics.sacrebleu_scores import BLEUScoreParts
from respeval.metrics.signature import Signature
from respeval.stats import sacrebleu as bootstrap_mt
from respeval.tokenizers.sacrebleu_tokenizers import get_tokenizer

TOKENIZERS = ("13a", "intl", "zh", "char", "none")
SMOOTHING = ("exp", "floor", "add-k", "none")


def references_per_row(references: Any, n_rows: int | None = None) -> list[list[str]]:
    """References per row, from either per-row lists or sacreBLEU-style streams.

    A row's entry may be a str or a list of str; ``None`` items are skipped (a row
    with fewer references), but every row needs at least one.
    """
    out = _backend.get().mt_reference_rows(references)  # the per-row checks run in the kernels
    if n_rows is not None and len(out) != n_rows:
        raise ValueError(f"hypotheses has {n_rows} rows but references has {len(out)}")
    return out


def streams_to_rows(streams: Sequence[Sequence[str | None]], n_rows: int) -> list[list[str]]:
    """sacreBLEU's reference streams ``[[r1_seg1, r1_seg2, ...], [r2_seg1, ...]]`` as rows.

    Unlike sacreBLEU (which zips and silently truncates), every stream must have
    exactly one entry per hypothesis.
    """
    if isinstance(streams, str) or not all(not isinstance(s, str) for s in streams):
        raise TypeError(
            "references must be a list of reference streams (each a list of str), "
            "e.g. [refs] for one reference per segment"
        )
    for k, stream in enumerate(streams):
        if len(stream) != n_rows:
            raise ValueError(f"reference stream {k} has {len(stream)} segments but there are {n_rows} hypotheses")
    return references_per_row([list(seg) for seg in zip(*streams)] if streams else [], n_rows)


def _token_lists(texts: list[str], tokenize: str, lowercase: bool) -> list[list[str]]:
    tok = get_tokenizer(tokenize)
    if lowercase:
        return [tok(t.lower().rstrip()).split() for t in texts]
    return [tok(t.rstrip()).split() for t in texts]


def token_ids(
    kernels: Kernels, vocab: Any, texts: list[str], tokenize: str, lowercase: bool
) -> tuple[np.ndarray, np.ndarray]:
    """sacreBLEU tokens of ``texts`` as (int32 ids, int64 offsets) in ``vocab``."""
    if tokenize == "13a":
        if lowercase:
            texts = [t.lower() for t in texts]
        ids, off = kernels.tokenize_13a_ids(vocab, texts)
        return np.frombuffer(ids, np.int32), np.frombuffer(off, np.int64)
    lists = _token_lists(texts, tokenize, lowercase)
    offsets = np.zeros(len(lists) + 1, np.int64)
    np.cumsum([len(x) for x in lists], out=offsets[1:])
    flat = [t for x in lists for t in x]
    return np.frombuffer(vocab.intern(flat), np.int32), offsets


def closest_lengths(hyp_len: np.ndarray, ref_lens: np.ndarray, row_refs: np.ndarray) -> np.ndarray:
    """Per row, the reference length closest to the hypothesis length (ties to the shorter)."""
    n = len(hyp_len)
    counts = np.diff(row_refs)
    owner = np.repeat(np.arange(n), counts)
    dist = np.abs(ref_lens - hyp_len[owner])
    # lexicographic (distance, length) minimum per row
    key = dist * (int(ref_lens.max(initial=0)) + 1) + ref_lens
    best = np.minimum.reduceat(key, row_refs[:-1]) if n else np.zeros(0, np.int64)
    return best % (int(ref_lens.max(initial=0)) + 1)


@dataclass
class PreparedBleuReferences:
    kernels: Kernels
    vocab: Any
    ids: np.ndarray
    offsets: np.ndarray
    row_refs: np.ndarray
    n_rows: int


def prepare_references(
    refs_per_row: list[list[str]], *, tokenize: str = "13a", lowercase: bool = False, implementation: str | None = None
) -> PreparedBleuReferences:
    kernels = _backend.get(implementation)
    vocab = kernels.Vocab()
    flat = [r for refs in refs_per_row for r in refs]
    ids, off = token_ids(kernels, vocab, flat, tokenize, lowercase)
    row_refs = np.zeros(len(refs_per_row) + 1, np.int64)
    np.cumsum([len(r) for r in refs_per_row], out=row_refs[1:])
    return PreparedBleuReferences(kernels, vocab, ids, off, row_refs, len(refs_per_row))


def row_statistics(
    prepared: PreparedBleuReferences,
    hypotheses: list[str],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    max_order: int = 4,
    threads: int | None = None,
) -> np.ndarray:
    """int64 ``[rows, 2 + 2 * max_order]``: hyp_len, ref_len, correct_1..N, total_1..N."""
    k = prepared.kernels
    ids, off = token_ids(k, prepared.vocab, hypotheses, tokenize, lowercase)
    n = len(hypotheses)
    stats = np.zeros((n, 2 + 2 * max_order), np.int64)
    if n == 0:
        return stats
    correct = np.zeros((n, max_order), np.int64)
    k.bleu_clipped_counts(
        ids, off, prepared.ids, prepared.offsets, prepared.row_refs, max_order, len(prepared.vocab), correct, threads
    )
    hyp_len = np.diff(off)
    ref_lens = np.diff(prepared.offsets)
    stats[:, 0] = hyp_len
    stats[:, 1] = closest_lengths(hyp_len, ref_lens, prepared.row_refs)
    stats[:, 2 : 2 + max_order] = correct
    for order in range(1, max_order + 1):
        stats[:, 1 + max_order + order] = np.maximum(hyp_len - order + 1, 0)
    return stats


def signature(
    *,
    nrefs: int | str,
    lowercase: bool,
    tokenize: str,
    smooth: str,
    smooth_value: float | None,
    effective_order: bool,
) -> Signature:
    """sacreBLEU's signature fields (same names, same order), versioned as respeval."""
    smooth_text = smooth
    if smooth in ("floor", "add-k"):
        value = sacrebleu_scores.SMOOTH_DEFAULTS[smooth] if smooth_value is None else smooth_value
        smooth_text = f"{smooth}[{value:.2f}]"
    return Signature(
        nrefs=nrefs, case="lc" if lowercase else "mixed", eff=effective_order, tok=tokenize, smooth=smooth_text
    )


def _nrefs(refs_per_row: list[list[str]]) -> int | str:
    counts = {len(r) for r in refs_per_row}
    return counts.pop() if len(counts) == 1 else "var"


def sentence_scores(
    stats: np.ndarray,
    *,
    smooth: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = True,
    max_order: int = 4,
    implementation: str | None = None,
    kernels: Kernels | None = None,
) -> np.ndarray:
    """sacreBLEU's ``compute_bleu`` score of every row, in its float order: the same double
    as ``sentence_score`` on this Python (checked with == on every WMT17 line)."""
    stats = np.ascontiguousarray(stats, dtype=np.int64)
    out = np.zeros(stats.shape[0])
    k = kernels if kernels is not None else _backend.get(implementation)
    k.bleu_sentence_scores(stats, max_order, smooth, smooth_value, effective_order, out)
    return out


class BleuResult(MetricResult):
    """Per-row BLEU statistics and sentence scores, and the corpus score.

    Columns: ``bleu`` (sentence BLEU, effective order, as ``sentence_bleu``),
    ``bleu_hyp_len``, ``bleu_ref_len``, ``bleu_correct_{n}``, ``bleu_total_{n}``.
    ``corpus`` is sacreBLEU's score object of the summed statistics.
    """

    def __init__(
        self, family: BleuFamily, stats: np.ndarray, sentence: np.ndarray, *, nrefs: int | str, implementation: str
    ) -> None:
        n = family.max_order
        columns = {"bleu": sentence, "bleu_hyp_len": stats[:, 0], "bleu_ref_len": stats[:, 1]}
        for i in range(n):
            columns[f"bleu_correct_{i + 1}"] = stats[:, 2 + i]
            columns[f"bleu_total_{i + 1}"] = stats[:, 2 + n + i]
        super().__init__(family, ChunkScores(columns, stats), implementation=implementation)
        self.signature = str(family.signature_for(nrefs=nrefs))
        self.family: BleuFamily = family
        self.max_order = n
        self.sentence = sentence
        self.corpus = family.corpus_score(stats.sum(axis=0))

    @property
    def score(self) -> float:
        return self.corpus.score

    def sacrebleu_interval(self, n: int = 1000, seed: int | None = bootstrap_mt.DEFAULT_SEED) -> tuple[float, float]:
        """sacreBLEU's bootstrap: (mean of resample scores, half-width of the 95% interval)."""
        f = self.family
        return bootstrap_mt.bootstrap_ci(
            self.stats.tolist(),
            lambda s: f.corpus_score(s).score,
            n,
            seed,
        )


@renamed_arguments(hypotheses="predictions", tokenize="tokenizer")
def bleu(
    predictions: Any,
    references: Any,
    *,
    tokenizer: str = "13a",
    lowercase: bool = False,
    max_order: int = 4,
    smooth: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    threads: int | None = None,
    implementation: str | None = None,
) -> BleuResult:
    """BLEU of each hypothesis against its reference(s), and the corpus BLEU.

    Parameters
    ----------
    predictions : sequence of str
    references : per row a str or a list of str (``None`` items skipped: a variable
        number of references per row)
    tokenizer : ``13a`` (default; native), ``intl``, ``zh``, ``char``, ``none`` (sacreBLEU's
        ``tokenize``; ``tokenize=`` is still taken, with a warning)
    smooth : ``exp``, ``floor``, ``add-k`` or ``none``; ``smooth_value`` for floor/add-k
    effective_order : for the corpus score (sacreBLEU's ``BLEU`` default: False);
        per-row ``sentence`` scores always use effective order, as ``sentence_bleu``.
    """
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"unknown BLEU tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")
    if smooth not in SMOOTHING:
        raise ValueError(f"unknown smoothing {smooth!r}; choose one of {', '.join(SMOOTHING)}")
    hyps = text_list(predictions, "predictions")
    refs = references_per_row(references)
    same_length(hyps, refs, "predictions", "references")
    family = BleuFamily(
        tokenizer=tokenizer,
        lowercase=lowercase,
        max_order=max_order,
        smooth=smooth,
        smooth_value=smooth_value,
        effective_order=effective_order,
        threads=threads,
        implementation=implementation,
    )
    prepared = prepare_references(refs, tokenize=tokenizer, lowercase=lowercase, implementation=implementation)
    stats = family.statistics(prepared, hyps)
    sentence = sentence_scores(
        stats, smooth=smooth, smooth_value=smooth_value, max_order=max_order, kernels=prepared.kernels
    )
    return BleuResult(
        family,
        stats,
        sentence,
        nrefs=_nrefs(refs),
        implementation=_backend.name(implementation),
    )


class BleuFamily:
    """Corpus BLEU for the bulk pipeline: integer statistics are summed, then compute_bleu."""

    inputs = "text"

    @renamed_arguments(tokenize="tokenizer")
    def __init__(
        self,
        *,
        tokenizer: str = "13a",
        lowercase: bool = False,
        max_order: int = 4,
        smooth: str = "exp",
        smooth_value: float | None = None,
        effective_order: bool = False,
        threads: int | None = None,
        implementation: str | None = None,
    ) -> None:
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown BLEU tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")
        if smooth not in SMOOTHING:
            raise ValueError(f"unknown smoothing {smooth!r}; choose one of {', '.join(SMOOTHING)}")
        self.name = "bleu"
        self.tokenizer, self.lowercase, self.max_order = tokenizer, lowercase, max_order
        self.smooth, self.smooth_value, self.threads = smooth, smooth_value, threads
        self.effective_order = effective_order
        self.implementation = implementation
        n = max_order
        self.stat_names = (
            "hyp_len",
            "ref_len",
            *(f"correct_{i}" for i in range(1, n + 1)),
            *(f"total_{i}" for i in range(1, n + 1)),
        )
        self.headline = ("bleu",)

    def prepare(self, references: list) -> PreparedBleuReferences:
        return prepare_references(
            references_per_row(references),
            tokenize=self.tokenizer,
            lowercase=self.lowercase,
            implementation=self.implementation,
        )

    def statistics(self, prepared: PreparedBleuReferences, predictions: list[str]) -> np.ndarray:
        """int64 ``[rows, 2 + 2 * max_order]``: hyp_len, ref_len, correct_1..N, total_1..N."""
        return row_statistics(
            prepared,
            predictions,
            tokenize=self.tokenizer,
            lowercase=self.lowercase,
            max_order=self.max_order,
            threads=self.threads,
        )

    def score(self, prepared: PreparedBleuReferences, predictions: list[str]) -> ChunkScores:
        stats = self.statistics(prepared, predictions)
        sentence = sentence_scores(
            stats,
            smooth=self.smooth,
            smooth_value=self.smooth_value,
            max_order=self.max_order,
            kernels=prepared.kernels,
        )
        return ChunkScores({"bleu": sentence}, stats)

    def corpus(self, sums: np.ndarray, rows: Any) -> dict[str, Any]:
        # sums of integer statistics: exact as int64, and as float64 (bootstrap replicates) below 2**53
        sums = np.asarray(sums)
        if sums.ndim == 1:
            return {"bleu": self._score(sums)}
        return {"bleu": np.array([self._score(s) for s in sums])}

    def _score(self, row: np.ndarray) -> float:
        return self.corpus_score(row).score

    def corpus_score(self, sums: Any) -> BLEUScoreParts:
        """sacreBLEU's score object of summed statistics."""
        values = sums.tolist() if hasattr(sums, "tolist") else list(sums)
        return sacrebleu_scores.compute_bleu(
            values, self.smooth, self.smooth_value, self.effective_order, self.max_order
        )

    def signature_for(self, *, nrefs: int | str) -> Signature:
        return signature(
            nrefs=nrefs,
            lowercase=self.lowercase,
            tokenize=self.tokenizer,
            smooth=self.smooth,
            smooth_value=self.smooth_value,
            effective_order=self.effective_order,
        )

    def signature(self) -> str:
        """Before a run (the references not yet seen): ``nrefs:var``."""
        return self.signature_for_run("var")

    def signature_for_run(self, nrefs: int | str) -> str:
        """After a run, with the references per row it saw (one count, or ``var``)."""
        return str(self.signature_for(nrefs=nrefs).named("BLEU"))


def _build(names: Sequence[str], options: MetricOptions) -> BleuFamily:
    return BleuFamily(threads=options.threads, implementation=options.implementation, **options.for_family("bleu"))


OPTIONS = {
    "tokenizer": "13a (default) | intl | zh | char | none (sacreBLEU's tokenize, still taken)",
    "lowercase": "true: lowercase before tokenizing",
    "max_order": "the longest n-gram (default 4)",
    "smooth": "exp (default) | floor | add-k | none",
    "smooth_value": "the value of floor (0.1) or add-k (1) smoothing",
    "effective_order": "true: the corpus score stops at the longest n-gram order present",
}
METRICS = (
    MetricSpec(
        "bleu",
        "bleu",
        "corpus BLEU from summed n-gram statistics, sacreBLEU 2.6's numbers (13a)",
        _build,
        options=OPTIONS,
        renamed_options={"tokenize": "tokenizer"},
    ),
)
