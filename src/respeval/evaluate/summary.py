"""The summary of an evaluation: the hosted services' keys and respeval's run summary.

``summary_metrics`` (a flat dict, as the hosted SDKs return it):

================================  ============================================================
``row_count``                     input rows (scored or not)
``{metric}/mean``, ``/std``       mean and sample standard deviation (ddof=1) of the scored
                                  rows' ``{metric}/score``
``{metric}/ci_low``, ``/ci_high``  seeded bootstrap percentile interval of the mean
``{metric}/scored``, ``/coverage``  scored rows, and scored / rows
``{metric}/pass_rate``             share of scored rows that pass, with ``/pass_rate_ci_low``
                                  and ``/pass_rate_ci_high`` (Wilson)
``{metric}/corpus``                registry metrics: the corpus value from summed statistics
                                  (corpus BLEU is not the mean of sentence BLEU), with its
                                  bootstrap interval ``/corpus_ci_low``, ``/corpus_ci_high``
``{metric}/candidate_model_win_rate``, ``/baseline_model_win_rate``, ``/tie_rate``,
``/inconsistent_rate``            pairwise metrics, over scored pairs
``judge/calls``, ``judge/cache_hits``, ``judge/tokens_in``, ``judge/tokens_out``,
``judge/cost_usd``                what this run spent on the judge
================================  ============================================================

``run_summary`` is the report's schema (:mod:`respeval.report.schema`): ``scores`` with
intervals, ``distributions``, ``judges`` (coverage and cost), ``worst_rows``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow.compute as pc

from respeval._run_summary import SCORED
from respeval.evaluate.plan import Plan, judged_fields
from respeval.metrics.base import ChunkScores, MetricResult
from respeval.stats import bootstrap_means, percentile_interval
from respeval.stats.exact import exact_mean

__all__ = ["build_summaries", "format_summary"]

_WORST = 5


def _wilson(k: int, n: int, confidence: float) -> tuple[float, float] | tuple[None, None]:
    """The Wilson interval, with no rows as ``(None, None)`` (the flat summary's missing value)."""
    from respeval.stats import wilson_interval

    low, high = wilson_interval(k, n, confidence)
    return (None, None) if n == 0 else (low, high)


def _column(table: Any, name: str) -> Any:
    return table.column(name) if name in table.column_names else None


def _floats(table: Any, name: str, n: int) -> np.ndarray:
    col = _column(table, name)
    if col is None:
        return np.full(n, np.nan)
    return np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)


def _reason_key(reason: str) -> str:
    return reason.split(":", 1)[0][:80]


def _distribution(caption: str, series: str, values: np.ndarray) -> dict[str, Any]:
    """A bar per value when they are few whole numbers (checks, judge scales), else a
    histogram (the report's one rule: :func:`respeval.report.schema.distribution_entry`)."""
    from respeval.report.schema import distribution_entry

    distinct, counts = np.unique(values, return_counts=True)
    entry = distribution_entry(caption, series, dict(zip(distinct.tolist(), counts.tolist())))
    assert entry is not None  # called with at least one value
    return entry


def _metric_kind(plan: Plan, name: str) -> str:
    for use in plan.computed:
        if name in use.metrics:
            return "computed"
    for judged in plan.judged:
        if judged.name == name:
            return str(judged.kind)
    return "custom"


def build_summaries(
    table: Any,
    plan: Plan,
    stats_parts: Sequence[dict[str, np.ndarray]],
    bad: Sequence[dict[str, Any]],
    *,
    spend: Any,
    bootstrap: int,
    confidence: float,
    seed: int | None,
    title: str | None,
    model: str | None,
    seconds: float,
    output: str | None,
    resumed_chunks: int,
    columns: Any,
) -> tuple[dict[str, Any], dict[str, Any]]:
    from respeval.report.schema import new_summary

    n_good = table.num_rows
    n_rows = n_good + len(bad)
    flat: dict[str, Any] = {"row_count": n_rows}
    scores: list[dict[str, Any]] = []
    distributions: list[dict[str, Any]] = []
    judges: list[dict[str, Any]] = []
    worst: list[dict[str, Any]] = []
    corpus = _corpus_values(plan, stats_parts, bootstrap, confidence, seed)
    for name in plan.names():
        kind = _metric_kind(plan, name)
        values = _floats(table, f"{name}/score", n_good)
        status = _column(table, f"{name}/status")
        # coverage counts scored rows (an inconsistent pair is scored, with no numeric score)
        n_status = int(pc.sum(pc.equal(status, SCORED)).as_py() or 0) if status is not None else None
        good = values[~np.isnan(values)]
        n = int(good.size)
        entry: dict[str, Any] = {"metric": name, "kind": kind, "n": n, "rows": n_rows, "confidence": confidence}
        flat[f"{name}/mean"] = exact_mean(good) if n else None
        flat[f"{name}/std"] = float(good.std(ddof=1)) if n > 1 else None
        flat[f"{name}/scored"] = n_status if n_status is not None else n
        flat[f"{name}/coverage"] = flat[f"{name}/scored"] / n_rows if n_rows else None
        low = high = None
        if n > 1 and bootstrap:
            low, _, high = percentile_interval(bootstrap_means(good[:, None], bootstrap, seed), confidence)[:, 0]
            low, high = float(low), float(high)
        flat[f"{name}/ci_low"], flat[f"{name}/ci_high"] = low, high
        entry.update(mean=flat[f"{name}/mean"], std=flat[f"{name}/std"], low=low, high=high)
        entry["coverage"] = flat[f"{name}/coverage"]
        reason_column = _column(table, f"{name}/unscored_reason")
        reasons: Counter[str] = Counter()
        if reason_column is not None and reason_column.null_count < len(reason_column):
            for item in pc.value_counts(reason_column.drop_null()).to_pylist():
                reasons[_reason_key(item["values"])] += item["counts"]
        entry["unscored_reasons"] = dict(reasons.most_common())
        passes = _column(table, f"{name}/pass")
        if passes is None and kind in ("computed", "custom") and n and np.isin(good, (0.0, 1.0)).all():
            passed = int(good.sum())
        elif passes is not None:
            passed = sum(1 for v in passes.to_pylist() if v is True)
        else:
            passed = None
        if passed is not None and n:
            lo, hi = _wilson(passed, n, confidence)
            flat[f"{name}/pass_rate"] = passed / n
            flat[f"{name}/pass_rate_ci_low"], flat[f"{name}/pass_rate_ci_high"] = lo, hi
            entry.update(pass_rate=passed / n, pass_low=lo, pass_high=hi)
        if name in corpus:
            value, c_low, c_high = corpus[name]
            flat[f"{name}/corpus"] = value
            flat[f"{name}/corpus_ci_low"], flat[f"{name}/corpus_ci_high"] = c_low, c_high
            entry.update(corpus=value, corpus_low=c_low, corpus_high=c_high)
        if kind == "pairwise":
            outcomes = Counter(v for v in _column(table, f"{name}/outcome").to_pylist() if v is not None)
            n = flat[f"{name}/scored"]
            for key, label in (
                ("candidate_model_win_rate", "CANDIDATE"),
                ("baseline_model_win_rate", "BASELINE"),
                ("tie_rate", "TIE"),
                ("inconsistent_rate", "INCONSISTENT"),
            ):
                flat[f"{name}/{key}"] = outcomes[label] / n if n else None
            distributions.append(
                {
                    "name": f"{name}: pair outcomes",
                    "kind": "categorical",
                    "labels": ["CANDIDATE", "BASELINE", "TIE", "INCONSISTENT"],
                    "series": [
                        {
                            "name": name,
                            "counts": [outcomes[x] for x in ("CANDIDATE", "BASELINE", "TIE", "INCONSISTENT")],
                        }
                    ],
                }
            )
            entry["outcomes"] = dict(outcomes)
        elif n:
            distributions.append(_distribution(f"{name}/score", name, good))
        if kind == "pairwise" and flat[f"{name}/scored"]:
            # the judges' "pass" for a pairwise metric: the candidate won the pair
            wins, pairs = entry["outcomes"].get("CANDIDATE", 0), flat[f"{name}/scored"]
            lo, hi = _wilson(wins, pairs, confidence)
            entry.update(pass_rate=wins / pairs, pass_low=lo, pass_high=hi)
        if kind in ("pointwise", "pairwise"):
            judges.append(
                {
                    "metric": name,
                    "method": kind,
                    "rows": n_rows,
                    "scored": flat[f"{name}/scored"],
                    "coverage": entry["coverage"],
                    "pass_rate": entry.get("pass_rate"),
                    "pass_low": entry.get("pass_low"),
                    "pass_high": entry.get("pass_high"),
                    "unscored_reasons": entry["unscored_reasons"],
                }
            )
        worst.extend(_worst_rows(table, name, values, _text_fields(plan, name, columns), kind))
        scores.append(entry)
    judge_spend = spend.to_json()
    if plan.judged:
        for key in ("calls", "cache_hits", "tokens_in", "tokens_out", "cost_usd"):
            flat[f"judge/{key}"] = judge_spend[key]
    meta: dict[str, Any] = {
        "command": "evaluate",
        "rows": n_rows,
        "bad_records": len(bad),
        "metrics": ", ".join(plan.names()),
        "seconds": round(seconds, 3),
        "output": output,
        "resumed_chunks": resumed_chunks,
    }
    if model:
        meta["judge"] = model
        for key in ("calls", "cache_hits", "retries", "reasks", "tokens_in", "tokens_out", "cost_usd"):
            meta[f"judge {key}"] = judge_spend[key]
        meta["judge seconds"] = round(judge_spend["seconds"], 3)
    summary = new_summary(title or "respeval evaluate", meta)
    summary["signatures"] = plan.signatures(stats_parts)
    summary["summary_metrics"] = flat
    summary["scores"] = scores
    summary["distributions"] = distributions
    summary["judges"] = judges
    summary["worst_rows"] = worst
    return flat, summary


def _corpus_values(
    plan: Plan, stats_parts: Sequence[dict[str, np.ndarray]], bootstrap: int, confidence: float, seed: int | None
) -> dict[str, tuple[float, float | None, float | None]]:
    out: dict[str, tuple[float, float | None, float | None]] = {}
    for k, use in enumerate(plan.computed):
        if not stats_parts:
            continue
        stats = np.concatenate([p[f"f{k}_stats"] for p in stats_parts])
        scored = np.concatenate([p[f"f{k}_scored"] for p in stats_parts])
        if not scored.any():
            continue
        errors = {int(i): "unscored" for i in np.flatnonzero(~scored)}
        result = MetricResult(use.family, ChunkScores({}, stats, errors))
        values = result.corpus_scores()
        intervals = result.bootstrap(bootstrap, confidence, seed) if bootstrap and scored.sum() > 1 else {}
        for metric, headline in use.metrics.items():
            if headline in values:
                iv = intervals.get(headline)
                out[metric] = (values[headline], iv.low if iv else None, iv.high if iv else None)
    return out


def _text_fields(plan: Plan, name: str, columns: Any) -> list[str]:
    """The input columns a metric reads, for its worst rows: the prompt, what it compares."""
    for use in plan.computed:
        if name in use.metrics:
            return (
                [columns.prompt, columns.reference, columns.response]
                if use.reference
                else [columns.prompt, columns.response]
            )
    for judged in plan.judged:
        if judged.name == name:
            rename = columns.judge_fields()
            if getattr(judged, "kind", None) == "multi-step":
                rename.update(prompt=columns.prompt, context=judged.context_field)
            return [rename.get(f, f) for f in judged_fields(judged)]
    for custom in plan.custom:
        if name in custom.metric_names:
            return [columns.prompt, *(custom.columns or (columns.reference, columns.response))]
    return [columns.prompt, columns.reference, columns.response]


_PAIR_ORDER = {"BASELINE": 0, "INCONSISTENT": 1, "TIE": 2}


def _worst_rows(table: Any, name: str, values: np.ndarray, fields: Sequence[str], kind: str) -> list[dict[str, Any]]:
    """The metric's lowest-scoring rows with the texts it read (pairwise: the pairs the
    baseline won, then those the orders disagreed on, then ties)."""
    if kind == "pairwise":
        outcomes = _column(table, f"{name}/outcome").to_pylist()
        ranked = sorted((_PAIR_ORDER[o], i) for i, o in enumerate(outcomes) if o in _PAIR_ORDER)
        order = [i for _, i in ranked[:_WORST]]
    else:
        scored = np.flatnonzero(~np.isnan(values))
        if scored.size > 4 * _WORST:  # the few lowest without sorting a million rows
            cut = np.partition(values[scored], _WORST - 1)[_WORST - 1]
            scored = scored[values[scored] <= cut]
        order = scored[np.argsort(values[scored], kind="stable")][:_WORST].tolist()
    if not order:
        return []
    rows = table.column("row").to_numpy()
    texts_cols = [c for c in dict.fromkeys(fields) if c in table.column_names]
    explanation = _column(table, f"{name}/explanation")
    out = []
    for i in order:
        texts = {c: table.column(c)[i].as_py() for c in texts_cols}
        texts = {k: v for k, v in texts.items() if v is not None}
        if kind == "pairwise":
            texts["outcome"] = outcomes[i]
        if explanation is not None and explanation[i].as_py():
            texts["explanation"] = explanation[i].as_py()
        score = None if np.isnan(values[i]) else float(values[i])
        out.append({"metric": name, "row": int(rows[i]), "score": score, "texts": texts})
    return out


def format_summary(result: Any) -> str:
    """The summary as the CLI prints it: a line per metric."""
    flat = result.summary_metrics
    summary = result.run_summary
    pct = int(round(100 * (summary["scores"][0]["confidence"] if summary["scores"] else 0.95)))
    lines = [f"{flat['row_count']} rows evaluated in {summary['meta']['seconds']:.2f}s"]
    if result.resumed_chunks:
        lines[0] += f" (resumed after {result.resumed_chunks} chunks)"
    width = max([len(s["metric"]) for s in summary["scores"]] + [6])
    lines.append(f"{'metric':<{width}}  {'mean':>9}  {'std':>8}  {pct}% CI{'':<14}  coverage  pass rate")
    for s in summary["scores"]:

        def f(x: Any, w: int = 9) -> str:
            return f"{x:{w}.4f}" if isinstance(x, float) else f"{'-':>{w}}"

        ci = f"[{s['low']:.4f}, {s['high']:.4f}]" if s.get("low") is not None else "-"
        cov = f"{s['coverage']:.1%}" if s.get("coverage") is not None else "-"
        pr = f"{s['pass_rate']:.4f}" if s.get("pass_rate") is not None else "-"
        line = f"{s['metric']:<{width}}  {f(s.get('mean'))}  {f(s.get('std'), 8)}  {ci:<22}  {cov:>8}  {pr:>9}"
        if s.get("corpus") is not None:
            line += f"  corpus {s['corpus']:.4f}"
        lines.append(line)
        if s["unscored_reasons"]:
            reasons = ", ".join(f"{k}: {v}" for k, v in list(s["unscored_reasons"].items())[:3])
            lines.append(f"{'':<{width}}  unscored: {reasons}")
    if "judge/calls" in flat:
        lines.append(
            f"judge: {flat['judge/calls']} calls, {flat['judge/cache_hits']} answers from the cache, "
            f"{flat['judge/tokens_in']:,} tokens in, {flat['judge/tokens_out']:,} out, ${flat['judge/cost_usd']:.4f}"
        )
    if summary["meta"].get("bad_records"):
        lines.append(f"bad records: {summary['meta']['bad_records']}")
    if result.output:
        lines.append(f"per-row results: {result.output}")
    if result.errors_output:
        lines.append(f"bad records and reasons: {result.errors_output}")
    return "\n".join(lines)
