"""HF ``evaluate``'s ``squad`` metric (SQuAD v1.1), computed by respeval (no ``evaluate`` needed).

Same inputs and output as the Hub module, which wraps the official evaluate-v1.1 script:
``{"exact_match", "f1"}`` on 0-100, every reference question counted, a question without a
prediction scored 0 (with a warning, where the script prints to stderr).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from respeval._adapters.hf.inputs import as_list
from respeval.metrics.match import squad

CITATION = (
    "Rajpurkar, Zhang, Lopyrev, Liang. 2016. SQuAD: 100,000+ Questions for Machine Comprehension of Text. EMNLP 2016."
)


def answer_texts(reference: Mapping[str, Any], index: int) -> list[str]:
    """The gold answer texts of one reference: ``answers`` as ``{"text": [...], ...}`` (the
    ``datasets`` layout) or as a list of ``{"text": ...}`` records."""
    try:
        answers = reference["answers"]
    except (KeyError, TypeError):
        raise ValueError(
            f"references[{index}] has no 'answers' field (expected {{'id': ..., 'answers': ...}})"
        ) from None
    if isinstance(answers, Mapping):
        texts = answers.get("text")
        if texts is None:
            raise ValueError(f"references[{index}]['answers'] has no 'text' list")
        return [texts] if isinstance(texts, str) else list(texts)
    return [a["text"] if isinstance(a, Mapping) else a for a in answers]


def reference_ids(references: list, *, metric: str) -> list[str]:
    out = []
    for i, ref in enumerate(references):
        if not isinstance(ref, Mapping) or "id" not in ref:
            raise ValueError(f"{metric}: references[{i}] needs an 'id' field")
        out.append(ref["id"])
    return out


def prediction_field(predictions: list, field: str, *, metric: str) -> dict[str, Any]:
    """``{id: record[field]}`` over the predictions (a repeated id keeps its last value, as a dict does)."""
    out = {}
    for i, pred in enumerate(predictions):
        if not isinstance(pred, Mapping) or "id" not in pred or field not in pred:
            raise ValueError(f"{metric}: predictions[{i}] needs 'id' and {field!r} fields")
        out[pred["id"]] = pred[field]
    return out


def compute(predictions: Sequence[Mapping[str, Any]], references: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """SQuAD v1.1 EM and F1 (0-100), as ``evaluate.load("squad").compute(...)``.

    Args:
        predictions: ``[{"id": ..., "prediction_text": ...}, ...]``.
        references: ``[{"id": ..., "answers": {"text": [...], "answer_start": [...]}}, ...]``
            (``answer_start`` is not used).

    Returns:
        ``{"exact_match": ..., "f1": ...}``: sums over the references, divided by their number.
    """
    preds = prediction_field(as_list(predictions, "predictions"), "prediction_text", metric="squad")
    refs = as_list(references, "references")
    ids = reference_ids(refs, metric="squad")
    if not ids:
        raise ValueError("squad: no references to score against")
    golds = [answer_texts(ref, i) for i, ref in enumerate(refs)]
    missing = [qid for qid in ids if qid not in preds]
    if missing:
        warnings.warn(
            f"squad: {len(missing)} question(s) without a prediction score 0 (first: {missing[0]!r})", stacklevel=2
        )
    result = squad([preds.get(qid) for qid in ids], golds, version="v1")
    exact = int(result["squad_em"].sum())
    # the official script adds the per-question F1 one by one: the same order and roundings
    f1 = 0.0
    for value in result["squad_f1"].tolist():
        f1 += value
    return {"exact_match": 100.0 * exact / len(ids), "f1": 100.0 * f1 / len(ids)}
