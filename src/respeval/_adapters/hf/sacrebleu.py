"""HF ``evaluate``'s ``sacrebleu`` metric, computed by respeval (no ``evaluate`` needed).

Corpus BLEU with sacreBLEU 2.6's numbers and the Hub module's arguments, defaults and
output keys: ``score``, ``counts``, ``totals``, ``precisions``, ``bp``, ``sys_len``, ``ref_len``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from respeval._adapters.hf.inputs import as_list, same_count_references
from respeval.metrics.bleu import TOKENIZERS, bleu

CITATION = "Post, Matt. 2018. A Call for Clarity in Reporting BLEU Scores. WMT 2018, 186-191."


def compute(
    predictions: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]],
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    force: bool = False,
    lowercase: bool = False,
    tokenize: str | None = None,
    use_effective_order: bool = False,
) -> dict[str, Any]:
    """Corpus BLEU, as ``evaluate.load("sacrebleu").compute(...)``.

    Args:
        predictions: one detokenized str per segment.
        references: per prediction one str or a list of str; every prediction needs the
            same number of references (as HF's module).
        smooth_method: ``exp`` (default), ``floor``, ``add-k`` or ``none``.
        smooth_value: for ``floor`` (default 0.1) and ``add-k`` (default 1).
        force: accepted for compatibility; it only silences sacreBLEU's warning about
            tokenized input and changes no number.
        lowercase: case-insensitive BLEU.
        tokenize: ``13a`` (the default when None), ``intl``, ``zh``, ``char`` or ``none``.
        use_effective_order: drop n-gram orders without matches (for sentence-level use).

    Returns:
        ``{"score", "counts", "totals", "precisions", "bp", "sys_len", "ref_len"}``.
    """
    del force  # a warning switch in sacreBLEU; no effect on the numbers
    preds = as_list(predictions, "predictions")
    refs = same_count_references(preds, references, "sacrebleu")
    tokenizer = tokenize or "13a"
    if tokenizer not in TOKENIZERS:
        raise ValueError(
            f"sacrebleu: tokenize={tokenize!r} is not available in respeval; use one of {', '.join(TOKENIZERS)} "
            "(the MeCab, SentencePiece and FLORES tokenizers need sacreBLEU itself)"
        )
    result = bleu(
        preds,
        refs,
        tokenizer=tokenizer,
        lowercase=lowercase,
        smooth=smooth_method,
        smooth_value=smooth_value,
        effective_order=use_effective_order,
    )
    corpus = result.corpus
    return {
        "score": corpus.score,
        "counts": corpus.counts,
        "totals": corpus.totals,
        "precisions": corpus.precisions,
        "bp": corpus.bp,
        "sys_len": corpus.sys_len,
        "ref_len": corpus.ref_len,
    }
