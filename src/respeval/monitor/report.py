"""The trend report of a monitor: every metric over the windows scored, with its band and
the drift test's decision, as a run summary (``trends``, ``gate``; see
:mod:`respeval.report.schema`) that ``respeval report`` and :func:`respeval.report.write_report`
render, and as a text table."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from respeval.report.format import fmt
from respeval.report.schema import new_summary

__all__ = ["format_trend", "read_windows", "trend_summary"]


def read_windows(store: str) -> list[dict[str, Any]]:
    """The results of every window of a store, in order (read only)."""
    import json
    import sqlite3

    if not os.path.exists(store):
        from respeval.monitor.store import StoreError

        raise StoreError(f"{store}: no such store")
    db = sqlite3.connect(f"file:{os.path.abspath(store)}?mode=ro", uri=True)
    try:
        return [json.loads(r) for (r,) in db.execute("SELECT result FROM windows ORDER BY window")]
    except sqlite3.DatabaseError as exc:
        from respeval.monitor.store import StoreError

        raise StoreError(f"{store}: not a respeval monitor store ({exc})") from None
    finally:
        db.close()


def _label(start: str | None) -> str:
    """``2025-05-01T12:00:00.000000Z`` -> ``05-01 12:00`` (the window's start, UTC)."""
    return (start or "")[5:16].replace("T", " ")


def trend_summary(
    windows: str | Sequence[Mapping[str, Any]],
    *,
    title: str | None = None,
    alpha: float | None = None,
    confidence: float | None = None,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A run summary of the windows (a store's path, or window results): one ``trends``
    entry per metric and the gate's funnel over all windows."""
    from respeval.stats import SPENDING_METHOD

    results = read_windows(windows) if isinstance(windows, str) else list(windows)
    names: dict[str, dict[str, Any]] = {}
    for w in results:
        for name, m in w.get("metrics", {}).items():
            names.setdefault(name, {"kind": m.get("kind"), "higher_is_better": m.get("higher_is_better", True)})
    trends = []
    for name, info in names.items():
        points = []
        reference = None
        for w in results:
            m = w.get("metrics", {}).get(name, {})
            tests = {t["metric"]: t for t in (w.get("drift") or {}).get("metrics", [])}
            t = tests.get(name, {})
            if t.get("reference") is not None:
                reference = t["reference"]
            status = w.get("status")
            if status not in ("reference", "empty"):
                status = t.get("decision", status)
            points.append(
                {
                    "label": _label(w.get("start")),
                    "window": w.get("window"),
                    "start": w.get("start"),
                    "n": m.get("n", 0),
                    "value": m.get("value"),
                    "low": m.get("low"),
                    "high": m.get("high"),
                    "status": status,
                    "p_value": t.get("p_value"),
                    "p_holm": t.get("p_holm"),
                    "level": (w.get("drift") or {}).get("level"),
                    "difference": t.get("difference"),
                }
            )
        trends.append(
            {
                "metric": name,
                "kind": info["kind"],
                "higher_is_better": info["higher_is_better"],
                "confidence": confidence,
                "alpha": alpha,
                "method": SPENDING_METHOD,
                "reference": reference,
                "points": points,
            }
        )
    regressed = [w["window"] for w in results if w.get("status") == "regressed"]
    summary = new_summary(
        title or "respeval monitor",
        {
            "command": "monitor",
            "windows": len(results),
            "regressed windows": len(regressed),
            "traces": sum(w.get("traces", 0) for w in results),
            "sampled": sum(w.get("sampled", 0) for w in results),
            "judged rows": sum(w.get("judged_rows", 0) for w in results),
            **(meta or {}),
        },
    )
    summary["trends"] = trends
    gate_total = sum((w.get("gate") or {}).get("rows", 0) for w in results)
    if gate_total:
        stages: dict[str, int] = {}
        for w in results:
            for stage, settled in ((w.get("gate") or {}).get("stages") or {}).items():
                stages[stage] = stages.get(stage, 0) + settled
        summary["gate"] = [
            {
                "name": "gate, all windows",
                "total": gate_total,
                "stages": [{"stage": k, "settled": v} for k, v in stages.items()],
            }
        ]
    return summary


def format_trend(windows: Sequence[Mapping[str, Any]], *, last: int | None = None) -> str:
    """The windows as a text table: traces, sampled, judged, each metric's value and
    interval, the status (``!`` marks a regressed metric)."""
    rows = list(windows)[-last:] if last else list(windows)
    if not rows:
        return "no window closed yet"
    names: list[str] = []
    for w in rows:
        for name in w.get("metrics", {}):
            if name not in names:
                names.append(name)
    head = ["window", "traces", "sampled", "judged", *names, "status"]
    table = [head]
    for w in rows:
        regressed = set((w.get("drift") or {}).get("regressed") or ())
        cells = [
            (w.get("start") or "")[:16],
            str(w.get("traces", 0)),
            str(w.get("sampled", 0)),
            str(w.get("judged_rows", 0)),
        ]
        for name in names:
            m = w.get("metrics", {}).get(name) or {}
            if m.get("value") is None:
                cells.append("-")
            else:
                mark = " !" if name in regressed else ""
                cells.append(f"{fmt(m['value'], 3)} [{fmt(m.get('low'), 3)}, {fmt(m.get('high'), 3)}]{mark}")
        cells.append(str(w.get("status")))
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in table)
