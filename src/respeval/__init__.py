"""respeval: score LLM and agent responses against references, with the numbers of
rouge-score (and, as they land, sacrebleu and the SQuAD scripts) from a native core."""

__version__ = "0.1.0"

from respeval.metrics.rouge import AggregateScore, RougeResult, Score, rouge  # noqa: E402
from respeval.pipeline import score_files as score_file  # noqa: E402
from respeval.pipeline import score_table  # noqa: E402

__all__ = ["AggregateScore", "RougeResult", "Score", "__version__", "rouge", "score_file", "score_table"]
