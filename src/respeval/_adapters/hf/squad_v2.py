"""HF ``evaluate``'s ``squad_v2`` metric, computed by respeval (no ``evaluate`` needed).

Same inputs and output as the Hub module, which wraps the official evaluate-v2.0 script:
``exact``, ``f1``, ``total``, then ``HasAns_*`` and ``NoAns_*`` (when such questions exist),
and the no-answer threshold search ``best_exact``, ``best_exact_thresh``, ``best_f1``,
``best_f1_thresh``.  No-answer probabilities are rounded to float32, as the Hub module's
``datasets`` features store them, so thresholds and comparisons are the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from respeval._adapters.hf.inputs import as_list
from respeval._adapters.hf.squad import answer_texts, prediction_field, reference_ids
from respeval.metrics.match import squad

CITATION = "Rajpurkar, Jia, Liang. 2018. Know What You Don't Know: Unanswerable Questions for SQuAD. ACL 2018."


def _eval_dict(exact: dict[str, float], f1: dict[str, float], qids: Sequence[str]) -> dict[str, Any]:
    total = len(qids)
    return {
        "exact": 100.0 * sum(exact[q] for q in qids) / total,
        "f1": 100.0 * sum(f1[q] for q in qids) / total,
        "total": total,
    }


def _best_threshold(
    texts: Mapping[str, str],
    raw: Mapping[str, float],
    no_answer: Mapping[str, float],
    has_answer: Mapping[str, bool],
) -> tuple[float, float]:
    """The official search: abstain on every question up to a no-answer probability, keep the best total."""
    score: float = sum(1 for v in has_answer.values() if not v)
    best, best_thresh = score, 0.0
    for qid in sorted(no_answer, key=lambda k: no_answer[k]):
        if qid not in raw:
            continue
        if has_answer[qid]:
            score += raw[qid]
        elif texts[qid]:
            score -= 1
        if score > best:
            best, best_thresh = score, no_answer[qid]
    return 100.0 * best / len(raw), best_thresh


def compute(
    predictions: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    no_answer_threshold: float = 1.0,
) -> dict[str, Any]:
    """SQuAD v2.0 scores, as ``evaluate.load("squad_v2").compute(...)``.

    Args:
        predictions: ``[{"id": ..., "prediction_text": ..., "no_answer_probability": ...}, ...]``
            (an empty ``prediction_text`` means "no answer").
        references: ``[{"id": ..., "answers": {"text": [...], "answer_start": [...]}}, ...]``
            (an empty ``text`` list marks an unanswerable question).
        no_answer_threshold: a prediction whose no-answer probability is above this counts as
            "no answer" (default 1.0: never).

    Returns:
        ``exact``, ``f1``, ``total``, ``HasAns_*``/``NoAns_*``, ``best_exact``,
        ``best_exact_thresh``, ``best_f1``, ``best_f1_thresh``.
    """
    preds_list = as_list(predictions, "predictions")
    texts = prediction_field(preds_list, "prediction_text", metric="squad_v2")
    no_answer = {
        qid: float(np.float32(p))
        for qid, p in prediction_field(preds_list, "no_answer_probability", metric="squad_v2").items()
    }
    refs = as_list(references, "references")
    ids = reference_ids(refs, metric="squad_v2")
    golds_by_id: dict[str, list[str]] = {}
    for i, (qid, ref) in enumerate(zip(ids, refs)):
        golds_by_id[qid] = answer_texts(ref, i)
    missing = [qid for qid in golds_by_id if qid not in texts]
    if missing:
        raise ValueError(
            f"squad_v2: {len(missing)} question(s) have no prediction (first: {missing[0]!r}); the official v2.0 "
            "script cannot score them (HF's module fails with a KeyError): predict '' with a high "
            "no_answer_probability for questions you abstain on"
        )
    if not golds_by_id:
        raise ValueError("squad_v2: no references to score against")
    qids = list(golds_by_id)
    has_answer = {qid: bool(golds) for qid, golds in golds_by_id.items()}
    result = squad([texts[q] for q in qids], [golds_by_id[q] for q in qids], version="v2")
    exact_raw = dict(zip(qids, result["squad_em"].tolist()))
    f1_raw = dict(zip(qids, result["squad_f1"].tolist()))

    def thresholded(raw: dict[str, float]) -> dict[str, float]:
        return {q: (float(not has_answer[q]) if no_answer[q] > no_answer_threshold else s) for q, s in raw.items()}

    exact, f1 = thresholded(exact_raw), thresholded(f1_raw)
    out = _eval_dict(exact, f1, qids)
    for prefix, subset in (
        ("HasAns", [q for q in qids if has_answer[q]]),
        ("NoAns", [q for q in qids if not has_answer[q]]),
    ):
        if subset:
            out.update({f"{prefix}_{k}": v for k, v in _eval_dict(exact, f1, subset).items()})
    out["best_exact"], out["best_exact_thresh"] = _best_threshold(texts, exact_raw, no_answer, has_answer)
    out["best_f1"], out["best_f1_thresh"] = _best_threshold(texts, f1_raw, no_answer, has_answer)
    return out
