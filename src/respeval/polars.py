"""respeval's metrics as polars expressions (implementation: ``respeval/_adapters/polars.py``).

::

    import polars as pl, respeval.polars  # registers the ``respeval`` expression namespace
    df.with_columns(pl.col("response").respeval.rouge_l("reference").alias("rougeL"))
    df.group_by("system").agg(pl.col("response").respeval.corpus_bleu("reference"))

Needs ``pip install 'respeval[polars]'``.
"""

from respeval._adapters.polars import RespevalExprNamespace

__all__ = ["RespevalExprNamespace"]
