"""Report pieces for agent runs: plain data and a self-contained HTML fragment (trajectory
table, per-tool confusion, substitutions, the worst invocations) for the HTML report to embed.

``trajectory_section(result, ids=None)`` takes a ``TrajectoryResult`` (``respeval score``
with trajectory metrics, or ``AgentReport.diagnostics``); ``agent_section(report)`` takes an
``AgentReport`` (``respeval agent``) and adds the per-case statuses and pass@k.  Both return
``{"data": {...}, "html": str}``; the HTML uses only ``<section>``, ``<table>`` and classes
prefixed ``rv-agent-``, every value escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

__all__ = ["agent_section", "trajectory_section"]


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return "n/a" if math.isnan(x) else f"{x:.4f}"
    return html.escape(str(x))


def _table(caption: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_fmt(c)}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f'<table class="rv-agent-table"><caption>{html.escape(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def trajectory_section(
    result: Any, ids: Sequence[Any] | None = None, *, worst: int = 10, tools: int = 20
) -> dict[str, Any]:
    """Data and HTML for a ``TrajectoryResult``: corpus values (with bootstrap intervals when
    there are scored rows), per-tool confusion, frequent substitutions, worst rows."""
    corpus = result.corpus_scores()
    intervals = result.bootstrap(1000) if len(result) > len(result.errors) else {}
    confusion = result.tool_confusion()
    subs = result.substitutions().most_common(10)
    by = "trajectory_recall" if "trajectory_recall" in result else next(iter(result.keys()))
    worst_rows = [r for r in result.worst(worst, by=by) if result[by][r] < 1.0]
    label = (lambda r: ids[r]) if ids is not None else (lambda r: r)
    data = {
        "rows": len(result),
        "unscored": {str(label(r)): why for r, why in sorted(result.errors.items())},
        "corpus": corpus,
        "intervals": {k: list(v) for k, v in intervals.items()},
        "tool_confusion": [t.to_dict() for t in confusion],
        "substitutions": [{"expected": a, "called": b, "count": n} for (a, b), n in subs],
        "worst": [{"row": label(r), by: float(result[by][r])} for r in worst_rows],
        "signature": result.signature,
    }
    parts = ['<section class="rv-agent">', f"<h3>Trajectories ({len(result)} rows)</h3>"]
    parts.append(
        _table(
            "Corpus values (95% bootstrap interval)",
            ["metric", "value", "interval"],
            [
                (k, v, "" if k not in intervals else f"[{intervals[k].low:.4f}, {intervals[k].high:.4f}]")
                for k, v in corpus.items()
            ],
        )
    )
    if confusion:
        parts.append(
            _table(
                "Per tool: matched, extra and missed calls",
                ["tool", "matched", "extra", "missed", "precision", "recall", "F1"],
                [(t.tool, t.tp, t.fp, t.fn, t.precision, t.recall, t.f1) for t in confusion[:tools]],
            )
        )
    if subs:
        parts.append(
            _table(
                "Substitutions (expected -> called)", ["expected", "called", "count"], [(a, b, n) for (a, b), n in subs]
            )
        )
    if worst_rows:
        parts.append(_table(f"Lowest {by}", ["row", by], [(label(r), float(result[by][r])) for r in worst_rows]))
    if result.errors:
        parts.append(
            _table(
                "Unscored rows", ["row", "reason"], [(label(r), why) for r, why in sorted(result.errors.items())][:50]
            )
        )
    parts.append(f'<p class="rv-agent-signature">{html.escape(result.signature)}</p></section>')
    return {"data": data, "html": "".join(parts)}


def agent_section(report: Any) -> dict[str, Any]:
    """Data and HTML for an ``AgentReport``: per run and case the ADK statuses and values,
    pass@k over runs, and the trajectory section of the pooled invocations."""
    data = report.to_dict()
    parts = ['<section class="rv-agent">', f"<h3>Agent eval set {html.escape(report.expected.eval_set_id)}</h3>"]
    for label, run in zip(report.run_labels, report.runs):
        labels = [m.criterion.label() for m in run[0].metrics] if run else []
        rows = [(c.eval_id, c.status, *(m.score if m.score is not None else "n/a" for m in c.metrics)) for c in run]
        parts.append(_table(f"run {label}", ["eval case", "status", *labels], rows))
    summary = report.run_summary()
    if summary is not None:
        parts.append(
            _table(
                f"Repeated runs ({summary.runs} per case)",
                ["k", "pass@k", "pass^k"],
                [(k, summary.pass_at[k], summary.pass_hat[k]) for k in summary.pass_at],
            )
        )
    parts.append("</section>")
    out = {"data": data, "html": "".join(parts)}
    if report.diagnostics is not None:
        ids = [f"run {r + 1} / {case} / invocation {i}" for r, case, i in report.diagnostic_rows]
        section = trajectory_section(report.diagnostics, ids)
        out["html"] += section["html"]
        out["data"]["trajectory_report"] = section["data"]
    return out
