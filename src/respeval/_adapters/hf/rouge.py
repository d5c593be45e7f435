"""HF ``evaluate``'s ``rouge`` metric, computed by respeval (no ``evaluate`` needed).

Same arguments, defaults and output as the Hub module: F-measures only; with
``use_aggregator=True`` (the default) each value is the ``mid`` of rouge-score's
``BootstrapAggregator`` (the median of 1,000 resample means drawn from numpy's global
RNG, so ``np.random.seed`` makes it repeat, exactly as with HF's module); with
``use_aggregator=False``, one list of per-prediction F-measures per type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from respeval._adapters.hf.inputs import as_list
from respeval.compat.rouge_score.scoring import BootstrapAggregator
from respeval.metrics.rouge import Score, rouge

CITATION = "Lin, Chin-Yew. 2004. ROUGE: A Package for Automatic Evaluation of Summaries. Text Summarization Branches Out, ACL, 74-81."
DEFAULT_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


class _CallableTokenizer:
    """A ``tokenize(text)`` object around a plain callable, as HF's module wraps ``tokenizer``."""

    def __init__(self, func: Callable[[str], list[str]]) -> None:
        self.func = func

    def tokenize(self, text: str) -> list[str]:
        return self.func(text)


def compute(
    predictions: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]],
    rouge_types: Sequence[str] | None = None,
    use_aggregator: bool = True,
    use_stemmer: bool = False,
    tokenizer: Callable[[str], list[str]] | None = None,
) -> dict[str, Any]:
    """ROUGE F-measures, as ``evaluate.load("rouge").compute(...)``.

    Args:
        predictions: one str per prediction.
        references: one str per prediction, or one list of str (several references: per
            type, the one with the highest F counts, as rouge-score's ``score_multi``).
        rouge_types: ``rouge1``..``rouge9``, ``rougeL``, ``rougeLsum`` (newline-split
            sentences); default ``["rouge1", "rouge2", "rougeL", "rougeLsum"]``.
        use_aggregator: one bootstrap ``mid`` F per type (default), or per-prediction lists.
        use_stemmer: Porter-stem tokens, as rouge-score's ``use_stemmer``.
        tokenizer: a callable ``text -> tokens`` replacing rouge-score's tokenizer.

    Returns:
        ``{type: F}`` (numpy float64, the aggregated value) or ``{type: [F, ...]}``.
    """
    types = list(DEFAULT_TYPES if rouge_types is None else rouge_types)
    preds = as_list(predictions, "predictions")
    refs = as_list(references, "references")
    if not preds and not refs:
        raise ValueError("rouge: no predictions to score")
    tok: Any = "rouge" if tokenizer is None else _CallableTokenizer(tokenizer)
    result = rouge(preds, refs, types, tokenizer=tok, stemmer=use_stemmer)
    if not use_aggregator:
        return {t: result[f"{t}_f"].tolist() for t in types}
    aggregator = BootstrapAggregator()
    columns = [(t, result[f"{t}_p"].tolist(), result[f"{t}_r"].tolist(), result[f"{t}_f"].tolist()) for t in types]
    for i in range(len(preds)):
        aggregator.add_scores({t: Score(p[i], r[i], f[i]) for t, p, r, f in columns})
    return {t: agg.mid.fmeasure for t, agg in aggregator.aggregate().items()}
