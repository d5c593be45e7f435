"""Trajectory kernels, pure-Python twin of ``cext/trajectory.pxi`` (same names, same results).

A tool call is interned as two ids: the id of its (normalised) tool name and the id of the
pair (name id, canonical arguments).  Two calls are equal iff their call ids are equal, and
have the same tool iff their name ids are equal, so every trajectory metric is integer work
on CSR arrays (``ids[off[r]:off[r+1]]`` is row ``r``'s trajectory).

Canonical arguments (``args_mode="json"``) make Python ``==`` on decoded JSON an identity of
strings: dict keys sorted, ``True``/``False`` written as ``1``/``0`` and integral floats as
integers (``True == 1 == 1.0`` in Python), other floats by ``repr`` (shortest round trip),
strings quoted with ``\\`` and ``"`` escaped, ``None`` as ``null``; a NaN never equals
anything (each occurrence gets its own spelling, as two decoded NaNs compare unequal).
``args_mode="string"`` compares ``json.dumps(args)`` as the Vertex SDK sends it (insertion
order, default separators).

``CallTable.intern`` takes lists of call dicts, JSON text (a str per row, or spans of one
buffer: ``JsonSpans``) and Arrow columns (a string column of JSON text, or list<struct>
values, read as ``arrow_rows`` does).  The
native core reads JSON text and Arrow buffers without building Python objects; this twin
decodes them and states the result both must give.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Sequence
from typing import Any

from respeval._arrow_json import arrow_rows, check_arrow, is_arrow, json_values, written_from_buffers
from respeval._tool_calls import (
    ARGS_MODES,
    TRAJECTORY_STATS,
    JsonSpans,
    canonical_args,
    checked_tool_name,
    read_trajectory,
)

__all__ = [
    "ARGS_MODES",
    "TRAJECTORY_STATS",
    "CallTable",
    "arrow_json_texts",
    "name_substitutions",
    "trajectory_pair_stats",
]

N_STATS = len(TRAJECTORY_STATS)


class CallTable:
    """Interns tool calls: name -> dense id, (name id, canonical arguments) -> dense id, both in
    first-seen order (as the native ``CallTable``)."""

    def __init__(self) -> None:
        self._names: dict[str, int] = {}
        self._name_list: list[str] = []
        self._calls: dict[tuple[int, str], int] = {}
        self._call_list: list[tuple[int, str]] = []
        self._name_cache: dict[str, str | None] = {}
        self._nan = [0]

    def __len__(self) -> int:
        return len(self._calls)

    @property
    def n_names(self) -> int:
        return len(self._name_list)

    def name(self, i: int) -> str:
        if not 0 <= i < len(self._name_list):
            raise IndexError(f"name id {i} out of range for {len(self._name_list)} names")
        return self._name_list[i]

    def names(self) -> list[str]:
        return list(self._name_list)

    def name_id(self, name: str, default: int = -1) -> int:
        return self._names.get(name, default)

    def call(self, i: int) -> tuple[str, str]:
        """Call ``i`` as (tool name, canonical arguments)."""
        if not 0 <= i < len(self._call_list):
            raise IndexError(f"call id {i} out of range for {len(self._call_list)} calls")
        nid, canon = self._call_list[i]
        return self._name_list[nid], canon

    def _name(self, name: str) -> int:
        i = self._names.get(name)
        if i is None:
            i = self._names[name] = len(self._name_list)
            self._name_list.append(name)
        return i

    def intern(
        self,
        trajectories: Sequence[Any],
        name_key: str = "tool_name",
        args_key: str = "tool_input",
        args_required: bool = True,
        args_mode: str = "json",
        name_fn: Callable[[str], str | None] | None = None,
    ) -> tuple[bytes, bytes, bytes, list[tuple[int, str]]]:
        """Call ids, name ids and row offsets (int32, int32, int64 buffers) of ``trajectories``.

        Each trajectory is a list of mappings with a str ``name_key`` and, under ``args_key``,
        a JSON object (or null) of arguments; a str row is JSON text and is decoded first;
        an Arrow column is read as ``arrow_rows`` reads it; ``JsonSpans`` rows are JSON text
        standing in one buffer (``JsonSpans.value``).
        ``name_fn`` maps each name to its normalised form, or to None to drop the call.  A row
        that cannot be read becomes an empty trajectory and is listed in the returned errors
        as ``(row, reason)``.
        """
        if args_mode not in ARGS_MODES:
            raise ValueError(f"args_mode must be one of {ARGS_MODES}, not {args_mode!r}")
        if is_arrow(trajectories):
            trajectories = arrow_rows(trajectories)
        spans = trajectories if isinstance(trajectories, JsonSpans) else None
        calls = array("i")
        names = array("i")
        offsets = array("q", [0])
        errors: list[tuple[int, str]] = []
        for row, traj in enumerate(range(len(spans)) if spans is not None else trajectories):
            mark = len(calls)
            try:
                if spans is not None:
                    traj = spans.value(row)
                self._intern_row(traj, name_key, args_key, args_required, args_mode, name_fn, calls, names)
            except RecursionError:
                del calls[mark:]
                del names[mark:]
                errors.append((row, "arguments nested too deeply"))
            except (TypeError, ValueError) as exc:
                del calls[mark:]
                del names[mark:]
                errors.append((row, str(exc)))
            offsets.append(len(calls))
        return calls.tobytes(), names.tobytes(), offsets.tobytes(), errors

    def _intern_row(
        self,
        traj: Any,
        name_key: str,
        args_key: str,
        args_required: bool,
        args_mode: str,
        name_fn: Callable[[str], str | None] | None,
        calls: array,
        names: array,
    ) -> None:
        for i, name, args in read_trajectory(traj, name_key, args_key, args_required):
            if name_fn is not None:
                if name in self._name_cache:
                    mapped = self._name_cache[name]
                else:
                    mapped = self._name_cache[name] = checked_tool_name(name_fn(name), name)
                if mapped is None:
                    continue
                name = mapped
            if args_mode == "json":
                canon = canonical_args(args, self._nan, f"call {i} ({name}) {args_key}")
            else:
                canon = json.dumps(args)
            nid = self._name(name)
            key = (nid, canon)
            cid = self._calls.get(key)
            if cid is None:
                cid = self._calls[key] = len(self._calls)
                self._call_list.append(key)
            calls.append(cid)
            names.append(nid)


def _view(buf: Any, code: str) -> Sequence[int]:
    return memoryview(buf).cast("B").cast(code)  # type: ignore[call-overload]


def _lcs(a: Sequence[int], b: Sequence[int]) -> int:
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _edit_matrix(r: Sequence[int], p: Sequence[int]) -> list[list[int]]:
    d = [[0] * (len(p) + 1) for _ in range(len(r) + 1)]
    for i in range(len(r) + 1):
        d[i][0] = i
    for j in range(len(p) + 1):
        d[0][j] = j
    for i in range(1, len(r) + 1):
        for j in range(1, len(p) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (r[i - 1] != p[j - 1]))
    return d


def _subsequence(r: Sequence[int], p: Sequence[int]) -> bool:
    k = 0
    for x in p:
        if k < len(r) and x == r[k]:
            k += 1
    return k == len(r)


def _greedy_matches(r: Sequence[int], p: Sequence[int]) -> tuple[list[bool], list[bool], list[tuple[int, int]]]:
    """Each reference call, in order, takes the first unused equal predicted call (as ADK's
    ANY_ORDER does); for an equivalence relation this is a maximum matching.  Returns the
    used predicted calls, the matched reference calls and the (predicted, reference) pairs."""
    used = [False] * len(p)
    hit = [False] * len(r)
    pairs = []
    for j, x in enumerate(r):
        for i, y in enumerate(p):
            if not used[i] and y == x:
                used[i] = True
                hit[j] = True
                pairs.append((i, j))
                break
    return used, hit, pairs


def _discordant(pairs: list[tuple[int, int]]) -> int:
    ref_order = [j for _, j in sorted(pairs)]
    return sum(a > b for k, a in enumerate(ref_order) for b in ref_order[k + 1 :])


def trajectory_pair_stats(
    pred_calls: Any,
    pred_names: Any,
    pred_off: Any,
    ref_calls: Any,
    ref_names: Any,
    ref_off: Any,
    out: Any,
    pred_matched: Any = None,
    ref_matched: Any = None,
    threads: int | None = None,
) -> None:
    """Row ``r``'s ``TRAJECTORY_STATS`` into ``out[r, :]`` (int64, rows x N_STATS), predicted
    row ``r`` against reference row ``r``; optionally per-call matched flags (uint8, one per
    call) of the greedy one-to-one matching."""
    pc, pn, po = _view(pred_calls, "i"), _view(pred_names, "i"), _view(pred_off, "q")
    rc, rn, ro = _view(ref_calls, "i"), _view(ref_names, "i"), _view(ref_off, "q")
    rows = len(po) - 1
    if len(ro) - 1 != rows:
        raise ValueError(f"{rows} predicted rows but {len(ro) - 1} reference rows")
    _check_csr(pc, pn, po, "pred")
    _check_csr(rc, rn, ro, "ref")
    o = memoryview(out)
    shape = o.shape or ()
    if o.ndim != 2 or shape[0] != rows or shape[1] != N_STATS or o.format not in ("q", "l"):
        raise ValueError(f"out must be an int64 array of shape ({rows}, {N_STATS})")
    pm = memoryview(pred_matched).cast("B") if pred_matched is not None else None
    rm = memoryview(ref_matched).cast("B") if ref_matched is not None else None
    if pm is not None and len(pm) != len(pc):
        raise ValueError("pred_matched must have one entry per predicted call")
    if rm is not None and len(rm) != len(rc):
        raise ValueError("ref_matched must have one entry per reference call")
    for r in range(rows):
        p, p_n = list(pc[po[r] : po[r + 1]]), list(pn[po[r] : po[r + 1]])
        q, q_n = list(rc[ro[r] : ro[r + 1]]), list(rn[ro[r] : ro[r + 1]])
        used, hit, pairs = _greedy_matches(q, p)
        used_n, _, _ = _greedy_matches(q_n, p_n)
        matched = sum(hit)
        matched_n = sum(used_n)
        first = next((i + 1 for i, u in enumerate(used) if u), 0)
        stats = (
            len(p),
            len(q),
            int(p == q),
            int(_subsequence(q, p)),
            int(matched == len(q)),
            matched,
            int(p_n == q_n),
            int(_subsequence(q_n, p_n)),
            int(matched_n == len(q_n)),
            matched_n,
            _lcs(p, q),
            _lcs(p_n, q_n),
            _edit_matrix(q_n, p_n)[-1][-1],
            len(p) - len(set(p)),
            first,
            _discordant(pairs),
        )
        for k, v in enumerate(stats):
            o[r, k] = v
        if pm is not None:
            for i, u in enumerate(used):
                pm[po[r] + i] = u
        if rm is not None:
            for j, h in enumerate(hit):
                rm[ro[r] + j] = h


def _check_csr(ids: Sequence[int], names: Sequence[int], off: Sequence[int], what: str) -> None:
    if len(off) < 1 or off[0] != 0 or off[-1] != len(ids) or len(names) != len(ids):
        raise ValueError(f"{what}: offsets must start at 0 and end at the number of calls (one name per call)")
    for k in range(len(off) - 1):
        if off[k] > off[k + 1]:
            raise ValueError(f"{what}: offsets must not decrease (row {k})")


def name_substitutions(pred_names: Any, pred_off: Any, ref_names: Any, ref_off: Any) -> tuple[bytes, bytes, bytes]:
    """The substitutions of a minimum edit alignment of each row's tool names: (row int64,
    reference name int32, predicted name int32) buffers, one entry per substituted position.

    Traceback from the end prefers, in order: a match, a substitution, a missed reference
    call, an extra predicted call (so results are deterministic and equal to the native).
    """
    pn, po = _view(pred_names, "i"), _view(pred_off, "q")
    rn, ro = _view(ref_names, "i"), _view(ref_off, "q")
    rows = len(po) - 1
    if len(ro) - 1 != rows:
        raise ValueError(f"{rows} predicted rows but {len(ro) - 1} reference rows")
    _check_csr(pn, pn, po, "pred")
    _check_csr(rn, rn, ro, "ref")
    out_rows, out_ref, out_pred = array("q"), array("i"), array("i")
    for r in range(rows):
        p = list(pn[po[r] : po[r + 1]])
        q = list(rn[ro[r] : ro[r + 1]])
        d = _edit_matrix(q, p)
        i, j = len(q), len(p)
        found = []
        while i > 0 and j > 0:
            if q[i - 1] == p[j - 1] and d[i][j] == d[i - 1][j - 1]:
                i, j = i - 1, j - 1
            elif d[i][j] == d[i - 1][j - 1] + 1:
                found.append((q[i - 1], p[j - 1]))
                i, j = i - 1, j - 1
            elif d[i][j] == d[i - 1][j] + 1:
                i -= 1
            else:
                j -= 1
        for a, b in reversed(found):
            out_rows.append(r)
            out_ref.append(a)
            out_pred.append(b)
    return out_rows.tobytes(), out_ref.tobytes(), out_pred.tobytes()


def arrow_json_texts(column: Any) -> list[str | None] | None:
    """The JSON text of each value of a nested Arrow column (a list or struct type), as
    ``json.dumps`` writes ``respeval._arrow_json.json_values`` of it (null rows: None); None
    for a column of another type, or holding types the core writes only through Python
    values (maps, timestamps, nesting 60 deep, ...).  A malformed column is refused, as
    ``check_arrow`` refuses it."""
    import pyarrow as pa

    typ = column.type
    if not (pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_struct(typ)):
        return None
    check_arrow(column)
    if not written_from_buffers(typ):
        return None
    return [None if v is None else json.dumps(v, ensure_ascii=False) for v in json_values(column)]
