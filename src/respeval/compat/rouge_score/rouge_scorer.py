"""Drop-in for ``rouge_score.rouge_scorer``: change the import, keep the numbers.

    from respeval.compat.rouge_score import rouge_scorer   # or: from respeval.compat import rouge_scorer
    scorer = rouge_scorer.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
    scorer.score(target, prediction)        # {type: Score(precision, recall, fmeasure)}

Values equal rouge-score 0.1.2's (same floats; ROUGE-L/Lsum of an empty text is
``Score(0, 0, 0)`` with ints, as there). ``score_batch`` scores many pairs in one native
call. Types are checked when scoring, as rouge-score does (``RougeScorer(["rougex"])``
constructs, ``score`` raises ``ValueError``).

With the default tokenizer (no ``tokenizer``, or a plain ``tokenizers.DefaultTokenizer``)
the native core tokenizes. Any other tokenizer is called from Python exactly as rouge-score
calls it (the whole text for ROUGE-N/L, each sentence for ROUGE-Lsum), and its tokens (str)
are scored by the native kernels.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from respeval.compat.rouge_score import scoring, tokenizers
from respeval.metrics.rouge import RougeResult, Score, rouge

__all__ = ["RougeScorer", "Score"]

_INT_ZERO = Score(precision=0, recall=0, fmeasure=0)
_ROUGE_N = re.compile(r"rouge[0-9]$")


def _checked_types(rouge_types: Sequence[str]) -> list[str]:
    """rouge-score's checks and messages; repeated types are scored once."""
    out: list[str] = []
    for rouge_type in rouge_types:
        if rouge_type not in ("rougeL", "rougeLsum"):
            if not _ROUGE_N.match(str(rouge_type)):
                raise ValueError(f"Invalid rouge type: {rouge_type}")
            if int(rouge_type[5:]) <= 0:
                raise ValueError(f"rougen requires positive n: {rouge_type}")
        if rouge_type not in out:
            out.append(rouge_type)
    return out


class _Pretokenized:
    """Feeds a custom tokenizer's tokens through respeval's ROUGE unchanged.

    respeval's ROUGE tokenizes a text line by line (a newline ends a ROUGE-Lsum sentence)
    and calls a custom tokenizer once per line. Each text given to it here is a key, or
    newline-joined keys, of token lists made the way rouge-score makes them.
    """

    def __init__(self, tokenizer: Any, split_summaries: bool) -> None:
        self._tokenizer = tokenizer
        self._split_summaries = split_summaries
        self._tokens: dict[str, list[str]] = {"": []}
        # tokens may be any hashable (rouge-score counts them in dicts): equal ones share a name
        self._names: dict[Any, str] = {}

    def _key(self, tokens: list[Any]) -> str:
        key = f"t{len(self._tokens)}"
        names = self._names
        self._tokens[key] = [names.setdefault(t, str(len(names))) for t in tokens]
        return key

    def whole(self, text: str) -> str:
        return self._key(self._tokenizer.tokenize(text))

    def sentences(self, text: str) -> str:
        return "\n".join(self._key(self._tokenizer.tokenize(s)) for s in _sentences(text, self._split_summaries))

    def tokenize(self, key: str) -> list[str]:
        return self._tokens[key]


def _sentences(text: str, split_summaries: bool) -> list[str]:
    """rouge-score's ROUGE-Lsum sentences: NLTK's ``sent_tokenize`` or newlines; empty ones dropped."""
    if split_summaries:
        import nltk  # only for split_summaries (needs its punkt data)

        parts = nltk.sent_tokenize(text)
    else:
        parts = text.split("\n")
    return [s for s in parts if len(s)]


class RougeScorer(scoring.BaseScorer):
    """Same constructor and methods as rouge-score's ``RougeScorer``.

    Parameters
    ----------
    rouge_types : e.g. ``["rouge1", "rouge2", "rougeL", "rougeLsum"]``
    use_stemmer : Porter-stem tokens longer than 3 characters (default tokenizer only)
    split_summaries : for rougeLsum, split sentences with ``nltk.sent_tokenize``
        instead of newlines (needs nltk with its punkt data, as rouge-score)
    tokenizer : a ``tokenizers.Tokenizer`` (or any object with ``tokenize(text) -> list[str]``)
    """

    def __init__(
        self,
        rouge_types: Sequence[str],
        use_stemmer: bool = False,
        split_summaries: bool = False,
        tokenizer: Any = None,
    ) -> None:
        self.rouge_types = rouge_types
        self._types: list[str] = []
        self._tokenizer = tokenizer if tokenizer else tokenizers.DefaultTokenizer(use_stemmer)
        self._split_summaries = split_summaries

    def _native_lsum_text(self, text: str) -> str:
        if not self._split_summaries:
            return text
        # a sentence may hold newlines; they separate words, not sentences, inside it
        return "\n".join(s.replace("\n", " ") for s in _sentences(text, True))

    def _run(self, targets: list[list[str]], predictions: list[str]) -> dict[str, RougeResult]:
        """ROUGE of each prediction against its row's targets, per group of types (plain / rougeLsum)."""
        types = self._types = _checked_types(self.rouge_types)
        plain = [t for t in types if t != "rougeLsum"]
        lsum = "rougeLsum" in types
        results = {}
        tokenizer = self._tokenizer
        if type(tokenizer) is tokenizers.DefaultTokenizer:
            options: dict[str, Any] = dict(tokenizer="rouge", stemmer=tokenizer.use_stemmer)
            # one str per row takes the single-reference fast path
            refs: list[Any] = [ts[0] for ts in targets] if all(len(ts) == 1 for ts in targets) else targets
            if plain:
                results["plain"] = rouge(predictions, refs, plain, **options)
            if lsum:
                lsum_refs = [
                    self._native_lsum_text(r) if isinstance(r, str) else [self._native_lsum_text(t) for t in r]
                    for r in refs
                ]
                results["rougeLsum"] = rouge(
                    [self._native_lsum_text(p) for p in predictions], lsum_refs, ["rougeLsum"], **options
                )
            return results
        keys = _Pretokenized(tokenizer, self._split_summaries)
        whole: list[tuple[list[str], str]] = []
        split: list[tuple[list[str], str]] = []
        for target_texts, prediction in zip(targets, predictions):
            # the calls rouge-score makes, in its order: whole texts, then sentences
            if plain:
                whole.append(([keys.whole(t) for t in target_texts], keys.whole(prediction)))
            if lsum:
                split.append(([keys.sentences(t) for t in target_texts], keys.sentences(prediction)))
        if plain:
            results["plain"] = rouge([p for _, p in whole], [t for t, _ in whole], plain, tokenizer=keys)
        if lsum:
            results["rougeLsum"] = rouge([p for _, p in split], [t for t, _ in split], ["rougeLsum"], tokenizer=keys)
        return results

    def _row(self, results: dict[str, RougeResult], row: int) -> dict[str, Score]:
        out = {}
        for t in self._types:  # as checked by the _run that made ``results``
            res = results["rougeLsum" if t == "rougeLsum" else "plain"]
            empty = res.pred_lengths[row] == 0 or res.ref_lengths[t][row] == 0
            if t in ("rougeL", "rougeLsum") and empty:
                out[t] = _INT_ZERO
            else:
                out[t] = res.score(t, row)
        return out

    def score(self, target: str, prediction: str) -> dict[str, Score]:
        """Scores of ``prediction`` against ``target`` (note the order: target first)."""
        return self._row(self._run([[target]], [prediction]), 0)

    def score_multi(self, targets: Sequence[str], prediction: str) -> dict[str, Score]:
        """Per type, the score against the target with the highest F (first on ties)."""
        targets = list(targets)
        if not targets:
            raise ValueError("score_multi needs at least one target")
        return self._row(self._run([targets], [prediction]), 0)

    def score_batch(self, targets: Sequence[str], predictions: Sequence[str]) -> list[dict[str, Score]]:
        """``[score(t, p) for t, p in zip(targets, predictions)]`` in one native pass.

        Unlike ``zip``, mismatched lengths raise instead of truncating.
        """
        targets = list(targets)
        predictions = list(predictions)
        if len(targets) != len(predictions):
            raise ValueError(f"{len(targets)} targets but {len(predictions)} predictions")
        results = self._run([[t] for t in targets], predictions)
        return [self._row(results, i) for i in range(len(predictions))]
