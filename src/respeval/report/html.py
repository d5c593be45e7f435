"""The report page: one self-contained HTML file (inline styles and SVG, no network, no JavaScript)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from respeval._version import __version__
from respeval.io.files import write_text_atomic
from respeval.report.agents import section_agents
from respeval.report.compare import section_compare
from respeval.report.format import ci_span, empty_note, escape, fmt, html_table, pct, text_block
from respeval.report.schema import check_summary, merge_summaries, runs_of
from respeval.report.svg import svg_bars, svg_forest, svg_funnel, svg_heatmap, svg_scatter, svg_trend

# Section id, navigation title: every section a report can have.  A report shows only the
# sections its run fills, in the order of ORDERS for the run's command (the result first).
SECTIONS = (
    ("summary", "Summary"),
    ("compare", "Baseline vs candidate"),
    ("systems", "Systems"),
    ("agents", "Agents"),
    ("agreement", "Judge vs human"),
    ("confusion", "Confusion matrices"),
    ("correlations", "Metric vs human"),
    ("gate", "Gate funnel"),
    ("judges", "Judge coverage and cost"),
    ("distributions", "Score distributions"),
    ("worst", "Worst rows"),
    ("disagreements", "Worst disagreements"),
    ("trends", "Trends over windows"),
    ("run", "Run details"),
)
# meta.command -> its sections, the result first; a filled section not listed follows them
# (before the run details), so nothing a run holds is left out.
ORDERS = {
    "score": ("systems", "summary", "distributions", "worst", "run"),
    "judge": ("summary", "judges", "distributions", "worst", "disagreements", "run"),
    "gate": ("summary", "gate", "judges", "distributions", "worst", "run"),
    "evaluate": ("summary", "judges", "distributions", "worst", "run"),
    "validate": ("summary", "agreement", "confusion", "correlations", "distributions", "disagreements", "run"),
    "compare": ("compare", "judges", "summary", "run"),
    "agent": ("agents", "summary", "judges", "distributions", "worst", "run"),
    "monitor": ("trends", "summary", "judges", "distributions", "worst", "run"),
}
_MAX_DISAGREEMENTS = 10  # per metric


# --------------------------------------------------------------------------- sections


def _section_run(s: Mapping[str, Any]) -> str:
    """What ran: the command, its inputs and options, signatures, time (the meta table)."""
    meta = s.get("meta", {})
    if not meta:
        return ""
    return html_table(["", ""], ([escape(k), escape(v)] for k, v in meta.items()), "meta")


def _section_summary(s: Mapping[str, Any]) -> str:
    parts = []
    headline = [_headline_row(v) for v in s.get("validation", [])]
    if headline:
        parts.append("<h3>Validated against human labels</h3>")
        parts.append(
            html_table(
                ["metric", "rows used", "dropped", "accuracy", "macro F1", "Cohen's kappa", "Kendall tau-b"], headline
            )
        )
    corr = [
        [
            escape(c.get("name") or c.get("metric")),
            escape(c.get("level", "")),
            fmt(c.get("n")),
            fmt(c.get("kendall_tau_b")) + ci_span((c.get("intervals") or {}).get("kendall_tau_b")),
        ]
        for c in s.get("correlations", [])
    ]
    if corr:
        parts.append("<h3>Metrics against human scores</h3>")
        parts.append(html_table(["comparison", "level", "n", "Kendall tau-b"], corr))
    if s.get("scores"):
        parts.append("<h3>Scores</h3>")
        parts.append(_scores_table(s["scores"]))
        reasons = [
            [escape(r.get("metric")), escape(k), fmt(v)]
            for r in s["scores"]
            for k, v in (r.get("unscored_reasons") or {}).items()
        ]
        if reasons:
            parts.append("<h3>Unscored rows, by reason</h3>")
            parts.append(html_table(["metric", "reason", "rows"], reasons, "compact"))
    return "".join(parts)


def _with_interval(key: str, low: str, high: str) -> Any:
    """A cell renderer: the value of ``key`` with its interval (empty when there is no value)."""

    def cell(r: Mapping[str, Any]) -> str:
        if r.get(key) is None:
            return ""
        return fmt(r.get(key)) + ci_span({"low": r.get(low), "high": r.get(high)})

    return cell


def _scores_table(scores: Sequence[Mapping[str, Any]]) -> str:
    """The scores table, without the columns no score fills (a gate or judge run has no corpus
    value, a score run no pass rate)."""
    columns = [
        ("metric", lambda r: escape(r.get("metric")), "metric"),
        ("mean", lambda r: fmt(r.get("mean")), "metric"),
        ("interval", ci_span, "low"),
        ("n", lambda r: fmt(r.get("n")), "metric"),
        ("coverage", lambda r: pct(r["coverage"]) if r.get("coverage") is not None else "", "coverage"),
        ("pass rate", _with_interval("pass_rate", "pass_low", "pass_high"), "pass_rate"),
        ("corpus", _with_interval("corpus", "corpus_low", "corpus_high"), "corpus"),
    ]
    shown = [(name, cell) for name, cell, key in columns if any(r.get(key) is not None for r in scores)]
    return html_table([name for name, _ in shown], ([cell(r) for _, cell in shown] for r in scores))


def _headline_row(v: Mapping[str, Any]) -> list[str]:
    ag = v.get("agreement") or {}
    iv = ag.get("intervals", {})
    corr = v.get("correlation") or {}
    return [
        escape(v.get("metric")),
        fmt(v.get("used")),
        fmt((v.get("dropped") or {}).get("total", 0)),
        fmt(ag.get("accuracy")) + ci_span(iv.get("accuracy")),
        fmt(ag.get("macro_f1")) + ci_span(iv.get("macro_f1")),
        fmt(ag.get("cohen_kappa")) + ci_span(iv.get("cohen_kappa")),
        fmt(corr.get("kendall_tau_b")) + ci_span(corr.get("intervals", {}).get("kendall_tau_b")),
    ]


_AGREEMENT_ROWS = (
    ("accuracy", "accuracy", "share of rows where judge and human agree"),
    ("balanced_accuracy", "balanced accuracy", "mean per-class recall over the labels humans used"),
    ("macro_precision", "macro precision", "unweighted mean over labels"),
    ("macro_recall", "macro recall", "unweighted mean over labels"),
    ("macro_f1", "macro F1", "unweighted mean of per-class F1"),
    ("weighted_f1", "support-weighted F1", "per-class F1 weighted by human label counts (not “balanced”)"),
    ("cohen_kappa", "Cohen's kappa", "agreement beyond chance"),
    ("cohen_kappa_linear", "Cohen's kappa (linear)", "partial credit for near misses, label order as ordinal"),
    ("cohen_kappa_quadratic", "Cohen's kappa (quadratic)", "more partial credit for near misses"),
)


def _section_agreement(s: Mapping[str, Any]) -> str:
    items = s.get("validation", [])
    if not items:
        return ""
    return "".join(_validation_card(v) for v in items)


def _validation_card(v: Mapping[str, Any]) -> str:
    dropped = v.get("dropped") or {}
    head = (
        f'<h3>{escape(v.get("metric"))} <span class="tag">{escape(v.get("kind"))}</span></h3>'
        f'<p class="note">{fmt(v.get("used"))} of {fmt(v.get("rows"))} rows used; '
        f"{fmt(dropped.get('total', 0))} dropped ({escape(_scorer(v))} missing {fmt(dropped.get('judge_missing', 0))}, "
        f"human missing {fmt(dropped.get('human_missing', 0))}, both {fmt(dropped.get('both_missing', 0))}). "
        f"Columns: <code>{escape(v.get('judge_column'))}</code> vs <code>{escape(v.get('human_column'))}</code>.</p>"
    )
    right = [
        _per_class_block(v.get("agreement"), _scorer(v)),
        _correlation_block(v.get("correlation")),
        _pairwise_block(v.get("pairwise"), v.get("pairwise_note")),
        _verbosity_block(v.get("verbosity")),
    ]
    return (
        f'<div class="card">{head}<div class="cols"><div>{_agreement_block(v)}</div>'
        f"<div>{''.join(b for b in right if b)}</div></div></div>"
    )


def _agreement_block(v: Mapping[str, Any]) -> str:
    ag = v.get("agreement")
    if not ag:
        return f"<div>{empty_note(v.get('agreement_note') or 'No agreement statistics.')}</div>"
    iv = ag.get("intervals", {})
    rows = [
        [f'<span title="{escape(help_)}">{name}</span>', f"<b>{fmt(ag.get(key))}</b>", ci_span(iv.get(key))]
        for key, name, help_ in _AGREEMENT_ROWS
    ]
    conf = next(iter(iv.values())).get("confidence") if iv else None
    ci_head = f"{round(100 * conf)}% interval" if conf else "interval"
    return (
        f"<h4>Agreement with the human labels</h4>{html_table(['statistic', 'value', ci_head], rows, 'compact')}"
        '<p class="muted">Balanced accuracy is the mean recall over the labels humans used. '
        "Macro averages weigh every label equally; the support-weighted F1 weighs each label's F1 "
        "by how often humans used it (the figure some tools call “balanced F1”). Linear and "
        "quadratic kappa treat the label order as ordinal.</p>"
    )


def _scorer(v: Mapping[str, Any]) -> str:
    """What gave a validation's values: "judge", or "metric" (ROUGE-2 is no judge)."""
    return str(v.get("scorer") or "judge")


def _per_class_block(ag: Mapping[str, Any] | None, scorer: str = "judge") -> str:
    if not ag:
        return ""
    table = html_table(
        ["label", "precision", "recall", "F1", "human used", f"{scorer} used"],
        (
            [
                escape(c["label"]),
                fmt(c["precision"]),
                fmt(c["recall"]),
                fmt(c["f1"]),
                fmt(c["support"]),
                fmt(c.get("predicted")),
            ]
            for c in ag.get("per_class", [])
        ),
        "compact",
    )
    return f"<h4>Per label</h4>{table}"


def _correlation_block(c: Mapping[str, Any] | None) -> str:
    if not c:
        return ""
    iv = c.get("intervals", {})
    rows = [
        [name, f"<b>{fmt(c.get(key))}</b>", ci_span(iv.get(key))]
        for key, name in (("pearson", "Pearson r"), ("spearman", "Spearman rho"), ("kendall_tau_b", "Kendall tau-b"))
    ]
    return (
        f"<h4>Correlation with human ratings ({fmt(c.get('n'))} rows)</h4>"
        f"{html_table(['statistic', 'value', 'interval'], rows, 'compact')}"
    )


def _pairwise_block(p: Mapping[str, Any] | None, note: str | None) -> str:
    if not p:
        return f"<h4>Position consistency</h4>{empty_note(note)}" if note else ""
    iv = p.get("intervals", {})
    rows = [
        [f'<span title="{escape(h)}">{name}</span>', f"<b>{fmt(p.get(key))}</b>", ci_span(iv.get(key))]
        for key, name, h in (
            ("consistency", "position consistency", "same verdict in both orders"),
            ("flip_rate", "flip rate", "winner changes with the order"),
            ("tie_rate", "tie rate", "share of verdicts that are ties"),
            ("consistency_kappa", "kappa between orders", "agreement of the two orders beyond chance"),
            ("first_position_rate", "picks the first shown", "of decisive verdicts; 50% = no bias"),
        )
    ]
    extra = f'<p class="note">{escape(note)}</p>' if note else ""
    return (
        f"<h4>Position consistency ({fmt(p.get('n'))} items, asked in both orders)</h4>"
        f"{html_table(['statistic', 'value', 'interval'], rows, 'compact')}"
        '<p class="muted">Flips: the winner changes with the order. Ties: share of all verdicts. '
        "First shown: share of decisive verdicts for whichever response came first (0.5 = no "
        f"position bias).</p>{extra}"
    )


def _verbosity_block(vb: Mapping[str, Any] | None) -> str:
    if not vb:
        return ""
    iv = vb.get("intervals", {})
    if vb.get("kind") == "pairwise":
        what = "share of decisive verdicts picking the longer response"
    else:
        what = "Spearman correlation of the score with the response length in words"
    judge, human, excess = fmt(vb.get("judge")), fmt(vb.get("human")), vb.get("excess")
    excess_s = "–" if excess is None else f"{excess:+.4f}"
    verdict = ""
    ex_iv = iv.get("excess")
    if ex_iv and ex_iv.get("low") is not None:
        if ex_iv["low"] > 0:
            verdict = '<p class="warn">The judge favours longer responses more than humans do.</p>'
        elif ex_iv["high"] < 0:
            verdict = '<p class="ok">The judge favours longer responses less than humans do.</p>'
        else:
            verdict = '<p class="ok">No length preference beyond the humans\' (the interval covers 0).</p>'
    rows = [
        ["judge", f"<b>{judge}</b>", ci_span(iv.get("judge"))],
        ["human", human, ""],
        ["judge − human", f"<b>{excess_s}</b>", ci_span(ex_iv)],
    ]
    return (
        f'<h4>Verbosity probe ({fmt(vb.get("n"))} rows)</h4><p class="muted">{escape(what)}</p>'
        f"{html_table(['', 'value', 'interval'], rows, 'compact')}{verdict}"
    )


def _section_confusion(s: Mapping[str, Any]) -> str:
    cards = []
    for v in s.get("validation", []):
        conf = (v.get("agreement") or {}).get("confusion")
        if not conf:
            continue
        plot = svg_heatmap(conf["labels"], conf["matrix"], f"confusion matrix of {v.get('metric')}", _scorer(v))
        cards.append(
            f'<figure class="card fig"><figcaption><b>{escape(v.get("metric"))}</b> · '
            f"{fmt(v.get('used'))} rows</figcaption>{plot}</figure>"
        )
    if not cards:
        return ""
    return (
        "<p class=\"note\">Rows are the human label, columns the judge's (or metric's); the colour is the share "
        "of the row (how it labelled what humans called that label); the diagonal is "
        f'outlined.</p><div class="figs">{"".join(cards)}</div>'
    )


def _section_correlations(s: Mapping[str, Any]) -> str:
    items = s.get("correlations", [])
    cards = [_correlation_card(c) for c in items]
    cards += [
        _correlation_card(
            {
                "name": f"{v.get('metric')} ({_scorer(v)})",
                "metric": f"{_scorer(v)} score",
                "human": "human rating",
                **v["correlation"],
            }
        )
        for v in s.get("validation", [])
        if v.get("correlation")
    ]
    if not cards:
        return ""
    return f'<div class="figs">{"".join(cards)}</div>'


def _correlation_card(c: Mapping[str, Any]) -> str:
    iv = c.get("intervals") or {}
    rows = [
        [name, f"<b>{fmt(c.get(key))}</b>", ci_span(iv.get(key))]
        for key, name in (("pearson", "Pearson r"), ("spearman", "Spearman rho"), ("kendall_tau_b", "Kendall tau-b"))
    ]
    plot = ""
    if c.get("points"):
        plot = svg_scatter(
            c["points"],
            str(c.get("metric", "metric")),
            str(c.get("human", "human")),
            f"{c.get('metric')} against {c.get('human')}",
        )
    return (
        f'<div class="card fig"><h3>{escape(c.get("name") or c.get("metric"))}</h3>'
        f'<p class="note">{escape(c.get("metric"))} vs {escape(c.get("human"))}, {escape(c.get("level", "segment"))} '
        f"level, n = {fmt(c.get('n'))}</p>{html_table(['statistic', 'value', 'interval'], rows, 'compact')}"
        f"{plot}</div>"
    )


def _distribution_plot(d: Mapping[str, Any]) -> str | None:
    name = str(d.get("name", "distribution"))
    if "values" in d and "series" not in d:
        values = np.asarray([v for v in d["values"] if v is not None], dtype=np.float64)
        if values.size == 0:
            return None
        edges = np.histogram_bin_edges(values, bins=min(30, max(5, int(math.sqrt(values.size)))))
        d = {
            "kind": "numeric",
            "edges": edges.tolist(),
            "series": [{"name": name, "counts": np.histogram(values, bins=edges)[0].tolist()}],
        }
    series = d.get("series") or []
    if not series:
        return None
    if d.get("kind") == "categorical":
        return svg_bars(d.get("labels", []), series, name)
    if d.get("kind") == "numeric":
        edges = d["edges"]
        centres = [(a + b) / 2 for a, b in itertools.pairwise(edges)]
        return svg_bars(centres, series, name, numeric_edges=edges)
    return None


def _section_distributions(s: Mapping[str, Any]) -> str:
    entries = [
        (f"{v.get('metric')}: {_scorer(v)} and human", v["distribution"])
        for v in s.get("validation", [])
        if v.get("distribution")
    ]
    entries += [(str(d.get("name", "distribution")), d) for d in s.get("distributions", [])]
    cards = []
    for caption, d in entries:
        plot = _distribution_plot({"name": caption, **d})
        if plot:
            cards.append(f'<figure class="card fig"><figcaption>{escape(caption)}</figcaption>{plot}</figure>')
    if not cards:
        return ""
    return f'<div class="figs">{"".join(cards)}</div>'


def _section_gate(s: Mapping[str, Any]) -> str:
    funnels = s.get("gate", [])
    if not funnels:
        return ""
    cards = []
    for f in funnels:
        total = int(f.get("total", 0))
        stages = f.get("stages", [])
        settled = sum(int(st.get("settled", 0)) for st in stages)
        cards.append(
            f'<div class="card"><h3>{escape(f.get("name", "gate"))}</h3>'
            f'<p class="note">{total:,} rows; {settled:,} settled ({pct(settled / total if total else 0)}). '
            f"Each row stops at the first stage that can settle it; only the rest go on.</p>"
            f"{svg_funnel(total, stages, 'gate funnel')}</div>"
        )
    return "".join(cards)


def _section_trends(s: Mapping[str, Any]) -> str:
    trends = s.get("trends", [])
    if not trends:
        return ""
    cards = []
    for t in trends:
        points = t.get("points", [])
        regressed = [p for p in points if p.get("status") == "regressed"]
        band = "Wilson" if t.get("kind") == "pass_rate" else "bootstrap percentile"
        note = (
            f"{len(points)} windows; band: {pct(t.get('confidence'))} {band} interval of each window; dashed: the "
            f"reference; red: regressed ({escape(t.get('method', ''))}, false alarms at most "
            f"{pct(t.get('alpha'))} over every window)"
        )
        rows = [
            [
                escape(p.get("label")),
                fmt(p.get("n")),
                fmt(p.get("value")),
                f"[{fmt(p.get('low'))}, {fmt(p.get('high'))}]",
                fmt(p.get("p_holm")),
                fmt(p.get("level"), 6),
                escape(p.get("status")),
            ]
            for p in points
        ]
        cards.append(
            f'<div class="card"><h3>{escape(t.get("metric"))}</h3><p class="note">{note}; '
            f"{len(regressed)} regressed.</p>"
            f"{svg_trend(points, str(t.get('metric')), reference=t.get('reference'), y_label=str(t.get('kind', '')))}"
            f"{html_table(['window', 'n', 'value', 'interval', 'p (Holm)', 'level', 'status'], rows)}</div>"
        )
    return "".join(cards)


def _directions(s: Mapping[str, Any]) -> dict[str, bool]:
    """Metric -> whether higher is better, from the comparisons and the systems tables."""
    out = {str(t.get("metric")): bool(t.get("higher_is_better", True)) for t in s.get("systems", [])}
    for c in s.get("comparisons", []):
        if "higher_is_better" in c:
            out[str(c.get("metric"))] = bool(c["higher_is_better"])
    return out


def _comparisons(s: Mapping[str, Any]) -> str:
    """Paired comparisons: one row per system (and baseline, when there are several), a
    difference, its p-value and whether it is better or worse per metric (TER: lower is
    better); p < 0.05 in bold and coloured."""
    comps = s.get("comparisons", [])
    if not comps:
        return ""
    metrics = list(dict.fromkeys(str(c.get("metric")) for c in comps))
    higher = _directions(s)
    baselines = list(dict.fromkeys(str(c.get("baseline")) for c in comps))
    one_baseline = len(baselines) == 1
    pairs: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = {}
    rows_of: dict[tuple[str, str], Any] = {}
    for c in comps:
        key = (str(c.get("system")), str(c.get("baseline")))
        pairs.setdefault(key, {})[str(c.get("metric"))] = c
        rows_of[key] = c.get("rows")

    def cell(metric: str, c: Mapping[str, Any] | None) -> str:
        if c is None or not isinstance(c.get("delta"), (int, float)):
            return "–"
        delta, p = float(c["delta"]), c.get("p_value")
        significant = isinstance(p, (int, float)) and p < 0.05
        if delta == 0:
            word = "same"
        else:
            word = "better" if (delta > 0) == higher.get(metric, True) else "worse"
        colour = {"better": "#047857", "worse": "#b91c1c"}.get(word, "inherit") if significant else "inherit"
        text = f'{delta:+.4f} <span style="color:{colour}">{word}</span> <span class="ci">p = {fmt(p)}</span>'
        return f"<b>{text}</b>" if significant else text

    rows = [
        [
            escape(system),
            *([] if one_baseline else [escape(baseline)]),
            *(cell(m, by_metric.get(m)) for m in metrics),
            fmt(rows_of[(system, baseline)]),
        ]
        for (system, baseline), by_metric in pairs.items()
    ]
    head = [
        "system",
        *([] if one_baseline else ["baseline"]),
        *(f"{m}: difference" + ("" if higher.get(m, True) else " (lower is better)") for m in metrics),
        "rows",
    ]
    title = f"Paired comparisons against {escape(baselines[0])}" if one_baseline else "Paired comparisons"
    lower = [m for m in metrics if not higher.get(m, True)]
    note = f" For {escape(', '.join(lower))} lower is better: a positive difference is worse." if lower else ""
    return (
        f"<h3>{title}</h3>"
        + html_table([escape(h) for h in head], rows, "compact")
        + '<p class="muted">Difference = system - baseline, with the p-value of paired approximate randomization '
        f"on the rows both systems scored; better or worse by each metric's direction; bold: p &lt; 0.05.{note}</p>"
    )


def _section_systems(s: Mapping[str, Any]) -> str:
    tables = s.get("systems", [])
    if not tables:
        return _comparisons(s)
    cards = []
    for t in tables:
        higher = t.get("higher_is_better", True)
        rows = sorted(t.get("rows", []), key=lambda r: -(r.get("mean") or 0) if higher else (r.get("mean") or 0))
        conf = t.get("confidence")
        head = f"{round(100 * conf)}% interval" if conf else "interval"
        statistic = str(t.get("statistic") or "mean")
        table = html_table(
            ["system", escape(statistic), head, "n"],
            ([escape(r.get("system")), f"<b>{fmt(r.get('mean'))}</b>", ci_span(r), fmt(r.get("n"))] for r in rows),
            "compact",
        )
        notes = []
        if statistic == "corpus":
            notes.append("corpus value from summed statistics (not a mean of row scores)")
        notes.append("best first; " + ("higher is better" if higher else "lower is better"))
        cards.append(
            f'<div class="card"><h3>{escape(t.get("metric"))} <span class="muted">{escape("; ".join(notes))}</span>'
            f'</h3><div class="side"><div>{svg_forest(rows, str(t.get("metric")))}</div><div>{table}</div></div></div>'
        )
    return "".join(cards) + _comparisons(s)


def _section_judges(s: Mapping[str, Any]) -> str:
    judges = s.get("judges", [])
    if not judges:
        return ""
    rows = [
        [
            escape(j.get("metric")),
            escape(j.get("method") or ""),
            f"{fmt(j.get('scored'))} / {fmt(j.get('rows'))}",
            pct(j.get("coverage")),
            fmt(j.get("pass_rate")) + ci_span({"low": j.get("pass_low"), "high": j.get("pass_high")}),
            escape(", ".join(f"{k}: {v}" for k, v in (j.get("unscored_reasons") or {}).items()) or "–"),
        ]
        for j in judges
    ]
    parts = [
        html_table(
            ["metric", "method", "scored / rows", "coverage", "pass rate (Wilson)", "unscored, by reason"], rows
        ),
        '<p class="note">A row the judge could not score is counted here with its reason, never as a pass or a '
        "fail.</p>",
    ]
    spend = [
        [escape(j.get("metric")), fmt(j.get(k)) if j.get(k) is not None else "–"]
        for j in judges
        for k in ("calls",)
        if j.get(k) is not None
    ]
    meta = s.get("meta", {})
    if "judge calls" in meta:
        parts.append(
            f'<p class="note">This run: {fmt(meta.get("judge calls"))} calls, {fmt(meta.get("judge cache_hits"))} '
            f"answers from the cache, {fmt(meta.get('judge tokens_in'))} tokens in, "
            f"{fmt(meta.get('judge tokens_out'))} out, cost ${fmt(meta.get('judge cost_usd'))}.</p>"
        )
    elif spend:
        cost = [
            [
                escape(j.get("metric")),
                fmt(j.get("calls")),
                fmt(j.get("cache_hits")),
                fmt(j.get("tokens_in")),
                fmt(j.get("tokens_out")),
                fmt(j.get("cost_usd")),
            ]
            for j in judges
        ]
        parts.append(html_table(["metric", "calls", "cache hits", "tokens in", "tokens out", "cost (USD)"], cost))
    return "".join(parts)


def _section_worst(s: Mapping[str, Any]) -> str:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for w in s.get("worst_rows", []):
        groups.setdefault(str(w.get("metric")), []).append(w)
    if not groups:
        return ""
    parts = [
        '<p class="note">Per metric, the worst rows (the lowest scores; where lower is better, the highest), '
        "with their texts and the explanation.</p>"
    ]
    for metric, items in groups.items():
        parts.append(f"<h3>{escape(metric)}</h3>")
        for w in items[:_MAX_DISAGREEMENTS]:
            texts = dict(w.get("texts") or {})
            body = "".join(text_block(k, v) for k, v in texts.items())
            score = f" · score <b>{fmt(w['score'])}</b>" if w.get("score") is not None else ""
            system = f" · system <b>{escape(w['system'])}</b>" if w.get("system") is not None else ""
            parts.append(
                f'<div class="card dis"><div class="dis-head">row {escape(w.get("row"))}{system}{score}</div>'
                f'<div class="texts">{body}</div></div>'
            )
    return "".join(parts)


def _section_disagreements(s: Mapping[str, Any]) -> str:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    scorers: dict[str, str] = {}
    for v in s.get("validation", []):
        groups.setdefault(str(v.get("metric")), []).extend(v.get("disagreements", []))
        scorers[str(v.get("metric"))] = _scorer(v)
    for d in s.get("disagreements", []):
        groups.setdefault(str(d.get("metric", "")), []).append(d)
    groups = {k: v for k, v in groups.items() if v}
    if not groups:
        return ""
    parts = [
        '<p class="note">Per metric, the rows where the judge (or metric) and the human differ most: the largest '
        "score gap, or for pairwise verdicts opposite winners (gap 2) before a tie against a "
        "winner (gap 1).</p>"
    ]
    for metric, items in groups.items():
        worst = sorted(items, key=lambda d: -(d.get("gap") or 0))[:_MAX_DISAGREEMENTS]
        parts.append(f"<h3>{escape(metric)}</h3>")
        parts.extend(_disagreement_card(d, scorers.get(metric, "judge")) for d in worst)
    return "".join(parts)


_CONTEXT_TEXTS = ("prompt", "instruction", "input", "reference")


def _disagreement_card(d: Mapping[str, Any], scorer: str = "judge") -> str:
    """Judge and human verdicts, then the context, the responses side by side, the explanation."""
    texts = dict(d.get("texts") or {})
    context = [(k, texts.pop(k)) for k in _CONTEXT_TEXTS if k in texts]
    explanation = [(k, texts.pop(k)) for k in ("explanation",) if k in texts]
    rows = [items for items in (context, list(texts.items()), explanation) if items]
    body = "".join('<div class="texts">' + "".join(text_block(k, v) for k, v in items) + "</div>" for items in rows)
    return (
        f'<div class="card dis"><div class="dis-head">row {escape(d.get("row"))} · {escape(scorer)} '
        f"<b>{escape(d.get('judge'))}</b> · human <b>{escape(d.get('human'))}</b> · gap {fmt(d.get('gap'), 2)}"
        f"</div>{body or empty_note('no texts')}</div>"
    )


# --------------------------------------------------------------------------- page


_CSS = """
:root { --ink:#0f172a; --muted:#64748b; --line:#e2e8f0; --bg:#f8fafc; --card:#fff; --accent:#2563eb; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
       color:var(--ink); background:var(--bg); }
header { background:#0f172a; color:#fff; padding:22px 32px 14px; }
header h1 { margin:0 0 4px; font-size:22px; font-weight:650; }
header .sub { color:#cbd5e1; font-size:13px; }
nav { position:sticky; top:0; z-index:1; background:#fff; border-bottom:1px solid var(--line);
      padding:8px 32px; display:flex; flex-wrap:wrap; gap:6px 18px; }
nav a { color:var(--accent); text-decoration:none; font-weight:550; font-size:13px; }
main { max-width:1180px; margin:0 auto; padding:8px 32px 48px; }
section { margin-top:28px; }
h2 { font-size:18px; border-bottom:2px solid var(--ink); padding-bottom:4px; }
h3 { font-size:15px; margin:4px 0 8px; }
h4 { font-size:13px; margin:10px 0 6px; color:#334155; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:14px 18px;
        margin:12px 0; box-shadow:0 1px 2px rgba(15,23,42,.04); }
.cols { display:grid; grid-template-columns:minmax(0,1fr) minmax(0,1fr); gap:4px 32px; }
@media (max-width: 900px) { .cols { grid-template-columns:minmax(0,1fr); } }
.figs { display:flex; flex-wrap:wrap; gap:14px; align-items:flex-start; }
.side { display:flex; flex-wrap:wrap; gap:8px 28px; align-items:flex-start; }
.fig { margin:0; }
figcaption { font-size:12px; color:var(--muted); margin-bottom:6px; max-width:520px; }
table { border-collapse:collapse; margin:6px 0 10px; font-variant-numeric:tabular-nums; }
th, td { padding:4px 10px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
th { font-size:12px; color:var(--muted); font-weight:600; }
tbody tr:nth-child(even) { background:#f8fafc; }
table.compact td, table.compact th { padding:3px 8px; }
table.meta td:first-child { color:var(--muted); }
.ci { color:var(--muted); font-size:12px; margin-left:6px; white-space:nowrap; }
.muted { color:var(--muted); font-size:12px; }
.note { color:#475569; font-size:13px; margin:4px 0 8px; }
.empty { color:var(--muted); font-style:italic; }
.tag { display:inline-block; background:#e0e7ff; color:#3730a3; border-radius:999px; padding:0 8px;
       font-size:12px; font-weight:600; vertical-align:middle; }
.warn { color:#b45309; font-weight:600; } .ok { color:#047857; }
code { background:#f1f5f9; padding:1px 4px; border-radius:4px; font-size:12px; }
svg.plot { max-width:100%; height:auto; font-family:inherit; }
svg .tick { font-size:11px; fill:#475569; } svg .label { font-size:12px; fill:var(--ink); }
svg .cell { font-size:12px; font-weight:600; } svg .axis-title { font-size:12px; fill:var(--muted); }
svg .grid { stroke:#e2e8f0; stroke-width:1; } svg .axis { stroke:#94a3b8; stroke-width:1; }
.dis-head { margin-bottom:8px; }
.texts { display:grid; grid-template-columns:repeat(auto-fit,minmax(300px,1fr)); gap:10px; margin-top:10px; }
.text { border:1px solid var(--line); border-radius:8px; overflow:hidden; }
.text-name { background:#f1f5f9; padding:3px 10px; font-weight:600; font-size:12px; }
.text-body { padding:8px 10px; white-space:pre-wrap; word-break:break-word; max-height:15em; overflow:auto;
             font-size:13px; }
article.run { margin-top:36px; }
.run-head { background:#1e293b; color:#fff; border-radius:10px 10px 0 0; padding:10px 18px; }
.run-head h2 { border:0; margin:0; padding:0; font-size:17px; color:#fff; }
.run-head .muted { color:#cbd5e1; }
nav.run-nav { position:static; padding:6px 18px; border:1px solid var(--line); border-top:0; }
footer { color:var(--muted); font-size:12px; text-align:center; padding:16px; }
"""

CSS = _CSS  # the report's styles (respeval view builds on them)

_RENDERERS = {
    "summary": _section_summary,
    "agreement": _section_agreement,
    "confusion": _section_confusion,
    "correlations": _section_correlations,
    "distributions": _section_distributions,
    "gate": _section_gate,
    "judges": _section_judges,
    "systems": _section_systems,
    "worst": _section_worst,
    "disagreements": _section_disagreements,
    "agents": section_agents,
    "compare": section_compare,
    "trends": _section_trends,
    "run": _section_run,
}
_TITLES = dict(SECTIONS)


def present_sections(summary: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(id, title, HTML) of the sections one run fills, in its command's order (the result
    first, the run details last)."""
    command = str((summary.get("meta") or {}).get("command") or "")
    bodies = {sid: _RENDERERS[sid](summary) for sid, _ in SECTIONS}
    order = list(ORDERS.get(command, ()))
    order += [sid for sid, _ in SECTIONS if sid not in order and sid != "run"]
    order = [sid for sid in order if sid != "run"] + ["run"]
    return [(sid, _TITLES[sid], bodies[sid]) for sid in order if bodies[sid]]


def _run_body(summary: Mapping[str, Any], prefix: str = "") -> tuple[str, str]:
    """The navigation links and the sections of one run (ids prefixed for a collection)."""
    sections = present_sections(summary)
    if not sections:
        sections = [("summary", "Summary", empty_note("This run summary holds no results."))]
    nav = "".join(f'<a href="#{prefix}{sid}">{escape(name)}</a>' for sid, name, _ in sections)
    body = "".join(
        f'<section id="{prefix}{sid}"><h2>{escape(name)}</h2>{html}</section>' for sid, name, html in sections
    )
    return nav, body


def _run_line(i: int, run: Mapping[str, Any]) -> list[str]:
    meta = run.get("meta") or {}
    return [
        f'<a href="#run-{i}">{i}</a>',
        f'<a href="#run-{i}">{escape(run.get("title") or "run")}</a>',
        escape(meta.get("command") or ""),
        fmt(meta["rows"]) if isinstance(meta.get("rows"), int) else escape(meta.get("rows") or ""),
    ]


def _page(title: str, created: str, nav: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f'<header><h1>{escape(title)}</h1><div class="sub">respeval {escape(__version__)}{created}</div></header>'
        f"<nav>{nav}</nav><main>{body}</main>"
        "<footer>Self-contained report: no network, no scripts. Intervals are seeded percentile "
        "bootstrap intervals unless a table says otherwise (Wilson for rates).</footer></body></html>\n"
    )


def render_html(summary: Mapping[str, Any]) -> str:
    """The report page for one run summary, as a string: the sections the run fills, in
    its command's order.  A collection (``"runs"``) shows a list of its runs, then each run
    on its own, with its own sections."""
    check_summary(summary)
    created = f" · {escape(summary['created'])}" if summary.get("created") else ""
    runs = runs_of(summary)
    if len(runs) == 1 and not summary.get("runs"):
        nav, body = _run_body(summary)
        return _page(str(summary.get("title") or "respeval report"), created, nav, body)
    title = str(summary.get("title") or f"respeval report: {len(runs)} runs")
    listing = html_table(["run", "title", "command", "rows"], (_run_line(i, r) for i, r in enumerate(runs, 1)))
    articles = []
    for i, run in enumerate(runs, 1):
        nav, body = _run_body(run, f"run-{i}-")
        run_created = f' <span class="muted">{escape(run["created"])}</span>' if run.get("created") else ""
        articles.append(
            f'<article class="run" id="run-{i}"><div class="run-head"><h2>Run {i}: {escape(run.get("title") or "run")}'
            f'</h2>{run_created}</div><nav class="run-nav">{nav}</nav>{body}</article>'
        )
    top = "".join(f'<a href="#run-{i}">{i}. {escape(r.get("title") or "run")}</a>' for i, r in enumerate(runs, 1))
    body = f'<section id="runs"><h2>{len(runs)} runs</h2>{listing}</section>' + "".join(articles)
    return _page(title, created, top, body)


def write_report(summary: Mapping[str, Any] | Sequence[Mapping[str, Any]], out: str | Path) -> Path:
    """Render one summary (several: each as a run of its own) to ``out``; returns the
    absolute path."""
    if not isinstance(summary, Mapping):
        summary = merge_summaries(list(summary))
    check_summary(summary)
    path = Path(out).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, render_html(summary))  # an existing report is replaced only by a complete one
    return path
