"""HF ``evaluate``'s ``chrf`` metric, computed by respeval (no ``evaluate`` needed).

Corpus chrF / chrF++ with sacreBLEU 2.6's numbers and the Hub module's arguments,
defaults and output keys: ``score``, ``char_order``, ``word_order``, ``beta``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from respeval._adapters.hf.inputs import as_list, same_count_references
from respeval.metrics.chrf import chrf

CITATION = "Popovic, Maja. 2015. chrF: character n-gram F-score for automatic MT evaluation. WMT 2015, 392-395. Popovic, Maja. 2017. chrF++: words helping character n-grams. WMT 2017, 612-618."


def compute(
    predictions: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]],
    char_order: int = 6,
    word_order: int = 0,
    beta: int = 2,
    lowercase: bool = False,
    whitespace: bool = False,
    eps_smoothing: bool = False,
) -> dict[str, Any]:
    """Corpus chrF (``word_order=0``) or chrF++ (``word_order=2``), as ``evaluate.load("chrf").compute(...)``.

    Args:
        predictions: one str per segment.
        references: per prediction one str or a list of str (the same number for each).
        char_order: character n-gram order (6).
        word_order: word n-gram order (0; 2 is chrF++).
        beta: weight of recall relative to precision (2).
        lowercase: case-insensitive.
        whitespace: keep whitespace in character n-grams.
        eps_smoothing: chrF++.py / NLTK / Moses averaging instead of sacreBLEU's effective order.

    Returns:
        ``{"score", "char_order", "word_order", "beta"}``.
    """
    preds = as_list(predictions, "predictions")
    refs = same_count_references(preds, references, "chrf")
    result = chrf(
        preds,
        refs,
        char_order=char_order,
        word_order=word_order,
        beta=beta,
        lowercase=lowercase,
        whitespace=whitespace,
        eps_smoothing=eps_smoothing,
    )
    return {"score": result.score, "char_order": char_order, "word_order": word_order, "beta": beta}
