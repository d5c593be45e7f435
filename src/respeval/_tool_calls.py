"""Reading tool-call trajectories, before anything is interned: the shapes a row may take
(a list of call mappings, JSON text), what makes a row unreadable
(and the message that says why), and canonical arguments, the string two calls' arguments
share exactly when Python ``==`` holds on their decoded JSON.

Both kernel implementations (``respeval._core`` and its twin ``respeval._core_py``) read rows
as this module states, and take from it the names they share (``ARGS_MODES``,
``TRAJECTORY_STATS``, ``MAX_ARGS_DEPTH``); the agents layer compares arguments with
``canonical_args``.  A leaf: it imports nothing from respeval.  Arrow columns of
trajectories are read by :mod:`respeval._arrow_json` (``arrow_rows``) first.

Canonical arguments (``args_mode="json"``): dict keys sorted, ``True``/``False`` written as
``1``/``0`` and integral floats as integers (``True == 1 == 1.0`` in Python), other floats by
``repr`` (shortest round trip), strings quoted with ``\\`` and ``"`` escaped, ``None`` as
``null``; a NaN never equals anything (each occurrence gets its own spelling, as two decoded
NaNs compare unequal).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = [
    "ARGS_MODES",
    "JsonSpans",
    "MAX_ARGS_DEPTH",
    "TRAJECTORY_STATS",
    "canonical_args",
    "checked_tool_name",
    "describe_bad_trajectory",
    "read_trajectory",
]

MAX_ARGS_DEPTH = 100  # nesting levels of a call's arguments (deeper: the row is unreadable)

ARGS_MODES = ("json", "string")

# Per-row integer statistics, in column order of ``trajectory_pair_stats``'s output.
TRAJECTORY_STATS = (
    "n_pred",  # predicted calls
    "n_ref",  # reference calls
    "exact",  # same calls, same order, same length
    "in_order",  # reference is a subsequence of the prediction
    "any_order",  # reference is a sub-multiset of the prediction
    "matched",  # size of a maximum one-to-one matching of equal calls
    "exact_names",  # the four above comparing tool names only
    "in_order_names",
    "any_order_names",
    "matched_names",
    "lcs",  # longest common subsequence of calls
    "lcs_names",  # ... of tool names
    "edit_names",  # Levenshtein distance between the tool-name sequences
    "redundant",  # predicted calls identical to an earlier predicted call
    "first_match",  # 1-based position of the first predicted call that matches; 0 if none
    "discordant",  # matched pairs ordered one way in the prediction, the other in the reference
)


class JsonSpans:
    """Rows of JSON text standing in one UTF-8 buffer, nothing copied: row ``i`` is
    ``data[starts[i]:ends[i]]``, and a negative start is a row without calls (an eval set's
    null or absent tool uses).  The eval-set reader hands its tool-use lists to the
    trajectory kernels this way; a row reads as that text decoded would (a span that is not
    UTF-8 is an unreadable row)."""

    __slots__ = ("data", "ends", "starts")

    def __init__(self, data: Any, starts: Any, ends: Any) -> None:
        self.data = data
        self.starts = np.ascontiguousarray(starts, dtype=np.int64)
        self.ends = np.ascontiguousarray(ends, dtype=np.int64)
        if self.starts.ndim != 1 or self.starts.shape != self.ends.shape:
            raise ValueError("JsonSpans needs as many ends as starts, one of each per row")
        given = self.starts >= 0
        if np.any(given & ((self.ends < self.starts) | (self.ends > memoryview(data).nbytes))):
            raise ValueError("a JsonSpans row ends before it starts or past the end of its buffer")

    def __len__(self) -> int:
        return len(self.starts)

    def take(self, rows: Any) -> JsonSpans:
        """These rows (positions), in this order, over the same buffer."""
        return JsonSpans(self.data, self.starts[rows], self.ends[rows])

    def value(self, row: int) -> Any:
        """Row ``row`` as a row of Python values: its text, or ``[]`` without calls."""
        start, end = int(self.starts[row]), int(self.ends[row])
        if start < 0:
            return []
        try:
            return bytes(memoryview(self.data)[start:end]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def canonical_args(value: Any, nan_counter: list[int] | None = None, _path: str = "args", _depth: int = 0) -> str:
    """The canonical JSON of a decoded JSON value (see the module docstring).

    Raises TypeError naming the path of a value that is not JSON (a set, an object, a
    non-string dict key) and ValueError for arguments nested deeper than ``MAX_ARGS_DEPTH``.
    """
    if _depth > MAX_ARGS_DEPTH:
        # the path of a value this deep is hundreds of characters: its start and end say where
        where = _path if len(_path) <= 80 else f"{_path[:48]}…{_path[-24:]}"
        raise ValueError(f"{where} is nested more than {MAX_ARGS_DEPTH} levels deep")
    if value is None:
        return "null"
    if value is True:
        return "1"
    if value is False:
        return "0"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if value != value:
            if nan_counter is None:
                nan_counter = [0]
            nan_counter[0] += 1
            return f"NaN#{nan_counter[0]}"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer():
            return str(int(value))
        return repr(value)
    if isinstance(value, (list, tuple)):
        return (
            "["
            + ",".join(canonical_args(v, nan_counter, f"{_path}[{i}]", _depth + 1) for i, v in enumerate(value))
            + "]"
        )
    if isinstance(value, dict):
        for k in value:
            if not isinstance(k, str):
                raise TypeError(f"{_path} has a key of type {type(k).__name__} ({k!r}); JSON keys are strings")
        return (
            "{"
            + ",".join(
                _quote(k) + ":" + canonical_args(value[k], nan_counter, f"{_path}.{k}", _depth + 1)
                for k in sorted(value)
            )
            + "}"
        )
    raise TypeError(f"{_path} is a {type(value).__name__}, which is not a JSON value")


def checked_tool_name(mapped: Any, name: str) -> str | None:
    if mapped is not None and not isinstance(mapped, str):
        raise TypeError(f"the name normaliser returned a {type(mapped).__name__} for {name!r}, expected str or None")
    return mapped


def read_trajectory(traj: Any, name_key: str, args_key: str, args_required: bool) -> list[tuple[int, str, Any]]:
    """``(position, name, args)`` of each call of one trajectory (JSON text is decoded first).

    Raises ValueError/TypeError saying what is wrong and where: the message the bulk
    pipeline records for the row (the native core asks this function for it as well).
    """
    if isinstance(traj, str):
        if not traj.strip():
            raise ValueError("empty text: expected a JSON list of calls")
        try:
            traj = json.loads(traj)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not JSON: {exc}") from None
    if traj is None:
        raise ValueError("missing trajectory (null): expected a list of calls")
    if not isinstance(traj, (list, tuple)):
        raise TypeError(f"trajectory is a {type(traj).__name__}, expected a list of calls")
    out = []
    for i, call in enumerate(traj):
        if not isinstance(call, Mapping):
            raise TypeError(f"call {i} is a {type(call).__name__}, expected an object with {name_key!r}")
        name = call.get(name_key)
        if not isinstance(name, str):
            if name is None:
                raise ValueError(f"call {i} has no {name_key!r}")
            raise TypeError(f"call {i}: {name_key!r} is a {type(name).__name__}, expected a string")
        if args_key in call:
            args = call[args_key]
        elif args_required:
            raise ValueError(f"call {i} ({name}) has no {args_key!r}")
        else:
            args = None
        if args is not None and not isinstance(args, dict):
            raise TypeError(f"call {i} ({name}): {args_key!r} is a {type(args).__name__}, expected a JSON object")
        out.append((i, name, args))
    return out


def describe_bad_trajectory(
    traj: Any, name_key: str, args_key: str, args_required: bool, args_mode: str, name_fn: Any = None
) -> str:
    """Why ``traj`` cannot be interned (the message of ``CallTable.intern``'s error entry)."""
    try:
        for i, name, args in read_trajectory(traj, name_key, args_key, args_required):
            if name_fn is not None:
                mapped = checked_tool_name(name_fn(name), name)
                if mapped is None:
                    continue
                name = mapped
            if args_mode == "json":
                canonical_args(args, None, f"call {i} ({name}) {args_key}")
            else:
                json.dumps(args)
    except (TypeError, ValueError) as exc:
        return str(exc)
    except RecursionError:
        return "arguments nested too deeply"
    return "unreadable trajectory"
