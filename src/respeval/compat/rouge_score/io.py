"""rouge-score's ``io.compute_scores_and_write_to_csv``: score files, write a CSV.

Targets and predictions are read from files matching two glob patterns (paired in sorted
order), one record per ``delimiter``-terminated chunk; the CSV holds per-example scores
(``id,<type>-P,<type>-R,<type>-F,...``) or, with an aggregator, the bootstrap interval of
each measure (``score_type,low,mid,high``), as rouge-score writes them.
"""

from __future__ import annotations

import glob
import logging
from typing import Any

from respeval.compat.rouge_score.scoring import AggregateScore, Score

__all__ = ["compute_scores_and_write_to_csv"]

logger = logging.getLogger(__name__)


def compute_scores_and_write_to_csv(
    target_filepattern: str,
    prediction_filepattern: str,
    output_filename: str,
    scorer: Any,
    aggregator: Any,
    delimiter: str = "\n",
) -> None:
    """Score every (target, prediction) record pair and write the scores or their aggregates.

    Raises ``ValueError`` when the patterns match no file or different numbers of files, or
    when paired files hold different numbers of records.
    """
    targets = sorted(glob.glob(target_filepattern))
    predictions = sorted(glob.glob(prediction_filepattern))
    if not targets or len(targets) != len(predictions):
        raise ValueError(
            "Must have equal and positive number of target and prediction files. "
            f"Found: {len(targets)} target files ({target_filepattern}), "
            f"{len(predictions)} prediction files ({prediction_filepattern})."
        )
    scores = _scores(targets, predictions, scorer, delimiter)
    if aggregator:
        for score in scores:
            aggregator.add_scores(score)
        _write_aggregates(output_filename, aggregator.aggregate())
    else:
        _write_scores(output_filename, scores)


def _records(filename: str, delimiter: str) -> list[str]:
    with open(filename) as f:
        records = f.read().split(delimiter)
    if records[-1]:
        # without a final delimiter an empty last record cannot be told apart
        logger.warning("%s: expected a delimiter at the end of the file", filename)
        return records
    return records[:-1]


def _scores(targets: list[str], predictions: list[str], scorer: Any, delimiter: str) -> list[dict[str, Score]]:
    scores: list[dict[str, Score]] = []
    for target_file, prediction_file in zip(targets, predictions):
        target_records = _records(target_file, delimiter)
        prediction_records = _records(prediction_file, delimiter)
        if len(target_records) != len(prediction_records):
            raise ValueError(
                "Must have equal number of lines across target and prediction files. "
                f"Mismatch between files: {target_file} ({len(target_records)} records), "
                f"{prediction_file} ({len(prediction_records)} records)."
            )
        batch = getattr(scorer, "score_batch", None)
        if callable(batch):
            scores.extend(batch(target_records, prediction_records))
        else:
            scores.extend(scorer.score(t, p) for t, p in zip(target_records, prediction_records))
    return scores


def _write_aggregates(output_filename: str, aggregates: dict[str, AggregateScore]) -> None:
    with open(output_filename, "w") as out:
        out.write("score_type,low,mid,high\n")
        for score_type, aggregate in sorted(aggregates.items()):
            for letter, field in (("R", "recall"), ("P", "precision"), ("F", "fmeasure")):
                bounds = (getattr(getattr(aggregate, which), field) for which in ("low", "mid", "high"))
                out.write(f"{score_type}-{letter}," + ",".join("%f" % v for v in bounds) + "\n")


def _write_scores(output_filename: str, scores: list[dict[str, Score]]) -> None:
    if not scores:
        logger.warning("no scores to write to %s", output_filename)
        return
    types = sorted(scores[0])
    with open(output_filename, "w") as out:
        out.write("id" + "".join(f",{t}-P,{t}-R,{t}-F" for t in types) + "\n")
        for i, result in enumerate(scores):
            values = (v for t in types for v in (result[t].precision, result[t].recall, result[t].fmeasure))
            out.write(f"{i}" + "".join(",%f" % v for v in values) + "\n")
