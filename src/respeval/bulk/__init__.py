"""Bulk scoring of files and tables: chunked, streamed, resumable.

* :mod:`~respeval.bulk.run` -- :func:`score_files`, :func:`score_table`, :func:`score_arrow`;
* :mod:`~respeval.bulk.chunks` -- one chunk of every input, scored for every system;
* :mod:`~respeval.bulk.parts` -- completed chunks on disk, the final join, resuming;
* :mod:`~respeval.bulk.prefetch` -- reading ahead on a helper thread;
* :mod:`~respeval.bulk.collector` -- running corpus sums and bootstrap replicates;
* :mod:`~respeval.bulk.summary` -- corpus tables, comparisons and the :class:`ScoringRunSummary`.
"""

from respeval.bulk.chunks import ChunkStats
from respeval.bulk.collector import StatsCollector
from respeval.bulk.run import (
    DEFAULT_PRED_FIELD,
    DEFAULT_REF_FIELD,
    EXAMPLE,
    build_families,
    score_arrow,
    score_files,
    score_table,
    total_rows,
)
from respeval.bulk.summary import (
    Comparison,
    CorpusRow,
    RunSummary,
    ScoringRunSummary,
    format_comparisons,
    format_table,
    summarize,
)

__all__ = [
    "DEFAULT_PRED_FIELD",
    "DEFAULT_REF_FIELD",
    "EXAMPLE",
    "ChunkStats",
    "Comparison",
    "CorpusRow",
    "RunSummary",  # the old name of ScoringRunSummary
    "ScoringRunSummary",
    "StatsCollector",
    "build_families",
    "format_comparisons",
    "format_table",
    "score_arrow",
    "score_files",
    "score_table",
    "summarize",
    "total_rows",
]
