"""Argument-level partial credit and graded trajectory alignment (respeval's own; no anchor
has these, ``agent_semantics.md`` §4.1-4.2).

A matched call scores the mean, over the expected argument keys, of a per-key matcher:
exact JSON equality by default, or ``numeric(rel, abs)``, ``casefold()``,
``normalized_string()`` (BFCL's string rules), ``unordered()`` (a list as a multiset),
``allowed_values([...])`` (BFCL ground truth: any listed value, ``""`` = may be omitted),
``regex(pattern)`` or ``ignore()``, configurable per tool and per key.  Missing, extra and
wrong keys are reported separately.

``align`` then pairs predicted and reference calls with that similarity (0 across tool
names): ``order="any"`` takes a maximum-weight one-to-one assignment (Hungarian, per tool
name), ``order="in_order"`` a maximum-weight order-preserving alignment (weighted LCS), and
reports graded precision, recall and F1 instead of 0/1 per call.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval._tool_calls import canonical_args

__all__ = [
    "Alignment",
    "ArgumentMatcher",
    "ArgumentScore",
    "Rules",
    "align",
    "allowed_values",
    "casefold",
    "exact",
    "ignore",
    "normalized_string",
    "numeric",
    "regex",
    "unordered",
]

_ABSENT = object()


@dataclass(frozen=True)
class KeyMatcher:
    """``fn(actual, expected) -> bool``; ``may_omit``: a missing key scores 1."""

    name: str
    fn: Callable[[Any, Any], bool]
    may_omit: bool = False
    has_expected: bool = False  # the matcher carries its own expected values (allowed_values)


def _same(a: Any, b: Any) -> bool:
    try:
        return canonical_args(a) == canonical_args(b)
    except (TypeError, ValueError):
        return a == b


def exact() -> KeyMatcher:
    """JSON-value equality (Python ``==`` on decoded JSON: ``1 == 1.0``, key order free)."""
    return KeyMatcher("exact", _same)


def ignore() -> KeyMatcher:
    """Any value, or none, is fine."""
    return KeyMatcher("ignore", lambda a, b: True, may_omit=True)


def numeric(rel: float = 0.0, abs: float = 0.0) -> KeyMatcher:  # noqa: A002 - mirrors math.isclose
    """Numbers within ``rel`` (relative) or ``abs`` (absolute) tolerance; booleans are not numbers."""

    def fn(a: Any, b: Any) -> bool:
        ok = (int, float)
        if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, ok) or not isinstance(b, ok):
            return _same(a, b)
        return math.isclose(a, b, rel_tol=rel, abs_tol=abs)

    return KeyMatcher(f"numeric(rel={rel:g},abs={abs:g})", fn)


def casefold() -> KeyMatcher:
    """Strings equal after ``str.casefold()``."""
    return KeyMatcher(
        "casefold",
        lambda a, b: a.casefold() == b.casefold() if isinstance(a, str) and isinstance(b, str) else _same(a, b),
    )


_BFCL_STRIP = re.compile(r"[ ,./\-_*^]")


def _bfcl_norm(s: str) -> str:
    return _BFCL_STRIP.sub("", s).lower().replace("'", '"')


def normalized_string() -> KeyMatcher:
    """BFCL's string rules: spaces and ``, . / - _ * ^`` removed, lower-cased, ``'`` as ``"``."""
    return KeyMatcher(
        "normalized_string",
        lambda a, b: _bfcl_norm(a) == _bfcl_norm(b) if isinstance(a, str) and isinstance(b, str) else _same(a, b),
    )


def unordered() -> KeyMatcher:
    """Lists equal as multisets (order free), items compared as JSON values."""

    def fn(a: Any, b: Any) -> bool:
        if isinstance(a, list) and isinstance(b, list):
            try:
                return sorted(map(canonical_args, a)) == sorted(map(canonical_args, b))
            except (TypeError, ValueError):
                return False
        return _same(a, b)

    return KeyMatcher("unordered", fn)


def regex(pattern: str) -> KeyMatcher:
    """The actual value is a string fully matching ``pattern`` (the expected value is ignored)."""
    compiled = re.compile(pattern)
    return KeyMatcher(
        f"regex({pattern})", lambda a, b: isinstance(a, str) and compiled.fullmatch(a) is not None, has_expected=True
    )


def allowed_values(values: Sequence[Any]) -> KeyMatcher:
    """BFCL ground truth: the actual value equals one of ``values`` (strings under BFCL's
    normalisation, booleans never equal numbers); ``""`` in the list means the key may be
    omitted."""
    allowed = list(values)
    may_omit = "" in allowed

    def one(a: Any, b: Any) -> bool:
        if isinstance(a, bool) != isinstance(b, bool):
            return False
        if isinstance(a, str) and isinstance(b, str):
            return _bfcl_norm(a) == _bfcl_norm(b)
        return _same(a, b)

    return KeyMatcher(
        "allowed_values", lambda a, b: any(one(a, v) for v in allowed if v != ""), may_omit=may_omit, has_expected=True
    )


@dataclass(frozen=True)
class ArgumentScore:
    """Mean over the expected keys of the per-key matches; the keys that were missing, extra
    (in the actual call only) or wrong."""

    score: float
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()


class ArgumentMatcher:
    """Per-key matchers for one tool's arguments (keys not listed: ``default``)."""

    def __init__(self, keys: Mapping[str, KeyMatcher] | None = None, default: KeyMatcher | None = None) -> None:
        self.keys = dict(keys or {})
        self.default = default or exact()

    def score(self, actual: Mapping[str, Any] | None, expected: Mapping[str, Any] | None = None) -> ArgumentScore:
        actual = actual or {}
        expected = expected or {}
        names = list(expected) + [k for k, m in self.keys.items() if m.has_expected and k not in expected]
        if not names:
            return ArgumentScore(1.0, extra=tuple(k for k in actual))
        total = 0.0
        missing, wrong = [], []
        for key in names:
            matcher = self.keys.get(key, self.default)
            if key not in actual:
                if matcher.may_omit:
                    total += 1.0
                else:
                    missing.append(key)
                continue
            if matcher.fn(actual[key], expected.get(key, _ABSENT)):
                total += 1.0
            else:
                wrong.append(key)
        extra = tuple(k for k in actual if k not in names)
        return ArgumentScore(total / len(names), tuple(missing), extra, tuple(wrong))


@dataclass
class Rules:
    """Argument matchers per tool name (tools not listed: exact JSON equality per key)."""

    tools: Mapping[str, ArgumentMatcher] = field(default_factory=dict)
    default: ArgumentMatcher = field(default_factory=ArgumentMatcher)

    def for_tool(self, name: str) -> ArgumentMatcher:
        return self.tools.get(name, self.default)


def _hungarian_max(weights: list[list[float]]) -> list[tuple[int, int]]:
    """Maximum-weight assignment of a rectangular matrix (rows <= cols after transposing),
    by the O(n^2 m) shortest-augmenting-path method on costs ``-w``."""
    n = len(weights)
    m = len(weights[0]) if n else 0
    if n == 0 or m == 0:
        return []
    transposed = n > m
    w = [list(r) for r in zip(*weights)] if transposed else weights
    n, m = len(w), len(w[0])
    inf = math.inf
    u = [0.0] * (n + 1)
    v = [0.0] * (m + 1)
    p = [0] * (m + 1)
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = p[j0], inf, 0
            for j in range(1, m + 1):
                if not used[j]:
                    cur = -w[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    pairs = [(p[j] - 1, j - 1) for j in range(1, m + 1) if p[j]]
    return [(b, a) for a, b in pairs] if transposed else pairs


@dataclass(frozen=True)
class Alignment:
    """Graded precision / recall / F1 of one row, and its pairs ``(pred, ref, similarity)``."""

    precision: float
    recall: float
    f1: float
    pairs: tuple[tuple[int, int, float], ...]


def _calls(traj: Sequence[Mapping[str, Any]], name_key: str, args_key: str) -> list[tuple[str, Any]]:
    out = []
    for i, c in enumerate(traj):
        if not isinstance(c, Mapping) or not isinstance(c.get(name_key), str):
            raise ValueError(f"call {i} has no {name_key!r}")
        args = c.get(args_key)
        if args is not None and not isinstance(args, Mapping):
            raise ValueError(f"call {i} ({c[name_key]}): {args_key!r} is a {type(args).__name__}, expected an object")
        out.append((c[name_key], args))
    return out


def align(
    predicted: Sequence[Mapping[str, Any]],
    reference: Sequence[Mapping[str, Any]],
    *,
    rules: Rules | None = None,
    order: str = "any",
    name_key: str = "tool_name",
    args_key: str = "tool_input",
) -> Alignment:
    """Graded alignment of one predicted trajectory with its reference (module docstring).

    Empty sides follow the Vertex conventions: both empty -> 1, 1, 1; one empty -> 0 where
    the empty side is the denominator's other side (precision of an empty prediction is 0
    unless the reference is empty, recall of an empty reference is 1).
    """
    if order not in ("any", "in_order"):
        raise ValueError(f"order must be 'any' or 'in_order', not {order!r}")
    rules = rules or Rules()
    p = _calls(predicted, name_key, args_key)
    r = _calls(reference, name_key, args_key)
    sim = [[rules.for_tool(rn).score(pa, ra).score if pn == rn else 0.0 for (rn, ra) in r] for (pn, pa) in p]
    pairs: list[tuple[int, int, float]] = []
    if order == "any":
        groups: dict[str, tuple[list[int], list[int]]] = {}
        for i, (name, _) in enumerate(p):
            groups.setdefault(name, ([], []))[0].append(i)
        for j, (name, _) in enumerate(r):
            groups.setdefault(name, ([], []))[1].append(j)
        for pi, ri in groups.values():
            if pi and ri:
                sub = [[sim[i][j] for j in ri] for i in pi]
                pairs += [(pi[a], ri[b], sub[a][b]) for a, b in _hungarian_max(sub) if sub[a][b] > 0]
    else:
        n, m = len(p), len(r)
        best = [[0.0] * (m + 1) for _ in range(n + 1)]
        for i in range(1, n + 1):
            for j in range(1, m + 1):
                best[i][j] = max(best[i - 1][j], best[i][j - 1], best[i - 1][j - 1] + sim[i - 1][j - 1])
        i, j = n, m
        while i > 0 and j > 0:
            if sim[i - 1][j - 1] > 0 and best[i][j] == best[i - 1][j - 1] + sim[i - 1][j - 1]:
                pairs.append((i - 1, j - 1, sim[i - 1][j - 1]))
                i, j = i - 1, j - 1
            elif best[i][j] == best[i - 1][j]:
                i -= 1
            else:
                j -= 1
        pairs.reverse()
    total = math.fsum(s for _, _, s in pairs)
    precision = total / len(p) if p else (1.0 if not r else 0.0)
    recall = total / len(r) if r else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Alignment(precision, recall, f1, tuple(sorted(pairs)))
