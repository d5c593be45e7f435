"""rouge-score 0.1.2, restated readably on strings: the oracle of respeval's ROUGE.

Tests only (production runs ``respeval._core`` or its twin ``respeval._core_py``).
Every step follows ``rouge_scorer.py`` and ``tokenize.py``: the tokenizer, clipped
n-gram counts, the full LCS table with its backtrack, the summary-level union LCS,
and P/R/F.  Slow on purpose and only meant to be obviously right.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Sequence

from _helpers.reference.tokenizers import porter_stem

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_SPACES = re.compile(r"\s+")
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")


def rouge_tokens(text: str, stem: bool = False) -> list[str]:
    """rouge-score's default tokenizer (``tokenize.tokenize``)."""
    text = _NON_ALNUM.sub(" ", text.lower())
    tokens = [t for t in _SPACES.split(text) if _VALID_TOKEN.match(t)]
    if stem:
        tokens = [porter_stem(t) if len(t) > 3 else t for t in tokens]
    return tokens


def _ngrams(tokens: Sequence[Hashable], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def ngram_overlap(a: Sequence[Hashable], b: Sequence[Hashable], n: int) -> int:
    """Clipped overlap: sum over n-grams of min(count in a, count in b)."""
    ca, cb = _ngrams(a, n), _ngrams(b, n)
    return sum(min(count, ca[g]) for g, count in cb.items())


def lcs_table(ref: Sequence[Hashable], can: Sequence[Hashable]) -> list[list[int]]:
    """rouge-score's full (len(ref)+1) x (len(can)+1) LCS table."""
    table = [[0] * (len(can) + 1) for _ in range(len(ref) + 1)]
    for i in range(1, len(ref) + 1):
        for j in range(1, len(can) + 1):
            if ref[i - 1] == can[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    return table


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    if not a or not b:
        return 0
    return lcs_table(a, b)[-1][-1]


def lcs_indices(ref: Sequence[Hashable], can: Sequence[Hashable]) -> list[int]:
    """Positions in ``ref`` of one LCS, chosen by rouge-score's backtrack."""
    table = lcs_table(ref, can)
    i, j = len(ref), len(can)
    found: list[int] = []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            found.append(i - 1)
            i -= 1
            j -= 1
        elif table[i][j - 1] > table[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return found[::-1]


def summary_level_lcs_hits(ref_sents: Sequence[Sequence[Hashable]], can_sents: Sequence[Sequence[Hashable]]) -> int:
    """rouge-score's ``_summary_level_lcs`` hit count (the union-LCS with clipping)."""
    if not ref_sents or not can_sents:
        return 0
    if not sum(map(len, ref_sents)) or not sum(map(len, can_sents)):
        return 0
    remaining_ref = Counter(t for s in ref_sents for t in s)
    remaining_can = Counter(t for s in can_sents for t in s)
    hits = 0
    for ref in ref_sents:
        union = sorted(set().union(*(lcs_indices(ref, can) for can in can_sents)))
        for tok in (ref[i] for i in union):
            if remaining_can[tok] > 0 and remaining_ref[tok] > 0:
                hits += 1
                remaining_can[tok] -= 1
                remaining_ref[tok] -= 1
    return hits


def _prf(hits: int, pred_total: int, ref_total: int) -> tuple[float, float, float]:
    precision = hits / max(pred_total, 1)
    recall = hits / max(ref_total, 1)
    f = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f


def score(
    target: str, prediction: str, rouge_types: Sequence[str], use_stemmer: bool = False
) -> dict[str, tuple[float, float, float]]:
    """``RougeScorer(rouge_types, use_stemmer).score(target, prediction)`` as (P, R, F) tuples."""
    out = {}
    ref, pred = rouge_tokens(target, use_stemmer), rouge_tokens(prediction, use_stemmer)
    for rouge_type in rouge_types:
        if rouge_type == "rougeL":
            out[rouge_type] = _prf(lcs_length(ref, pred), len(pred), len(ref)) if ref and pred else (0.0, 0.0, 0.0)
        elif rouge_type == "rougeLsum":
            ref_sents = [rouge_tokens(s, use_stemmer) for s in target.split("\n")]
            pred_sents = [rouge_tokens(s, use_stemmer) for s in prediction.split("\n")]
            ref_sents = [s for s in ref_sents if s]
            pred_sents = [s for s in pred_sents if s]
            m, n = sum(map(len, ref_sents)), sum(map(len, pred_sents))
            hits = summary_level_lcs_hits(ref_sents, pred_sents)
            out[rouge_type] = _prf(hits, n, m) if m and n else (0.0, 0.0, 0.0)
        else:
            order = int(rouge_type[5:])
            ref_grams, pred_grams = _ngrams(ref, order), _ngrams(pred, order)
            hits = sum(min(count, pred_grams[g]) for g, count in ref_grams.items())
            out[rouge_type] = _prf(hits, sum(pred_grams.values()), sum(ref_grams.values()))
    return out
