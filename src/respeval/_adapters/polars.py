"""respeval's metrics as polars expressions: ``pl.col("response").respeval.rouge_l("reference")``.

Importing ``respeval.polars`` registers the ``respeval`` namespace on ``pl.Expr``.  Each
method returns an expression that hands whole column batches (Arrow buffers, via
``map_batches``) to respeval, so no Python code runs per row:

* per row (elementwise): ``rouge_n(ref, n)``, ``rouge_l(ref)``, ``rouge(ref, types)`` (a struct
  of ``{type}_p/_r/_f``), ``sentence_bleu(ref)``, ``chrf(ref)``, ``exact_match(ref)``,
  ``squad_em(golds)``, ``squad_f1(golds)``, ``bleu_stats(ref)`` (a struct of BLEU's statistics);
* per column or group (aggregations): ``corpus_bleu(ref)``, ``corpus_chrf(ref)``, computed
  from summed statistics exactly as ``respeval.bleu(...).score`` / ``respeval.chrf(...).score``,
  so ``df.group_by("system").agg(pl.col("hyp").respeval.corpus_bleu("ref"))`` works.

``ref`` is a column name or an expression; a ``List(String)`` column gives several references
per row (the best one counts, as in ``respeval.rouge``/``bleu``/``chrf``).  A row whose
prediction or reference is null gives null (and is left out of corpus scores).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from respeval._adapters import require
from respeval._renamed import renamed_arguments
from respeval.metrics.bleu import bleu
from respeval.metrics.chrf import chrf
from respeval.metrics.match import exact_match, squad
from respeval.metrics.rouge import DEFAULT_TYPES, rouge, validate_types

pl: Any = require("polars", "polars", purpose="respeval.polars")


def _expr(value: Any) -> Any:
    return pl.col(value) if isinstance(value, str) else value


def _valid_pairs(series: Sequence[Any]) -> tuple[np.ndarray, list[list]]:
    """Rows where every input is non-null, and each input's values on those rows."""
    valid = np.ones(len(series[0]), dtype=bool)
    for s in series:
        valid &= s.is_not_null().to_numpy()
    values = (
        [s.filter(pl.Series(valid)).to_arrow() for s in series] if not valid.all() else [s.to_arrow() for s in series]
    )
    return valid, [v.to_pylist() for v in values]


def _rowwise(score: Callable[..., np.ndarray], name: str) -> Callable[[Sequence[Any]], Any]:
    """A batch function: score the non-null rows in one call, null elsewhere."""

    def run(series: Sequence[Any]) -> Any:
        valid, values = _valid_pairs(series)
        out = np.full(len(valid), np.nan)
        if valid.any():
            out[valid] = score(*values)
        return pl.Series(name, out, dtype=pl.Float64).set(pl.Series(~valid), None)

    return run


class RespevalExprNamespace:
    """The ``.respeval`` namespace of a polars expression holding predictions (strings)."""

    def __init__(self, expr: Any) -> None:
        self._expr = expr

    def _map(self, other: Any, run: Callable[[Sequence[Any]], Any], dtype: Any, *, scalar: bool = False) -> Any:
        return pl.map_batches(
            [self._expr, _expr(other)], run, return_dtype=dtype, is_elementwise=not scalar, returns_scalar=scalar
        )

    # ----------------------------------------------------------------- per row

    def rouge_n(self, reference: Any, n: int = 1, *, stemmer: bool = False, tokenizer: str = "rouge") -> Any:
        """ROUGE-N F-measure per row (rouge-score's numbers)."""
        (rouge_type,) = validate_types((f"rouge{n}",))
        return self._rouge_f(reference, rouge_type, stemmer, tokenizer)

    def rouge_l(self, reference: Any, *, stemmer: bool = False, tokenizer: str = "rouge") -> Any:
        """ROUGE-L F-measure per row."""
        return self._rouge_f(reference, "rougeL", stemmer, tokenizer)

    def _rouge_f(self, reference: Any, rouge_type: str, stemmer: bool, tokenizer: str) -> Any:
        def score(preds: list, refs: list) -> np.ndarray:
            return rouge(preds, refs, (rouge_type,), stemmer=stemmer, tokenizer=tokenizer)[f"{rouge_type}_f"]

        return self._map(reference, _rowwise(score, rouge_type), pl.Float64)

    def rouge(
        self, reference: Any, types: Sequence[str] = DEFAULT_TYPES, *, stemmer: bool = False, tokenizer: str = "rouge"
    ) -> Any:
        """A struct per row: ``{type}_p``, ``{type}_r``, ``{type}_f`` for each ROUGE type."""
        types = validate_types(types)
        fields = [f"{t}_{x}" for t in types for x in "prf"]
        dtype = pl.Struct({f: pl.Float64 for f in fields})

        def run(series: Sequence[Any]) -> Any:
            valid, (preds, refs) = _valid_pairs(series)
            columns = {f: np.full(len(valid), np.nan) for f in fields}
            if valid.any():
                result = rouge(preds, refs, types, stemmer=stemmer, tokenizer=tokenizer)
                for f in fields:
                    columns[f][valid] = result[f]
            frame = pl.DataFrame(columns)
            return frame.to_struct("rouge").set(pl.Series(~valid), None)

        return self._map(reference, run, dtype)

    @renamed_arguments(tokenize="tokenizer")
    def sentence_bleu(self, reference: Any, *, tokenizer: str = "13a", lowercase: bool = False) -> Any:
        """Sentence BLEU per row (sacreBLEU's ``sentence_bleu``: effective order, exp smoothing)."""

        def score(preds: list, refs: list) -> np.ndarray:
            return bleu(preds, refs, tokenizer=tokenizer, lowercase=lowercase).sentence

        return self._map(reference, _rowwise(score, "sentence_bleu"), pl.Float64)

    def chrf(self, reference: Any, *, word_order: int = 0, lowercase: bool = False) -> Any:
        """Sentence chrF (``word_order=2``: chrF++) per row."""

        def score(preds: list, refs: list) -> np.ndarray:
            return chrf(preds, refs, word_order=word_order, lowercase=lowercase).sentence

        return self._map(reference, _rowwise(score, "chrf"), pl.Float64)

    def exact_match(self, reference: Any, *, normalize: str = "none") -> Any:
        """1.0 where the prediction equals the reference (any of a list), else 0.0."""

        def score(preds: list, refs: list) -> np.ndarray:
            return exact_match(preds, refs, normalize=normalize)["exact_match"]

        return self._map(reference, _rowwise(score, "exact_match"), pl.Float64)

    def squad_em(self, golds: Any, *, version: str = "v1") -> Any:
        """SQuAD exact match (0/1) against the row's gold answers (a list or one string)."""

        def score(preds: list, gold: list) -> np.ndarray:
            return squad(preds, gold, version=version)["squad_em"]

        return self._map(golds, _rowwise(score, "squad_em"), pl.Float64)

    def squad_f1(self, golds: Any, *, version: str = "v1") -> Any:
        """SQuAD token F1 (0..1) against the row's gold answers (a list or one string)."""

        def score(preds: list, gold: list) -> np.ndarray:
            return squad(preds, gold, version=version)["squad_f1"]

        return self._map(golds, _rowwise(score, "squad_f1"), pl.Float64)

    @renamed_arguments(tokenize="tokenizer")
    def bleu_stats(self, reference: Any, *, tokenizer: str = "13a", lowercase: bool = False) -> Any:
        """BLEU's per-row statistics as a struct (``hyp_len``, ``ref_len``, ``correct_n``, ``total_n``)."""
        names = ["hyp_len", "ref_len", *(f"correct_{n}" for n in range(1, 5)), *(f"total_{n}" for n in range(1, 5))]
        dtype = pl.Struct({n: pl.Int64 for n in names})

        def run(series: Sequence[Any]) -> Any:
            valid, (preds, refs) = _valid_pairs(series)
            stats = np.zeros((len(valid), len(names)), np.int64)
            if valid.any():
                stats[valid] = bleu(preds, refs, tokenizer=tokenizer, lowercase=lowercase).stats
            frame = pl.DataFrame({n: stats[:, j] for j, n in enumerate(names)})
            return frame.to_struct("bleu_stats").set(pl.Series(~valid), None)

        return self._map(reference, run, dtype)

    # ----------------------------------------------------------------- aggregations

    @renamed_arguments(tokenize="tokenizer")
    def corpus_bleu(
        self, reference: Any, *, tokenizer: str = "13a", lowercase: bool = False, smooth: str = "exp"
    ) -> Any:
        """Corpus BLEU of the column (or group) from summed statistics: ``respeval.bleu(...).score``."""

        def run(series: Sequence[Any]) -> Any:
            _, (preds, refs) = _valid_pairs(series)
            if not preds:
                return None
            return bleu(preds, refs, tokenizer=tokenizer, lowercase=lowercase, smooth=smooth).score

        return self._map(reference, run, pl.Float64, scalar=True)

    def corpus_chrf(self, reference: Any, *, word_order: int = 0, lowercase: bool = False) -> Any:
        """Corpus chrF (``word_order=2``: chrF++) of the column (or group) from summed statistics."""

        def run(series: Sequence[Any]) -> Any:
            _, (preds, refs) = _valid_pairs(series)
            if not preds:
                return None
            return chrf(preds, refs, word_order=word_order, lowercase=lowercase).score

        return self._map(reference, run, pl.Float64, scalar=True)


pl.api.register_expr_namespace("respeval")(RespevalExprNamespace)

__all__ = ["RespevalExprNamespace"]
