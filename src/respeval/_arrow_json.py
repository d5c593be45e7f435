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

A leaf: it imports nothing from respeval, so both kernel implementations (the native core
and its twin) state the same rules by calling it, and ``respeval.io.nested`` gives them to
the readers.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "arrow_rows",
    "check_arrow",
    "describe_repeated_field",
    "is_arrow",
    "json_values",
    "maps_as_objects",
    "records_with_objects",
    "repeated_field",
    "written_from_buffers",
]


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
    if records_with_objects(column.type):
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


def records_with_objects(typ: Any) -> bool:
    """A list of structs with struct-typed fields: the type whose objects' null fields
    :func:`json_values` drops."""
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


def is_arrow(values: Any) -> bool:
    return type(values).__module__.startswith("pyarrow") and hasattr(values, "type")


def arrow_rows(values: Any) -> list[Any]:
    """An Arrow column of trajectories as Python values, read as the JSON they were written
    from (:func:`json_values`): when the calls are structs with
    struct-typed fields (arguments read from JSON objects), the null fields of those
    objects are dropped at every depth, since Arrow cannot tell a missing key from a null
    one.  A JSON-text or map column keeps its nulls.  Refuses a malformed column whole."""
    check_arrow(values)
    return json_values(values)


def check_arrow(values: Any) -> None:
    """Raise ValueError if an Arrow array's buffers do not hold what its type says (offsets
    out of range and the like: a broken writer, or a cast that went wrong), or if a struct
    in its type names a field twice (no JSON object can hold that); such a column is
    refused whole, before any of it is read."""
    problem = describe_repeated_field(values.type)
    if problem is not None:
        raise ValueError(f"this Arrow column ({values.type}) cannot be read: {problem}")
    chunks = values.chunks if hasattr(values, "chunks") else [values]
    for chunk in chunks:
        try:
            chunk.validate(full=True)
        except Exception as exc:  # pyarrow.ArrowInvalid and friends
            raise ValueError(f"malformed Arrow column ({values.type}): {exc}") from None


def written_from_buffers(typ: Any, depth: int = 0) -> bool:
    """Whether the native core writes values of Arrow type ``typ`` as JSON text from their
    buffers (its plan's node kinds): nulls, integers, floats but float16, bools, strings,
    structs with distinct field names and lists, nested less than 60 deep.  Both
    implementations' ``arrow_json_texts`` decline every other type (None), so the two
    agree on which columns they write."""
    import pyarrow as pa

    if pa.types.is_struct(typ):
        names = [typ.field(i).name for i in range(typ.num_fields)]
        return (
            depth < 60
            and len(set(names)) == len(names)
            and all(written_from_buffers(typ.field(i).type, depth + 1) for i in range(typ.num_fields))
        )
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return depth < 60 and written_from_buffers(typ.value_type, depth + 1)
    return (
        pa.types.is_null(typ)
        or pa.types.is_integer(typ)
        or (pa.types.is_floating(typ) and not pa.types.is_float16(typ))
        or pa.types.is_boolean(typ)
        or pa.types.is_string(typ)
        or pa.types.is_large_string(typ)
    )
