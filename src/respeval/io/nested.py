"""Nested Arrow values (Parquet columns of lists and structs) read as the JSON they were
written from: the rules are the leaf :mod:`respeval._arrow_json`'s (both kernel
implementations follow them); this module gives them to the readers, with
:func:`raw_values`, the one that may hand values on as JSON text.
"""

from __future__ import annotations

from typing import Any

from respeval import _backend
from respeval._arrow_json import describe_repeated_field, json_values, maps_as_objects, repeated_field

__all__ = ["describe_repeated_field", "json_values", "maps_as_objects", "raw_values", "repeated_field"]


def raw_values(column: Any, as_json_text: bool = False) -> list[Any]:
    """A raw field's values: :func:`json_values`, or with ``as_json_text`` each nested
    value's JSON text, for a caller that reads JSON text itself (the kernels'
    ``arrow_json_texts``: the native core writes it straight from the Arrow buffers,
    without building Python objects; the twin states the same text).  The values mean the
    same either way; a column of a type the kernels do not write is read by
    :func:`json_values`."""
    if as_json_text:
        texts = _backend.get().arrow_json_texts(column)
        if texts is not None:
            return texts
    return json_values(column)
