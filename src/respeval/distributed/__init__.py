"""Scale-out: the same scoring on an existing distributed engine (Dask first).

The engine-neutral core is :func:`respeval.bulk.score_arrow` (an Arrow table
in, per-row results and summable statistics out); each engine module is a thin
adapter that runs it per partition and reduces the statistics.
"""
