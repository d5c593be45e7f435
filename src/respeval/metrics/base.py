"""What the bulk pipeline needs from a metric family, whichever it is.

A family (ROUGE, BLEU, chrF, ...) turns references once into a prepared form,
then scores chunks of predictions against them.  Per row it returns output
columns (what goes to the results file) and *statistic* columns whose sums
determine the corpus score, so a corpus score, a bootstrap resample and a
distributed reduce are all "sum the rows, then apply ``corpus``".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


@dataclass
class ChunkScores:
    """One chunk's per-row results of one family."""

    columns: dict[str, np.ndarray]  # written to the results file
    stats: np.ndarray  # float64[rows, len(family.stat_names)]


class MetricFamily(Protocol):
    """A family of metrics computed together (e.g. rouge1+rouge2+rougeL)."""

    name: str
    stat_names: tuple[str, ...]
    headline: tuple[str, ...]  # corpus fields shown in tables, e.g. ("rouge1", "rougeL")

    def prepare(self, references: list[list[str]]) -> Any:
        """Tokenize/analyse references once (reused for every system of a chunk)."""

    def score(self, prepared: Any, predictions: list[str]) -> ChunkScores:
        """Per-row results of ``predictions`` against the prepared references (same rows)."""

    def corpus(self, sums: np.ndarray, rows: Any) -> dict[str, Any]:
        """Corpus values from summed statistics.

        ``sums`` may be 2-D, one row per bootstrap resample; ``rows`` is then an
        array of the resamples' sizes (Poisson resamples differ in size).
        """

    def signature(self) -> str:
        """Everything needed to reproduce the numbers."""


def split_metric_names(names: Sequence[str]) -> list[str]:
    """``"rouge1,rougeL"`` style lists, flattened and stripped."""
    out: list[str] = []
    for name in names:
        out.extend(n.strip() for n in name.split(",") if n.strip())
    return out
