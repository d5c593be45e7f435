"""Input handling shared by the HF-compatible ``compute`` functions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def as_list(values: Any, name: str) -> list:
    """A sequence argument as a list (a single str is a mistake, not a sequence of characters)."""
    if isinstance(values, str):
        raise TypeError(f"{name} must be a list (one entry per prediction), not a single str")
    if values is None:
        raise TypeError(f"{name} is None, expected a list")
    return values if isinstance(values, list) else list(values)


def same_count_references(predictions: Sequence[str], references: Any, metric: str) -> list[list[str]]:
    """References per prediction, as HF's sacreBLEU-based metrics take them.

    One str per prediction, or one list per prediction; every prediction needs the same
    number of references (HF's modules transpose them into sacreBLEU's streams).
    """
    refs = as_list(references, "references")
    if len(refs) != len(predictions):
        raise ValueError(
            f"{metric}: predictions has {len(predictions)} entries but references has {len(refs)}; "
            "they pair up one to one"
        )
    if not refs:
        raise ValueError(f"{metric}: no predictions to score")
    rows = [[r] if isinstance(r, str) else list(r) for r in refs]
    per_prediction = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != per_prediction:
            raise ValueError(
                f"{metric} requires the same number of references for each prediction: "
                f"references[0] has {per_prediction}, references[{i}] has {len(row)}"
            )
    return rows
