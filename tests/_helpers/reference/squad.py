"""Reference (pure-Python) exact match and token F1: the official SQuAD scripts and friends.

SQuAD v1.1 (``evaluate-v1.1.py``) and v2.0 (``evaluate-v2.0.py``) are reproduced exactly:

* :func:`normalize_answer`: lowercase, delete ASCII punctuation (``string.punctuation``;
  Unicode punctuation such as curly quotes is kept), replace the words a/an/the by a
  space, collapse whitespace.
* v1.1 F1 returns 0 when nothing matches, which includes two empty answers; v2.0 F1
  returns ``int(pred_tokens == gold_tokens)`` when either side is empty, so two empty
  answers score 1.
* Per question the maximum over the gold answers is taken; corpus values are on the 0-100
  scale. v1.1 counts a question without prediction as 0 (it stays in the total); v2.0
  drops gold answers that normalise to empty (using ``[""]`` if none remain).

Beyond SQuAD, three simpler matchers with their own names:

* :func:`exact_match`: raw string equality.
* :func:`normalized_match`: equality after :func:`normalize_unicode` (lowercase, delete
  every Unicode punctuation character (category P*), collapse whitespace).
* :func:`token_f1`: bag-of-tokens F1 with v2.0-style empty handling.
"""

from __future__ import annotations

import json
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Union

__all__ = [
    "evaluate_v1",
    "evaluate_v2",
    "exact_match",
    "load_gold_jsonl",
    "load_official_dataset",
    "max_over_ground_truths",
    "normalize_answer",
    "normalize_unicode",
    "normalized_match",
    "squad_exact_match",
    "squad_f1",
    "token_f1",
]

_ASCII_PUNCTUATION = frozenset(string.punctuation)
# `\b` is Unicode-aware for str patterns, so "a" inside "naïve a" is a word of its own.
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)

Golds = Union[Mapping[str, Sequence[str]], Iterable[tuple[str, Sequence[str]]]]
Score = Union[bool, int, float]


# --- SQuAD normalisation and per-answer metrics ------------------------------------------


@lru_cache(maxsize=2**16)  # gold answers are normalised once per prediction file
def normalize_answer(text: str) -> str:
    """Normalise an answer like the official SQuAD scripts.

    Parameters
    ----------
    text : str
        An answer.

    Returns
    -------
    str
        Lowercased, ASCII punctuation deleted, articles removed, whitespace collapsed.

    Examples
    --------
    >>> normalize_answer("The  Cat's hat!")
    'cats hat'
    >>> normalize_answer("“Paris”")
    '“paris”'
    """
    text = text.lower()
    text = "".join(char for char in text if char not in _ASCII_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def squad_exact_match(prediction: str, ground_truth: str) -> bool:
    """Whether the normalised answers are equal (SQuAD EM for one gold answer)."""
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def _bag_f1(pred_tokens: Sequence[str], gold_tokens: Sequence[str]) -> int | float:
    """F1 of two token bags; ``0`` (an int, as in the scripts) when nothing overlaps."""
    overlap = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if overlap == 0:
        return 0
    precision = 1.0 * overlap / len(pred_tokens)
    recall = 1.0 * overlap / len(gold_tokens)
    return (2 * precision * recall) / (precision + recall)


def squad_f1(prediction: str, ground_truth: str, *, version: str = "v1") -> int | float:
    """SQuAD token F1 of one prediction against one gold answer.

    Parameters
    ----------
    prediction, ground_truth : str
        The answers.
    version : {"v1", "v2"}
        ``"v1"``: 0 when no token overlaps, even if both are empty. ``"v2"``: if either
        side has no tokens, 1 when both are empty and 0 otherwise.

    Returns
    -------
    int or float
        In [0, 1]; the int 0 or 1 in the early-exit cases, like the official scripts.
    """
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(ground_truth).split()
    if version == "v2":
        if not pred_tokens or not gold_tokens:
            return int(pred_tokens == gold_tokens)
    elif version != "v1":
        raise ValueError(f"version must be 'v1' or 'v2', not {version!r}")
    return _bag_f1(pred_tokens, gold_tokens)


def max_over_ground_truths(metric: Callable[[str, str], Score], prediction: str, ground_truths: Sequence[str]) -> Score:
    """Best score of ``prediction`` over the gold answers.

    Raises
    ------
    ValueError
        If there is no gold answer (``max`` of an empty sequence, as in the scripts).
    """
    return max(metric(prediction, truth) for truth in ground_truths)


# --- corpus evaluation ---------------------------------------------------------------------


def _gold_items(golds: Golds) -> list[tuple[str, Sequence[str]]]:
    """(question id, gold answers) pairs in order."""
    if isinstance(golds, Mapping):
        return list(golds.items())
    return list(golds)


def evaluate_v1(golds: Golds, predictions: Mapping[str, str]) -> dict[str, float]:
    """Corpus EM and F1 exactly as ``evaluate-v1.1.py``.

    Parameters
    ----------
    golds : mapping or iterable of (id, answers)
        Every question with all its gold answer texts, in dataset order.
    predictions : mapping
        Question id to predicted answer. Missing questions score 0 and stay in the
        total; predictions for unknown ids are ignored.

    Returns
    -------
    dict
        ``{"exact_match": ..., "f1": ...}`` on the 0-100 scale.
    """
    items = _gold_items(golds)
    total = len(items)
    exact = f1 = 0.0
    # A running `+=` (not sum()), like the script: the float result does not depend on
    # the Python version's sum() algorithm.
    for qid, answers in items:
        if qid not in predictions:
            continue
        prediction = predictions[qid]
        exact += max_over_ground_truths(squad_exact_match, prediction, answers)
        f1 += max_over_ground_truths(squad_f1, prediction, answers)
    return {"exact_match": 100.0 * exact / total, "f1": 100.0 * f1 / total}


def _v2_scores(
    items: Sequence[tuple[str, Sequence[str]]], predictions: Mapping[str, str]
) -> tuple[dict[str, int | float], dict[str, int | float]]:
    """Per-question v2 EM and F1 (the script's ``get_raw_scores``)."""
    exact: dict[str, int | float] = {}
    f1: dict[str, int | float] = {}
    for qid, answers in items:
        gold = [answer for answer in answers if normalize_answer(answer)] or [""]
        if qid not in predictions:
            continue
        prediction = predictions[qid]
        exact[qid] = max(int(squad_exact_match(prediction, answer)) for answer in gold)
        f1[qid] = max(squad_f1(prediction, answer, version="v2") for answer in gold)
    return exact, f1


def _mean_100(scores: Mapping[str, int | float], qids: Sequence[str]) -> float:
    """``100 * sum / count`` over the given questions, summed with ``sum()`` as the script does."""
    return 100.0 * sum(scores[qid] for qid in qids) / len(qids)


def evaluate_v2(
    golds: Golds,
    predictions: Mapping[str, str],
    *,
    na_probs: Mapping[str, float] | None = None,
    na_prob_thresh: float = 1.0,
) -> dict[str, float]:
    """Corpus EM and F1 exactly as ``evaluate-v2.0.py`` (without the best-threshold search).

    Parameters
    ----------
    golds : mapping or iterable of (id, answers)
        Every question with its gold answers; an empty list marks an unanswerable one.
    predictions : mapping
        Question id to answer (``""`` = no answer). Every question needs one: the
        official script fails on missing predictions when it splits HasAns/NoAns.
    na_probs : mapping, optional
        No-answer probabilities; a question with probability above ``na_prob_thresh``
        is scored as "predicted no answer". Default: 0 for all (no effect).
    na_prob_thresh : float
        The threshold.

    Returns
    -------
    dict
        ``exact``, ``f1``, ``total`` and, for the non-empty subsets, ``HasAns_exact``,
        ``HasAns_f1``, ``HasAns_total``, ``NoAns_exact``, ``NoAns_f1``, ``NoAns_total``.
    """
    items = _gold_items(golds)
    missing = [qid for qid, _ in items if qid not in predictions]
    if missing:
        raise ValueError(f"{len(missing)} questions have no prediction, e.g. {missing[0]!r}")
    has_answer = {qid: bool(answers) for qid, answers in items}
    exact, f1 = _v2_scores(items, predictions)

    if na_probs is not None:
        for scores in (exact, f1):
            for qid in scores:
                if na_probs[qid] > na_prob_thresh:
                    scores[qid] = float(not has_answer[qid])

    qids = list(exact)
    result: dict[str, float] = {
        "exact": _mean_100(exact, qids),
        "f1": _mean_100(f1, qids),
        "total": len(qids),
    }
    for name, wanted in (("HasAns", True), ("NoAns", False)):
        subset = [qid for qid, has in has_answer.items() if has is wanted]
        if subset:
            result[f"{name}_exact"] = _mean_100(exact, subset)
            result[f"{name}_f1"] = _mean_100(f1, subset)
            result[f"{name}_total"] = len(subset)
    return result


# --- loaders ----------------------------------------------------------------------------------


def load_gold_jsonl(path: str | Path) -> dict[str, list[str]]:
    """Read one-question-per-line gold answers: ``{"id": ..., "answers": [...]}``."""
    golds: dict[str, list[str]] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                golds[record["id"]] = list(record["answers"])
    return golds


def load_official_dataset(path: str | Path) -> dict[str, list[str]]:
    """Read gold answers from the official nested SQuAD JSON (``data/paragraphs/qas``)."""
    with open(path, encoding="utf-8") as handle:
        dataset = json.load(handle)
    return {
        qa["id"]: [answer["text"] for answer in qa["answers"]]
        for article in dataset["data"]
        for paragraph in article["paragraphs"]
        for qa in paragraph["qas"]
    }


# --- simpler matchers --------------------------------------------------------------------------


def exact_match(prediction: str, reference: str) -> bool:
    """Raw string equality (no normalisation at all)."""
    return prediction == reference


def normalize_unicode(text: str) -> str:
    """Lowercase, delete Unicode punctuation (categories Pc Pd Ps Pe Pi Pf Po), collapse whitespace.

    Unlike :func:`normalize_answer`, curly quotes, dashes and CJK punctuation are removed
    too, articles are kept, and symbols (``$``, ``+``) are kept.

    Examples
    --------
    >>> normalize_unicode("  “Paris”—France!  ")
    'parisfrance'
    """
    text = text.lower()
    text = "".join(char for char in text if not unicodedata.category(char).startswith("P"))
    return " ".join(text.split())


def normalized_match(prediction: str, reference: str) -> bool:
    """Equality after :func:`normalize_unicode`."""
    return normalize_unicode(prediction) == normalize_unicode(reference)


def token_f1(
    prediction: str,
    reference: str,
    *,
    normalize: Callable[[str], str] = normalize_answer,
) -> float:
    """Bag-of-tokens F1 over ``normalize(text).split()``.

    Parameters
    ----------
    prediction, reference : str
        The texts.
    normalize : callable
        Text normaliser; SQuAD's :func:`normalize_answer` by default.

    Returns
    -------
    float
        In [0, 1]. If either side has no tokens: 1.0 when both are empty, else 0.0
        (SQuAD v2.0 / torchmetrics convention). Otherwise equal to :func:`squad_f1`.
    """
    pred_tokens = normalize(prediction).split()
    ref_tokens = normalize(reference).split()
    if not pred_tokens or not ref_tokens:
        return float(pred_tokens == ref_tokens)
    return float(_bag_f1(pred_tokens, ref_tokens))
