"""Scoring an agent's conversations against an ADK eval set: what ``respeval agent`` runs.

Each *run* is one source of actual invocations: an eval set holding the agent's turns
(cases matched by ``eval_id``), one ADK session dump (for a one-case eval set, or named
``<eval_id>.session.json``), or a directory of either.  Several runs of the same cases give
pass@k and pass^k.  Every case gets ADK's metric values, thresholds and status; on top,
respeval pools every (run, case, invocation) pair into trajectory diagnostics (Vertex's
metrics, F1, per-tool confusion, substitutions, the worst invocations).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from respeval._collector import fewer_collections
from respeval._renamed import renamed_value
from respeval.agents.adk import (
    DEFAULT_CRITERIA,
    NO_ACTUAL_INVOCATIONS,
    NO_EXPECTED_INVOCATIONS,
    NOT_EVALUATED,
    PASSED,
    TRAJECTORY,
    CaseOutcome,
    Criterion,
    MetricOutcome,
    case_status,
    evaluate_case,
    metric_outcome,
    trajectory_values,
)
from respeval.agents.analysis import PassAtKSummary, summarize_runs
from respeval.agents.loaders import (
    AgentDataError,
    EvalSet,
    EvalSetToolUses,
    Invocation,
    load_eval_set,
    load_session,
    read_tool_uses,
)

__all__ = ["AgentReport", "evaluate_agent", "read_actual", "tool_trajectory_scores_from_files"]

DIAGNOSTIC_METRICS = (
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_any_order_match",
    "trajectory_precision",
    "trajectory_recall",
    "trajectory_f1",
)


def _session_case_id(path: Path) -> str:
    name = path.name
    for suffix in (".session.json", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _is_session(path: Path) -> bool:
    if path.name.endswith(".session.json"):
        return True
    if not path.is_file():
        return False
    with path.open("rb") as fh:
        head = fh.read(4096)
    return b'"events"' in head


def _read_one(
    path: Path, expected: EvalSet, case_hint: str | None, record: bool = False
) -> dict[str, list[Invocation] | str]:
    """The file's conversations by case id; with ``record``, a case that cannot be read
    maps to the reason (a session dump is one case, so its errors are that case's)."""
    if _is_session(path):
        if case_hint is not None:
            case_id = case_hint
        elif len(expected.cases) == 1:
            case_id = expected.cases[0].eval_id
        else:
            case_id = _session_case_id(path)
        try:
            session = load_session(path)
        except AgentDataError as exc:
            if not record:
                raise
            return {case_id: str(exc)}
        return {case_id: session.invocations}
    actual = load_eval_set(path, on_error="record" if record else "fail")
    out: dict[str, list[Invocation] | str] = {}
    for c in actual.cases:
        if c.error is not None:
            out[c.eval_id] = c.error
        elif c.invocations is not None:
            out[c.eval_id] = c.invocations
    if case_hint is not None:
        if len(out) != 1:
            raise AgentDataError(f"{path}: CASE=PATH needs a file with one conversation, this one has {len(out)}")
        return {case_hint: next(iter(out.values()))}
    return _one_for_one(out, [c.eval_id for c in expected.cases])


def _one_for_one(actual: dict[str, Any], expected_ids: Sequence[str]) -> dict[str, Any]:
    """The actual conversations by case id, a single one given the id of a one-case eval set
    (one conversation for one case: they are paired whatever their ids)."""
    if len(actual) == 1 and len(expected_ids) == 1 and next(iter(actual)) != expected_ids[0]:
        return {expected_ids[0]: next(iter(actual.values()))}
    return actual


@dataclass
class _Run:
    """What one ``--actual`` source gave: conversations (or, recorded, the reason a case
    could not be read) by case id, the files of a directory that could not be read at all
    (recorded), and the directory entries that are not ``*.json`` files (skipped)."""

    cases: dict[str, list[Invocation] | str] = field(default_factory=dict)
    unreadable_files: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _read_run(source: str | os.PathLike[str], expected: EvalSet, record: bool = False) -> _Run:
    text = os.fspath(source)
    case_hint = None
    if "=" in text and not Path(text).exists():
        case_hint, text = text.split("=", 1)
    path = Path(text)
    if not path.exists():
        raise AgentDataError(f"{text}: no such file or directory")
    if not path.is_dir():
        return _Run(_read_one(path, expected, case_hint, record))
    entries = sorted(path.iterdir())
    files = [p for p in entries if p.is_file() and p.name.endswith(".json")]
    if not files:
        raise AgentDataError(f"{text}: no *.json files (session dumps or eval sets) in this directory")
    run = _Run(skipped=[str(p) for p in entries if p not in files])
    for f in files:
        try:
            got = _read_one(f, expected, None, record)
        except AgentDataError as exc:
            if not record:
                raise
            run.unreadable_files.append((str(f), str(exc)))
            continue
        for case_id, invs in got.items():
            if case_id in run.cases:
                raise AgentDataError(f"{f}: eval case {case_id!r} appears twice in {text}")
            run.cases[case_id] = invs
    return run


def read_actual(source: str | os.PathLike[str], expected: EvalSet) -> dict[str, list[Invocation]]:
    """One run's actual invocations by eval case id, from ``source``: an eval set, a session
    dump, a directory of them, or ``CASE=PATH`` to name the case a file belongs to."""
    return _read_run(source, expected).cases  # type: ignore[return-value]  # without record, no reasons


@dataclass
class AgentReport:
    """Everything ``respeval agent`` computed: per run and case, ADK's outcomes; across runs,
    pass@k; pooled over every invocation, trajectory diagnostics."""

    expected: EvalSet
    criteria: tuple[Criterion, ...]
    runs: list[list[CaseOutcome]]
    run_labels: list[str]
    diagnostics: Any = None  # a TrajectoryResult over every scored (run, case, invocation)
    diagnostic_rows: list[tuple[int, str, int]] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    actual_runs: list[dict[str, list[Invocation]]] = field(default_factory=list, repr=False)
    judge: Any = None  # a MultiTurnReport when LLM-judged metrics were added (judge.methods.multiturn.judge_agent)
    unreadable_files: list[tuple[str, str]] = field(default_factory=list)  # (file, reason), recorded
    skipped_entries: list[str] = field(default_factory=list)  # directory entries that are not *.json files

    @property
    def passed(self) -> bool:
        return all(c.status == PASSED for run in self.runs for c in run)

    def counts(self, run: int) -> tuple[int, int]:
        """(passed, not passed) of a run, as ``adk eval`` prints them."""
        ok = sum(c.status == PASSED for c in self.runs[run])
        return ok, len(self.runs[run]) - ok

    def run_summary(self) -> PassAtKSummary | None:
        if len(self.runs) < 2:
            return None
        outcomes: dict[str, list[bool]] = {}
        for run in self.runs:
            for c in run:
                outcomes.setdefault(c.eval_id, []).append(c.status == PASSED)
        return summarize_runs(outcomes)

    def metric_means(self) -> dict[str, float]:
        """Per metric, the mean of the case values over runs and cases (cases without a value
        left out), as ``AgentEvaluator`` pools runs."""
        sums: dict[str, list[float]] = {}
        for run in self.runs:
            for c in run:
                for m in c.metrics:
                    if m.score is not None:
                        sums.setdefault(m.criterion.label(), []).append(m.score)
        return {k: sum(v) / len(v) for k, v in sums.items()}

    def unscored(self) -> list[dict[str, Any]]:
        """The (run, case, invocation) rows the trajectory diagnostics left out, with why
        (``on_error="record"``: calls the metrics cannot read); runs count from 1."""
        if self.diagnostics is None:
            return []
        out = []
        for row, reason in sorted(self.diagnostics.errors.items()):
            run, case, inv = self.diagnostic_rows[row]
            out.append({"run": run + 1, "eval_id": case, "invocation": inv, "reason": reason})
        return out

    def turns(self, run: int, eval_id: str) -> list[dict[str, Any]]:
        """A case's invocations side by side: the user's text, the expected and the actual
        final response and tool calls (``{"name", "args"}``), by position; a side the other
        lacks is None (``respeval view`` shows them)."""
        try:
            expected = self.expected.case(eval_id).invocations or []
        except KeyError:
            expected = []
        actual = self.actual_runs[run].get(eval_id, []) if run < len(self.actual_runs) else []
        out = []
        for i in range(max(len(expected), len(actual))):
            e = expected[i] if i < len(expected) else None
            a = actual[i] if i < len(actual) else None
            out.append(
                {
                    "invocation": i,
                    "user": (e or a).user_text if (e or a) is not None else None,  # type: ignore[union-attr]
                    "expected_response": e.final_text if e is not None else None,
                    "actual_response": a.final_text if a is not None else None,
                    "expected_calls": [dict(c) for c in e.calls] if e is not None else None,
                    "actual_calls": [dict(c) for c in a.calls] if a is not None else None,
                }
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "eval_set_id": self.expected.eval_set_id,
            "criteria": [{"metric": c.label(), "threshold": c.threshold} for c in self.criteria],
            "runs": [
                {
                    "label": label,
                    "cases": [{**c.to_dict(), "turns": self.turns(i, c.eval_id)} for c in run],
                    "passed": self.counts(i)[0],
                    "failed": self.counts(i)[1],
                }
                for i, (label, run) in enumerate(zip(self.run_labels, self.runs))
            ],
            "metric_means": self.metric_means(),
            "unmatched_actual_cases": self.unmatched,
            "unreadable_files": [{"file": f, "reason": r} for f, r in self.unreadable_files],
            "skipped_entries": self.skipped_entries,
        }
        summary = self.run_summary()
        if summary is not None:
            out["repeated_runs"] = summary.to_dict()
        if self.judge is not None:
            out["judge"] = {k: v for k, v in self.judge.to_dict().items() if k != "cases"}
        if self.diagnostics is not None:
            d = self.diagnostics
            out["trajectory"] = {
                "invocations": len(d) - len(d.errors),
                "unscored": self.unscored(),
                "means": {k: v for k, v in d.corpus_scores().items()},
                "tool_confusion": [t.to_dict() for t in d.tool_confusion()],
                "substitutions": [
                    {"expected": a, "called": b, "count": n} for (a, b), n in d.substitutions().most_common()
                ],
            }
        return out

    def format(self, *, worst: int = 5) -> str:
        lines = [f"eval set {self.expected.eval_set_id} ({len(self.expected.cases)} cases, {len(self.runs)} run(s))"]
        for i, (label, run) in enumerate(zip(self.run_labels, self.runs)):
            lines.append(f"\nrun {i + 1}: {label}")
            for c in run:
                cells = []
                for m in c.metrics:
                    value = "n/a" if m.score is None else f"{m.score:.4f}"
                    cells.append(f"{m.criterion.label()}={value} (>= {m.criterion.threshold:g})")
                lines.append(f"  {c.status:<13} {c.eval_id}  " + "  ".join(cells))
                for m in c.metrics:
                    if m.reason and m.status == NOT_EVALUATED:
                        lines.append(f"                {m.criterion.label()}: {m.reason}")
            ok, bad = self.counts(i)
            lines.append(f"  Tests passed: {ok}\n  Tests failed: {bad}")
        means = self.metric_means()
        if means:
            lines.append("\nmetric means over runs and cases: " + ", ".join(f"{k}={v:.4f}" for k, v in means.items()))
        summary = self.run_summary()
        if summary is not None:
            ks = ", ".join(
                f"pass@{k}={summary.pass_at[k]:.3f} pass^{k}={summary.pass_hat[k]:.3f}" for k in summary.pass_at
            )
            lines.append(f"repeated runs ({summary.runs} per case): pass rate {summary.pass_rate:.3f}; {ks}")
        if self.diagnostics is not None and len(self.diagnostics):
            d = self.diagnostics
            lines.append(
                f"\ntrajectory diagnostics over {len(d) - len(d.errors)} invocation(s) (respeval; Vertex-style metrics):"
            )
            unscored = self.unscored()
            if unscored:
                lines.append(f"  left out, their calls cannot be read ({len(unscored)}):")
                for u in unscored:
                    lines.append(f"    run {u['run']}, {u['eval_id']}, invocation {u['invocation']}: {u['reason']}")
            for k, v in d.corpus_scores().items():
                lines.append(f"  {k:<32}{v:.4f}")
            confusion = [t for t in d.tool_confusion() if t.fp or t.fn][:10]
            if confusion:
                lines.append("  tools with mistakes (tp / extra / missed):")
                for t in confusion:
                    lines.append(f"    {t.tool:<30} {t.tp:>5} / {t.fp:>5} / {t.fn:>5}")
            subs = d.substitutions().most_common(5)
            if subs:
                lines.append(
                    "  most frequent substitutions (expected -> called): "
                    + ", ".join(f"{a} -> {b} x{n}" for (a, b), n in subs)
                )
            rows = [r for r in d.worst(worst, by="trajectory_recall") if d["trajectory_recall"][r] < 1.0]
            if rows:
                lines.append("  lowest-recall invocations (run, case, invocation):")
                for r in rows:
                    run, case, inv = self.diagnostic_rows[r]
                    lines.append(f"    run {run + 1}, {case}, invocation {inv}: recall {d['trajectory_recall'][r]:.3f}")
        if self.judge is not None:
            j = self.judge
            lines.append(
                f"\njudged metrics: {j.model}, {j.samples} sample(s) per unit; respeval's prompts with ADK's "
                "voting and averaging rules (values are not ADK's)"
            )
            lines.append("  " + j.spend.format().replace("\n", "\n  "))
            if j.stop_reason:
                lines.append(f"  STOPPED: {j.stop_reason}")
        if self.unmatched:
            lines.append("\nactual conversations with no eval case of that id: " + ", ".join(self.unmatched))
        if self.unreadable_files:
            lines.append(f"\nfiles that could not be read, their cases not scored ({len(self.unreadable_files)}):")
            lines += [f"  {f}: {r}" for f, r in self.unreadable_files]
        if self.skipped_entries:
            lines.append("\nskipped, not *.json files: " + ", ".join(self.skipped_entries))
        return "\n".join(lines)


def evaluate_agent(
    expected: EvalSet | str | os.PathLike[str],
    actual: Sequence[str | os.PathLike[str] | Mapping[str, Sequence[Invocation]]],
    criteria: Sequence[Criterion] = DEFAULT_CRITERIA,
    *,
    on_error: str = "fail",
    implementation: str | None = None,
    diagnostics: bool = True,
) -> AgentReport:
    """Score each run in ``actual`` (paths, or mappings case id -> invocations) against the
    ``expected`` eval set (a loaded EvalSet or a path)."""
    from respeval.metrics.trajectory import trajectory

    on_error = renamed_value("evaluate_agent", "on_error", on_error, {"raise": "fail"})
    if on_error not in ("fail", "record"):
        raise ValueError(f"on_error must be 'fail' or 'record', not {on_error!r}")
    expected_set = expected if isinstance(expected, EvalSet) else load_eval_set(expected, on_error=on_error)
    if not actual:
        raise ValueError("no actual conversations given (one --actual per run)")
    runs: list[list[CaseOutcome]] = []
    actual_runs: list[dict[str, list[Invocation]]] = []
    labels: list[str] = []
    unmatched: list[str] = []
    pred_rows: list[list[dict[str, Any]]] = []
    ref_rows: list[list[dict[str, Any]]] = []
    where: list[tuple[int, str, int]] = []
    known = {c.eval_id for c in expected_set.cases}
    record = on_error == "record"
    unreadable_files: list[tuple[str, str]] = []
    skipped: list[str] = []
    for run_index, source in enumerate(actual):
        read: Mapping[str, Sequence[Invocation] | str]
        if isinstance(source, Mapping):
            read = source
            labels.append(f"run {run_index + 1}")
        else:
            got_run = _read_run(source, expected_set, record)
            read = got_run.cases
            unreadable_files += got_run.unreadable_files
            skipped += got_run.skipped
            labels.append(os.fspath(source))
        by_case = {k: list(v) for k, v in read.items() if not isinstance(v, str)}
        unreadable = {k: v for k, v in read.items() if isinstance(v, str)}
        unmatched += [f"{labels[-1]}: {k}" for k in read if k not in known]
        actual_runs.append(by_case)
        outcomes = []
        for case in expected_set.cases:
            got = by_case.get(case.eval_id)
            reason = case.error or unreadable.get(case.eval_id)
            if reason is not None:  # recorded by the loaders (on_error="record")
                metrics = [MetricOutcome(c, None, NOT_EVALUATED, reason=reason) for c in criteria]
                outcomes.append(CaseOutcome(case.eval_id, case_status(metrics), metrics, run_index))
                continue
            try:
                outcome = evaluate_case(
                    got, case, criteria, on_error=on_error, implementation=implementation, run=run_index
                )
            except AgentDataError as exc:
                raise AgentDataError(
                    f"{labels[-1]} against {expected_set.path or expected_set.eval_set_id}: {exc} "
                    "(fix the case, or rerun with --on-error record to score the other cases and record "
                    "this one as NOT_EVALUATED)"
                ) from None
            outcomes.append(outcome)
            if got is not None and case.invocations is not None and len(got) == len(case.invocations):
                for i, (a, e) in enumerate(zip(got, case.invocations)):
                    pred_rows.append(a.calls)
                    ref_rows.append(e.calls)
                    where.append((run_index, case.eval_id, i))
        runs.append(outcomes)
    report = AgentReport(
        expected_set,
        tuple(criteria),
        runs,
        labels,
        unmatched=unmatched,
        actual_runs=actual_runs,
        unreadable_files=unreadable_files,
        skipped_entries=skipped,
    )
    if diagnostics and pred_rows:
        result = trajectory(
            pred_rows,
            ref_rows,
            DIAGNOSTIC_METRICS,
            name_key="name",
            args_key="args",
            args_required=False,
            implementation=implementation,
            on_error="record",
        )
        if result.errors and not record:
            row = min(result.errors)
            run, case_id, inv = where[row]
            raise AgentDataError(
                f"{labels[run]} against {expected_set.path or expected_set.eval_set_id}: eval case {case_id!r}, "
                f"invocation {inv}: {result.errors[row]} (fix the call, or rerun with --on-error record to leave "
                "the invocation out of the trajectory diagnostics and list it)"
            )
        report.diagnostics = result
        report.diagnostic_rows = where
    return report


def tool_trajectory_scores_from_files(
    expected: str | os.PathLike[str],
    actual: str | os.PathLike[str],
    criterion: Criterion = DEFAULT_CRITERIA[0],  # ADK's default: tool_trajectory_avg_score >= 1.0, EXACT
    *,
    implementation: str | None = None,
) -> list[CaseOutcome]:
    """``evaluate_agent(expected, [actual], [criterion], diagnostics=False).runs[0]``, for
    two eval-set files and one ``tool_trajectory_avg_score`` criterion: each expected case's
    outcome, its per-invocation values and case value, paired and scored the same way.

    Both files are read for their tool uses only (``read_tool_uses``: no Python object per
    invocation) and every pair of invocations scored by one call of the trajectory kernels
    on the files' bytes.  A file that reader leaves to ``load_eval_set``, an actual run that
    is not an eval-set file (a session dump, a directory), cases whose invocation counts
    differ, or calls the kernels cannot read: all go through ``evaluate_agent``, which gives
    the same outcomes or raises its error.
    """
    if criterion.metric != TRAJECTORY:
        raise ValueError(f"tool_trajectory_scores_from_files scores {TRAJECTORY}, not {criterion.metric!r}")
    outcomes = None
    path = Path(actual)
    if path.is_file() and not _is_session(path):
        exp = read_tool_uses(expected, implementation=implementation)
        act = read_tool_uses(actual, implementation=implementation) if exp is not None else None
        if act is not None:
            outcomes = _trajectory_outcomes(exp, act, criterion, implementation)  # type: ignore[arg-type]
    if outcomes is None:
        report = evaluate_agent(expected, [actual], [criterion], diagnostics=False, implementation=implementation)
        outcomes = report.runs[0]
    return outcomes


def _trajectory_outcomes(
    expected: EvalSetToolUses, actual: EvalSetToolUses, criterion: Criterion, implementation: str | None
) -> list[CaseOutcome] | None:
    """``tool_trajectory_scores_from_files`` on files read; None where ``evaluate_agent``
    must speak (counts that differ, calls that cannot be read)."""
    by_id: dict[str, int] = {}  # a conversation's case index; a later case of an id replaces it, as in _read_one
    for k, conversation in enumerate(actual.conversation):
        if conversation:
            by_id[actual.case_ids[k]] = k
    by_id = _one_for_one(by_id, expected.case_ids)
    plan: list[tuple[str, str | int]] = []  # per expected case: why it is not scored, or its rows' count
    e_first, a_first, counts = [], [], []
    for k, eval_id in enumerate(expected.case_ids):
        a = by_id.get(eval_id)
        if not expected.conversation[k]:
            plan.append((eval_id, NO_EXPECTED_INVOCATIONS))
        elif a is None:
            plan.append((eval_id, NO_ACTUAL_INVOCATIONS))
        else:
            n = expected.case_rows[k + 1] - expected.case_rows[k]
            if actual.case_rows[a + 1] - actual.case_rows[a] != n:
                return None
            plan.append((eval_id, n))
            e_first.append(expected.case_rows[k])
            a_first.append(actual.case_rows[a])
            counts.append(n)
    e_rows, a_rows = _ranges(e_first, counts), _ranges(a_first, counts)
    ref = expected.tool_uses if np.array_equal(e_rows, np.arange(len(expected.tool_uses))) else None
    values, errors = trajectory_values(
        actual.tool_uses.take(a_rows),
        ref if ref is not None else expected.tool_uses.take(e_rows),
        match_type=criterion.match_type,
        ignore_args=criterion.ignore_args,
        implementation=implementation,
    )
    if errors:
        return None
    outcomes, at = [], 0
    with fewer_collections():  # two objects and a list per case, none in a cycle
        for eval_id, what in plan:
            if isinstance(what, str):
                metrics = [MetricOutcome(criterion, None, NOT_EVALUATED, reason=what)]
            else:
                metrics = [metric_outcome(criterion, values[at : at + what])]
                at += what
            outcomes.append(CaseOutcome(eval_id, case_status(metrics), metrics, 0))
    return outcomes


def _ranges(firsts: Sequence[int], counts: Sequence[int]) -> np.ndarray:
    """The rows first .. first + count - 1 of each (first, count), one after the other."""
    lengths = np.asarray(counts, dtype=np.int64)
    total = int(lengths.sum())
    ends = np.cumsum(lengths)
    return np.repeat(np.asarray(firsts, dtype=np.int64) - (ends - lengths), lengths) + np.arange(total)
