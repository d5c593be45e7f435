"""Turning user inputs into plain lists of str, with errors that name the row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from respeval import _backend


def _to_list(values: Any, name: str) -> list:
    if isinstance(values, str):
        raise TypeError(f"{name} must be a sequence of texts, not a single str")
    if isinstance(values, list):
        return values
    to_pylist = getattr(values, "to_pylist", None)  # pyarrow Array / ChunkedArray
    if callable(to_pylist):
        return to_pylist()
    tolist = getattr(values, "tolist", None)  # numpy arrays, pandas Series
    if callable(tolist):
        return tolist()
    try:
        return list(values)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of texts, got {type(values).__name__}") from None


def text_list(values: Any, name: str) -> list[str]:
    """``values`` as a list of str; a ``None`` or non-str item raises naming its row."""
    items = _to_list(values, name)
    start = _backend.get().first_non_str(items)  # the core finds the first bad row, if any
    if start < 0:
        return items
    for row in range(start, len(items)):
        item = items[row]
        if not isinstance(item, str):
            what = "None" if item is None else type(item).__name__
            raise TypeError(f"{name}[{row}] is {what}, expected str")
    return items


def reference_lists(values: Any, name: str) -> tuple[list[list[str]], bool]:
    """References per row as lists of str; each row may hold one str or a non-empty list.

    Returns the lists and whether every row had exactly one reference given as a str.
    """
    items = _to_list(values, name)
    single = True
    out: list[list[str]] = []
    for row, item in enumerate(items):
        if isinstance(item, str):
            out.append([item])
            continue
        single = False
        if item is None:
            raise TypeError(f"{name}[{row}] is None, expected str or a list of str")
        refs = item.tolist() if hasattr(item, "tolist") else item
        if not isinstance(refs, (list, tuple)):
            raise TypeError(f"{name}[{row}] is {type(item).__name__}, expected str or a list of str")
        if not refs:
            raise ValueError(f"{name}[{row}] is an empty list: every row needs at least one reference")
        for j, ref in enumerate(refs):
            if not isinstance(ref, str):
                what = "None" if ref is None else type(ref).__name__
                raise TypeError(f"{name}[{row}][{j}] is {what}, expected str")
        out.append(list(refs))
    return out, single


def same_length(a: Sequence, b: Sequence, name_a: str, name_b: str) -> None:
    if len(a) != len(b):
        raise ValueError(f"{name_a} has {len(a)} rows but {name_b} has {len(b)}: they must pair up row by row")
