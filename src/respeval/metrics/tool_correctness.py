"""deepeval's ``ToolCorrectnessMetric`` score (deepeval 4.3.1), as its own metric.

``deepeval_tool_correctness`` reproduces deepeval's deterministic score of the tools an
agent called (``predicted_trajectory``) against the expected tools
(``reference_trajectory``), with deepeval's option names mapped as
``exact_match`` (``should_exact_match``), ``consider_ordering``
(``should_consider_ordering``) and ``input_parameters`` (``ToolCallParams.INPUT_PARAMETERS``
in ``evaluation_params``).  It is deepeval's rule, not respeval's: see
``agent_semantics.md`` §3.1.  Per row:

* ``exact_match``: 1.0 when both lists have the same length and, position by position, the
  same tool name (and, with ``input_parameters``, equal arguments); both empty: 1.0.
* ``consider_ordering``: a weighted longest common subsequence of the expected against the
  called tools (same name required; weight 1, or the argument credit below), read back
  from the end of the DP table as deepeval does, divided by the number of expected tools.
* otherwise: each expected tool, in order, takes the not-yet-used called tool of the same
  name with the highest credit (the first one on ties); the credits are summed and divided
  by the number of expected tools.  "Used" is deepeval's set of *equal* calls (same name,
  same arguments), so two identical called tools share one slot: expected ``[a(x=1),
  a(x=1)]`` against called ``[a(x=1), a(x=1)]`` scores 0.5.

Empty lists: both empty 1.0; expected empty (something called) 0.0.  Argument credit with
``input_parameters``: 1.0 if the argument objects are equal, else over the union of their
keys, ``1/|union|`` per key present on both sides with equal values, and for a key whose
two values are both objects, their own credit ``/|union|`` (recursively).  Values compare
as decoded JSON with Python's ``==`` (``1 == 1.0``, key order irrelevant).

deepeval sums a nested object's key credits in the iteration order of a Python set of
strings, which changes with the process's hash seed; respeval adds them in the expected
object's key order.  The two can differ in the last bit only when arguments nest objects
that match partially.  Arguments that are ``null`` count as an object without keys (deepeval
fails on them).  The optional LLM tool-selection step (``available_tools``) is a judge
method, not part of this score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from respeval._renamed import renamed_arguments, renamed_value
from respeval._tool_calls import canonical_args, read_trajectory
from respeval.metrics.base import ChunkScores, MetricResult, RowValueError, check_flag, check_options
from respeval.metrics.registry import MetricOptions, MetricSpec
from respeval.metrics.signature import Signature
from respeval.metrics.trajectory import python_rows

__all__ = ["ToolCorrectnessFamily", "ToolCorrectnessResult", "argument_credit", "deepeval_tool_correctness"]

METRIC = "deepeval_tool_correctness"
OPTIONS = ("exact_match", "consider_ordering", "input_parameters", "name_key", "args_key", "args_required")

# one call: (name, arguments, equality key of deepeval's ToolCall: name + arguments)
_Call = tuple[str, Any, tuple[str, str]]


def argument_credit(expected: Any, called: Any) -> float:
    """deepeval's partial credit of two argument objects (see the module docstring)."""
    if expected == called:
        return 1.0
    exp = expected if isinstance(expected, Mapping) else {}
    got = called if isinstance(called, Mapping) else {}
    union = len(set(exp) | set(got))
    credit: float = 0
    for key in exp:
        if key not in got:
            continue
        if exp[key] == got[key]:
            credit += 1 / union
        elif isinstance(exp[key], Mapping) and isinstance(got[key], Mapping):
            credit += argument_credit(exp[key], got[key]) / union
    return credit


def _calls(traj: Any, name_key: str, args_key: str, args_required: bool) -> list[_Call]:
    out = []
    for i, name, args in read_trajectory(traj, name_key, args_key, args_required):
        out.append((name, args, (name, canonical_args(args, None, f"call {i} ({name}) {args_key}"))))
    return out


def _exact(called: Sequence[_Call], expected: Sequence[_Call], with_args: bool) -> float:
    if len(called) != len(expected):
        return 0.0
    for c, e in zip(called, expected):
        if c[0] != e[0] or (with_args and c[2] != e[2]):
            return 0.0
    return 1.0


def _credit(expected: _Call, called: _Call, with_args: bool) -> float:
    return 1.0 * argument_credit(expected[1], called[1]) if with_args else 1.0


def _best_unused(called: Sequence[_Call], expected: Sequence[_Call], with_args: bool) -> float:
    if not expected:
        return 1.0 if not called else 0.0
    total = 0.0
    used: set[tuple[str, str]] = set()
    for e in expected:
        best, best_key = 0.0, None
        for c in called:
            if c[2] in used or c[0] != e[0]:
                continue
            credit = _credit(e, c, with_args)
            if credit > best:
                best, best_key = credit, c[2]
        if best > 0:
            total += best
            used.add(best_key)  # type: ignore[arg-type]
    return total / len(expected)


def _weighted_lcs(called: Sequence[_Call], expected: Sequence[_Call], with_args: bool) -> float:
    m, n = len(expected), len(called)
    if m == 0:
        return 1.0 if n == 0 else 0.0
    table = [[0.0] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        above, row = table[i - 1], table[i]
        for j in range(1, n + 1):
            skip = max(above[j], row[j - 1])
            if expected[i - 1][0] != called[j - 1][0]:
                row[j] = skip
                continue
            credit = _credit(expected[i - 1], called[j - 1], with_args)
            take = above[j - 1] + credit if credit > 0 else 0
            row[j] = max(above[j], row[j - 1], take)
    # read the subsequence back from the end: prefer dropping an expected tool, then a
    # called one; a diagonal step adds what it contributed to the table
    total = 0.0
    i, j = m, n
    while i > 0 and j > 0:
        here = table[i][j]
        if here == table[i - 1][j]:
            i -= 1
        elif here == table[i][j - 1]:
            j -= 1
        else:
            total += here - table[i - 1][j - 1]
            i, j = i - 1, j - 1
    return total / m


class ToolCorrectnessFamily:
    """``deepeval_tool_correctness`` as a metric family (``inputs = "json"``); the corpus
    value is the row mean."""

    name = METRIC
    inputs = "json"

    def __init__(
        self,
        *,
        exact_match: bool = False,
        consider_ordering: bool = False,
        input_parameters: bool = False,
        name_key: str = "tool_name",
        args_key: str = "tool_input",
        args_required: bool | None = None,
    ) -> None:
        self.exact_match = check_flag(exact_match, "exact_match", METRIC)
        self.consider_ordering = check_flag(consider_ordering, "consider_ordering", METRIC)
        self.input_parameters = check_flag(input_parameters, "input_parameters", METRIC)
        self.name_key = name_key
        self.args_key = args_key
        self.args_required = (
            (args_key == "tool_input") if args_required is None else check_flag(args_required, "args_required", METRIC)
        )
        self.stat_names: tuple[str, ...] = (METRIC,)
        self.headline: tuple[str, ...] = (METRIC,)

    def _rule(self) -> str:
        if self.exact_match:
            return "exact"
        return "ordering" if self.consider_ordering else "best_unused"

    def _read(self, rows: list, what: str) -> tuple[list[list[_Call] | None], dict[int, str]]:
        out: list[list[_Call] | None] = []
        errors = {}
        for row, traj in enumerate(rows):
            try:
                out.append(_calls(traj, self.name_key, self.args_key, self.args_required))
            except (TypeError, ValueError) as exc:
                out.append(None)
                errors[row] = f"{what}: {exc}"
            except RecursionError:
                out.append(None)
                errors[row] = f"{what}: arguments nested too deeply"
        return out, errors

    def prepare(self, references: list) -> tuple[list[list[_Call] | None], dict[int, str]]:
        return self._read(python_rows(references, "reference"), "reference_trajectory")

    def score(self, prepared: tuple[list[list[_Call] | None], dict[int, str]], predictions: list) -> ChunkScores:
        expected, ref_errors = prepared
        called, pred_errors = self._read(python_rows(predictions, "predicted"), "predicted_trajectory")
        if len(called) != len(expected):
            raise ValueError(f"{len(called)} predicted trajectories but {len(expected)} reference trajectories")
        errors = dict(ref_errors)
        for row, reason in pred_errors.items():
            errors[row] = f"{errors[row]}; {reason}" if row in errors else reason
        rule = {"exact": _exact, "ordering": _weighted_lcs, "best_unused": _best_unused}[self._rule()]
        values = np.full(len(called), np.nan)
        for row, (c, e) in enumerate(zip(called, expected)):
            if c is not None and e is not None:
                values[row] = rule(c, e, self.input_parameters)
        stats = np.nan_to_num(values, nan=0.0)[:, None]
        return ChunkScores({METRIC: values}, stats, errors)

    def corpus(self, sums: np.ndarray, rows: Any) -> dict[str, Any]:
        n = np.maximum(np.asarray(rows, dtype=np.float64), 1)
        return {METRIC: np.asarray(sums, dtype=np.float64)[..., 0] / n}

    def signature(self) -> str:
        args = "input_parameters" if self.input_parameters else "names"
        return str(Signature(METRIC, deepeval="4.3.1", rule=self._rule(), compare=args))


class ToolCorrectnessResult(MetricResult):
    """Per-row ``deepeval_tool_correctness``."""


@renamed_arguments(predicted="predictions", reference="references")
def deepeval_tool_correctness(
    predictions: Any, references: Any, *, on_error: str = "fail", **options: Any
) -> ToolCorrectnessResult:
    """deepeval's ``ToolCorrectnessMetric`` score of each predicted trajectory (the tools
    called) against its reference (the expected tools); see the module docstring.

    Options: ``exact_match``, ``consider_ordering``, ``input_parameters`` (deepeval's
    ``should_exact_match``, ``should_consider_ordering``, ``INPUT_PARAMETERS``), and
    ``name_key`` / ``args_key`` for other call layouts.  A row that cannot be read raises
    ``RowValueError`` (``on_error="record"`` keeps it unscored in ``result.errors``).
    """
    on_error = renamed_value("deepeval_tool_correctness", "on_error", on_error, {"raise": "fail"})
    if on_error not in ("fail", "record"):
        raise ValueError(f"on_error must be 'fail' or 'record', not {on_error!r}")
    check_options(METRIC, options, OPTIONS)
    family = ToolCorrectnessFamily(**options)
    preds = python_rows(predictions, "predictions")
    refs = python_rows(references, "references")
    if len(preds) != len(refs):
        raise ValueError(f"predictions has {len(preds)} rows but references has {len(refs)}")
    scores = family.score(family.prepare(refs), preds)
    if on_error == "fail" and scores.errors:
        row = min(scores.errors)
        raise RowValueError(row, scores.errors[row])
    return ToolCorrectnessResult(family, scores, implementation="python")


def _build(names: Sequence[str], options: MetricOptions) -> ToolCorrectnessFamily:
    return ToolCorrectnessFamily(**options.for_family(METRIC, *names))


METRICS = (
    MetricSpec(
        METRIC,
        METRIC,
        "deepeval 4.3.1 ToolCorrectnessMetric score (exact_match, consider_ordering, input_parameters)",
        _build,
        inputs="json",
        options={
            "exact_match": "true: 1 only when the calls are exactly the expected ones",
            "consider_ordering": "true: the order of the calls counts",
            "input_parameters": "true: the arguments must match too",
            "name_key": "the field holding a call's tool name (default tool_name)",
            "args_key": "the field holding a call's arguments (default tool_input)",
            "args_required": "true: a call without arguments is an error",
        },
    ),
)
