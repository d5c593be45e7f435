"""Drop-in for ``rouge_score.rouge_scorer``: change the import, keep the numbers.

    from respeval.compat import rouge_scorer
    scorer = rouge_scorer.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
    scorer.score(target, prediction)        # {type: Score(precision, recall, fmeasure)}

Values equal rouge-score 0.1.2's (same floats; ROUGE-L/Lsum of an empty text
is ``Score(0, 0, 0)`` with ints, as there).  ``score_batch`` scores many pairs
in one native call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from respeval.metrics.rouge import RougeResult, Score, rouge, validate_types

__all__ = ["RougeScorer", "Score"]

_INT_ZERO = Score(precision=0, recall=0, fmeasure=0)


class RougeScorer:
    """Same constructor and methods as rouge-score's ``RougeScorer``.

    Parameters
    ----------
    rouge_types : e.g. ``["rouge1", "rouge2", "rougeL", "rougeLsum"]``
    use_stemmer : Porter-stem tokens longer than 3 characters
    split_summaries : for rougeLsum, split sentences with ``nltk.sent_tokenize``
        instead of newlines (needs nltk with its punkt data, as rouge-score)
    tokenizer : optional object with ``tokenize(text) -> list[str]``
    """

    def __init__(
        self,
        rouge_types: Sequence[str],
        use_stemmer: bool = False,
        split_summaries: bool = False,
        tokenizer: Any = None,
    ) -> None:
        self.rouge_types = list(validate_types(rouge_types))
        self._use_stemmer = use_stemmer if tokenizer is None else False
        self._tokenizer = "rouge" if tokenizer is None else tokenizer
        self._split_summaries = split_summaries

    def _lsum_text(self, text: str) -> str:
        if not self._split_summaries:
            return text
        import nltk

        return "\n".join(nltk.sent_tokenize(text))

    def _run(self, targets: list[list[str]], predictions: list[str]) -> dict[str, RougeResult]:
        plain = [t for t in self.rouge_types if t != "rougeLsum"]
        results = {}
        kwargs = dict(tokenizer=self._tokenizer, stemmer=self._use_stemmer)
        if plain:
            results["plain"] = rouge(predictions, targets, plain, **kwargs)
        if "rougeLsum" in self.rouge_types:
            if self._split_summaries:
                predictions = [self._lsum_text(p) for p in predictions]
                targets = [[self._lsum_text(t) for t in ts] for ts in targets]
            results["rougeLsum"] = rouge(predictions, targets, ["rougeLsum"], **kwargs)
        return results

    def _row(self, results: dict[str, RougeResult], row: int) -> dict[str, Score]:
        out = {}
        for t in self.rouge_types:
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
        results = self._run(targets, predictions)
        return [self._row(results, i) for i in range(len(predictions))]
