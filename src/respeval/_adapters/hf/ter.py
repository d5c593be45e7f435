"""HF ``evaluate``'s ``ter`` metric, computed by respeval (no ``evaluate`` needed).

Corpus TER with sacreBLEU 2.6's numbers and the Hub module's arguments, defaults and
output keys: ``score``, ``num_edits``, ``ref_length``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from respeval._adapters.hf.inputs import as_list, same_count_references
from respeval.metrics.ter import ter

CITATION = "Snover, Dorr, Schwartz, Micciulla, Makhoul. 2006. A Study of Translation Edit Rate with Targeted Human Annotation. AMTA 2006, 223-231."


def compute(
    predictions: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]],
    normalized: bool = False,
    ignore_punct: bool = False,
    support_zh_ja_chars: bool = False,
    case_sensitive: bool = False,
) -> dict[str, Any]:
    """Corpus TER, as ``evaluate.load("ter").compute(...)``.

    Args:
        predictions: one str per segment.
        references: per prediction one str or a list of str (the same number for each).
        normalized: tercom's tokenization and normalization.
        ignore_punct: remove punctuation (sacreBLEU's ``no_punct``).
        support_zh_ja_chars: Chinese and Japanese characters in normalization (``asian_support``).
        case_sensitive: keep case (default: lowercase everything).

    Returns:
        ``{"score", "num_edits", "ref_length"}``.
    """
    preds = as_list(predictions, "predictions")
    refs = same_count_references(preds, references, "ter")
    result = ter(
        preds,
        refs,
        normalized=normalized,
        no_punct=ignore_punct,
        asian_support=support_zh_ja_chars,
        case_sensitive=case_sensitive,
    )
    corpus = result.corpus
    return {"score": corpus.score, "num_edits": corpus.num_edits, "ref_length": corpus.ref_length}
