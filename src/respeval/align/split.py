"""The seeded, stratified train / held-out split, and the rows on either side of it.

The held-out labels are kept apart from the held-out rows (:class:`Split` holds them in its
own field, and a held-out row carries no label), so the optimiser, which is handed
``split.train`` and nothing else, cannot read them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from respeval.io.errors import InputError

__all__ = ["DEFAULT_HELD_OUT", "MIN_PER_CLASS", "HeldOutRow", "LabelledRow", "Split", "stratified_split"]

DEFAULT_HELD_OUT = 0.5
MIN_PER_CLASS = 2
"""Rows a label needs for a stratified split: one on each side."""


@dataclass(frozen=True)
class HeldOutRow:
    """A row to judge, without its label: ``row`` (0-based position in the input), ``where``
    (``FILE:LINE`` for messages) and the ``record`` (the label field removed)."""

    row: int
    where: str
    record: Mapping[str, Any]


@dataclass(frozen=True)
class LabelledRow(HeldOutRow):
    """A train row: a row and the human's ``label``, in the judge's terms (a label of its
    label set, or a score)."""

    label: Any = None


@dataclass(frozen=True)
class Split:
    """The two sides: ``train`` (rows with labels: all the optimiser sees), ``held_out``
    (rows without labels) and ``held_out_labels`` (the held-out rows' labels, in order, read
    only to score the judges once the optimiser is done)."""

    seed: int
    held_out_fraction: float
    train: tuple[LabelledRow, ...]
    held_out: tuple[HeldOutRow, ...]
    held_out_labels: Sequence[Any]

    def counts(self) -> dict[str, dict[str, int]]:
        """Rows per label on each side (labels as text)."""
        train: dict[str, int] = {}
        for r in self.train:
            train[str(r.label)] = train.get(str(r.label), 0) + 1
        held: dict[str, int] = {}
        for label in self.held_out_labels:
            held[str(label)] = held.get(str(label), 0) + 1
        return {"train": dict(sorted(train.items())), "held_out": dict(sorted(held.items()))}


def _class_order(labels: Sequence[Hashable]) -> list[Hashable]:
    seen = list(dict.fromkeys(labels))
    return sorted(seen, key=lambda x: (type(x).__name__, str(x)))


def stratified_split(
    labels: Sequence[Hashable],
    *,
    held_out: float = DEFAULT_HELD_OUT,
    seed: int = 0,
    where: Sequence[str] | None = None,
    source: str = "the data",
) -> tuple[list[int], list[int]]:
    """Row indices ``(train, held_out)``: every label's rows shuffled by
    ``numpy.random.default_rng(seed)`` (labels in a fixed order), ``round(n * held_out)`` of
    them held out, at least one on each side; both lists sorted.  The same labels and seed
    always give the same split.

    Raises :class:`~respeval.io.InputError` when a label has fewer than :data:`MIN_PER_CLASS`
    rows (naming the label, its rows and ``source``), or ``held_out`` is not in (0, 1)."""
    if not 0.0 < held_out < 1.0:
        raise InputError(f"held_out must be a fraction in (0, 1), got {held_out}")
    if not labels:
        raise InputError(f"{source}: no rows to split")
    rng = np.random.default_rng(seed)
    train: list[int] = []
    held: list[int] = []
    for label in _class_order(labels):
        rows = [i for i, x in enumerate(labels) if x == label]
        if len(rows) < MIN_PER_CLASS:
            at = ", ".join((where[i] if where else f"row {i + 1}") for i in rows)
            raise InputError(
                f"{source}: label {label!r} has {len(rows)} row ({at}); a stratified train/held-out split needs at "
                f"least {MIN_PER_CLASS} rows of every label (one on each side): add rows with that label, or drop it"
            )
        order = [rows[i] for i in rng.permutation(len(rows))]
        n_held = min(len(rows) - 1, max(1, round(len(rows) * held_out)))
        held.extend(order[:n_held])
        train.extend(order[n_held:])
    return sorted(train), sorted(held)
