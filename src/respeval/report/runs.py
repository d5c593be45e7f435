"""One run summary for every command: ``score``, ``judge`` (every method), ``gate``,
``compare``, ``evaluate`` and ``validate`` output as the report's schema, and the one function each
command calls to write it (``--summary-out``) and the HTML report (``--report``).

:func:`to_run_summary` takes what a command prints with ``--json`` (or writes) and returns a
run summary; ``respeval report`` uses it, so it renders any command's JSON.  Commands that
hold their per-row results also put the score distribution and the worst rows (with their
texts) in the summary: :class:`RowDigest` keeps both in bounded memory while rows stream by.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from respeval.io.files import write_text_atomic
from respeval.report.schema import SCHEMA, check_summary, distribution_entry, new_summary

__all__ = [
    "RowDigest",
    "add_score_rows",
    "compare_run_summary",
    "evaluate_run_summary",
    "gate_run_summary",
    "judge_run_summary",
    "score_inputs",
    "score_run_summary",
    "score_texts",
    "texts_of",
    "to_run_summary",
    "write_run_outputs",
]

JUDGE_METHODS = ("pointwise", "pairwise", "rubric", "adaptive-rubric")
TEXT_FIELDS = ("prompt", "reference", "context", "response", "baseline_model_response")
_WORST = 5


class RowDigest:
    """What a report needs of a metric's per-row scores, in bounded memory: the count of each
    distinct score (judge scores take few values; others are binned when there are many) and
    the ``keep`` lowest-scoring rows with their explanation.

    ``add(row, score, explanation)`` per row (``score`` None: unscored, not counted);
    :meth:`distribution` and :meth:`worst` build the summary's entries."""

    def __init__(self, metric: str, keep: int = _WORST, *, max_distinct: int = 4096) -> None:
        self.metric = metric
        self.keep = keep
        self.counts: Counter[float] = Counter()
        self.max_distinct = max_distinct
        self._heap: list[tuple[float, int, int, float | None, str | None]] = []  # (-rank, -row, seq, ...)
        self._seq = 0

    def add(self, row: int, score: float | None, explanation: str | None = None, *, rank: float | None = None) -> None:
        """One row: its ``score`` (None: unscored, not counted) and why; ``rank`` orders the
        worst rows when it is not the score (a pairwise pair: baseline won, orders disagreed,
        tie)."""
        if score is not None and isinstance(score, float) and math.isnan(score):
            score = None
        if score is not None:
            score = float(score)
            if score in self.counts or len(self.counts) < self.max_distinct:
                self.counts[score] += 1
            else:  # too many distinct values to keep exactly: into the nearest kept bucket
                self.counts[min(self.counts, key=lambda v: abs(v - score))] += 1
        order = score if rank is None else rank
        if order is None:
            return
        item = (-float(order), -row, self._seq, score, explanation)
        self._seq += 1
        if len(self._heap) < self.keep:
            heapq.heappush(self._heap, item)
        elif item > self._heap[0]:
            heapq.heapreplace(self._heap, item)

    def rows(self) -> list[int]:
        """The worst rows kept, lowest first (ties: earliest row first)."""
        return [-item[1] for item in sorted(self._heap, reverse=True)]

    def distribution(self) -> dict[str, Any] | None:
        """A ``distributions`` entry: a bar per score when they are few whole numbers, else a
        histogram (:func:`respeval.report.schema.distribution_entry`)."""
        return distribution_entry(f"{self.metric}: score", self.metric, self.counts)

    def worst(self, texts: Mapping[int, Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
        """``worst_rows`` entries: the lowest-scoring rows, with their texts (``texts[row]``:
        field -> text, e.g. from :func:`texts_of`) and the explanation."""
        out = []
        for _, neg_row, _, score, explanation in sorted(self._heap, reverse=True):
            row = -neg_row
            shown = {k: v for k, v in dict((texts or {}).get(row, {})).items() if v is not None}
            if explanation:
                shown["explanation"] = explanation
            out.append({"metric": self.metric, "row": row, "score": score, "texts": shown})
        return out


def texts_of(
    records: Iterable[Mapping[str, Any]], rows: Iterable[int], fields: Mapping[str, str] | None = None
) -> dict[int, dict[str, Any]]:
    """For the 0-based ``rows`` wanted, their texts (the fields of :data:`TEXT_FIELDS`, read
    from the columns ``fields`` renames them to); ``records`` is read once, in order."""
    wanted = set(rows)
    names = dict(fields or {})
    out: dict[int, dict[str, Any]] = {}
    if not wanted:
        return out
    for i, record in enumerate(records):
        if i in wanted:
            out[i] = {
                name: _text(record.get(names.get(name, name)))
                for name in TEXT_FIELDS
                if record.get(names.get(name, name)) is not None
            }
            if len(out) == len(wanted):
                break
    return out


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _interval(value: Any) -> tuple[Any, Any]:
    if isinstance(value, (list, tuple)) and len(value) >= 2:
        return value[0], value[-1]
    return None, None


def score_run_summary(
    data: Mapping[str, Any], title: str | None = None, *, inputs: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``respeval score --json``: systems with intervals per metric, and the paired comparisons.

    A corpus-level value (BLEU, chrF, TER: from summed statistics) is a ``corpus`` value, never
    a ``mean``; every metric says whether higher is better (TER: lower).  ``inputs`` (the
    prediction file of each system, the reference file, the fields) tells ``respeval view``
    where each row's texts are."""
    from respeval.metrics.registry import corpus_level, higher_is_better

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
    meta.update({f"signature: {name}": sig for name, sig in (data.get("signatures") or {}).items()})
    summary = new_summary(title or "respeval score", {k: v for k, v in meta.items() if v is not None})
    summary["signatures"] = data.get("signatures", {})
    if inputs:
        summary["inputs"] = dict(inputs)
    confidence = data.get("confidence", 0.95)
    systems = []
    for f in fields:
        table_rows = []
        for r in rows:
            low, high = _interval((r.get("intervals") or {}).get(f))
            table_rows.append(
                {"system": r["system"], "mean": r["values"].get(f), "low": low, "high": high, "n": r.get("rows")}
            )
        systems.append(
            {
                "metric": f,
                "confidence": confidence,
                "higher_is_better": higher_is_better(f),
                "statistic": "corpus" if corpus_level(f) else "mean",
                "rows": table_rows,
            }
        )
    if len(rows) == 1:
        scores = []
        for f in fields:
            low, high = _interval((rows[0].get("intervals") or {}).get(f))
            value = rows[0]["values"].get(f)
            entry: dict[str, Any] = {"metric": f, "n": rows[0].get("rows"), "confidence": confidence}
            if corpus_level(f):
                entry.update(corpus=value, corpus_low=low, corpus_high=high)
            else:
                entry.update(mean=value, low=low, high=high)
            entry["higher_is_better"] = higher_is_better(f)
            scores.append(entry)
        summary["scores"] = scores
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
            "higher_is_better": higher_is_better(f),
        }
        for c in data.get("comparisons", [])
        if c.get("group") is None
        for f in fields
    ]
    return summary


def score_inputs(
    systems: Mapping[str, str],
    ref: str | None,
    *,
    pred_field: str | None,
    ref_field: str | None,
    system_field: str | None = None,
) -> dict[str, Any]:
    """A score summary's ``inputs``: each system's predictions file (one file for every
    system with ``system_field``), the references file (None: in the predictions file) and
    the fields, as absolute paths, so a report or ``respeval view`` can show each row's texts."""
    return {
        "pred": {name: os.path.abspath(path) for name, path in systems.items()},
        "ref": os.path.abspath(ref) if ref else None,
        "pred_field": pred_field,
        "ref_field": ref_field,
        "system_field": system_field,
    }


def _file_texts(path: str, field: str | None, rows: set[int]) -> dict[int, Any]:
    """The values of ``field`` (plain text: the line) at the 0-based records ``rows``, read
    once through respeval.io."""
    from respeval.io import input_format, read_columns

    if not rows:
        return {}
    fmt = input_format(path)  # as score read it: .de, .hyp, ... are plain text
    name = "text" if fmt == "text" else (field or "response")
    out: dict[int, Any] = {}
    lists = [] if fmt == "text" else [name]
    reader = read_columns(path, [name], fmt=fmt, on_error="skip", chunk_size=8192, allow_list_fields=lists)
    with contextlib.closing(reader):
        for chunk in reader:
            for record, value in zip(chunk.records, chunk.columns[name]):
                if record in rows:
                    out[record] = value
            if len(out) == len(rows) or chunk.end_row > max(rows):
                break
    return out


def score_texts(inputs: Mapping[str, Any], wanted: Iterable[tuple[str, int]]) -> dict[tuple[str, int], dict[str, Any]]:
    """``(system, row)`` -> ``{"prediction": ..., "reference": ...}`` from a score summary's
    ``inputs`` (rows missing from a file, or a file gone, are left out)."""
    from respeval.io import input_format

    preds = dict(inputs.get("pred") or {})
    by_file: dict[str, set[int]] = {}
    keys = list(wanted)
    single = next(iter(preds.values())) if inputs.get("system_field") and preds else None
    for system, row in keys:
        path = single or preds.get(system)
        if path:
            by_file.setdefault(path, set()).add(row)
    found: dict[str, dict[int, Any]] = {}
    in_file: dict[str, dict[int, Any]] = {}  # the references of files that hold both fields
    for path, rows in by_file.items():
        try:
            found[path] = _file_texts(path, inputs.get("pred_field"), rows)
            if not inputs.get("ref") and input_format(path) != "text":
                in_file[path] = _file_texts(path, inputs.get("ref_field") or "reference", rows)
        except (OSError, ValueError):
            found.setdefault(path, {})
    refs: dict[int, Any] = {}
    if inputs.get("ref"):
        try:
            refs = _file_texts(str(inputs["ref"]), inputs.get("ref_field") or "reference", {r for _, r in keys})
        except (OSError, ValueError):
            refs = {}
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for system, row in keys:
        path = single or preds.get(system)
        texts: dict[str, Any] = {}
        if path and row in found.get(path, {}):
            texts["prediction"] = _text(found[path][row])
        reference = refs.get(row) if inputs.get("ref") else in_file.get(path or "", {}).get(row)
        if reference is not None:
            texts["reference"] = _text(reference)
        out[(system, row)] = texts
    return out


def add_score_rows(
    summary: dict[str, Any],
    columns: Mapping[str, Sequence[Any]],
    fields: Sequence[str],
    *,
    keep: int = _WORST,
    max_series: int = 6,
) -> dict[str, Any]:
    """A score run's per-row results (``columns``: its ``--out`` table) into its summary:
    per metric the distribution of row scores (one series per system when there are at most
    ``max_series``, else all rows) and the ``keep`` worst rows (TER: the highest) with their
    texts, read from the summary's ``inputs``."""
    import numpy as np

    from respeval.metrics.registry import higher_is_better

    n = len(next(iter(columns.values()), []))
    systems = [str(s) for s in columns.get("system", [""] * n)]
    row_numbers = [int(r) for r in columns.get("row", range(n))]
    names = list(dict.fromkeys(systems))
    distributions, worst = [], []
    wanted: list[tuple[str, int]] = []
    for f in fields:
        if f not in columns:
            continue
        values = np.array([np.nan if v is None else float(v) for v in columns[f]], dtype=np.float64)
        good = ~np.isnan(values)
        if not good.any():
            continue
        counts: Counter[float] = Counter(values[good].tolist())
        entry = distribution_entry(f"{f}: row scores", "all rows" if len(names) > 1 else f, counts)
        if entry is not None and entry["kind"] == "numeric" and 1 < len(names) <= max_series:
            edges = entry["edges"]
            entry["series"] = [
                {
                    "name": name,
                    "counts": np.histogram(values[good & (np.array(systems) == name)], bins=edges)[0].tolist(),
                }
                for name in names
            ]
        if entry is not None:
            distributions.append(entry)
        order = np.flatnonzero(good)
        ranked = order[np.argsort(values[order] if higher_is_better(f) else -values[order], kind="stable")][:keep]
        for i in ranked.tolist():
            worst.append({"metric": f, "row": row_numbers[i], "system": systems[i], "score": float(values[i])})
            wanted.append((systems[i], row_numbers[i]))
    texts = score_texts(summary.get("inputs") or {}, wanted) if summary.get("inputs") else {}
    for w in worst:
        w["texts"] = dict(texts.get((w["system"], w["row"]), {}))
        if len(names) <= 1:
            del w["system"]
    if distributions:
        summary["distributions"] = [*summary.get("distributions", []), *distributions]
    if worst:
        summary["worst_rows"] = [*summary.get("worst_rows", []), *worst]
    return summary


def _judge_entry(metric: str, data: Mapping[str, Any]) -> dict[str, Any]:
    ci = data.get("pass_rate_ci") or {}
    rows = data.get("rows", data.get("pairs"))
    coverage = data.get("coverage")
    if coverage is None and isinstance(rows, int) and rows and data.get("scored") is not None:
        coverage = data["scored"] / rows
    return {
        "metric": metric,
        "method": data.get("method"),
        "model": data.get("model"),
        "rows": rows,
        "scored": data.get("scored"),
        "coverage": coverage,
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


def _rate_score(metric: str, rate: Mapping[str, Any] | None, confidence: Any) -> dict[str, Any] | None:
    if not rate:
        return None
    return {
        "metric": metric,
        "mean": rate.get("rate"),
        "low": rate.get("ci_low"),
        "high": rate.get("ci_high"),
        "n": rate.get("n"),
        "confidence": confidence,
    }


def judge_run_summary(
    data: Mapping[str, Any],
    title: str | None = None,
    *,
    digest: RowDigest | None = None,
    texts: Mapping[int, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """``respeval judge --json``, any method: coverage, pass rate (Wilson), calls and cost;
    pairwise win rates, ties, inconsistency and position consistency; rubric criteria.

    ``digest`` (the per-row scores) adds the score distribution and the worst rows, with
    their ``texts`` (row -> field -> text)."""
    method = str(data.get("method") or "judge")
    meta = {
        "command": "judge",
        "method": method,
        "judge": data.get("model"),
        "signature": data.get("signature"),
        "samples": data.get("samples"),
        "output": data.get("output"),
        "stopped": data.get("stop_reason"),
    }
    summary = new_summary(title or f"respeval judge ({method})", {k: v for k, v in meta.items() if v is not None})
    entry = _judge_entry(method, data)
    confidence = data.get("confidence") or (data.get("pass_rate_ci") or {}).get("confidence")
    scores: list[dict[str, Any]] = []
    if method == "pairwise":
        win = data.get("win_rate_candidate") or {}
        entry.update(pass_rate=win.get("rate"), pass_low=win.get("ci_low"), pass_high=win.get("ci_high"))
        for label, key in (
            ("candidate win rate", "win_rate_candidate"),
            ("baseline win rate", "win_rate_baseline"),
            ("tie rate", "tie_rate"),
            ("inconsistent rate", "inconsistent_rate"),
            ("position consistency", "position_consistency"),
            ("picks the output shown first", "first_position_rate"),
        ):
            score = _rate_score(f"pairwise {label}", data.get(key), confidence)
            if score is not None:
                scores.append(score)
        outcomes = data.get("outcomes") or {}
        if outcomes:
            # the written labels; a summary written before them says B, A, tie, inconsistent
            labels = {"CANDIDATE": "B", "BASELINE": "A", "TIE": "tie", "INCONSISTENT": "inconsistent"}
            summary["distributions"] = [
                {
                    "name": "pairwise outcomes",
                    "kind": "categorical",
                    "labels": list(labels),
                    "series": [
                        {
                            "name": "pairs",
                            "counts": [int(outcomes.get(k, outcomes.get(old, 0))) for k, old in labels.items()],
                        }
                    ],
                }
            ]
        summary["meta"]["flip"] = data.get("flip")
    else:
        if data.get("pass_rate") is not None:
            ci = data.get("pass_rate_ci") or {}
            scores.append(
                {
                    "metric": f"{method} pass rate",
                    "mean": data["pass_rate"],
                    "low": ci.get("low"),
                    "high": ci.get("high"),
                    "n": data.get("scored"),
                    "confidence": confidence,
                }
            )
        if data.get("mean_score") is not None:
            scores.append({"metric": f"{method} mean score", "mean": data["mean_score"], "n": data.get("scored")})
        for criterion, rate in (data.get("criterion_pass_rates") or {}).items():
            scores.append({"metric": f"criterion {criterion}: pass rate", "mean": rate, "n": data.get("scored")})
        if data.get("unanimous") is not None and data.get("scored"):
            scores.append(
                {
                    "metric": "rows unanimous over samples",
                    "mean": data["unanimous"] / data["scored"],
                    "n": data["scored"],
                }
            )
        if data.get("rubrics_written") is not None:
            summary["meta"]["rubrics written"] = data["rubrics_written"]
            summary["meta"]["prompts without a rubric"] = len(data.get("rubric_failures") or {})
    summary["judges"] = [entry]
    if scores:
        summary["scores"] = scores
    if digest is not None:
        distribution = digest.distribution() if method != "pairwise" else None  # pairwise: the outcomes
        if distribution is not None:
            summary.setdefault("distributions", []).append(distribution)
        summary["worst_rows"] = digest.worst(texts)
    return summary


def gate_run_summary(
    data: Mapping[str, Any],
    title: str | None = None,
    *,
    rows: Sequence[Mapping[str, Any]] | None = None,
    records: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """``respeval gate --json``: the funnel, the pass rate, and the judge's coverage and cost.

    ``rows`` (the gate's per-row results) and ``records`` (its input) add the distribution of
    decisions per stage and the rows rejected, with their texts."""
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
    if rows:
        stages = [s["stage"] for s in data.get("stages", [])]
        decisions = sorted({str(r.get("decision")) for r in rows})
        summary["distributions"] = [
            {
                "name": "gate decisions by stage",
                "kind": "categorical",
                "labels": stages,
                "series": [
                    {
                        "name": d,
                        "counts": [
                            sum(1 for r in rows if r.get("stage") == st and str(r.get("decision")) == d)
                            for st in stages
                        ],
                    }
                    for d in decisions
                ],
            }
        ]
        lexical = [r["lexical"] for r in rows if isinstance(r.get("lexical"), (int, float))]
        if lexical:
            summary["distributions"].append(
                {"name": f"{data.get('lexical_metric') or 'lexical'} score", "values": lexical}
            )
        digest = RowDigest("gate: rejected rows (lexical score)")
        for r in rows:
            if r.get("decision") == "reject":
                digest.add(
                    int(r.get("row", 0)), r.get("lexical") if r.get("lexical") is not None else 0.0, r.get("reason")
                )
        texts = texts_of(records or [], digest.rows())
        summary["worst_rows"] = digest.worst(texts)
    return summary


_FLIPPED_SHOWN = 50  # flipped cases kept in a run summary (regressions first)


def compare_run_summary(data: Mapping[str, Any], title: str | None = None) -> dict[str, Any]:
    """``respeval compare --json``: the metrics with their differences, tests and decisions
    (the report's forest plot and table), the flipped cases with their texts, and the judge's
    coverage and cost."""
    summary = new_summary(
        title or f"respeval compare: {data.get('candidate')} vs {data.get('baseline')}",
        {
            "command": "compare",
            "baseline": data.get("baseline"),
            "candidate": data.get("candidate"),
            "cases": data.get("cases"),
            "decision": data.get("decision"),
            "alpha": data.get("alpha"),
            "paired on": ", ".join(data.get("paired_on") or []),
            "sources": ", ".join(data.get("sources") or []),
        },
    )
    metrics = []
    for m in data.get("metrics", []):
        diff = m.get("difference") or {}
        metrics.append(
            {
                "metric": m.get("metric"),
                "kind": m.get("kind"),
                "baseline": m.get("baseline"),
                "candidate": m.get("candidate"),
                "difference": diff.get("value"),
                "low": diff.get("low"),
                "high": diff.get("high"),
                "interval": diff.get("method"),
                "test": m.get("test"),
                "statistic": m.get("statistic"),
                "p_value": m.get("p_value"),
                "p_holm": m.get("p_holm"),
                "decision": m.get("decision"),
                "higher_is_better": m.get("higher_is_better", True),
                "cases": m.get("cases"),
                "wins": m.get("wins"),
                "losses": m.get("losses"),
                "ties": m.get("ties"),
            }
        )
    flipped = [
        {
            "id": f.get("id"),
            "direction": f.get("direction"),
            "regressed": f.get("regressed") or [],
            "improved": f.get("improved") or [],
            "judge": f.get("judge"),
            "texts": {k: _text(f[k]) for k in ("prompt", "reference", "baseline", "candidate") if f.get(k) is not None},
        }
        for f in list(data.get("flipped") or [])[:_FLIPPED_SHOWN]
    ]
    judge = data.get("judge") or None
    entry: dict[str, Any] = {
        "baseline": data.get("baseline"),
        "candidate": data.get("candidate"),
        "cases": data.get("cases"),
        "alpha": data.get("alpha"),
        "confidence": data.get("confidence"),
        "decision": data.get("decision"),
        "metrics": metrics,
        "flipped": flipped,
        "flipped_counts": data.get("flipped_counts") or {},
    }
    if judge:
        spend = judge.get("spend") or {}
        entry["judge"] = {
            "model": judge.get("model"),
            "samples": judge.get("samples"),
            "calls": spend.get("calls"),
            "cost_usd": spend.get("cost_usd"),
            "outcomes": judge.get("outcomes"),
            "consistency": (judge.get("consistency") or {}).get("rate"),
            "sequential": judge.get("sequential"),
        }
        judged = judge.get("cases_judged") or 0
        scored = judged - (judge.get("unscored") or 0)
        summary["judges"] = [
            {
                "metric": "pairwise judge (both orders)",
                "method": "pairwise",
                "model": judge.get("model"),
                "rows": judged,
                "scored": scored,
                "coverage": scored / judged if judged else None,
                "pass_rate": next((m["candidate"] for m in metrics if m["metric"] == "judge"), None),
                "calls": spend.get("calls"),
                "cache_hits": spend.get("cache_hits"),
                "tokens_in": spend.get("tokens_in"),
                "tokens_out": spend.get("tokens_out"),
                "cost_usd": spend.get("cost_usd"),
                "unscored_reasons": judge.get("unscored_reasons") or {},
            }
        ]
    summary["compare"] = [entry]
    return summary


_FLAT_STATS = (
    "mean",
    "std",
    "ci_low",
    "ci_high",
    "scored",
    "coverage",
    "pass_rate",
    "pass_rate_ci_low",
    "pass_rate_ci_high",
    "corpus",
    "corpus_ci_low",
    "corpus_ci_high",
)


def evaluate_run_summary(flat: Mapping[str, Any], title: str | None = None) -> dict[str, Any]:
    """``respeval evaluate --json`` (the hosted services' flat ``summary_metrics``): scores
    with intervals, coverage and pass rates, and the judge's spend.  (``--summary-out`` and
    ``--report`` write the full summary, with distributions and the worst rows.)"""
    metrics: dict[str, dict[str, Any]] = {}
    for key, value in flat.items():
        name, _, stat = key.rpartition("/")
        if name and name != "judge" and stat in _FLAT_STATS:
            metrics.setdefault(name, {})[stat] = value
    rows = flat.get("row_count")
    meta = {"command": "evaluate", "rows": rows}
    meta.update({f"judge {k.split('/', 1)[1]}": v for k, v in flat.items() if k.startswith("judge/")})
    summary = new_summary(title or "respeval evaluate", meta)
    summary["summary_metrics"] = dict(flat)
    summary["scores"] = [
        {
            "metric": name,
            "mean": m.get("mean"),
            "std": m.get("std"),
            "low": m.get("ci_low"),
            "high": m.get("ci_high"),
            "n": m.get("scored"),
            "rows": rows,
            "coverage": m.get("coverage"),
            "pass_rate": m.get("pass_rate"),
            "pass_low": m.get("pass_rate_ci_low"),
            "pass_high": m.get("pass_rate_ci_high"),
            "corpus": m.get("corpus"),
            "corpus_low": m.get("corpus_ci_low"),
            "corpus_high": m.get("corpus_ci_high"),
        }
        for name, m in metrics.items()
    ]
    return summary


def to_run_summary(data: Any, source: str = "summary", title: str | None = None) -> dict[str, Any]:
    """A run summary from any command's JSON output (a run summary, which ``validate --json``
    prints, passes through)."""
    if isinstance(data, Mapping) and data.get("schema") == SCHEMA:
        return dict(data)
    if isinstance(data, Mapping):
        if data.get("comparison") == "respeval.compare/1":
            return compare_run_summary(data, title)
        if "stages" in data and "decisions" in data:
            return gate_run_summary(data, title)
        if "rows_total" in data and "systems" in data:
            return score_run_summary(data, title)
        if data.get("method") in JUDGE_METHODS and ("rows" in data or "pairs" in data):
            return judge_run_summary(data, title)
        if "row_count" in data:
            return evaluate_run_summary(data, title)
    raise ValueError(
        f"{source}: not a run summary, nor the --json output of respeval score, judge, gate, compare, evaluate or "
        "validate"
    )


def _json_safe(value: Any) -> Any:
    """Strict JSON: NaN and infinities become null; numpy scalars plain numbers; other
    objects their text."""
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (str, bool)) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) or hasattr(value, "item"):
        number = value.item() if hasattr(value, "item") else value
        if isinstance(number, float) and not math.isfinite(number):
            return None
        return number
    return str(value)


def write_run_outputs(
    summary: Mapping[str, Any],
    *,
    summary_out: str | os.PathLike[str] | None = None,
    report: str | os.PathLike[str] | None = None,
) -> None:
    """What ``--summary-out`` and ``--report`` write for every command: strict JSON (NaN as
    null), replaced atomically, with every text scrubbed of secrets (a key pasted into a
    dataset stays out of the summary, as out of the report)."""
    from respeval.redact import redact_data
    from respeval.report.html import write_report

    check_summary(summary)
    summary = redact_data(summary)
    if summary_out:
        path = Path(summary_out)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(_json_safe(summary), indent=2, allow_nan=False) + "\n")
    if report:
        write_report(summary, Path(report))
