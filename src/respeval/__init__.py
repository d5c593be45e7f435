"""respeval: score LLM and agent responses against references, with the numbers of
rouge-score, sacreBLEU and the SQuAD scripts from a native core, and an LLM judge."""

import os as _os

from respeval._version import __version__

# The core runs many short OpenMP loops; with libgomp's default (active) waiting, idle
# threads spin between them and, on a busy machine, slow a 2-thread run below a
# 1-thread one.  Sleeping threads cost nothing measurable here.  Only a default: an
# OMP_WAIT_POLICY the user set wins, and it must be set before the core loads.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from respeval.metrics.rouge import AggregateScore, RougeResult, Score, rouge  # noqa: E402
from respeval.pipeline import score_files as score_file  # noqa: E402
from respeval.pipeline import score_table  # noqa: E402

__all__ = ["AggregateScore", "RougeResult", "Score", "__version__", "rouge", "score_file", "score_table"]
