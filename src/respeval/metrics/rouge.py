"""ROUGE-N, ROUGE-L and ROUGE-Lsum with rouge-score 0.1.2's numbers.

Pipeline: texts -> shared vocabulary ids (each distinct reference tokenized
once) -> integer statistics per (prediction, reference) pair in the kernels ->
precision/recall/F per pair -> per row, per type, the reference with the
highest F (the first on ties, as rouge-score's ``score_multi``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from respeval import _backend
from respeval._backend import Kernels
from respeval._inputs import reference_lists, same_length, text_list
from respeval.metrics.base import ChunkScores, MetricResult
from respeval.metrics.registry import MetricOptions, MetricSpec
from respeval.metrics.signature import Signature
from respeval.stats import DEFAULT_SEED
from respeval.stats.exact import exact_mean
from respeval.tokenizers.rouge import TokenBatch, tokenize

DEFAULT_TYPES = ("rouge1", "rouge2", "rougeL")
_ROUGE_N = re.compile(r"^rouge([0-9])$")


class Score(NamedTuple):
    """Precision, recall and F-measure (rouge-score's ``scoring.Score``)."""

    precision: float
    recall: float
    fmeasure: float


class AggregateScore(NamedTuple):
    """Bootstrap low / mid (median of resample means) / high (rouge-score's shape)."""

    low: Score
    mid: Score
    high: Score


def validate_types(types: Iterable[str]) -> tuple[str, ...]:
    """Check ROUGE type names the way rouge-score does, and return them as a tuple."""
    if isinstance(types, str):
        types = (types,)
    out = tuple(types)
    if not out:
        raise ValueError("at least one ROUGE type is needed")
    for t in out:
        if t in ("rougeL", "rougeLsum"):
            continue
        m = _ROUGE_N.match(t)
        if not m:
            raise ValueError(f"Invalid rouge type: {t!r} (use rouge1..rouge9, rougeL or rougeLsum)")
        if int(m.group(1)) == 0:
            raise ValueError("rougen requires positive n")
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate ROUGE types in {out}")
    return out


def fmeasure(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """``2PR/(P+R)``, 0 where P+R is 0, with rouge-score's operation order (bit-exact)."""
    total = precision + recall
    safe = np.where(total > 0, total, 1.0)
    return np.where(total > 0, 2 * precision * recall / safe, 0.0)


_NOT_BUILT = np.empty((0, 0))  # RougeResult's statistics matrix, until it is first read


class RougeResult(MetricResult):
    """Per-row ROUGE scores as columns (``rouge1_p``, ``rouge1_r``, ``rouge1_f``, ...).

    ``{type}_ref`` holds, per row, the index of the reference that was chosen for
    that type (always 0 with one reference per row).  ``mean()`` and ``bootstrap()``
    are shaped as rouge-score's (``Score`` and ``AggregateScore`` per type).
    """

    def __init__(
        self,
        family: RougeFamily,
        columns: dict[str, np.ndarray],
        *,
        implementation: str,
        pred_lengths: np.ndarray,
        ref_lengths: dict[str, np.ndarray],
    ) -> None:
        # the statistics matrix (rows x stat_names) is for bootstrap() and the corpus sums: built
        # when first asked for, not by every call (it was ~5% of a short-pairs rouge())
        super().__init__(family, ChunkScores(columns, _NOT_BUILT), implementation=implementation)
        self.types = family.types
        self.pred_lengths = pred_lengths
        self.ref_lengths = ref_lengths

    @property
    def stats(self) -> np.ndarray:
        stats = self.__dict__["_stats"]
        if stats is _NOT_BUILT:
            names = self.family.stat_names
            columns = self._columns
            stats = (
                np.column_stack([columns[c] for c in names]) if len(self.pred_lengths) else np.zeros((0, len(names)))
            )
            self.__dict__["_stats"] = stats
        return stats

    @stats.setter
    def stats(self, value: np.ndarray) -> None:
        self.__dict__["_stats"] = value

    def __len__(self) -> int:
        return len(self.pred_lengths)

    def __getattr__(self, name: str) -> np.ndarray:
        columns = self.__dict__.get("_columns", {})
        if name in columns:
            return columns[name]
        raise AttributeError(name)

    def score(self, rouge_type: str, row: int) -> Score:
        """The ``Score`` of one row for one type."""
        c = self.columns
        return Score(
            float(c[f"{rouge_type}_p"][row]), float(c[f"{rouge_type}_r"][row]), float(c[f"{rouge_type}_f"][row])
        )

    def mean(self) -> dict[str, Score]:  # type: ignore[override]
        """Mean precision/recall/F over rows, per type (0 for an empty result).

        The sum is exactly rounded (equal to ``math.fsum``), so the bulk
        pipeline's tables, which sum chunk by chunk, give the same value.
        """
        out = {}
        for t in self.types:
            vals = [self.columns[f"{t}_{x}"] for x in "prf"]
            out[t] = Score(*(exact_mean(v) for v in vals))
        return out

    def bootstrap(  # type: ignore[override]
        self, n: int = 1000, ci: float = 0.95, seed: int | None = DEFAULT_SEED, threads: int | None = None
    ) -> dict[str, AggregateScore]:
        """Seeded bootstrap interval per type: low/mid/high as rouge-score's aggregator.

        Resamples are Poisson bootstrap replicates (see ``respeval.stats``), the
        same as the bulk pipeline's, so ``score_table`` on these rows reports the
        same low/high.  ``mid`` is the median of the resample means (rouge-score's convention);
        ``mean()`` gives the plain mean.  The same ``seed`` always gives the same
        interval, whatever ``threads`` (the native core's, for the replicate sums).
        """
        if len(self) == 0:
            raise ValueError("cannot bootstrap an empty result")
        q = super().bootstrap(n, ci, seed, threads)
        return {t: AggregateScore(*(Score(*(q[f"{t}_{x}"][j] for x in "prf")) for j in range(3))) for t in self.types}


def signature(types: Sequence[str], tokenizer: Any, stemmer: bool) -> Signature:
    tok = tokenizer if isinstance(tokenizer, str) else "custom"
    return Signature("+".join(types), tok=tok, stem="porter" if stemmer else "no", multiref="max-f")


def _row_pairs(refs_per_row: list[list[str]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Distinct reference texts, and (row, distinct reference) pairs in row order."""
    index: dict[str, int] = {}
    pair_pred: list[int] = []
    pair_ref: list[int] = []
    for row, refs in enumerate(refs_per_row):
        for ref in refs:
            pair_pred.append(row)
            pair_ref.append(index.setdefault(ref, len(index)))
    return list(index), np.array(pair_pred, np.int64), np.array(pair_ref, np.int64)


def _pairs(
    kernels: Kernels, predictions: Any, references: Any
) -> tuple[list[str], list[str], np.ndarray, np.ndarray, bool]:
    """Validated predictions, distinct reference texts, and (row, reference) pairs."""
    if isinstance(predictions, list) and isinstance(references, list):
        got = kernels.pair_single_references(predictions, references)
        if got is not None:
            distinct, pair_ref_bytes = got
            return (
                predictions,
                distinct,
                np.arange(len(predictions), dtype=np.int64),
                np.frombuffer(pair_ref_bytes, np.int64),
                True,
            )
    preds = text_list(predictions, "predictions")
    refs_per_row, single = reference_lists(references, "references")
    same_length(preds, refs_per_row, "predictions", "references")
    distinct, pair_pred, pair_ref = _row_pairs(refs_per_row)
    return preds, distinct, pair_pred, pair_ref, single


def _pick_best(f: np.ndarray, pair_pred: np.ndarray, n_rows: int, single: bool) -> np.ndarray:
    """Per row, the index (into pairs) of its first pair with the highest F."""
    if single:
        return np.arange(n_rows, dtype=np.int64)
    starts = np.searchsorted(pair_pred, np.arange(n_rows))
    best = np.maximum.reduceat(f, starts)
    is_best = f == best[pair_pred]
    candidate = np.where(is_best, np.arange(len(f)), len(f))
    return np.minimum.reduceat(candidate, starts)


def score_tokens(
    kernels: Kernels,
    vocab_size: int,
    preds: TokenBatch,
    refs: TokenBatch,
    pair_pred: np.ndarray,
    pair_ref: np.ndarray,
    types: Sequence[str],
    threads: int | None,
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Precision, recall and F per pair, per type, from token batches."""
    orders = [int(t[5:]) for t in types if _ROUGE_N.match(t)]
    max_order = max(orders, default=0)
    want_lcs = "rougeL" in types
    npairs = len(pair_pred)
    overlaps = np.zeros((npairs, max_order), np.int64)
    lcs = np.zeros(npairs if want_lcs else 0, np.int64)
    if max_order or want_lcs:
        kernels.rouge_pair_stats(
            preds.ids,
            preds.offsets,
            refs.ids,
            refs.offsets,
            pair_pred,
            pair_ref,
            max_order,
            want_lcs,
            vocab_size,
            overlaps,
            lcs,
            threads,
        )
    lsum = np.zeros(npairs if "rougeLsum" in types else 0, np.int64)
    if "rougeLsum" in types:
        kernels.lsum_pair_stats(
            preds.ids,
            preds.sent_offsets,
            preds.row_sents,
            refs.ids,
            refs.sent_offsets,
            refs.row_sents,
            pair_pred,
            pair_ref,
            vocab_size,
            lsum,
            threads,
        )
    # explicit widths: reshape(0, -1) cannot infer one (a chunk with no pairs)
    stats = np.column_stack(
        [overlaps, lcs.reshape(npairs, int(want_lcs)), lsum.reshape(npairs, int("rougeLsum" in types))]
    )
    lengths = np.column_stack([preds.lengths()[pair_pred], refs.lengths()[pair_ref]])
    return _prf(kernels, types, stats, lengths, max_order, want_lcs, threads)


def _prf(
    kernels: Kernels,
    types: Sequence[str],
    stats: np.ndarray,
    lengths: np.ndarray,
    max_order: int,
    want_lcs: bool,
    threads: int | None,
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Precision, recall and F per pair, per type (rouge-score's arithmetic, in the
    kernels), from the integer statistics: ``stats`` holds the n-gram hits of orders
    1..max_order, then the LCS length (if want_lcs), then the rougeLsum hits."""
    columns, orders = [], []
    for t in types:
        if t == "rougeL" or t == "rougeLsum":
            columns.append(max_order if t == "rougeL" else max_order + want_lcs)
            orders.append(0)  # rouge-score divides by the raw lengths (zeros when either is empty)
        else:
            n = int(t[5:])
            columns.append(n - 1)
            orders.append(n)
    scores = np.empty((3 * len(types), len(stats)), np.float64)
    kernels.rouge_scores(
        np.ascontiguousarray(stats, np.int64),
        np.ascontiguousarray(lengths, np.int64),
        np.array(columns, np.int64),
        np.array(orders, np.int64),
        scores,
        threads,
    )
    return {t: (scores[3 * i], scores[3 * i + 1], scores[3 * i + 2]) for i, t in enumerate(types)}


def score_texts(
    kernels: Kernels,
    preds: list[str],
    refs: list[str],
    pair_pred: np.ndarray,
    pair_ref: np.ndarray,
    types: Sequence[str],
    stem: bool,
    threads: int | None,
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], np.ndarray, np.ndarray]:
    """P/R/F per pair, per type, with rouge-score's tokenizer, straight from the texts;
    and each pair's prediction and reference token counts."""
    orders = [int(t[5:]) for t in types if _ROUGE_N.match(t)]
    max_order = max(orders, default=0)
    want_lcs, want_lsum = "rougeL" in types, "rougeLsum" in types
    npairs = len(pair_pred)
    stats = np.zeros((npairs, max_order + want_lcs + want_lsum), np.int64)
    lengths = np.zeros((npairs, 2), np.int64)
    kernels.rouge_text_stats(
        preds, refs, pair_pred, pair_ref, max_order, want_lcs, want_lsum, stem, stats, lengths, threads
    )
    return _prf(kernels, types, stats, lengths, max_order, want_lcs, threads), lengths[:, 0], lengths[:, 1]


def _score_pairs(
    kernels: Kernels,
    preds: list[str],
    refs: list[str],
    pair_pred: np.ndarray,
    pair_ref: np.ndarray,
    types: Sequence[str],
    tokenizer: Any,
    stem: bool,
    threads: int | None,
    prepared: tuple[Any, TokenBatch] | None = None,
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], np.ndarray, np.ndarray]:
    """P/R/F per pair and per type, and each pair's token counts: rouge-score's tokenizer
    runs in the kernels from the texts; other tokenizers give token batches first
    (``prepared`` = the vocabulary and the references' batch, when already tokenized)."""
    if tokenizer == "rouge":
        return score_texts(kernels, preds, refs, pair_pred, pair_ref, types, stem, threads)
    vocab, ref_batch = prepared if prepared is not None else (kernels.Vocab(), None)
    pred_batch = tokenize(kernels, vocab, preds, tokenizer, stem, threads)
    if ref_batch is None:
        ref_batch = tokenize(kernels, vocab, refs, tokenizer, stem, threads)
    per_pair = score_tokens(kernels, len(vocab), pred_batch, ref_batch, pair_pred, pair_ref, types, threads)
    return per_pair, pred_batch.lengths()[pair_pred], ref_batch.lengths()[pair_ref]


@dataclass
class PreparedReferences:
    """References tokenized once, to be scored against any number of prediction sets."""

    kernels: Kernels
    vocab: Any  # None for the "rouge" tokenizer, which runs in the kernels from the texts
    batch: TokenBatch | None
    pair_pred: np.ndarray  # pair -> row
    pair_ref: np.ndarray  # pair -> distinct reference
    single: bool  # one reference per row
    n_rows: int
    tokenizer: Any
    stemmer: bool
    threads: int | None
    texts: Any = field(default_factory=list)  # the distinct reference texts (a list, or an Arrow array)


def prepare_references(
    references: Any,
    *,
    tokenizer: Any = "rouge",
    stemmer: bool = False,
    threads: int | None = None,
    implementation: str | None = None,
) -> PreparedReferences:
    """Tokenize each distinct reference text once (many rows, or many systems, may share it)."""
    kernels = _backend.get(implementation)
    if tokenizer == "rouge" and _arrow_strings(references):
        # an Arrow string array (the bulk readers' Parquet text), read in place by the
        # kernels: the rows sharing a text are paired with its first row, tokenized once
        n_rows = len(references)
        pair_ref = np.frombuffer(kernels.arrow_first_rows(references), np.int64)
        return PreparedReferences(
            kernels, None, None, np.arange(n_rows, dtype=np.int64), pair_ref, True, n_rows, tokenizer, stemmer,
            threads, references,
        )  # fmt: skip
    got = kernels.pair_single_references(references, references) if isinstance(references, list) else None
    if got is not None:  # one str per row: pair k is row k
        distinct, pair_ref_bytes = got
        n_rows, single = len(references), True
        pair_pred, pair_ref = np.arange(n_rows, dtype=np.int64), np.frombuffer(pair_ref_bytes, np.int64)
    else:
        refs_per_row, single = reference_lists(references, "references")
        distinct, pair_pred, pair_ref = _row_pairs(refs_per_row)
        n_rows = len(refs_per_row)
    vocab, batch = None, None
    if tokenizer != "rouge":  # the kernels tokenize "rouge" themselves, reference by reference
        vocab = kernels.Vocab()
        batch = tokenize(kernels, vocab, distinct, tokenizer, stemmer, threads)
    return PreparedReferences(
        kernels, vocab, batch, pair_pred, pair_ref, single, n_rows, tokenizer, stemmer, threads, distinct
    )


def _select(
    types: Sequence[str],
    per_pair: dict,
    pair_pred: np.ndarray,
    pair_ref: np.ndarray,
    n_rows: int,
    single: bool,
    rlen: np.ndarray,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    columns: dict[str, np.ndarray] = {}
    ref_lengths: dict[str, np.ndarray] = {}
    if single:  # pair k is row k: nothing to choose
        for t in types:
            columns[f"{t}_p"], columns[f"{t}_r"], columns[f"{t}_f"] = per_pair[t]
            columns[f"{t}_ref"] = np.zeros(n_rows, np.int64)
            ref_lengths[t] = rlen
        return columns, ref_lengths
    first_pair = np.searchsorted(pair_pred, np.arange(n_rows))
    for t in types:
        p, r, f = per_pair[t]
        best = _pick_best(f, pair_pred, n_rows, single)
        columns[f"{t}_p"] = p[best]
        columns[f"{t}_r"] = r[best]
        columns[f"{t}_f"] = f[best]
        columns[f"{t}_ref"] = best - first_pair
        ref_lengths[t] = rlen[best]
    return columns, ref_lengths


def score_prepared(prepared: PreparedReferences, predictions: Any, types: Iterable[str] = DEFAULT_TYPES) -> RougeResult:
    """ROUGE of ``predictions`` (one per row) against already prepared references."""
    types = validate_types(types)
    preds = predictions if prepared.tokenizer == "rouge" and _arrow_strings(predictions) else None
    if preds is None:
        preds = text_list(predictions, "predictions")
    if len(preds) != prepared.n_rows:
        raise ValueError(
            f"predictions has {len(preds)} rows but references has {prepared.n_rows}: they must pair up row by row"
        )
    k = prepared.kernels
    per_pair, plen, rlen = _score_pairs(
        k,
        preds,
        prepared.texts,
        prepared.pair_pred,
        prepared.pair_ref,
        types,
        prepared.tokenizer,
        prepared.stemmer,
        prepared.threads,
        None if prepared.batch is None else (prepared.vocab, prepared.batch),
    )
    columns, ref_lengths = _select(
        types, per_pair, prepared.pair_pred, prepared.pair_ref, len(preds), prepared.single, rlen
    )
    family = RougeFamily(types, tokenizer=prepared.tokenizer, stemmer=prepared.stemmer, threads=prepared.threads)
    return RougeResult(
        family,
        columns,
        implementation=_backend.name_of(k),
        pred_lengths=_row_lengths(plen, prepared.pair_pred, len(preds), prepared.single),
        ref_lengths=ref_lengths,
    )


def _row_lengths(plen: np.ndarray, pair_pred: np.ndarray, n_rows: int, single: bool) -> np.ndarray:
    """Each row's prediction token count, from its pairs' counts."""
    return plen if single else plen[np.searchsorted(pair_pred, np.arange(n_rows))]


def rouge(
    predictions: Any,
    references: Any,
    types: Iterable[str] = DEFAULT_TYPES,
    *,
    tokenizer: Any = "rouge",
    stemmer: bool = False,
    threads: int | None = None,
    implementation: str | None = None,
) -> RougeResult:
    """ROUGE scores of each prediction against its reference(s).

    Parameters
    ----------
    predictions : sequence of str (list, numpy or Arrow string array, pandas Series)
    references : sequence of str, or of non-empty lists of str (several references
        per row: per type, the one with the highest F wins, the first on ties).
    types : ROUGE types: ``rouge1`` .. ``rouge9``, ``rougeL``, ``rougeLsum``
        (sentences are newline-separated, as in rouge-score).
    tokenizer : ``"rouge"`` (rouge-score's, exact), ``"rouge-unicode"`` (keeps
        non-Latin scripts; respeval's own), or an object with ``tokenize(text)``.
    stemmer : Porter-stem tokens longer than 3 characters (as rouge-score).
    threads : threads for the native kernels (None = all cores).
    implementation : ``"native"`` or ``"python"`` (default: ``RESPEVAL_IMPLEMENTATION``).

    Returns
    -------
    RougeResult
        numpy columns ``{type}_p``, ``{type}_r``, ``{type}_f``, ``{type}_ref``,
        with ``.mean()`` and ``.bootstrap()``.
    """
    types = validate_types(types)
    kernels = _backend.get(implementation)
    preds, distinct_refs, pair_pred, pair_ref, single = _pairs(kernels, predictions, references)
    family = RougeFamily(types, tokenizer=tokenizer, stemmer=stemmer, threads=threads, implementation=implementation)
    per_pair, plen, rlen = _score_pairs(
        kernels, preds, distinct_refs, pair_pred, pair_ref, types, tokenizer, stemmer, threads
    )
    columns, ref_lengths = _select(types, per_pair, pair_pred, pair_ref, len(preds), single, rlen)
    return RougeResult(
        family,
        columns,
        implementation=_backend.name(implementation),
        pred_lengths=_row_lengths(plen, pair_pred, len(preds), single),
        ref_lengths=ref_lengths,
    )


def _arrow_strings(values: Any) -> bool:
    """A null-free Arrow string array, which the kernels read in place (rouge-score's
    tokenizer only: the others tokenize Python strings)."""
    return (
        type(values).__module__.startswith("pyarrow")
        and hasattr(values, "buffers")
        and str(values.type) in ("string", "large_string")
        and values.null_count == 0
    )


class RougeFamily:
    """ROUGE types as one metric family for the bulk pipeline (corpus value = row mean)."""

    inputs = "text"

    def __init__(
        self,
        types: Iterable[str],
        *,
        tokenizer: Any = "rouge",
        stemmer: bool = False,
        threads: int | None = None,
        implementation: str | None = None,
    ) -> None:
        self.types = validate_types(types)
        self.name = "rouge"
        self.tokenizer = tokenizer
        self.stemmer = stemmer
        self.threads = threads
        self.implementation = implementation
        self.stat_names = tuple(f"{t}_{x}" for t in self.types for x in "prf")
        self.headline = tuple(f"{t}_f" for t in self.types)
        # Parquet text may come as Arrow string arrays, read in place by the kernels
        self.reads_arrow_text = tokenizer == "rouge"

    def prepare(self, references: list) -> PreparedReferences:
        return prepare_references(
            references,
            tokenizer=self.tokenizer,
            stemmer=self.stemmer,
            threads=self.threads,
            implementation=self.implementation,
        )

    def score(self, prepared: PreparedReferences, predictions: list[str]) -> ChunkScores:
        res = score_prepared(prepared, predictions, self.types)
        return ChunkScores({k: v for k, v in res.columns.items() if not k.endswith("_ref")}, res.stats)

    def corpus(self, sums: np.ndarray, rows: int) -> dict[str, np.ndarray | float]:
        # rows: the row count, or one resample size per row of a 2-D ``sums``
        means = np.asarray(sums, dtype=np.float64) / np.maximum(np.asarray(rows, dtype=np.float64), 1)[..., None]
        return {name: means[..., i] for i, name in enumerate(self.stat_names)}

    def signature(self) -> str:
        return str(signature(self.types, self.tokenizer, self.stemmer))


ROUGE_TYPES = tuple(f"rouge{n}" for n in range(1, 10)) + ("rougeL", "rougeLsum")


def _build(names: Sequence[str], options: MetricOptions) -> RougeFamily:
    return RougeFamily(
        names,
        tokenizer=options.tokenizer,
        stemmer=options.stemmer,
        threads=options.threads,
        implementation=options.implementation,
        **options.for_family("rouge"),
    )


_HELP = {
    "rougeL": "ROUGE-L: longest common subsequence of the whole texts (P/R/F, rouge-score's numbers)",
    "rougeLsum": "ROUGE-Lsum: summary-level union LCS over newline-separated sentences (rouge-score's)",
}
METRICS = tuple(
    MetricSpec(name, "rouge", _HELP.get(name, f"ROUGE-{name[5:]}: clipped {name[5:]}-gram overlap (P/R/F)"), _build)
    for name in ROUGE_TYPES
)
