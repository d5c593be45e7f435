"""sacreBLEU's ``BLEU`` and ``BLEUScore``, on respeval's BLEU statistics.

Statistics rows are ``[hyp_len, ref_len, correct_1..N, total_1..N]`` from
``respeval.metrics.bleu`` (native tokenizer and n-gram clipping). Scores are computed from
column sums by :func:`bleu_from_sums`, sacreBLEU's ``compute_bleu`` for many rows at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from respeval.compat.sacrebleu.metrics.base import Metric, Score
from respeval.metrics import bleu as bleu_metric
from respeval.metrics import signature as metric_signature

__all__ = ["BLEU", "BLEUScore", "MAX_NGRAM_ORDER", "bleu_from_sums"]

MAX_NGRAM_ORDER = 4
SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}
# sacreBLEU's ``my_log(0)``
LOG_ZERO = -9999999999

_log_ufunc = np.frompyfunc(math.log, 1, 1)
_exp_ufunc = np.frompyfunc(math.exp, 1, 1)


def _libm_log(values: np.ndarray) -> np.ndarray:
    """``math.log`` of each value (the C library's, which numpy's SIMD log can differ from)."""
    return np.asarray(_log_ufunc(values), dtype=np.float64)


def _libm_exp(values: np.ndarray) -> np.ndarray:
    return np.asarray(_exp_ufunc(values), dtype=np.float64)


class BLEUScore(Score):
    """BLEU with its counts, totals, precisions, brevity penalty and lengths."""

    def __init__(
        self,
        score: float,
        counts: list[Any],
        totals: list[Any],
        precisions: list[float],
        bp: float,
        sys_len: int,
        ref_len: int,
    ) -> None:
        super().__init__("BLEU", score)
        self.bp, self.counts, self.totals = bp, counts, totals
        self.sys_len, self.ref_len, self.precisions = sys_len, ref_len, precisions
        self.prec_str = "/".join(f"{p:.1f}" for p in self.precisions)
        self.ratio = self.sys_len / self.ref_len if self.ref_len else 0
        self._verbose = (
            f"{self.prec_str} (BP = {self.bp:.3f} ratio = {self.ratio:.3f} "
            f"hyp_len = {self.sys_len:d} ref_len = {self.ref_len:d})"
        )


def _precision_dtype(dtype: np.dtype) -> np.dtype:
    """The type of sacreBLEU's ``100. * correct`` for a scalar of ``dtype`` under this numpy.

    float32 sums (bootstrap resamples) give float32 precisions with NumPy 2's promotion
    rules and float64 with NumPy 1's; integers always give float64.
    """
    return np.asarray(100.0 * dtype.type(1)).dtype


def bleu_from_sums(
    sums: Any,
    *,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    max_ngram_order: int = MAX_NGRAM_ORDER,
) -> dict[str, np.ndarray]:
    """sacreBLEU's ``compute_bleu`` of every row of ``sums`` (``[k, 2 + 2N]``), vectorised.

    The arithmetic runs in the precision sacreBLEU's scalar code reaches for the input type
    (see :func:`_precision_dtype`); logarithms and exponentials go through the C library
    (``math.log``/``math.exp``) and the log-sum through Python's ``sum``, since numpy's own
    ``exp``/``log`` differ from them in the last bit for a few per cent of inputs.

    Returns ``score`` (float64), ``precisions`` (``[k, N]``), ``bp``, ``counts`` and ``totals``
    (after add-k smoothing, as sacreBLEU returns them).
    """
    if smooth_method not in SMOOTH_DEFAULTS:
        raise ValueError(f"Unknown smooth_method {smooth_method!r}")
    value = SMOOTH_DEFAULTS[smooth_method] if smooth_value is None else smooth_value
    sums = np.atleast_2d(np.asarray(sums))
    order = max_ngram_order
    if sums.shape[1] < 2 + 2 * order:
        raise ValueError(f"BLEU statistics need {2 + 2 * order} columns for max_ngram_order={order}")
    k = sums.shape[0]
    sys_len = sums[:, 0].astype(np.int64)  # sacreBLEU: int(stats[0])
    ref_len = sums[:, 1].astype(np.int64)
    # ``correct[n] += k`` keeps ints ints and turns them to floats for a fractional k
    counts_dtype = np.result_type(sums, value) if smooth_method == "add-k" else sums.dtype
    correct = sums[:, 2 : 2 + order].astype(counts_dtype)
    total = sums[:, 2 + order : 2 + 2 * order].astype(counts_dtype)
    dtype = _precision_dtype(correct.dtype)

    bp = np.ones(k)
    short = sys_len < ref_len
    shrink = short & (sys_len > 0)
    bp[shrink] = _libm_exp(1 - ref_len[shrink] / sys_len[shrink])
    bp[short & (sys_len <= 0)] = 0.0

    # sacreBLEU returns before smoothing when nothing matches
    matched = (sums[:, 2 : 2 + order] != 0).any(axis=1)
    precisions = np.zeros((k, order), dtype)
    alive = matched.copy()  # rows still in sacreBLEU's loop (it breaks at the first total of 0)
    eff_order = np.full(k, order)
    smooth = np.ones(k)
    floor = 100.0 * value if smooth_method == "floor" and value is not None else 0.0  # sacreBLEU: 100. * value / t
    for n in range(order):
        if smooth_method == "add-k" and n > 0:
            correct[alive, n] += value
            total[alive, n] += value
        alive &= total[:, n] != 0
        if effective_order:
            eff_order[alive] = n + 1
        t = total[:, n].astype(dtype)
        zero = alive & (correct[:, n] == 0)
        hit = alive & ~zero
        precisions[hit, n] = 100.0 * correct[hit, n].astype(dtype) / t[hit]
        if smooth_method == "exp":
            smooth[zero] *= 2
            precisions[zero, n] = 100.0 / (smooth[zero].astype(dtype) * t[zero])
        elif smooth_method == "floor":
            precisions[zero, n] = floor / t[zero]

    logs = np.full((k, order), float(LOG_ZERO))
    nonzero = precisions != 0
    logs[nonzero] = _libm_log(precisions[nonzero].astype(np.float64))
    score = np.zeros(k)
    rows = np.flatnonzero(matched)
    if len(rows):
        # Python's own sum of each row's logs (compensated since Python 3.12, as in sacreBLEU)
        log_sums = np.array([sum(r[:e]) for r, e in zip(logs[rows].tolist(), eff_order[rows].tolist())])
        score[rows] = bp[rows] * _libm_exp(log_sums / eff_order[rows])
    return {"score": score, "precisions": precisions, "bp": bp, "counts": correct, "totals": total}


class BLEU(Metric):
    """sacreBLEU's ``BLEU``: ``corpus_score``, ``sentence_score``, ``get_signature``, ``compute_bleu``.

    Tokenizers: ``13a`` (default; native), ``intl``, ``zh``, ``char``, ``none``
    (sacreBLEU's mecab and SentencePiece tokenizers are not provided).
    """

    SMOOTH_DEFAULTS = SMOOTH_DEFAULTS
    TOKENIZERS = bleu_metric.TOKENIZERS
    TOKENIZER_DEFAULT = "13a"
    _TOKENIZER_MAP = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}
    _ABBREVIATIONS = {"case": "c", "eff": "e", "tok": "tok", "smooth": "s"}

    def __init__(
        self,
        lowercase: bool = False,
        force: bool = False,
        tokenize: str | None = None,
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        max_ngram_order: int = MAX_NGRAM_ORDER,
        effective_order: bool = False,
        trg_lang: str = "",
        references: Any = None,
    ) -> None:
        super().__init__()
        if smooth_method not in SMOOTH_DEFAULTS:
            raise ValueError(f"Unknown smooth_method {smooth_method!r}; choose one of {', '.join(SMOOTH_DEFAULTS)}")
        self._force, self.trg_lang, self.lowercase = force, trg_lang, lowercase
        self.smooth_method, self.smooth_value = smooth_method, smooth_value
        self.max_ngram_order, self.effective_order = max_ngram_order, effective_order
        self.tokenize = tokenize or self._TOKENIZER_MAP.get(trg_lang, self.TOKENIZER_DEFAULT)
        if self.tokenize not in self.TOKENIZERS:
            default = "" if tokenize else f" (sacreBLEU's default for trg_lang={trg_lang!r})"
            raise ValueError(
                f"BLEU tokenizer {self.tokenize!r}{default} is not provided; choose one of {', '.join(self.TOKENIZERS)}"
            )
        self.tokenizer_signature = self.tokenize
        if references is not None:
            self._ref_cache, self._ref_cache_nrefs = self._cache_references(references)

    @staticmethod
    def compute_bleu(
        correct: Sequence[Any],
        total: Sequence[Any],
        sys_len: int,
        ref_len: int,
        smooth_method: str = "none",
        smooth_value: float | None = None,
        effective_order: bool = False,
        max_ngram_order: int = MAX_NGRAM_ORDER,
    ) -> BLEUScore:
        """BLEU from its sufficient statistics (sacreBLEU's static method, same defaults)."""
        row = [sys_len, ref_len, *correct[:max_ngram_order], *total[:max_ngram_order]]
        return _score_object(row, smooth_method, smooth_value, effective_order, max_ngram_order)

    def _prepare(self, rows: list[list[str]]) -> bleu_metric.PreparedBleuReferences:
        return bleu_metric.prepare_references(rows, tokenize=self.tokenize, lowercase=self.lowercase)

    def _statistics(self, prepared: bleu_metric.PreparedBleuReferences, hypotheses: list[str]) -> np.ndarray:
        return bleu_metric.row_statistics(
            prepared, hypotheses, tokenize=self.tokenize, lowercase=self.lowercase, max_order=self.max_ngram_order
        )

    def score_sums(self, sums: np.ndarray) -> np.ndarray:
        return bleu_from_sums(
            sums,
            smooth_method=self.smooth_method,
            smooth_value=self.smooth_value,
            effective_order=self.effective_order,
            max_ngram_order=self.max_ngram_order,
        )["score"]

    def compute_score(self, sums: Any) -> BLEUScore:
        return _score_object(
            np.asarray(sums).tolist(), self.smooth_method, self.smooth_value, self.effective_order, self.max_ngram_order
        )

    def _metric_signature(self) -> metric_signature.Signature:
        assert self.num_refs is not None
        return bleu_metric.signature(
            nrefs=self.num_refs,
            lowercase=self.lowercase,
            tokenize=self.tokenize,
            smooth=self.smooth_method,
            smooth_value=self.smooth_value,
            effective_order=self.effective_order,
        )


def _score_object(
    row: list[Any], smooth_method: str, smooth_value: float | None, effective_order: bool, order: int
) -> BLEUScore:
    """A ``BLEUScore`` from one row of plain-number sums (counts and lengths stay ints)."""
    parts = bleu_from_sums(
        np.array([row]),
        smooth_method=smooth_method,
        smooth_value=smooth_value,
        effective_order=effective_order,
        max_ngram_order=order,
    )
    counts = _plain(parts["counts"][0], row[2 : 2 + order])
    totals = _plain(parts["totals"][0], row[2 + order : 2 + 2 * order])
    return BLEUScore(
        float(parts["score"][0]),
        counts,
        totals,
        parts["precisions"][0].tolist(),
        float(parts["bp"][0]),
        int(row[0]),
        int(row[1]),
    )


def _plain(values: np.ndarray, original: list[Any]) -> list[Any]:
    """Smoothed counts as Python numbers: ints stay ints unless smoothing made them fractional."""
    out = []
    for got, was in zip(values.tolist(), original):
        out.append(int(got) if isinstance(was, int) and float(got).is_integer() else got)
    return out
