"""respeval's metrics as SQL functions in DuckDB, vectorized over Arrow batches.

``register(con)`` adds, on the connection ``con``:

=====================================  =======================================================
``rouge_n(pred, ref, n)``              ROUGE-N F-measure (rouge-score's numbers), n in 1..9
``rouge_l(pred, ref)``                 ROUGE-L F-measure
``sentence_bleu(pred, ref)``           sentence BLEU (sacreBLEU's ``sentence_bleu``)
``chrf(pred, ref)``                    sentence chrF (sacreBLEU's ``sentence_chrf``)
``exact_match(pred, ref)``             1.0 if the strings are equal, else 0.0
``squad_em(pred, golds)``              SQuAD v1.1 exact match (0/1) against a list of gold answers
``squad_f1(pred, golds)``              SQuAD v1.1 token F1 (0..1) against a list of gold answers
``bleu_stats(pred, ref)``              BLEU's per-row statistics as a STRUCT
``corpus_bleu(bleu_stats(...))``       corpus BLEU: a macro summing the statistics (an aggregate)
``chrf_stats(pred, ref)``              chrF's per-row statistics as a STRUCT
``corpus_chrf(chrf_stats(...))``       corpus chrF: a macro summing the statistics (an aggregate)
=====================================  =======================================================

Corpus BLEU and chrF are functions of *summed* statistics, never means of sentence
scores, so ``SELECT system, corpus_bleu(bleu_stats(hyp, ref)) FROM t GROUP BY system``
gives ``respeval.bleu(...).score`` (sacreBLEU's ``corpus_bleu``) for every system.

DuckDB calls each function once per vector of rows (2,048) with Arrow arrays; respeval
scores the whole vector in one call, so no Python code runs per row.  A NULL argument
gives NULL (DuckDB does not pass such rows to the function).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from respeval._adapters import require
from respeval._renamed import renamed_arguments
from respeval.metrics.bleu import BleuFamily, bleu
from respeval.metrics.chrf import ChrfFamily, chrf
from respeval.metrics.match import exact_match, squad
from respeval.metrics.rouge import rouge

BLEU_ORDER = 4
CHRF_CHAR_ORDER = 6
FUNCTIONS = (
    "rouge_n",
    "rouge_l",
    "sentence_bleu",
    "chrf",
    "exact_match",
    "squad_em",
    "squad_f1",
    "bleu_stats",
    "chrf_stats",
)
MACROS = ("corpus_bleu", "corpus_chrf")


def _duckdb() -> Any:
    return require("duckdb", "duckdb", purpose="respeval.duckdb")


def _texts(values: Any) -> list:
    return values.to_pylist()


def _doubles(values: np.ndarray) -> Any:
    import pyarrow as pa

    return pa.array(np.asarray(values, dtype=np.float64), type=pa.float64())


def bleu_stat_names(max_order: int = BLEU_ORDER) -> list[str]:
    """Field names of ``bleu_stats``: the columns of ``respeval.bleu(...).stats``."""
    return ["hyp_len", "ref_len", *(f"correct_{n}" for n in range(1, max_order + 1))] + [
        f"total_{n}" for n in range(1, max_order + 1)
    ]


def chrf_stat_names(char_order: int = CHRF_CHAR_ORDER) -> list[str]:
    """Field names of ``chrf_stats``: per character order, hypothesis, reference and matched n-grams."""
    return [f"{kind}_{n}" for n in range(1, char_order + 1) for kind in ("hyp", "ref", "match")]


def _struct(stats: np.ndarray, names: list[str]) -> Any:
    import pyarrow as pa

    stats = np.ascontiguousarray(stats, dtype=np.int64)
    return pa.StructArray.from_arrays([pa.array(stats[:, j]) for j in range(len(names))], names=names)


def _sums_macro(name: str, scorer: str, fields: list[str]) -> str:
    sums = ", ".join(f"CAST(sum(s.{f}) AS BIGINT)" for f in fields)
    return f"CREATE OR REPLACE MACRO {name}(s) AS {scorer}([{sums}])"


class _Functions:
    """The scalar functions, with the options fixed at registration."""

    def __init__(self, *, stemmer: bool, bleu_tokenizer: str, threads: int | None) -> None:
        self.stemmer = stemmer
        self.threads = threads
        self.bleu_tokenizer = bleu_tokenizer
        self.bleu_family = BleuFamily(tokenizer=bleu_tokenizer)
        self.chrf_family = ChrfFamily()

    def rouge_n(self, pred: Any, ref: Any, n: Any) -> Any:
        preds, refs = _texts(pred), _texts(ref)
        orders = n.to_numpy() if hasattr(n, "to_numpy") else np.asarray(n)
        orders = np.asarray(orders, dtype=np.int64)
        out = np.zeros(len(preds))
        for order in np.unique(orders):
            if not 1 <= order <= 9:
                raise ValueError(f"rouge_n: n must be 1..9, got {order}")
            rows = np.flatnonzero(orders == order)
            if len(rows) == len(preds):
                sub_p, sub_r = preds, refs
            else:
                sub_p, sub_r = [preds[i] for i in rows], [refs[i] for i in rows]
            name = f"rouge{order}"
            out[rows] = rouge(sub_p, sub_r, (name,), stemmer=self.stemmer, threads=self.threads)[f"{name}_f"]
        return _doubles(out)

    def rouge_l(self, pred: Any, ref: Any) -> Any:
        return _doubles(
            rouge(_texts(pred), _texts(ref), ("rougeL",), stemmer=self.stemmer, threads=self.threads)["rougeL_f"]
        )

    def sentence_bleu(self, pred: Any, ref: Any) -> Any:
        return _doubles(bleu(_texts(pred), _texts(ref), tokenizer=self.bleu_tokenizer, threads=self.threads).sentence)

    def chrf(self, pred: Any, ref: Any) -> Any:
        return _doubles(chrf(_texts(pred), _texts(ref), threads=self.threads).sentence)

    def exact_match(self, pred: Any, ref: Any) -> Any:
        return _doubles(exact_match(_texts(pred), _texts(ref))["exact_match"])

    def squad_em(self, pred: Any, golds: Any) -> Any:
        return _doubles(squad(_texts(pred), _texts(golds))["squad_em"])

    def squad_f1(self, pred: Any, golds: Any) -> Any:
        return _doubles(squad(_texts(pred), _texts(golds))["squad_f1"])

    def bleu_stats(self, pred: Any, ref: Any) -> Any:
        return _struct(
            bleu(_texts(pred), _texts(ref), tokenizer=self.bleu_tokenizer, threads=self.threads).stats,
            bleu_stat_names(),
        )

    def chrf_stats(self, pred: Any, ref: Any) -> Any:
        return _struct(chrf(_texts(pred), _texts(ref), threads=self.threads).stats, chrf_stat_names())

    def bleu_from_sums(self, sums: Any) -> Any:
        return _per_group(sums, lambda s: self.bleu_family.corpus_score(s).score)

    def chrf_from_sums(self, sums: Any) -> Any:
        return _per_group(sums, self.chrf_family.metric.corpus_score)


def _per_group(sums: Any, score: Callable[[list[int]], float]) -> Any:
    """One corpus score per group of summed statistics (NULL for a group without rows)."""
    import pyarrow as pa

    values = [None if s is None or None in s else float(score(s)) for s in sums.to_pylist()]
    return pa.array(values, type=pa.float64())


@renamed_arguments(bleu_tokenize="bleu_tokenizer")
def register(con: Any, *, stemmer: bool = False, bleu_tokenizer: str = "13a", threads: int | None = 1) -> Any:
    """Register respeval's SQL functions and macros on the DuckDB connection ``con``.

    ``stemmer`` applies rouge-score's Porter stemmer in ``rouge_n``/``rouge_l``;
    ``bleu_tokenizer`` is sacreBLEU's tokenizer for ``sentence_bleu``, ``bleu_stats`` and
    ``corpus_bleu`` (``13a``, ``intl``, ``zh``, ``char``, ``none``).  ``threads`` is the
    native core's threads per call: 1 by default, because DuckDB already runs vectors on
    all its threads (more would oversubscribe the cores; None = all cores).  Registering
    again replaces the functions (e.g. with other options).  Returns ``con``.
    """
    duckdb = _duckdb()
    f = _Functions(stemmer=stemmer, bleu_tokenizer=bleu_tokenizer, threads=threads)
    text = "VARCHAR"
    texts = duckdb.list_type(text)
    double = "DOUBLE"
    bleu_struct = duckdb.struct_type({name: "BIGINT" for name in bleu_stat_names()})
    chrf_struct = duckdb.struct_type({name: "BIGINT" for name in chrf_stat_names()})
    sums = duckdb.list_type("BIGINT")
    specs: list[tuple[str, Callable[..., Any], list[Any], Any]] = [
        ("rouge_n", f.rouge_n, [text, text, "INTEGER"], double),
        ("rouge_l", f.rouge_l, [text, text], double),
        ("sentence_bleu", f.sentence_bleu, [text, text], double),
        ("chrf", f.chrf, [text, text], double),
        ("exact_match", f.exact_match, [text, text], double),
        ("squad_em", f.squad_em, [text, texts], double),
        ("squad_f1", f.squad_f1, [text, texts], double),
        ("bleu_stats", f.bleu_stats, [text, text], bleu_struct),
        ("chrf_stats", f.chrf_stats, [text, text], chrf_struct),
        ("respeval_bleu_from_sums", f.bleu_from_sums, [sums], double),
        ("respeval_chrf_from_sums", f.chrf_from_sums, [sums], double),
    ]
    for name, function, params, returns in specs:
        try:
            con.remove_function(name)
        except Exception:  # not registered yet (DuckDB raises its own error types)
            pass
        # the corpus scorers return NULL for a group without rows (sums of nothing)
        nulls = "special" if name.endswith("_from_sums") else "default"
        con.create_function(name, function, params, returns, type="arrow", null_handling=nulls)
    con.execute(_sums_macro("corpus_bleu", "respeval_bleu_from_sums", bleu_stat_names()))
    con.execute(_sums_macro("corpus_chrf", "respeval_chrf_from_sums", chrf_stat_names()))
    return con


__all__ = ["FUNCTIONS", "MACROS", "bleu_stat_names", "chrf_stat_names", "register"]
