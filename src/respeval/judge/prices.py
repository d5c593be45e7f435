"""What a judge model costs, interactively and in a provider batch.

OpenAI's Batch API and Anthropic's Message Batches bill every request at half the
interactive rate.  :data:`PRICE_TABLE` lists the published interactive prices of common
judge models (USD per million tokens, as listed on the providers' pricing pages in 2025;
they change: check yours), and a batch price of half of each.  Every figure can be
overridden: a :class:`ModelPrice` given to :func:`model_price`, or a JSON file
(:func:`load_price_table`) of ``{"MODEL": {"input": USD, "output": USD, "batch_input": USD,
"batch_output": USD}}`` where the batch fields are optional (half the interactive ones).

Dated model names (``gpt-4o-mini-2024-07-18``, ``claude-3-5-haiku-20241022``) use the
entry of their longest listed prefix.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from respeval.judge.limits import Price

__all__ = ["BATCH_DISCOUNT", "PRICE_TABLE", "ModelPrice", "load_price_table", "model_price"]

BATCH_DISCOUNT = 0.5
"""Batch price / interactive price, for both OpenAI and Anthropic."""


@dataclass(frozen=True)
class ModelPrice:
    """A model's interactive and batch prices, and where they came from."""

    interactive: Price
    batch: Price
    source: str = "built-in table"

    @classmethod
    def of(cls, input_per_million: float, output_per_million: float, source: str = "built-in table") -> ModelPrice:
        """Interactive prices, with the batch price at :data:`BATCH_DISCOUNT` of each."""
        return cls(
            Price(input_per_million, output_per_million),
            Price(input_per_million * BATCH_DISCOUNT, output_per_million * BATCH_DISCOUNT),
            source,
        )


def _table(rows: Mapping[str, tuple[float, float]]) -> dict[str, ModelPrice]:
    return {name: ModelPrice.of(i, o) for name, (i, o) in rows.items()}


PRICE_TABLE: dict[str, ModelPrice] = _table(
    {
        # OpenAI (interactive USD per million input / output tokens)
        "gpt-3.5-turbo": (0.50, 1.50),
        "gpt-4o": (2.50, 10.00),
        "gpt-4o-mini": (0.15, 0.60),
        "gpt-4.1": (2.00, 8.00),
        "gpt-4.1-mini": (0.40, 1.60),
        "gpt-4.1-nano": (0.10, 0.40),
        "gpt-5": (1.25, 10.00),
        "gpt-5-mini": (0.25, 2.00),
        "gpt-5-nano": (0.05, 0.40),
        "o3": (2.00, 8.00),
        "o3-mini": (1.10, 4.40),
        "o4-mini": (1.10, 4.40),
        # Anthropic
        "claude-3-haiku": (0.25, 1.25),
        "claude-3-5-haiku": (0.80, 4.00),
        "claude-haiku-4-5": (1.00, 5.00),
        "claude-3-5-sonnet": (3.00, 15.00),
        "claude-3-7-sonnet": (3.00, 15.00),
        "claude-sonnet-4": (3.00, 15.00),
        "claude-sonnet-4-5": (3.00, 15.00),
        "claude-opus-4": (15.00, 75.00),
        "claude-opus-4-1": (15.00, 75.00),
        "claude-opus-4-5": (5.00, 25.00),
    }
)


def _lookup(table: Mapping[str, ModelPrice], model_id: str, name: str) -> ModelPrice | None:
    for candidate in (model_id, name):
        if candidate in table:
            return table[candidate]
    # A dated or suffixed name: the longest listed prefix that ends at a word boundary.
    best = ""
    for listed in table:
        if (
            name.startswith(listed)
            and len(listed) > len(best)
            and name[len(listed) : len(listed) + 1] in ("-", "@", ":")
        ):
            best = listed
    return table[best] if best else None


def model_price(
    model_id: str,
    name: str,
    *,
    table: Mapping[str, ModelPrice] | None = None,
    override: ModelPrice | None = None,
) -> ModelPrice | None:
    """The prices of a model: ``override`` if given, else from ``table`` (then the built-in
    :data:`PRICE_TABLE`), by ``provider:name``, name, or longest name prefix; None when unknown."""
    if override is not None:
        return override
    if table:
        found = _lookup(table, model_id, name)
        if found is not None:
            return found
    return _lookup(PRICE_TABLE, model_id, name)


def _number(entry: Mapping[str, Any], field: str, where: str) -> float:
    value = entry.get(field)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{where}: {field!r} must be a non-negative number (USD per million tokens), got {value!r}")
    return float(value)


def load_price_table(path: str | os.PathLike[str]) -> dict[str, ModelPrice]:
    """A price table from JSON (see the module docstring); raises ValueError naming the
    model and field that is wrong."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except ValueError as exc:
        raise ValueError(f"{os.fspath(path)}: not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{os.fspath(path)}: expected an object of MODEL -> prices")
    out: dict[str, ModelPrice] = {}
    for model, entry in data.items():
        where = f"{os.fspath(path)}: model {model!r}"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: expected an object with input and output prices")
        i, o = _number(entry, "input", where), _number(entry, "output", where)
        bi = _number(entry, "batch_input", where) if "batch_input" in entry else i * BATCH_DISCOUNT
        bo = _number(entry, "batch_output", where) if "batch_output" in entry else o * BATCH_DISCOUNT
        out[model] = ModelPrice(Price(i, o), Price(bi, bo), source=os.fspath(path))
    return out
