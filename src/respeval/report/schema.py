"""The run summary: its schema, builders, loading, checking and merging.

One self-contained HTML report of a run: tables, and plots as inline SVG.

The report is rendered from a **run summary**: a plain JSON-ready dict that any part of
respeval (scoring, judge, gate, validation) can write, and that several runs can merge
(:func:`merge_summaries` keeps them as separate runs).  The HTML needs no network and no JavaScript:
styles are inline, plots are inline ``<svg>``, and a Content-Security-Policy forbids loading
anything at all.

Every command writes this one schema (``score``, ``judge``, ``gate``, ``evaluate`` and
``validate`` with ``--summary-out`` or ``--report``; see :mod:`respeval.report.runs`).

Run summary schema (``"schema": "respeval.run-summary/1"``; every other key is optional)::

    {
      "schema": "respeval.run-summary/1",
      "title": "Release 1.4 judge check",          # page title
      "created": "2026-11-29T12:00:00Z",           # free text
      "meta": {"judge": "gpt-4o", "signature": "..."},   # shown as a key/value table
      "scores": [                                  # corpus scores (summary table)
        {"metric": "rouge2_f", "mean": 0.21, "low": 0.19, "high": 0.23, "n": 500,
         "confidence": 0.95},                      # low/high/confidence may be null/absent
        {"metric": "bleu", "corpus": 21.3, "corpus_low": 20.1, "corpus_high": 22.4, "n": 500}
      ],                                           # a corpus-level value is "corpus", never "mean"
      "validation": [ ... ],                       # respeval.validate.MetricValidation.to_dict()
      "correlations": [                            # metric vs human (e.g. ROUGE-2 vs LitePyramid)
        {"name": "REALSumm abstractive", "metric": "ROUGE-2 F", "human": "LitePyramid recall",
         "level": "system", "n": 14, "pearson": 0.9, "spearman": 0.9, "kendall_tau_b": 0.8,
         "intervals": {"kendall_tau_b": {"estimate": 0.8, "low": 0.6, "high": 0.95}},
         "points": [{"unit": "bart", "x": 0.21, "y": 0.45}]}     # optional scatter plot
      ],
      "distributions": [                           # histograms / label counts
        {"name": "judge score", "kind": "numeric", "edges": [0, 0.5, 1],
         "series": [{"name": "judge", "counts": [3, 7]}]},
        {"name": "verdicts", "kind": "categorical", "labels": ["A", "B", "TIE"],
         "series": [{"name": "judge", "counts": [40, 50, 10]}]},
        {"name": "latency (s)", "values": [0.4, 1.2, 0.9]}      # binned by the report
      ],
      "gate": [                                    # the escalation funnel
        {"name": "gate", "total": 1000,
         "stages": [{"stage": "exact", "settled": 420}, {"stage": "lexical", "settled": 300},
                    {"stage": "judge", "settled": 250}]}          # the rest: unsettled
      ],
      "systems": [                                 # per-system comparison with intervals
        {"metric": "rouge2_f", "confidence": 0.95, "higher_is_better": true,
         "statistic": "mean",                      # or "corpus" (BLEU, chrF, TER: from summed statistics)
         "rows": [{"system": "bart", "mean": 0.21, "low": 0.19, "high": 0.23, "n": 100}]}
      ],
      "comparisons": [                             # paired tests of systems (score --compare)
        {"system": "b", "baseline": "a", "metric": "rouge2_f", "delta": 0.01, "p_value": 0.03, "rows": 100,
         "higher_is_better": true}                 # TER: false (a positive difference is worse)
      ],
      "judges": [                                  # judge coverage and cost per judged metric
        {"metric": "GROUNDING", "method": "pointwise", "rows": 100, "scored": 97, "coverage": 0.97,
         "pass_rate": 0.8, "pass_low": 0.71, "pass_high": 0.87, "calls": 100, "cache_hits": 0,
         "cost_usd": 0.02, "unscored_reasons": {"unparseable": 3}}
      ],
      "worst_rows": [                              # the lowest-scoring rows per metric
        {"metric": "GROUNDING", "row": 17, "score": 1, "texts": {"response": "...", "explanation": "..."}}
      ],
      "summary_metrics": {"row_count": 100, "bleu/mean": 21.3},  # evaluate: the flat summary (a dict)
      "disagreements": [                           # besides those inside "validation" entries
        {"metric": "helpfulness", "row": 17, "judge": 5, "human": 1, "gap": 4,
         "texts": {"prompt": "...", "response": "..."}}
      ],
      "agents": [ ... ],                           # respeval.agents.report: trajectories, tools, cases
      "compare": [                                 # respeval compare: baseline vs candidate
        {"baseline": "v1", "candidate": "v2", "cases": 500, "alpha": 0.05, "confidence": 0.95,
         "decision": "regressed",
         "metrics": [{"metric": "exact_match", "kind": "pass/fail", "baseline": 0.71, "candidate": 0.66,
                      "difference": -0.05, "low": -0.08, "high": -0.02, "test": "mcnemar_exact",
                      "p_value": 0.001, "p_holm": 0.002, "decision": "regressed", "higher_is_better": true}],
         "flipped": [{"id": "17", "direction": "regressed", "regressed": ["exact_match"], "improved": [],
                      "texts": {"prompt": "...", "reference": "...", "baseline": "...", "candidate": "..."}}],
         "flipped_counts": {"regressed": 30, "improved": 4},
         "judge": {"model": "gpt-4o", "calls": 1000, "consistency": 0.93, "sequential": {...}}}
      ],
      "trends": [                                  # respeval monitor: a metric over time windows
        {"metric": "pass_rate", "kind": "pass_rate", "confidence": 0.95, "higher_is_better": true,
         "alpha": 0.05, "method": "alpha spending alpha/(k(k+1)) ...", "reference": 0.91,
         "points": [{"label": "2025-05-01T12:00", "window": 483292, "n": 310, "value": 0.9,
                     "low": 0.86, "high": 0.93, "status": "ok", "p_holm": 0.41, "level": 0.025}]}
      ],
      "inputs": {"pred": {"bart": "bart.txt"}, "ref": "refs.txt",       # where the rows' texts are
                 "pred_field": "response", "ref_field": "reference"},   # (score: read by respeval view)
      "runs": [ {...}, {...} ]                     # several runs in one report, each a run summary
    }

A summary holding ``"runs"`` is a collection (what :func:`merge_summaries` makes of several
summaries): the report shows each run separately, with its own sections, never mixed into one
table; :func:`runs_of` gives its runs.  ``meta.command`` (``score``, ``judge``, ``gate``,
``evaluate``, ``validate``, ``compare``, ``agent``) orders the report's sections, the result first.

Validation entries carry their own distributions and disagreements; the report shows them in
the same sections as the top-level lists.  Builders: :func:`new_summary`,
:func:`validation_summary`, :func:`system_table`, :func:`correlation_entry`,
:func:`distribution_entry`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from respeval._version import __version__
from respeval.stats import DEFAULT_SEED, bootstrap_means, percentile_interval
from respeval.stats.exact import exact_mean

SCHEMA = "respeval.run-summary/1"
LIST_KEYS = (
    "scores",
    "validation",
    "correlations",
    "distributions",
    "gate",
    "systems",
    "comparisons",
    "judges",
    "worst_rows",
    "disagreements",
    "agents",
    "compare",
    "trends",
)


# --------------------------------------------------------------------------- building summaries


def new_summary(title: str | None = None, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An empty run summary with a title and ``meta`` key/values (plus respeval's version)."""
    summary: dict[str, Any] = {"schema": SCHEMA, "meta": {"respeval": __version__, **(meta or {})}}
    if title:
        summary["title"] = title
    return summary


def validation_summary(
    results: Iterable[Any], title: str | None = None, meta: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A run summary holding :class:`respeval.validate.MetricValidation` results."""
    summary = new_summary(title, meta)
    summary["validation"] = [r.to_dict() for r in results]
    return summary


def system_table(
    metric: str,
    values: Sequence[float],
    systems: Sequence[Any],
    *,
    n_boot: int = 1000,
    seed: int | None = DEFAULT_SEED,
    confidence: float = 0.95,
    higher_is_better: bool = True,
) -> dict[str, Any]:
    """Per-system means of ``values`` with seeded bootstrap intervals (rows resampled within
    each system), as a ``systems`` entry of a run summary."""
    vals = np.asarray(values, dtype=np.float64)
    names = [str(s) for s in systems]
    if vals.shape != (len(names),):
        raise ValueError(f"values has {vals.size} rows but systems has {len(names)}")
    rows = []
    for name in dict.fromkeys(names):
        mine = vals[[i for i, s in enumerate(names) if s == name]]
        row: dict[str, Any] = {
            "system": name,
            "mean": exact_mean(mine),
            "n": int(mine.size),
            "low": None,
            "high": None,
        }
        if n_boot and mine.size > 1:
            low, _, high = percentile_interval(bootstrap_means(mine[:, None], n_boot, seed), confidence)[:, 0]
            row.update(low=float(low), high=float(high))
        rows.append(row)
    return {"metric": metric, "confidence": confidence, "higher_is_better": higher_is_better, "rows": rows}


def correlation_entry(
    name: str, correlation: Any, *, metric: str, human: str, intervals: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A ``correlations`` entry from a :class:`respeval.validate.Correlation` (system-level
    correlations keep their points for a scatter plot)."""
    entry = {"name": name, "metric": metric, "human": human, **correlation.to_dict()}
    entry.pop("units", None)
    if intervals:
        entry["intervals"] = {k: v.to_dict() if hasattr(v, "to_dict") else dict(v) for k, v in intervals.items()}
    if correlation.level == "system" and correlation.units:
        entry["points"] = [
            {"unit": u, "x": float(x), "y": float(y)}
            for u, x, y in zip(correlation.units, correlation.x, correlation.y)
        ]
    return entry


# --------------------------------------------------------------------------- loading and checking


def check_summary(summary: Any, source: str = "summary") -> None:
    """Raise ``ValueError`` naming the first problem if ``summary`` is not a run summary."""
    if not isinstance(summary, Mapping):
        raise ValueError(f"{source}: a run summary is a JSON object, got {type(summary).__name__}")
    if summary.get("schema") != SCHEMA:
        raise ValueError(f"{source}: 'schema' must be {SCHEMA!r}, got {summary.get('schema')!r}")
    runs = summary.get("runs")
    if runs is not None:
        if not isinstance(runs, list):
            raise ValueError(f"{source}: 'runs' must be a list, got {type(runs).__name__}")
        for i, run in enumerate(runs):
            check_summary(run, f"{source}: runs[{i}]")
    for key in LIST_KEYS:
        value = summary.get(key, [])
        if not isinstance(value, list):
            raise ValueError(f"{source}: {key!r} must be a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise ValueError(f"{source}: {key}[{i}] must be an object")
    for i, table in enumerate(summary.get("systems", [])):
        if not isinstance(table.get("rows"), list):
            raise ValueError(f"{source}: systems[{i}] needs a 'rows' list")
    for i, comparison in enumerate(summary.get("compare", [])):
        if not isinstance(comparison.get("metrics"), list):
            raise ValueError(f"{source}: compare[{i}] needs a 'metrics' list")
    for i, trend in enumerate(summary.get("trends", [])):
        if not isinstance(trend.get("points"), list):
            raise ValueError(f"{source}: trends[{i}] needs a 'points' list")
    for i, funnel in enumerate(summary.get("gate", [])):
        if not isinstance(funnel.get("stages"), list) or "total" not in funnel:
            raise ValueError(f"{source}: gate[{i}] needs 'total' and a 'stages' list")
    if not isinstance(summary.get("meta", {}), Mapping):
        raise ValueError(f"{source}: 'meta' must be an object")


def load_summaries(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Run summaries from JSON files, or from every ``*.json`` run summary in a directory
    (other JSON files there are ignored)."""
    out: list[dict[str, Any]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = [
                s
                for f in sorted(path.glob("*.json"))
                if (s := _read_json(f)) is not None and isinstance(s, dict) and s.get("schema") == SCHEMA
            ]
            if not found:
                raise ValueError(f'{path}: no run summary (*.json with "schema": "{SCHEMA}")')
            out.extend(found)
            continue
        summary = _read_json(path)
        check_summary(summary, str(path))
        out.append(summary)
    for s in out:
        check_summary(s)
    return out


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None


def runs_of(summary: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The runs a summary holds: those of a collection (``"runs"``), else the summary itself."""
    runs = summary.get("runs")
    return list(runs) if runs else [summary]


def merge_summaries(summaries: Sequence[Mapping[str, Any]], title: str | None = None) -> dict[str, Any]:
    """One summary for several: a single run is itself, several a collection holding each
    run separately (``"runs"``; collections are flattened), never their lists mixed into one
    table.  ``title`` names the collection (default: how many runs it holds)."""
    runs: list[dict[str, Any]] = []
    for s in summaries:
        check_summary(s)
        runs.extend(dict(r) for r in runs_of(s))
    if len(runs) == 1:
        merged = dict(runs[0])
        if title:
            merged["title"] = title
        return merged
    return {"schema": SCHEMA, "title": title or f"respeval report: {len(runs)} runs", "meta": {}, "runs": runs}


def distribution_entry(name: str, series: str, counts: Mapping[float, int]) -> dict[str, Any] | None:
    """A ``distributions`` entry from value -> count: a bar per value when the values are
    few whole numbers (a judge's 1-5 scale, pass/fail 0/1), else a histogram of binned values
    (BLEU, ROUGE: a value is never a category of its own)."""
    values = sorted(float(v) for v, c in counts.items() if c)
    if not values:
        return None
    if len(values) <= 12 and all(v.is_integer() for v in values):
        return {
            "name": name,
            "kind": "categorical",
            "labels": [f"{v:g}" for v in values],
            "series": [{"name": series, "counts": [int(counts[v]) for v in values]}],
        }
    total = sum(int(c) for c in counts.values())
    low, high = values[0], values[-1]
    if low == high:
        edges = [low - 0.5, high + 0.5]
    else:
        bins = min(30, max(5, int(math.sqrt(total))))
        width = (high - low) / bins
        edges = [low + i * width for i in range(bins)] + [high]
    binned = [0] * (len(edges) - 1)
    for v, c in counts.items():
        i = int((float(v) - edges[0]) / ((edges[-1] - edges[0]) or 1) * len(binned))
        binned[min(max(i, 0), len(binned) - 1)] += int(c)
    return {"name": name, "kind": "numeric", "edges": edges, "series": [{"name": series, "counts": binned}]}
