"""Tool-call trajectory metrics: the hosted service's six, ADK's per-invocation score, and
respeval's own (F1, LCS grades, edit similarity, redundancy), from one native pass.

A trajectory is a list of calls ``{"tool_name": str, "tool_input": {...}}`` (Vertex AI's
columns ``predicted_trajectory`` / ``reference_trajectory``), given as lists of dicts, JSON
text or Arrow values.  Calls are interned once (name + canonical arguments, see
``respeval._core_py.trajectory``) and every metric below is integer work on their ids.

Vertex AI (documented semantics; ``agent_semantics.md`` §1.3-1.5):
  ``trajectory_exact_match``      same calls in the same order, same length
  ``trajectory_in_order_match``   the reference is a subsequence of the prediction
  ``trajectory_any_order_match``  every reference call has its own equal predicted call
  ``trajectory_precision``        matched / len(predicted), one-to-one matching
  ``trajectory_recall``           matched / len(reference)
  ``trajectory_single_tool_use``  the tool ``tool_name`` was called (column ``...[tool]``)
ADK 2.13 per invocation: ``tool_trajectory_avg_score`` (``match_type`` EXACT / IN_ORDER /
ANY_ORDER, ``ignore_args``); the per-case value and status are in ``respeval.agents``.
respeval's own: ``trajectory_f1``, ``trajectory_lcs_precision``, ``trajectory_lcs_recall``,
``trajectory_edit_similarity`` (1 - name edit distance / longer length),
``trajectory_redundant_rate`` (repeated identical calls / predicted calls),
``trajectory_extra_calls`` (predicted calls without a reference partner),
``trajectory_steps_to_first_match`` (1-based position of the first predicted call that
matches a reference call; NaN when none does), ``trajectory_kendall_tau`` (Kendall's tau-a
between the predicted and the reference order of the matched calls; NaN with fewer than
two matches).  These two are means over the rows where they are defined.

``multiplicity=False`` reads precision and recall set-wise, as a reading of the hosted
service's "present in the reference" would: a predicted call counts if an equal call is
anywhere in the reference (two identical predicted calls can both count), and likewise
for recall.  The default counts multiplicity (a one-to-one matching).

Empty trajectories (``empty="google"``, the default): exact = 1 iff both are empty;
in-order and any-order = 1 when the reference is empty; precision of an empty prediction
= 1 if the reference is empty too, else 0; recall of an empty reference = 1.  With
``empty="nan"`` a row with an empty side is unscored, its reason recorded.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from respeval import _backend
from respeval._renamed import renamed_arguments, renamed_value
from respeval._tool_calls import JsonSpans
from respeval.metrics.base import ChunkScores, Interval, MetricResult, RowValueError, check_flag, check_options
from respeval.metrics.registry import MetricOptions, MetricSpec
from respeval.metrics.signature import Signature
from respeval.stats.intervals import wilson, wilson_interval

__all__ = [
    "ADK_MATCH_TYPES",
    "ARGS_EQUALITIES",
    "DEFAULT_METRICS",
    "EMPTY_CONVENTIONS",
    "NameNormalizer",
    "ResponseMatchFamily",
    "ResponseMatchResult",
    "ToolConfusion",
    "TrajectoryFamily",
    "TrajectoryResult",
    "normalize_match_type",
    "python_rows",
    "response_match_score",
    "trajectory",
    "wilson_interval",
]

VERTEX_METRICS = (
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_any_order_match",
    "trajectory_precision",
    "trajectory_recall",
)
SINGLE_TOOL = "trajectory_single_tool_use"
ADK_METRIC = "tool_trajectory_avg_score"
OWN_METRICS = (
    "trajectory_f1",
    "trajectory_lcs_precision",
    "trajectory_lcs_recall",
    "trajectory_edit_similarity",
    "trajectory_redundant_rate",
    "trajectory_extra_calls",
    "trajectory_steps_to_first_match",
    "trajectory_kendall_tau",
)
# defined only on some rows (NaN elsewhere): their corpus value is the mean over those rows
CONDITIONAL_METRICS = ("trajectory_steps_to_first_match", "trajectory_kendall_tau")
ALL_METRICS = (*VERTEX_METRICS, SINGLE_TOOL, ADK_METRIC, *OWN_METRICS)
DEFAULT_METRICS = (*VERTEX_METRICS, "trajectory_f1")
BINARY_METRICS = (*VERTEX_METRICS[:3], SINGLE_TOOL, ADK_METRIC)

ADK_MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")
ARGS_EQUALITIES = ("json", "string")
EMPTY_CONVENTIONS = ("google", "nan")

# statistics kept per row besides the score columns (their sums give the micro values)
_COUNT_STATS = ("n_pred", "n_ref", "matched", "lcs", "rows_with_match", "rows_with_two_matches")

OPTION_HELP = {
    "tool_name": "trajectory_single_tool_use: the tool (or tools) that must be called",
    "args_equality": "json (default: arguments equal as JSON values) | string",
    "empty": "google (default: Vertex's values for empty trajectories) | nan",
    "vertex_float32": "true: Vertex's float32 rounding of precision and recall",
    "match_type": "tool_trajectory_avg_score: EXACT | IN_ORDER | ANY_ORDER",
    "ignore_args": "true: compare tool names only",
    "name_key": "the field holding a call's tool name (default tool_name)",
    "args_key": "the field holding a call's arguments (default tool_input)",
    "args_required": "true: a call without arguments is an error",
    "aliases": "tool name -> the name it stands for",
    "strip_namespace": "true: compare names without their namespace (a.b -> b)",
    "strip_prefixes": "prefixes removed from tool names",
    "ignore_tools": "tools left out of both trajectories",
    "multiplicity": "false: a repeated call counts once",
}
OPTIONS = tuple(OPTION_HELP)  # what TrajectoryFamily takes besides the metrics


def normalize_match_type(value: Any) -> str:
    """ADK's spelling rules: trimmed, upper-cased, ``-`` and spaces as ``_``
    (``"in order"``, ``"In-Order"`` -> ``IN_ORDER``); anything else raises."""
    if not isinstance(value, str):
        value = getattr(value, "name", value)
    if not isinstance(value, str):
        raise ValueError(f"unknown match type {value!r}; choose one of {', '.join(ADK_MATCH_TYPES)}")
    spelled = value.strip().upper().replace("-", "_").replace(" ", "_")
    if spelled not in ADK_MATCH_TYPES:
        raise ValueError(f"unknown match type {value!r}; choose one of {', '.join(ADK_MATCH_TYPES)}")
    return spelled


@dataclass(frozen=True)
class NameNormalizer:
    """Tool-name normalisation applied to both sides before matching (respeval's own).

    ``strip_namespace`` keeps the part after the last ``.``, ``/`` or ``__`` (``mcp__fs__read``
    -> ``read``, ``functions.search`` -> ``search``); ``strip_prefixes`` removes the first
    matching prefix; ``aliases`` then maps a name to another; a call whose name (raw or
    normalised) is in ``ignore`` is dropped (e.g. ``think``, ``transfer_to_agent``).
    """

    aliases: Mapping[str, str] = field(default_factory=dict)
    strip_namespace: bool = False
    strip_prefixes: tuple[str, ...] = ()
    ignore: frozenset[str] = frozenset()

    @classmethod
    def from_options(
        cls,
        aliases: Mapping[str, str] | None = None,
        strip_namespace: bool = False,
        strip_prefixes: Iterable[str] = (),
        ignore_tools: Iterable[str] = (),
    ) -> NameNormalizer | None:
        if isinstance(strip_prefixes, str) or isinstance(ignore_tools, str):
            raise TypeError("strip_prefixes and ignore_tools are lists of names, not a single str")
        strip = check_flag(strip_namespace, "strip_namespace", "trajectory")
        norm = cls(dict(aliases or {}), strip, tuple(strip_prefixes), frozenset(ignore_tools))
        return norm if norm.active else None

    @property
    def active(self) -> bool:
        return bool(self.aliases or self.strip_namespace or self.strip_prefixes or self.ignore)

    def __call__(self, name: str) -> str | None:
        if name in self.ignore:
            return None
        out = name
        if self.strip_namespace:
            for sep in ("__", "/", "."):
                out = out.rsplit(sep, 1)[-1]
        for prefix in self.strip_prefixes:
            if out.startswith(prefix) and len(out) > len(prefix):
                out = out[len(prefix) :]
                break
        out = self.aliases.get(out, out)
        return None if out in self.ignore else out

    def describe(self) -> str:
        parts = []
        if self.strip_namespace:
            parts.append("ns")
        if self.strip_prefixes:
            parts.append("prefixes=" + "+".join(self.strip_prefixes))
        if self.aliases:
            parts.append(f"aliases={len(self.aliases)}")
        if self.ignore:
            parts.append("ignore=" + "+".join(sorted(self.ignore)))
        return ",".join(parts) or "none"


def _kernels(implementation: str | None) -> Any:
    """The trajectory kernels of the chosen implementation (native core or the twin)."""
    return _backend.get(implementation)


def _float32_shortest(values: np.ndarray) -> np.ndarray:
    """What the Vertex SDK displays: the service's float32, as its shortest decimal."""
    return np.array([float(str(np.float32(v))) for v in values.tolist()], dtype=np.float64)


def _ratio(num: np.ndarray, den: np.ndarray, when_zero: np.ndarray | float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / np.where(den > 0, den, 1)
    return np.where(den > 0, out, when_zero)


def _f1(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Harmonic mean; 0 where both are 0, NaN where either is undefined (NaN)."""
    total = p + r
    with np.errstate(divide="ignore", invalid="ignore"):
        f = 2 * p * r / np.where(total > 0, total, 1.0)
    return np.where(total > 0, f, np.where(np.isnan(total), np.nan, 0.0))


@dataclass
class _Interned:
    calls: np.ndarray
    names: np.ndarray
    offsets: np.ndarray
    errors: dict[int, str]

    @property
    def rows(self) -> int:
        return len(self.offsets) - 1


def _intern(table: Any, rows: Any, family: TrajectoryFamily, what: str) -> _Interned:
    calls, names, offsets, errors = table.intern(
        rows,
        family.name_key,
        family.args_key,
        family.args_required,
        family.args_equality,
        family.normalizer,
    )
    return _Interned(
        np.frombuffer(calls, np.int32),
        np.frombuffer(names, np.int32),
        np.frombuffer(offsets, np.int64),
        {row: f"{what}: {reason}" for row, reason in errors},
    )


def _column(values: Any, what: str) -> Any:
    """A column of trajectories as the kernels take it: a list (of lists of dicts, JSON
    text, ...), JSON text standing in one buffer (``JsonSpans``) or an Arrow array, which
    the native core reads from its buffers."""
    if isinstance(values, (str, bytes)):
        raise TypeError(
            f"{what} must be a sequence of trajectories (one per row), not a single {type(values).__name__}"
        )
    if isinstance(values, (list, JsonSpans)):
        return values
    if type(values).__module__.startswith("pyarrow") and hasattr(values, "type"):
        return values
    tolist = getattr(values, "tolist", None)
    if callable(tolist):
        return tolist()
    try:
        return list(values)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of trajectories, got {type(values).__name__}") from None


def python_rows(values: Any, what: str) -> list:
    """A column of trajectories as a Python list: lists of dicts, JSON text, or Arrow values
    (read as ``respeval._core_py.trajectory.arrow_rows`` reads them: the null fields of
    struct-typed arguments dropped, since Arrow cannot tell them from missing keys)."""
    from respeval._arrow_json import arrow_rows

    column = _column(values, what)
    if isinstance(column, JsonSpans):
        return [column.value(i) for i in range(len(column))]
    return column if isinstance(column, list) else arrow_rows(column)


class TrajectoryFamily:
    """Trajectory metrics as one metric family (``inputs = "json"``): per row, a predicted and
    a reference trajectory; columns per requested metric; corpus values are row means, plus
    micro precision / recall / F1 (sums of matches over sums of calls)."""

    name = "trajectory"
    inputs = "json"
    reads_json_text = True  # a str row is JSON text: readers may hand arrays and objects over undecoded

    def __init__(
        self,
        metrics: Sequence[str] = DEFAULT_METRICS,
        *,
        tool_name: str | Sequence[str] | None = None,
        args_equality: str = "json",
        empty: str = "google",
        vertex_float32: bool = False,
        match_type: Any = "EXACT",
        ignore_args: bool = False,
        name_key: str = "tool_name",
        args_key: str = "tool_input",
        args_required: bool | None = None,
        aliases: Mapping[str, str] | None = None,
        strip_namespace: bool = False,
        strip_prefixes: Iterable[str] = (),
        ignore_tools: Iterable[str] = (),
        multiplicity: bool = True,
        threads: int | None = None,
        implementation: str | None = None,
    ) -> None:
        metrics = tuple(metrics)
        unknown = [m for m in metrics if m not in ALL_METRICS]
        if unknown:
            raise ValueError(f"unknown trajectory metric(s) {', '.join(unknown)}; available: {', '.join(ALL_METRICS)}")
        if not metrics:
            raise ValueError("no trajectory metric given")
        if args_equality not in ARGS_EQUALITIES:
            raise ValueError(f"args_equality must be 'json' or 'string', not {args_equality!r}")
        if empty not in EMPTY_CONVENTIONS:
            raise ValueError(f"empty must be 'google' or 'nan', not {empty!r}")
        tools: tuple[str, ...] = ()
        if SINGLE_TOOL in metrics:
            if tool_name is None:
                raise ValueError(f"{SINGLE_TOOL} needs tool_name= (the tool that must be called)")
            tools = (tool_name,) if isinstance(tool_name, str) else tuple(tool_name)
            if not tools or not all(isinstance(t, str) and t for t in tools):
                raise ValueError(f"tool_name must be a non-empty str or a list of them, got {tool_name!r}")
        self.metrics = metrics
        self.tools = tools
        self.args_equality = args_equality
        self.empty = empty
        self.vertex_float32 = check_flag(vertex_float32, "vertex_float32", "trajectory")
        self.match_type = normalize_match_type(match_type)
        self.ignore_args = check_flag(ignore_args, "ignore_args", "trajectory")
        self.multiplicity = check_flag(multiplicity, "multiplicity", "trajectory")
        self.name_key = name_key
        self.args_key = args_key
        self.args_required = (
            (args_key == "tool_input")
            if args_required is None
            else check_flag(args_required, "args_required", "trajectory")
        )
        self.normalizer = NameNormalizer.from_options(aliases, strip_namespace, strip_prefixes, ignore_tools)
        self.threads = threads
        self.implementation = implementation
        self.score_columns = tuple(
            c for m in metrics for c in ([f"{SINGLE_TOOL}[{t}]" for t in tools] if m == SINGLE_TOOL else [m])
        )
        self.stat_names = (*self.score_columns, *_COUNT_STATS)
        self.headline = self.score_columns

    # -- the family protocol ------------------------------------------------------------

    def prepare(self, references: list) -> _Prepared:
        kernels = _kernels(self.implementation)
        table = kernels.CallTable()
        return _Prepared(kernels, table, _intern(table, _column(references, "reference"), self, "reference_trajectory"))

    def score(self, prepared: _Prepared, predictions: list) -> ChunkScores:
        pred = _intern(prepared.table, _column(predictions, "predicted"), self, "predicted_trajectory")
        return self._score(prepared.kernels, prepared.table, pred, prepared.ref).chunk

    def corpus(self, sums: np.ndarray, rows: Any) -> dict[str, Any]:
        sums = np.asarray(sums, dtype=np.float64)
        n = np.maximum(np.asarray(rows, dtype=np.float64), 1)
        k = len(self.score_columns)
        n_pred, n_ref, matched = sums[..., k], sums[..., k + 1], sums[..., k + 2]
        defined = {
            "trajectory_steps_to_first_match": sums[..., k + 4],
            "trajectory_kendall_tau": sums[..., k + 5],
        }
        out: dict[str, Any] = {
            c: (_ratio(sums[..., i], defined[c], np.nan) if c in defined else sums[..., i] / n)
            for i, c in enumerate(self.score_columns)
        }
        if {"trajectory_precision", "trajectory_recall", "trajectory_f1"} & set(self.metrics):
            # pooled calls with no predicted (or no reference) call at all follow the rows'
            # convention: "google" applies the per-row rule to the sums, "nan" leaves them undefined
            if self.empty == "google":
                p = _ratio(matched, n_pred, (n_ref == 0).astype(np.float64))
                r = _ratio(matched, n_ref, 1.0)
            else:
                p = _ratio(matched, n_pred, np.nan)
                r = _ratio(matched, n_ref, np.nan)
            out["trajectory_precision_micro"] = p
            out["trajectory_recall_micro"] = r
            out["trajectory_f1_micro"] = _f1(np.asarray(p), np.asarray(r))
        return out

    def signature(self) -> str:
        return str(
            Signature(
                "trajectory",
                args=self.args_equality,
                empty=self.empty,
                names=self.normalizer.describe() if self.normalizer else "exact",
                adk=f"{self.match_type}{',ignore_args' if self.ignore_args else ''}"
                if ADK_METRIC in self.metrics
                else None,
                tool="+".join(self.tools) if self.tools else None,
                float32="vertex" if self.vertex_float32 else None,
                multiplicity=None if self.multiplicity else "set",
            )
        )

    # -- the computation ----------------------------------------------------------------

    def _score(self, kernels: Any, table: Any, pred: _Interned, ref: _Interned) -> _Scored:
        rows = pred.rows
        if ref.rows != rows:
            raise ValueError(f"{rows} predicted trajectories but {ref.rows} reference trajectories")
        # np.empty: the kernel writes every statistic of every row and every flag
        stats = np.empty((rows, len(kernels.TRAJECTORY_STATS)), np.int64)
        pm = np.empty(len(pred.calls), np.uint8)
        rm = np.empty(len(ref.calls), np.uint8)
        kernels.trajectory_pair_stats(
            pred.calls, pred.names, pred.offsets, ref.calls, ref.names, ref.offsets, stats, pm, rm, self.threads
        )
        s = _Stats(stats, kernels.TRAJECTORY_STATS)
        n_pred = s["n_pred"]
        n_ref = s["n_ref"]
        matched = s["matched"]
        errors = dict(ref.errors)
        sides = dict.fromkeys(ref.errors, "reference")
        for row, reason in pred.errors.items():
            errors[row] = f"{errors[row]}; {reason}" if row in errors else reason
            if sides.pop(row, None) is None:
                sides[row] = "prediction"
        if self.empty == "nan":
            for row in np.flatnonzero((n_pred == 0) | (n_ref == 0)).tolist():
                if row not in errors:
                    side = (
                        "both trajectories are"
                        if n_pred[row] == n_ref[row] == 0
                        else ("the predicted trajectory is" if n_pred[row] == 0 else "the reference trajectory is")
                    )
                    errors[row] = f"{side} empty (empty='nan')"
        if self.multiplicity:
            precision = _ratio(matched, n_pred, (n_ref == 0).astype(np.float64))
            recall = _ratio(matched, n_ref, 1.0)
        else:
            pred_in_ref, ref_in_pred = _present_elsewhere(pred, ref)
            precision = _ratio(pred_in_ref, n_pred, (n_ref == 0).astype(np.float64))
            recall = _ratio(ref_in_pred, n_ref, 1.0)
        if self.vertex_float32:
            precision = _float32_shortest(precision)
            recall = _float32_shortest(recall)
        columns: dict[str, np.ndarray] = {}
        for metric in self.metrics:
            if metric == "trajectory_exact_match":
                columns[metric] = s["exact"].copy()
            elif metric == "trajectory_in_order_match":
                columns[metric] = s["in_order"].copy()
            elif metric == "trajectory_any_order_match":
                columns[metric] = s["any_order"].copy()
            elif metric == "trajectory_precision":
                columns[metric] = precision
            elif metric == "trajectory_recall":
                columns[metric] = recall
            elif metric == SINGLE_TOOL:
                row_of = np.repeat(np.arange(rows), np.diff(pred.offsets))
                for tool in self.tools:
                    tid = table.name_id(tool)
                    used = np.zeros(rows, np.float64)
                    if tid >= 0:
                        used[np.unique(row_of[pred.names == tid])] = 1.0
                    columns[f"{SINGLE_TOOL}[{tool}]"] = used
            elif metric == ADK_METRIC:
                key = {"EXACT": "exact", "IN_ORDER": "in_order", "ANY_ORDER": "any_order"}[self.match_type]
                columns[metric] = s[key + ("_names" if self.ignore_args else "")].copy()
            elif metric == "trajectory_f1":
                columns[metric] = _f1(precision, recall)
            elif metric == "trajectory_lcs_precision":
                columns[metric] = _ratio(s["lcs"], n_pred, (n_ref == 0).astype(np.float64))
            elif metric == "trajectory_lcs_recall":
                columns[metric] = _ratio(s["lcs"], n_ref, 1.0)
            elif metric == "trajectory_edit_similarity":
                longer = np.maximum(n_pred, n_ref)
                columns[metric] = 1.0 - _ratio(s["edit_names"], longer, 0.0)
            elif metric == "trajectory_redundant_rate":
                columns[metric] = _ratio(s["redundant"], n_pred, 0.0)
            elif metric == "trajectory_extra_calls":
                columns[metric] = n_pred - matched
            elif metric == "trajectory_steps_to_first_match":
                first = s["first_match"]
                columns[metric] = np.where(first > 0, first, np.nan)
            elif metric == "trajectory_kendall_tau":
                pairs = matched * (matched - 1) / 2
                with np.errstate(divide="ignore", invalid="ignore"):
                    tau = 1.0 - 2.0 * s["discordant"] / pairs
                columns[metric] = np.where(matched >= 2, tau, np.nan)
        # the per-row statistics, written column by column into their row-major array: each
        # write is strided, but there is no (columns, rows) array to fill and transpose
        k = len(self.score_columns)
        stat = np.empty((rows, k + len(_COUNT_STATS)), np.float64)
        for j, name in enumerate(self.score_columns):
            c = columns[name]
            # nan_to_num changes nothing in a finite column (most are): one check instead
            stat[:, j] = c if np.isfinite(c).all() else np.nan_to_num(c, nan=0.0)
        stat[:, k] = n_pred
        stat[:, k + 1] = n_ref
        stat[:, k + 2] = matched
        stat[:, k + 3] = s["lcs"]
        stat[:, k + 4] = s.column("first_match") > 0
        stat[:, k + 5] = matched >= 2
        if errors:
            bad = np.fromiter(errors, np.int64, len(errors))
            for c in columns.values():
                c[bad] = np.nan
            stat[bad] = 0.0
        return _Scored(ChunkScores(columns, stat, errors, sides), stats, pm, rm, pred, ref)


class _Stats:
    """The kernel's per-row statistics by name, each converted once, when first asked for,
    to a contiguous float64 array (the counts are far below 2**53, so exact).  Converting
    only the statistics the metrics read, a strided column each, costs less than
    transposing all sixteen."""

    def __init__(self, stats: np.ndarray, names: Sequence[str]) -> None:
        self._stats = stats
        self._index = {name: i for i, name in enumerate(names)}
        self._float: dict[str, np.ndarray] = {}

    def column(self, name: str) -> np.ndarray:
        """The statistic as the kernel wrote it (a strided int64 view)."""
        return self._stats[:, self._index[name]]

    def __getitem__(self, name: str) -> np.ndarray:
        got = self._float.get(name)
        if got is None:
            got = self._float[name] = self.column(name).astype(np.float64)
        return got


def _present_elsewhere(pred: _Interned, ref: _Interned) -> tuple[np.ndarray, np.ndarray]:
    """Per row: predicted calls equal to some call of the row's reference, and reference
    calls equal to some predicted call (set-wise presence, multiplicity ignored)."""
    rows = pred.rows
    p_row = np.repeat(np.arange(rows, dtype=np.int64), np.diff(pred.offsets))
    r_row = np.repeat(np.arange(rows, dtype=np.int64), np.diff(ref.offsets))
    p_key = (p_row << 32) | pred.calls.astype(np.int64)
    r_key = (r_row << 32) | ref.calls.astype(np.int64)
    p_hit = np.isin(p_key, r_key)
    r_hit = np.isin(r_key, p_key)
    return (
        np.bincount(p_row[p_hit], minlength=rows).astype(np.float64),
        np.bincount(r_row[r_hit], minlength=rows).astype(np.float64),
    )


@dataclass
class _Prepared:
    kernels: Any
    table: Any
    ref: _Interned


@dataclass
class _Scored:
    chunk: ChunkScores
    raw: np.ndarray
    pred_matched: np.ndarray
    ref_matched: np.ndarray
    pred: _Interned
    ref: _Interned


@dataclass(frozen=True)
class ToolConfusion:
    """One tool's counts over all rows: reference calls matched (tp), predicted calls without
    an equal reference call (fp), reference calls not matched (fn)."""

    tool: str
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else math.nan

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else math.nan

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        if math.isnan(p) or math.isnan(r) or p + r == 0:
            return 0.0 if self.tp + self.fp + self.fn else math.nan
        return 2 * p * r / (p + r)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }


class TrajectoryResult(MetricResult):
    """Per-row trajectory metrics (``res["trajectory_recall"]``, ...), their corpus values
    (row means and micro precision/recall/F1), and the analyses built on the alignment:
    ``vertex_summary()``, ``wilson()``, ``tool_confusion()``, ``substitutions()``, ``worst()``."""

    def __init__(self, family: TrajectoryFamily, scored: _Scored, table: Any, *, implementation: str) -> None:
        super().__init__(family, scored.chunk, implementation=implementation)
        self._detail = scored
        self._table = table
        self._kernels = _kernels(family.implementation)

    @property
    def raw_stats(self) -> dict[str, np.ndarray]:
        """The kernel's integer statistics per row (``n_pred``, ``matched``, ``lcs``, ...)."""
        names = self._kernels.TRAJECTORY_STATS
        return {n: self._detail.raw[:, i] for i, n in enumerate(names)}

    def vertex_summary(self) -> dict[str, float]:
        """The classic Vertex SDK's ``summary_metrics``: ``row_count``, ``{metric}/mean`` and
        ``{metric}/std`` (sample std, ddof 1; NaN rows skipped, as pandas does)."""
        out: dict[str, float] = {"row_count": len(self)}
        for name in self.family.score_columns:  # type: ignore[attr-defined]
            col = self[name]
            col = col[~np.isnan(col)]
            out[f"{name}/mean"] = float(np.mean(col)) if len(col) else math.nan
            out[f"{name}/std"] = float(np.std(col, ddof=1)) if len(col) > 1 else math.nan
        return out

    def wilson(self, confidence: float = 0.95) -> dict[str, Interval]:
        """Wilson intervals of the 0/1 metrics' pass rates: (low, observed rate, high)."""
        out = {}
        for name in self.family.score_columns:  # type: ignore[attr-defined]
            if not name.startswith(BINARY_METRICS):
                continue
            col = self[name]
            col = col[~np.isnan(col)]
            out[name] = wilson(float(col.sum()), len(col), confidence)
        return out

    def tool_confusion(self) -> list[ToolConfusion]:
        """Per tool name: matched reference calls, unmatched predicted and reference calls
        (scored rows only), sorted by the number of mistakes, then by name."""
        pred, ref = self._detail.pred, self._detail.ref
        keep_p = self._row_mask(pred)
        keep_r = self._row_mask(ref)
        n = self._table.n_names
        pm = self._detail.pred_matched.astype(bool)
        rm = self._detail.ref_matched.astype(bool)
        tp = np.bincount(ref.names[keep_r & rm], minlength=n)
        fn = np.bincount(ref.names[keep_r & ~rm], minlength=n)
        fp = np.bincount(pred.names[keep_p & ~pm], minlength=n)
        names = self._table.names()
        rows = [ToolConfusion(names[i], int(tp[i]), int(fp[i]), int(fn[i])) for i in range(n) if tp[i] + fp[i] + fn[i]]
        return sorted(rows, key=lambda t: (-(t.fp + t.fn), t.tool))

    def _row_mask(self, side: _Interned) -> np.ndarray:
        keep = np.ones(len(side.calls), bool)
        if self.errors:
            row_of = np.repeat(np.arange(side.rows), np.diff(side.offsets))
            keep &= ~np.isin(row_of, list(self.errors))
        return keep

    def substitutions(self) -> Counter[tuple[str, str]]:
        """(expected tool, tool called at its aligned position) counts from a minimum edit
        alignment of each scored row's tool names."""
        pred, ref = self._detail.pred, self._detail.ref
        rows, exp, got = self._kernels.name_substitutions(pred.names, pred.offsets, ref.names, ref.offsets)
        rows, exp, got = np.frombuffer(rows, np.int64), np.frombuffer(exp, np.int32), np.frombuffer(got, np.int32)
        if self.errors:
            keep = ~np.isin(rows, list(self.errors))
            exp, got = exp[keep], got[keep]
        names = self._table.names()
        return Counter((names[a], names[b]) for a, b in zip(exp.tolist(), got.tolist()))

    def calls(self, row: int) -> tuple[list[tuple[str, str, bool]], list[tuple[str, str, bool]]]:
        """Row ``row``'s calls as matched (after name normalisation and ignore lists):
        (predicted, reference), each call ``(tool name, canonical arguments, matched)``."""
        if not 0 <= row < len(self):
            raise IndexError(f"row {row} out of range for {len(self)} rows")
        out = []
        for side, flags in (
            (self._detail.pred, self._detail.pred_matched),
            (self._detail.ref, self._detail.ref_matched),
        ):
            lo, hi = int(side.offsets[row]), int(side.offsets[row + 1])
            out.append(
                [
                    (*self._table.call(int(c)), bool(m))
                    for c, m in zip(side.calls[lo:hi].tolist(), flags[lo:hi].tolist())
                ]
            )
        return out[0], out[1]

    def worst(self, k: int = 10, by: str | None = None) -> list[int]:
        """The ``k`` scored rows with the lowest ``by`` (default: the first metric), ties by row."""
        by = by or self.family.score_columns[0]  # type: ignore[attr-defined]
        col = self[by]
        order = np.lexsort((np.arange(len(col)), np.where(np.isnan(col), np.inf, col)))
        return [int(i) for i in order[:k] if not np.isnan(col[i])]


@renamed_arguments(predicted="predictions", reference="references")
def trajectory(
    predictions: Any,
    references: Any,
    metrics: Sequence[str] | str = DEFAULT_METRICS,
    *,
    implementation: str | None = None,
    threads: int | None = None,
    on_error: str = "fail",
    **options: Any,
) -> TrajectoryResult:
    """Trajectory metrics of each predicted trajectory against its reference.

    ``predictions``, ``references``: one trajectory per row, each a list of calls
    ``{"tool_name": str, "tool_input": {...}}`` (or JSON text of such a list, or an Arrow
    list/string column).  ``metrics``: names from the module docstring (default: the five
    Vertex match metrics and ``trajectory_f1``).  Options: ``tool_name`` (for
    ``trajectory_single_tool_use``), ``args_equality`` ("json" | "string"), ``empty``
    ("google" | "nan"), ``vertex_float32``, ``match_type`` / ``ignore_args`` (for
    ``tool_trajectory_avg_score``), ``name_key`` / ``args_key`` (other call layouts, e.g.
    ``"name"``/``"args"``), ``aliases``, ``strip_namespace``, ``strip_prefixes``,
    ``ignore_tools``.

    A row that cannot be read raises ``RowValueError`` naming the row and call
    (``on_error="record"`` keeps it as an unscored row in ``result.errors`` instead).
    """
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    on_error = renamed_value("trajectory", "on_error", on_error, {"raise": "fail"})
    if on_error not in ("fail", "record"):
        raise ValueError(f"on_error must be 'fail' or 'record', not {on_error!r}")
    check_options("trajectory", options, OPTIONS)
    family = TrajectoryFamily(metrics, threads=threads, implementation=implementation, **options)
    preds = _column(predictions, "predictions")
    refs = _column(references, "references")
    if len(preds) != len(refs):
        raise ValueError(f"predictions has {len(preds)} rows but references has {len(refs)}")
    kernels = _kernels(implementation)
    table = kernels.CallTable()
    ref = _intern(table, refs, family, "reference_trajectory")
    pred = _intern(table, preds, family, "predicted_trajectory")
    scored = family._score(kernels, table, pred, ref)
    if on_error == "fail" and scored.chunk.errors and family.empty != "nan":
        row = min(scored.chunk.errors)
        raise RowValueError(row, scored.chunk.errors[row])
    return TrajectoryResult(family, scored, table, implementation=_backend.name(implementation))


# ---------------------------------------------------------------------------------------
# response_match_score: ROUGE-1 F with ADK's tokenizer
# ---------------------------------------------------------------------------------------

RESPONSE_VARIANTS = ("adk", "adk-legacy")


def rouge1_f(candidate: list[str], target: list[str]) -> float:
    """rouge-score's rouge1 F-measure of token lists, with its operation order."""
    if not candidate or not target:
        return 0.0
    cand, targ = Counter(candidate), Counter(target)
    overlap = sum(min(c, targ[t]) for t, c in cand.items())
    precision = overlap / len(candidate)
    recall = overlap / len(target)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _legacy_tokens(text: str) -> list[str]:
    import re

    from respeval.tokenizers.adk import stem_word

    return [stem_word(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


class ResponseMatchFamily:
    """ADK's ``response_match_score`` per row: rouge-score's ROUGE-1 F of the response against
    the reference, tokenized as ADK 2.8-2.13 does (``variant="adk"``) or as ADK 1.10-2.0 did
    (``"adk-legacy"``: rouge-score's default tokenizer with stemming)."""

    name = "response_match"
    inputs = "text"

    def __init__(self, *, variant: str = "adk", threads: int | None = None, implementation: str | None = None) -> None:
        if variant not in RESPONSE_VARIANTS:
            raise ValueError(f"variant must be one of {RESPONSE_VARIANTS}, not {variant!r}")
        self.variant = variant
        self.stat_names: tuple[str, ...] = ("response_match_score",)
        self.headline: tuple[str, ...] = ("response_match_score",)

    def tokens(self, text: str) -> list[str]:
        if self.variant == "adk":
            from respeval.tokenizers.adk import tokenize

            return tokenize(text)
        return _legacy_tokens(text)

    def prepare(self, references: list) -> list[list[str]]:
        out = []
        for row, ref in enumerate(references):
            if not isinstance(ref, str):
                raise RowValueError(row, f"reference is {type(ref).__name__}, expected str")
            out.append(self.tokens(ref))
        return out

    def score(self, prepared: list[list[str]], predictions: list) -> ChunkScores:
        values = np.zeros(len(predictions))
        errors = {}
        for row, (pred, ref) in enumerate(zip(predictions, prepared)):
            if not isinstance(pred, str):
                errors[row] = f"response is {type(pred).__name__}, expected str"
                values[row] = np.nan
                continue
            values[row] = rouge1_f(self.tokens(pred), ref)
        stats = np.where(np.isnan(values), 0.0, values)[:, None]
        return ChunkScores({"response_match_score": values}, stats, errors)

    def corpus(self, sums: np.ndarray, rows: Any) -> dict[str, Any]:
        n = np.maximum(np.asarray(rows, dtype=np.float64), 1)
        return {"response_match_score": np.asarray(sums, dtype=np.float64)[..., 0] / n}

    def signature(self) -> str:
        tok = "adk-unicode" if self.variant == "adk" else "rouge"
        return str(Signature("response_match_score", score="rouge1_f", tok=tok, stem="porter>3"))


class ResponseMatchResult(MetricResult):
    """Per-row ``response_match_score`` (ROUGE-1 F, ADK tokenization)."""


@renamed_arguments(responses="predictions")
def response_match_score(predictions: Any, references: Any, *, variant: str = "adk") -> ResponseMatchResult:
    """ADK's ``response_match_score`` of each response against its reference (both str).

    Both texts empty (or either without tokens) score 0.0, as in ADK.
    """
    from respeval._inputs import text_list

    family = ResponseMatchFamily(variant=variant)
    preds = text_list(predictions, "predictions")
    refs = text_list(references, "references")
    if len(preds) != len(refs):
        raise ValueError(f"predictions has {len(preds)} rows but references has {len(refs)}")
    return ResponseMatchResult(family, family.score(family.prepare(refs), preds), implementation="python")


# ---------------------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------------------


def _build(names: Sequence[str], options: MetricOptions) -> TrajectoryFamily:
    params = options.for_family("trajectory", *names)
    return TrajectoryFamily(names, threads=options.threads, implementation=options.implementation, **params)


def _build_response(names: Sequence[str], options: MetricOptions) -> ResponseMatchFamily:
    return ResponseMatchFamily(implementation=options.implementation, **options.for_family(*names))


_HELP = {
    "trajectory_exact_match": "Vertex: 1 if the predicted calls equal the reference calls, in order",
    "trajectory_in_order_match": "Vertex: 1 if the reference calls appear in order (extras allowed)",
    "trajectory_any_order_match": "Vertex: 1 if every reference call has its own predicted match",
    "trajectory_precision": "Vertex: matched calls / predicted calls (one-to-one)",
    "trajectory_recall": "Vertex: matched calls / reference calls (one-to-one)",
    SINGLE_TOOL: "Vertex: 1 if the tool tool_name= was called (column ...[tool])",
    ADK_METRIC: "ADK 2.13 per invocation: match_type=EXACT|IN_ORDER|ANY_ORDER, ignore_args",
    "trajectory_f1": "respeval: harmonic mean of trajectory precision and recall",
    "trajectory_lcs_precision": "respeval: longest common call subsequence / predicted calls",
    "trajectory_lcs_recall": "respeval: longest common call subsequence / reference calls",
    "trajectory_edit_similarity": "respeval: 1 - tool-name edit distance / longer trajectory",
    "trajectory_redundant_rate": "respeval: repeated identical calls / predicted calls",
    "trajectory_extra_calls": "respeval: predicted calls without a reference partner",
    "trajectory_steps_to_first_match": "respeval: position of the first predicted call that matches (NaN: none)",
    "trajectory_kendall_tau": "respeval: Kendall tau of the matched calls' two orders (NaN: < 2 matches)",
}

METRICS = tuple(
    MetricSpec(name, "trajectory", _HELP[name], _build, inputs="json", options=OPTION_HELP) for name in ALL_METRICS
) + (
    MetricSpec(
        "response_match_score",
        "response_match_score",
        "ADK 2.13: ROUGE-1 F with ADK's tokenizer (variant=adk|adk-legacy)",
        _build_response,
        options={"variant": "adk (default) | adk-legacy"},
    ),
)
