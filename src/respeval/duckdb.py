"""respeval's metrics as SQL functions in DuckDB (implementation: ``respeval/_adapters/duckdb.py``).

::

    import duckdb, respeval.duckdb
    con = respeval.duckdb.register(duckdb.connect())
    con.sql("SELECT avg(rouge_l(response, reference)), corpus_bleu(bleu_stats(response, reference)) FROM t")

Needs ``pip install 'respeval[duckdb]'``.
"""

from respeval._adapters.duckdb import FUNCTIONS, MACROS, bleu_stat_names, chrf_stat_names, register

__all__ = ["FUNCTIONS", "MACROS", "bleu_stat_names", "chrf_stat_names", "register"]
