"""Report pieces for agent runs: plain JSON data (trajectory tables, per-tool confusion,
substitutions, the worst invocations with the tools each side called, per-case statuses,
pass@k, judged metrics) for the HTML report's "Agents" section, and its HTML.

``trajectory_section(result, ids=None)`` takes a ``TrajectoryResult`` (``respeval score``
with trajectory metrics, or ``AgentReport.diagnostics``); ``agent_section(report)`` takes an
``AgentReport`` (``respeval agent``) and adds the per-case statuses, pass@k and the judge's
summary.  Both return ``{"data": {...}, "html": str}``: ``data`` is one entry of a run
summary's ``"agents"`` list (``respeval.report``), ``html`` its rendering by
:func:`respeval.report.agents.render_agent_entry`.  :func:`agent_summary` builds a whole run
summary for ``respeval agent --report``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["agent_section", "agent_summary", "trajectory_section"]


def _plain(value: Any) -> Any:
    """JSON-ready: NaN becomes None (a run summary is JSON)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def trajectory_data(result: Any, ids: Sequence[Any] | None = None, *, worst: int = 10) -> dict[str, Any]:
    """The data of a trajectory section (see the module docstring)."""
    corpus = {k: _plain(float(v)) for k, v in result.corpus_scores().items()}
    intervals = result.bootstrap(1000) if len(result) > len(result.errors) else {}
    confusion = result.tool_confusion()
    subs = result.substitutions().most_common(20)
    by = "trajectory_recall" if "trajectory_recall" in result else next(iter(result.keys()))
    worst_rows = [r for r in result.worst(worst, by=by) if result[by][r] < 1.0]

    def label(r: int) -> Any:
        return ids[r] if ids is not None else r

    worst_data = []
    for r in worst_rows:
        called, expected = result.calls(r)
        worst_data.append(
            {
                "row": label(r),
                "value": float(result[by][r]),
                "called": [{"tool": n, "args": a, "matched": m} for n, a, m in called],
                "expected": [{"tool": n, "args": a, "matched": m} for n, a, m in expected],
            }
        )
    return {
        "kind": "trajectory",
        "rows": len(result),
        "unscored": [{"row": label(r), "reason": why} for r, why in sorted(result.errors.items())],
        "corpus": corpus,
        "intervals": {k: [_plain(v.low), _plain(v.high)] for k, v in intervals.items()},
        "tool_confusion": [{k: _plain(v) for k, v in t.to_dict().items()} for t in confusion],
        "substitutions": [{"expected": a, "called": b, "count": n} for (a, b), n in subs],
        "worst_by": by,
        "worst": worst_data,
        "signature": result.signature,
    }


def trajectory_section(
    result: Any, ids: Sequence[Any] | None = None, *, worst: int = 10, tools: int = 20
) -> dict[str, Any]:
    """Data and HTML for a ``TrajectoryResult``: corpus values (with bootstrap intervals when
    there are scored rows), per-tool confusion, frequent substitutions, worst rows."""
    from respeval.report.agents import render_agent_entry

    data = trajectory_data(result, ids, worst=worst)
    return {"data": data, "html": render_agent_entry(data, tools=tools)}


def agent_data(report: Any, *, worst: int = 10) -> dict[str, Any]:
    """The data of an agent section: per run and case the statuses and metric values, pass@k
    over runs, the judge's summary, and the trajectory diagnostics of every invocation."""
    runs = []
    for label, run in zip(report.run_labels, report.runs):
        runs.append(
            {
                "label": label,
                "cases": [
                    {
                        "eval_id": c.eval_id,
                        "status": c.status,
                        "metrics": [
                            {
                                "metric": m.criterion.label(),
                                "threshold": m.criterion.threshold,
                                "score": _plain(m.score),
                                "status": m.status,
                                "reason": m.reason,
                            }
                            for m in c.metrics
                        ],
                    }
                    for c in run
                ],
            }
        )
    data: dict[str, Any] = {
        "kind": "agent",
        "eval_set_id": report.expected.eval_set_id,
        "runs": runs,
        "metric_means": report.metric_means(),
    }
    summary = report.run_summary()
    if summary is not None:
        data["repeated_runs"] = summary.to_dict()
    if report.judge is not None:
        data["judge"] = {k: v for k, v in report.judge.to_dict().items() if k != "cases"}
    if report.diagnostics is not None:
        ids = [f"run {r + 1} / {case} / invocation {i}" for r, case, i in report.diagnostic_rows]
        data["trajectory"] = trajectory_data(report.diagnostics, ids, worst=worst)
    return data


def agent_section(report: Any, *, worst: int = 10) -> dict[str, Any]:
    """Data and HTML for an ``AgentReport`` (see the module docstring)."""
    from respeval.report.agents import render_agent_entry

    data = agent_data(report, worst=worst)
    return {"data": data, "html": render_agent_entry(data)}


def agent_summary(report: Any, *, title: str | None = None, worst: int = 10) -> dict[str, Any]:
    """A run summary (``respeval.report``) of an ``AgentReport``: the agent entry, and the
    metric means as scores (with bootstrap intervals for the trajectory diagnostics)."""
    from respeval.report.schema import new_summary

    data = agent_data(report, worst=worst)
    summary = new_summary(
        title or f"Agent eval set {report.expected.eval_set_id}",
        {
            "command": "agent",
            "eval set": report.expected.eval_set_id,
            "runs": len(report.runs),
            "cases": len(report.expected.cases),
        },
    )
    n_cases = sum(len(run) for run in report.runs)
    scores = [{"metric": k, "mean": v, "n": n_cases} for k, v in report.metric_means().items()]
    traj = data.get("trajectory")
    if traj:
        for k, v in traj["corpus"].items():
            low, high = traj["intervals"].get(k, [None, None])
            scores.append({"metric": k, "mean": v, "low": low, "high": high, "n": traj["rows"], "confidence": 0.95})
    summary["scores"] = scores
    summary["agents"] = [data]
    return summary
