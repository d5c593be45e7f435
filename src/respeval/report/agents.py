"""The report's "Agents" section: trajectory tables, per-tool confusion, substitutions and
the worst invocations of agent runs, from the run summary's ``"agents"`` list.

An entry is the data of :func:`respeval.agents.report.trajectory_section` (``"kind":
"trajectory"``) or of :func:`respeval.agents.report.agent_section` (``"kind": "agent"``:
per-case statuses and metric values, pass@k over runs, the judge's summary, and a nested
trajectory entry).  Every text is escaped (and scrubbed of secrets) by
:func:`respeval.report.format.escape`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from respeval.report.format import escape, fmt, html_table

__all__ = ["render_agent_entry", "section_agents"]

_STATUS_STYLE = {"PASSED": "color:#15803d", "FAILED": "color:#b91c1c", "NOT_EVALUATED": "color:#64748b"}


def _interval(pair: Sequence[Any] | None) -> str:
    if not pair or pair[0] is None:
        return ""
    return f'<span class="ci">[{fmt(pair[0])}, {fmt(pair[1])}]</span>'


def _calls(calls: Sequence[Mapping[str, Any]]) -> str:
    """One call per line, ``tool(arguments)``, a check mark on the calls that found a partner."""
    if not calls:
        return "<i>none</i>"
    lines = []
    for c in calls:
        args = str(c.get("args", ""))
        args = args if len(args) <= 120 else args[:117] + "..."
        mark = "✓ " if c.get("matched") else "✗ "
        lines.append(f"{mark}{escape(c.get('tool'))}<code>{escape(args)}</code>")
    return "<br>".join(lines)


def _trajectory(entry: Mapping[str, Any], tools: int) -> str:
    parts = [
        f'<p class="note">{fmt(entry.get("rows"))} rows (invocations); signature <code>{escape(entry.get("signature", ""))}</code></p>'
    ]
    corpus = entry.get("corpus", {})
    intervals = entry.get("intervals", {})
    if corpus:
        parts.append("<h4>Trajectory metrics (95% bootstrap interval)</h4>")
        parts.append(
            html_table(
                ["metric", "value", "interval"],
                ([escape(k), f"<b>{fmt(v)}</b>", _interval(intervals.get(k))] for k, v in corpus.items()),
                "compact",
            )
        )
    confusion = entry.get("tool_confusion", [])
    if confusion:
        parts.append("<h4>Per tool: matched, extra and missed calls</h4>")
        parts.append(
            html_table(
                ["tool", "matched", "extra", "missed", "precision", "recall", "F1"],
                (
                    [
                        escape(t["tool"]),
                        fmt(t["tp"]),
                        fmt(t["fp"]),
                        fmt(t["fn"]),
                        fmt(t.get("precision")),
                        fmt(t.get("recall")),
                        fmt(t.get("f1")),
                    ]
                    for t in confusion[:tools]
                ),
                "compact",
            )
        )
        if len(confusion) > tools:
            parts.append(f'<p class="note">{len(confusion) - tools} more tools not shown.</p>')
    subs = entry.get("substitutions", [])
    if subs:
        parts.append("<h4>Substitutions (expected tool → tool called in its place)</h4>")
        parts.append(
            html_table(
                ["expected", "called", "count"],
                ([escape(s["expected"]), escape(s["called"]), fmt(s["count"])] for s in subs),
                "compact",
            )
        )
    worst = entry.get("worst", [])
    if worst:
        by = entry.get("worst_by", "")
        parts.append(f"<h4>Worst invocations (lowest {escape(by)}; ✓ a call with an equal partner)</h4>")
        parts.append(
            html_table(
                ["row", escape(by), "expected calls", "calls made"],
                (
                    [escape(w["row"]), fmt(w["value"]), _calls(w.get("expected", [])), _calls(w.get("called", []))]
                    for w in worst
                ),
            )
        )
    unscored = entry.get("unscored", [])
    if unscored:
        parts.append("<h4>Unscored rows</h4>")
        parts.append(html_table(["row", "reason"], ([escape(u["row"]), escape(u["reason"])] for u in unscored[:50])))
    return "".join(parts)


def _agent(entry: Mapping[str, Any], tools: int) -> str:
    parts = []
    for run in entry.get("runs", []):
        labels: list[str] = []
        for case in run.get("cases", []):
            for m in case.get("metrics", []):
                if m["metric"] not in labels:
                    labels.append(m["metric"])
        rows = []
        for case in run.get("cases", []):
            by = {m["metric"]: m for m in case.get("metrics", [])}
            cells = [
                escape(case["eval_id"]),
                f'<b style="{_STATUS_STYLE.get(case["status"], "")}">{escape(case["status"])}</b>',
            ]
            for label in labels:
                m = by.get(label)
                if m is None:
                    cells.append("")
                    continue
                mark = "✓" if m["status"] == "PASSED" else "✗" if m["status"] == "FAILED" else "n/a"
                title = f' title="{escape(m["reason"])}"' if m.get("reason") else ""
                cells.append(f"<span{title}>{fmt(m['score'])} {mark}</span>")
            rows.append(cells)
        passed = sum(c["status"] == "PASSED" for c in run.get("cases", []))
        parts.append(f"<h4>{escape(run['label'])}: {passed} of {len(run.get('cases', []))} cases passed</h4>")
        parts.append(html_table(["eval case", "status", *(escape(x) for x in labels)], rows))
    repeated = entry.get("repeated_runs")
    if repeated:
        pass_at, pass_hat = repeated.get("pass@k", {}), repeated.get("pass^k", {})
        parts.append(f"<h4>Repeated runs ({escape(repeated.get('runs'))} per case)</h4>")
        parts.append(
            html_table(
                ["k", "pass@k", "pass^k"],
                ([escape(k), fmt(v), fmt(pass_hat.get(k))] for k, v in pass_at.items()),
                "compact",
            )
        )
    judge = entry.get("judge")
    if judge:
        parts.append(
            f'<p class="note">Judged metrics: {escape(judge.get("model"))}, {escape(judge.get("samples"))} sample(s) '
            f"per unit, {escape(judge.get('prompts', ''))}; {fmt(judge.get('calls'))} calls, "
            f"{fmt(judge.get('tokens_in'))} tokens in, {fmt(judge.get('tokens_out'))} out.</p>"
        )
    if entry.get("trajectory"):
        parts.append(_trajectory(entry["trajectory"], tools))
    return "".join(parts)


def render_agent_entry(entry: Mapping[str, Any], *, tools: int = 20) -> str:
    """One entry of the ``"agents"`` list as an HTML card."""
    if entry.get("kind") == "agent":
        title = f"Agent eval set {escape(entry.get('eval_set_id'))}"
        body = _agent(entry, tools)
    else:
        title = escape(entry.get("title") or "Trajectories")
        body = _trajectory(entry, tools)
    return f'<div class="card"><h3>{title}</h3>{body}</div>'


def section_agents(summary: Mapping[str, Any]) -> str:
    """The "Agents" section of the report."""
    entries = summary.get("agents", [])
    if not entries:
        return ""
    return "".join(render_agent_entry(e) for e in entries)
