"""Nested Arrow values (Parquet columns of lists and structs) read as the JSON they were
written from.

Arrow cannot tell a missing key from a null one: a column's struct type is the union of
its rows' keys, so every row of a column carries every key some row had, null where it
had none.  For a column of records whose fields hold objects (tool-call trajectories:
lists of ``{tool_name, tool_input: {...}}``), those objects' null fields are dropped at
every depth, so ``{"a": 1, "b": None, "o": [{"x": None}]}`` reads as ``{"a": 1, "o": [{}]}``;
otherwise the same call would read differently in a predicted and a reference column.
The records' own fields, a list's null elements, and every other shape keep their nulls.
"""

from __future__ import annotations

from typing import Any

__all__ = ["json_values", "raw_values"]


def json_values(column: Any) -> list[Any]:
    """The Python values of an Arrow Array or ChunkedArray (``to_pylist``), the null fields
    of objects inside a list of records dropped (see the module docstring)."""
    rows = column.to_pylist()
    return [_drop_null_fields(r) for r in rows] if _records_with_objects(column.type) else rows


def _records_with_objects(typ: Any) -> bool:
    """A list of structs with struct-typed fields."""
    import pyarrow as pa

    if not (pa.types.is_list(typ) or pa.types.is_large_list(typ)) or not pa.types.is_struct(typ.value_type):
        return False
    item = typ.value_type
    return any(pa.types.is_struct(item.field(i).type) for i in range(item.num_fields))


def _drop_null_fields(row: Any) -> Any:
    if not isinstance(row, list):
        return row
    return [{k: _without_nulls(v) for k, v in rec.items()} if isinstance(rec, dict) else rec for rec in row]


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def raw_values(column: Any, as_json_text: bool = False) -> list[Any]:
    """A raw field's values: :func:`json_values`, or with ``as_json_text`` (and the native
    core) each nested value's JSON text written straight from the Arrow buffers, for a
    caller that reads JSON text itself: the same values, without building Python objects
    (``respeval._core.arrow_json_texts``; types it does not write fall back to
    :func:`json_values`)."""
    if as_json_text:
        from respeval import _backend

        kernels = _backend.get()
        if _backend.name_of(kernels) == "native":
            texts = kernels.arrow_json_texts(column)
            if texts is not None:
                return texts
    return json_values(column)
