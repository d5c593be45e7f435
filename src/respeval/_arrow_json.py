"""Nested Arrow values (Parquet columns of lists and structs) read as the JSON they were
written from.

Arrow cannot tell a missing key from a null one: a column's struct type is the union of
its rows' keys, so every row of a column carries every key some row had, null where it
had none.  For a column of records whose fields hold objects (tool-call trajectories:
lists of ``{tool_name, tool_input: {...}}``), those objects' null fields are dropped at
every depth, so ``{"a": 1, "b": None, "o": [{"x": None}]}`` reads as ``{"a": 1, "o": [{}]}``;
otherwise the same call would read differently in a predicted and a reference column.
The records' own fields, a list's null elements, and every other shape keep their nulls.
A map reads as the JSON object it stands for (its keys and values, nulls kept, the last of
a repeated key), not as pyarrow's list of (key, value) pairs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["describe_repeated_field", "json_values", "maps_as_objects", "raw_values", "repeated_field"]


def repeated_field(typ: Any, where: str = "") -> tuple[str, str] | None:
    """The first struct field name that a struct inside Arrow type ``typ`` holds twice, as
    (where the struct is, the name), e.g. ``("[].tool_input", "a")``; None if there is none.
    Such values have no JSON form (an object's keys are unique) and pyarrow refuses to turn
    them into dicts."""
    import pyarrow as pa

    if pa.types.is_struct(typ):
        seen: set[str] = set()
        for i in range(typ.num_fields):
            name = typ.field(i).name
            if name in seen:
                return where or "(top level)", name
            seen.add(name)
        for i in range(typ.num_fields):
            found = repeated_field(typ.field(i).type, f"{where}.{typ.field(i).name}")
            if found:
                return found
    elif pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
        return repeated_field(typ.value_type, f"{where}[]")
    elif pa.types.is_map(typ):
        return repeated_field(typ.key_type, f"{where}{{key}}") or repeated_field(typ.item_type, f"{where}{{}}")
    elif pa.types.is_dictionary(typ):
        return repeated_field(typ.value_type, where)
    return None


def describe_repeated_field(typ: Any) -> str | None:
    """Why a column of Arrow type ``typ`` cannot be read as JSON values, or None."""
    found = repeated_field(typ)
    if found is None:
        return None
    where, name = found
    return (
        f"its struct at {where} has two fields named {name!r}, and a JSON object cannot hold a key twice; "
        "rename one of them where the file is written, then read it again"
    )


def json_values(column: Any) -> list[Any]:
    """The Python values of an Arrow Array or ChunkedArray (``to_pylist``), the null fields
    of objects inside a list of records dropped (see the module docstring).  A struct with
    two fields of one name raises ValueError (:func:`describe_repeated_field`)."""
    problem = describe_repeated_field(column.type)
    if problem is not None:
        raise ValueError(f"this Arrow column ({column.type}) cannot be read: {problem}")
    rows = column.to_pylist()
    if _records_with_objects(column.type):
        rows = [_drop_null_fields(r) for r in rows]  # before maps are objects: a map keeps its nulls
    return maps_as_objects(rows, column.type)


def maps_as_objects(values: list[Any], typ: Any) -> list[Any]:
    """Python values of Arrow type ``typ`` (``to_pylist``'s) with every map, which pyarrow
    gives as (key, value) pairs, as the JSON object it stands for: a Parquet map of
    arguments (Spark writes them so) reads as the object a JSON writer would have written.
    A key that repeats keeps its last value, as ``json.loads`` keeps the last of an
    object's."""
    return [_maps_as_objects(v, typ) for v in values] if _holds_map(typ) else values


def _holds_map(typ: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_map(typ):
        return True
    if pa.types.is_struct(typ):
        return any(_holds_map(typ.field(i).type) for i in range(typ.num_fields))
    if pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
        return _holds_map(typ.value_type)
    if pa.types.is_dictionary(typ):
        return _holds_map(typ.value_type)
    return False


def _maps_as_objects(value: Any, typ: Any) -> Any:
    import pyarrow as pa

    if value is None:
        return None
    if pa.types.is_map(typ):
        return {k: _maps_as_objects(v, typ.item_type) for k, v in value}
    if pa.types.is_struct(typ):
        fields = {typ.field(i).name: typ.field(i).type for i in range(typ.num_fields)}
        return {k: _maps_as_objects(v, fields[k]) for k, v in value.items()}
    if pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
        return [_maps_as_objects(v, typ.value_type) for v in value]
    if pa.types.is_dictionary(typ):
        return _maps_as_objects(value, typ.value_type)
    return value


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
