"""Scoring one closed window: its traces become cases, a sample of them is scored by the gate
and the spec's metrics, and the window is tested against the reference.

::

    the window's records ──▶ traces ──▶ cases (respeval.traces) in unit-hash order
      ──▶ sample (the seeded trace-id hash, as `dataset from-traces`) ──▶ scrub PII
      ──▶ gate: exact ─▶ lexical ─▶ judge (rows with a reference; the judge sees at most the
          window's judge budget, the first rows in unit-hash order)
      ──▶ the spec's metrics (respeval.evaluate; judged metrics on the first rows of what the
          gate left of the budget)
      ──▶ per metric: value and interval ──▶ drift test against the reference windows

Everything a window's result holds is decided by its records and the settings: the rows the
judge sees are chosen before any call is made, the judge's answers come from the cache on a
rerun, and the seeds are fixed, so a rerun after a kill writes what an uninterrupted run
wrote.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.gate import ACCEPT, REJECT, run_gate
from respeval.judge.results import Spend
from respeval.monitor.config import MonitorConfig, References
from respeval.monitor.drift import (
    EMPTY,
    MEAN,
    PROPORTION,
    REFERENCE,
    DriftTest,
    MetricValues,
    WindowDrift,
    check_window,
    pooled,
)
from respeval.monitor.store import Store
from respeval.stats import DEFAULT_SEED, bootstrap_means, percentile_interval, wilson
from respeval.traces.build import trace_case
from respeval.traces.case import iso_time
from respeval.traces.spill import Trace, add_decoded

__all__ = ["GATE_METRIC", "Judge", "WindowScorer", "load_references"]


GATE_METRIC = "pass_rate"
"""The gate's pass rate: accepted / (accepted + rejected), rows with a reference."""

_NESTED = ("messages", "tool_calls", "tools", "feedback")


@dataclass
class Judge:
    """The judge of a monitor: the model, its answer cache and the engine's options."""

    model: Any
    cache: Any = None
    options: Any = None
    threshold: float = 0.5


def _key(value: Any) -> Any:
    return " ".join(value.split()) if isinstance(value, str) else value


def load_references(refs: References) -> dict[Any, Any]:
    """The references file as key -> reference (see :class:`References`)."""
    from respeval.io.readers import read_columns

    out: dict[Any, Any] = {}
    with read_columns(refs.path, [refs.key, refs.field], allow_list_fields=[refs.field]) as reader:
        for chunk in reader:
            for k, v in zip(chunk.columns[refs.key], chunk.columns[refs.field]):
                out.setdefault(_key(k), v)
    return out


@dataclass
class _Metric:
    entry: Any
    names: list[str]
    judged: bool
    higher_is_better: dict[str, bool] = field(default_factory=dict)


def _plan_metrics(metrics: Sequence[Any]) -> list[_Metric]:
    from respeval.compare.computed import LOWER_IS_BETTER
    from respeval.evaluate.plan import resolve_metrics

    out = []
    for entry in metrics:
        plan = resolve_metrics([entry])
        names = plan.names()
        better = {n: n not in LOWER_IS_BETTER for n in names}
        for custom in plan.custom:
            for n in custom.metric_names:
                better[n] = bool(getattr(custom, "higher_is_better", True))
        out.append(_Metric(entry, names, bool(plan.judged), better))
    return out


def _eval_row(row: Mapping[str, Any], reference: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": row["trace_id"]}
    for name, value in row.items():
        out[name] = (
            json.dumps(value, ensure_ascii=False, sort_keys=True) if name in _NESTED and value is not None else value
        )
    out["reference"] = reference
    return out


def _finite(value: Any) -> Any:
    if isinstance(value, float) and value != value:
        return None
    return value


class WindowScorer:
    """Scores windows of one store (see the module docstring).

    ``metrics``: the spec's metric entries; ``columns``: its ``columns:`` (which case field is
    the response, the prompt; the reference is the gate's); ``judge``: the judge (None: the
    gate's judge stage and judged metrics are left out)."""

    def __init__(
        self,
        store: Store,
        config: MonitorConfig,
        metrics: Sequence[Any] = (),
        *,
        columns: Mapping[str, str] | None = None,
        judge: Judge | None = None,
        references: Mapping[Any, Any] | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.metrics = _plan_metrics(metrics)
        self.columns = dict(columns or {})
        self.judge = judge
        self.references = dict(references or {})
        self.spend = Spend()
        self.test = DriftTest(config.alpha, config.min_rows, config.bootstrap, DEFAULT_SEED)
        self._reference: dict[str, MetricValues] | None = None
        self._refs: dict[str, Any] = {}
        self._scrubber = None
        if config.scrub_pii and config.pii_key is not None:
            from respeval.traces.pii import Scrubber

            self._scrubber = Scrubber(config.pii_key)
        if any(m.judged for m in self.metrics) and judge is None:
            names = ", ".join(n for m in self.metrics if m.judged for n in m.names)
            raise ValueError(f"judged metric(s) {names} need a judge model (--model, or model: in the spec)")

    # ------------------------------------------------------------------ metric kinds
    def metric_kinds(self) -> dict[str, tuple[str, bool]]:
        """name -> (pass_rate or mean, higher_is_better), in report order."""
        out: dict[str, tuple[str, bool]] = {}
        if self.config.references is not None:
            out[GATE_METRIC] = (PROPORTION, True)
        for m in self.metrics:
            for name in m.names:
                kind = PROPORTION if (m.judged or name in self.config.proportions) else MEAN
                out[name] = (kind, m.higher_is_better.get(name, True))
        return out

    def values_of(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, MetricValues]:
        """Each metric's values over scored rows (``None`` values left out)."""
        out = {}
        for name, (kind, better) in self.metric_kinds().items():
            if name == GATE_METRIC:
                values: list[Any] = [r["decision"] == ACCEPT for r in rows if r.get("decision") in (ACCEPT, REJECT)]
            else:
                raw = [r.get("metrics", {}).get(name) for r in rows]
                values = [v for v in raw if v is not None]
            out[name] = MetricValues.of(kind, values, better)
        return out

    # ------------------------------------------------------------------ the reference
    def reference_windows(self) -> range:
        first = self.store.counter("first_window")
        return range(first, first + self.config.reference_windows)

    def reference(self) -> dict[str, MetricValues]:
        if self._reference is None:
            self._reference = pooled([self.values_of(self.store.window_rows(self.reference_windows()))])
        return self._reference

    # ------------------------------------------------------------------ one window
    def _cases(self, window: int) -> list[tuple[int, Any]]:
        traces: dict[str, Trace] = {}
        from respeval.traces.sampling import unit_hash

        seed = self.config.sampling.seed
        for trace_id, data in self.store.window_records(window):
            trace = traces.get(trace_id)
            if trace is None:
                trace = traces[trace_id] = Trace(trace_id, unit_hash(trace_id, seed))
            add_decoded(trace, data)
        ordered = sorted(traces.values(), key=lambda t: (t.u, t.trace_id))
        return [(t.u, trace_case(t, self.config.feedback_attributes)) for t in ordered]

    def score(self, window: int) -> tuple[dict[str, Any], list[tuple[str, int, bool, Any]]]:
        """The window's result and its traces (trace id, unit hash, sampled, row)."""
        config = self.config
        cases = self._cases(window)
        rows_all = [case.row() for _, case in cases]
        keep = config.sampling.select([(u, row, case.error is not None) for (u, case), row in zip(cases, rows_all)])
        sampled = [(u, row) for (u, _), row, k in zip(cases, rows_all, keep) if k]
        # the references are looked up by what the trace said, before any scrubbing
        key = config.references.key if config.references is not None else "prompt"
        self._refs = {row["trace_id"]: self.references.get(_key(row.get(key))) for _, row in sampled}
        if self._scrubber is not None:
            from respeval.traces.build import scrub_row

            sampled = [(u, scrub_row(row, self._scrubber)) for u, row in sampled]
        records: dict[str, dict[str, Any]] = {
            row["trace_id"]: {"id": row["trace_id"], "error": row.get("error") is not None, "metrics": {}}
            for _, row in sampled
        }
        budget = config.judge_budget
        judged_rows = 0
        gate_json = None
        if config.references is not None:
            judged_rows, gate_json = self._gate(sampled, records, budget)
        left = None if budget is None else max(budget - judged_rows, 0)
        judged_rows += self._evaluate(sampled, records, left)
        rows = [records[row["trace_id"]] for _, row in sampled]
        values = self.values_of(rows)
        start_ns = window * config.window_ns
        result: dict[str, Any] = {
            "window": window,
            "start": iso_time(start_ns) or "1970-01-01T00:00:00.000000Z",
            "end": iso_time((window + 1) * config.window_ns),
            "traces": len(cases),
            "sampled": len(sampled),
            "errors": sum(1 for _, case in cases if case.error is not None),
            "judged_rows": judged_rows,
            "gate": gate_json,
            "metrics": {name: self._summary(name, v, window) for name, v in values.items()},
        }
        drift = self._drift(window, values, len(sampled))
        result["drift"] = drift.to_json()
        result["status"] = drift.status
        traces = [(case.trace_id, u, k, records.get(case.trace_id) if k else None) for (u, case), k in zip(cases, keep)]
        return result, traces

    def _summary(self, name: str, values: MetricValues, window: int) -> dict[str, Any]:
        config = self.config
        out: dict[str, Any] = {"kind": values.kind, "n": values.n, "higher_is_better": values.higher_is_better}
        if values.n == 0:
            return {**out, "value": None, "low": None, "high": None}
        if values.kind == PROPORTION:
            interval = wilson(int(values.values.sum()), values.n, config.confidence)
            return {**out, "value": interval.mid, "low": interval.low, "high": interval.high, "method": "wilson"}
        value = float(values.values.mean())
        low = high = value
        if values.n > 1:
            replicates = bootstrap_means(values.values[:, None], config.bootstrap, DEFAULT_SEED + window)
            low, _, high = (float(x) for x in percentile_interval(replicates, config.confidence)[:, 0])
        return {**out, "value": value, "low": low, "high": high, "method": "poisson bootstrap percentile"}

    def _drift(self, window: int, values: dict[str, MetricValues], sampled: int) -> WindowDrift:
        refs = self.reference_windows()
        if window in refs:
            return WindowDrift(REFERENCE)
        if sampled == 0:
            look = window - refs[-1]
            from respeval.stats import spent_alpha

            return WindowDrift(EMPTY, look, spent_alpha(self.config.alpha, look))
        return check_window(self.reference(), values, window - refs[-1], self.test, seed=DEFAULT_SEED + 104729 * window)

    # ------------------------------------------------------------------ the gate
    def _gate(
        self, sampled: list[tuple[int, dict[str, Any]]], records: dict[str, dict[str, Any]], budget: int | None
    ) -> tuple[int, dict[str, Any]]:
        response = self.columns.get("response", "response")
        prompt = self.columns.get("prompt", "prompt")
        gated = []
        for _, row in sampled:
            ref = self._refs.get(row["trace_id"])
            if ref is None:
                continue
            text = row.get(response)
            gated.append(
                {
                    "id": row["trace_id"],
                    "prompt": row.get(prompt) if isinstance(row.get(prompt), str) else "",
                    "response": text if isinstance(text, str) else "",
                    "reference": ref,
                }
            )
        if not gated:
            return 0, {"rows": 0, "decisions": {}, "stages": {}, "judged": 0, "over_judge_limit": 0}
        judge = self.judge
        method = None
        if judge is not None:
            from respeval.judge.methods.pointwise import Pointwise

            method = Pointwise(threshold=judge.threshold)
        report = run_gate(
            gated,
            self.config.gate,
            model=judge.model if judge is not None else None,
            cache=judge.cache if judge is not None else None,
            options=judge.options if judge is not None else None,
            method=method,
            judge_limit=budget,
        )
        for g in report.rows:
            rec = records[g.id]
            rec.update(
                decision=g.decision,
                stage=g.stage,
                exact=g.exact,
                lexical=g.lexical,
                judge_score=g.judge_score,
            )
            if g.reason:
                rec["reason"] = g.reason
        summary = report.judge_summary
        if summary is not None:
            self.spend.add(summary)
        counts = report.to_json()["decisions"]
        gate_json = {
            "rows": report.total,
            "decisions": counts,
            "stages": {s.name: s.settled for s in report.stages},
            "judged": report.judged,
            "over_judge_limit": report.over_limit,
        }
        return report.judged, gate_json

    # ------------------------------------------------------------------ the spec's metrics
    def _evaluate(
        self, sampled: list[tuple[int, dict[str, Any]]], records: dict[str, dict[str, Any]], left: int | None
    ) -> int:
        if not self.metrics or not sampled:
            return 0
        from respeval.evaluate import evaluate

        rows = [_eval_row(row, self._refs.get(row["trace_id"])) for _, row in sampled]
        judged_rows = 0
        plain = [m for m in self.metrics if not m.judged]
        judged = [m for m in self.metrics if m.judged]
        runs: list[tuple[list[_Metric], list[dict[str, Any]]]] = []
        if plain:
            runs.append((plain, rows))
        if judged:
            subset = rows if left is None else rows[:left]
            if subset:
                runs.append((judged, subset))
                judged_rows = len(subset)
        for group, subset in runs:
            judge = self.judge if any(m.judged for m in group) else None
            result = evaluate(
                subset,
                [m.entry for m in group],
                model=judge.model if judge is not None else None,
                cache=judge.cache if judge is not None else None,
                engine_options=judge.options if judge is not None else None,
                bootstrap=0,
                on_error="skip",
                response_column=self.columns.get("response", "response"),
                prompt_column=self.columns.get("prompt", "prompt"),
                reference_column=self.columns.get("reference", "reference"),
                id_column="id",
            )
            if judge is not None:
                self.spend.add(result.spend)
            names = [n for m in group for n in m.names]
            table = result.table
            ids = table.column("id").to_pylist()
            for name in names:
                proportion = name in self.config.proportions
                judged_metric = any(name in m.names and m.judged for m in group)
                values: list[bool | float | None]
                if judged_metric and f"{name}/pass" in table.column_names:
                    column = table.column(f"{name}/pass").to_pylist()
                    status = table.column(f"{name}/status").to_pylist()
                    values = [bool(v) if s == "scored" and v is not None else None for v, s in zip(column, status)]
                else:
                    scores = table.column(f"{name}/score").to_pylist() if f"{name}/score" in table.column_names else []
                    values = [
                        None if v is None or v != v else (float(v) >= 1.0 if proportion else float(v)) for v in scores
                    ]
                for trace_id, value in zip(ids, values):
                    records[trace_id]["metrics"][name] = _finite(value)
        return judged_rows
