"""One run summary for every command: ``score``, ``judge``, ``gate``, ``evaluate`` and
``validate`` output as the report's schema, and the one function each command calls to write
it (``--summary-out``) and the HTML report (``--report``).

:func:`to_run_summary` takes what a command prints with ``--json`` (or writes) and returns a
run summary; ``respeval report`` uses it, so it renders any command's JSON.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from respeval.report.schema import SCHEMA, check_summary, new_summary

__all__ = ["gate_run_summary", "judge_run_summary", "score_run_summary", "to_run_summary", "write_run_outputs"]


def _interval(value: Any) -> tuple[Any, Any]:
    if isinstance(value, (list, tuple)) and len(value) >= 2:
        return value[0], value[-1]
    return None, None


def score_run_summary(data: Mapping[str, Any], title: str | None = None) -> dict[str, Any]:
    """``respeval score --json``: systems with intervals per metric, and the paired comparisons."""
    fields = list(data.get("fields") or [])
    rows = [r for r in data.get("systems", []) if r.get("group") is None]
    meta = {
        "command": "score",
        "rows": data.get("rows_total"),
        "rows scored": data.get("rows_scored"),
        "rows failed": data.get("rows_failed"),
        "bootstrap": f"{data.get('bootstrap_samples')} ({data.get('bootstrap_method')})",
        "seconds": data.get("seconds"),
        "output": data.get("output"),
    }
    summary = new_summary(title or "respeval score", {k: v for k, v in meta.items() if v is not None})
    summary["signatures"] = data.get("signatures", {})
    confidence = data.get("confidence", 0.95)
    systems = []
    for f in fields:
        table_rows = []
        for r in rows:
            low, high = _interval((r.get("intervals") or {}).get(f))
            table_rows.append(
                {"system": r["system"], "mean": r["values"].get(f), "low": low, "high": high, "n": r.get("rows")}
            )
        systems.append({"metric": f, "confidence": confidence, "higher_is_better": f != "ter", "rows": table_rows})
    if len(rows) == 1:
        summary["scores"] = [
            {
                "metric": f,
                "mean": rows[0]["values"].get(f),
                "low": _interval((rows[0].get("intervals") or {}).get(f))[0],
                "high": _interval((rows[0].get("intervals") or {}).get(f))[1],
                "n": rows[0].get("rows"),
                "confidence": confidence,
            }
            for f in fields
        ]
    else:
        summary["systems"] = systems
    summary["comparisons"] = [
        {
            "system": c["system"],
            "baseline": c["baseline"],
            "metric": f,
            "rows": c.get("rows"),
            "delta": (c.get("delta") or {}).get(f),
            "p_value": (c.get("p_value") or {}).get(f),
            "method": c.get("method"),
        }
        for c in data.get("comparisons", [])
        if c.get("group") is None
        for f in fields
    ]
    return summary


def _judge_entry(metric: str, data: Mapping[str, Any]) -> dict[str, Any]:
    ci = data.get("pass_rate_ci") or {}
    return {
        "metric": metric,
        "method": data.get("method"),
        "model": data.get("model"),
        "rows": data.get("rows"),
        "scored": data.get("scored"),
        "coverage": data.get("coverage"),
        "pass_rate": data.get("pass_rate"),
        "pass_low": ci.get("low"),
        "pass_high": ci.get("high"),
        "calls": data.get("calls"),
        "cache_hits": data.get("cache_hits"),
        "tokens_in": data.get("tokens_in"),
        "tokens_out": data.get("tokens_out"),
        "cost_usd": data.get("cost_usd"),
        "unscored_reasons": data.get("unscored_reasons") or {},
    }


def judge_run_summary(data: Mapping[str, Any], title: str | None = None) -> dict[str, Any]:
    """``respeval judge --json``: coverage, pass rate (Wilson), calls and cost."""
    summary = new_summary(
        title or "respeval judge",
        {
            "command": "judge",
            "judge": data.get("model"),
            "signature": data.get("signature"),
            "output": data.get("output"),
        },
    )
    entry = _judge_entry(str(data.get("method") or "judge"), data)
    summary["judges"] = [entry]
    if data.get("pass_rate") is not None:
        summary["scores"] = [
            {
                "metric": f"{entry['metric']} pass rate",
                "mean": data.get("pass_rate"),
                "low": entry["pass_low"],
                "high": entry["pass_high"],
                "n": data.get("scored"),
            }
        ]
        if data.get("mean_score") is not None:
            summary["scores"].append(
                {"metric": f"{entry['metric']} mean score", "mean": data["mean_score"], "n": data.get("scored")}
            )
    return summary


def gate_run_summary(data: Mapping[str, Any], title: str | None = None) -> dict[str, Any]:
    """``respeval gate --json``: the funnel, the pass rate, and the judge's coverage and cost."""
    summary = new_summary(
        title or "respeval gate",
        {
            "command": "gate",
            "rows": data.get("rows"),
            "lexical metric": data.get("lexical_metric"),
            "normalize": data.get("normalize"),
            **{f"decisions: {k}": v for k, v in (data.get("decisions") or {}).items()},
        },
    )
    summary["gate"] = [
        {
            "name": "gate",
            "total": data.get("rows", 0),
            "stages": [{"stage": s["stage"], "settled": s.get("settled", 0)} for s in data.get("stages", [])],
        }
    ]
    ci = data.get("pass_rate_ci") or {}
    if data.get("pass_rate") is not None:
        summary["scores"] = [
            {
                "metric": "gate pass rate",
                "mean": data["pass_rate"],
                "low": ci.get("low"),
                "high": ci.get("high"),
                "n": data.get("rows"),
            }
        ]
    if data.get("judge"):
        summary["judges"] = [_judge_entry("gate judge", data["judge"])]
    return summary


def to_run_summary(data: Any, source: str = "summary", title: str | None = None) -> dict[str, Any]:
    """A run summary from any command's JSON output (a run summary passes through)."""
    if isinstance(data, Mapping) and data.get("schema") == SCHEMA:
        return dict(data)
    if isinstance(data, Mapping):
        if "stages" in data and "decisions" in data:
            return gate_run_summary(data, title)
        if "rows_total" in data and "systems" in data:
            return score_run_summary(data, title)
        if "coverage" in data and "method" in data:
            return judge_run_summary(data, title)
    raise ValueError(f"{source}: not a run summary, nor the --json output of respeval score, judge, gate or evaluate")


def write_run_outputs(
    summary: Mapping[str, Any],
    *,
    summary_out: str | os.PathLike[str] | None = None,
    report: str | os.PathLike[str] | None = None,
) -> None:
    """What ``--summary-out`` and ``--report`` write for every command."""
    from respeval.report.html import write_report

    check_summary(summary)
    if summary_out:
        path = Path(summary_out)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    if report:
        write_report(summary, report)
