"""The report's "Baseline vs candidate" section: the decision, the paired differences as a
forest plot (one per scale: rates and F-scores in [0, 1], 0-100 scores apart), the table of
tests, what the judge did, and the flipped cases side by side, regressions first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from respeval.report.format import empty_note, escape, fmt, html_table, text_block
from respeval.report.svg import svg_forest

__all__ = ["section_compare"]

_DECISION = {"improved": "improved", "no_change": "no significant change", "regressed": "regressed"}
_COLOUR = {"improved": "#047857", "regressed": "#b91c1c", "no_change": "#2563eb"}
_CASES_SHOWN = 20
_TESTS = {
    "mcnemar_exact": "McNemar exact",
    "wilcoxon": "Wilcoxon signed-rank",
    "sign_test": "sign test",
    "paired_ar": "approximate randomization",
    "sequential": "sequential (always valid)",
}


def _p(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return "–"
    return f"{value:.2e}" if value < 1e-4 else f"{value:.4f}"


def _signed(value: Any) -> str:
    return f"{value:+.4f}" if isinstance(value, (int, float)) else "–"


def _forests(metrics: Sequence[Mapping[str, Any]]) -> str:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for m in metrics:
        values = [abs(v) for v in (m.get("baseline"), m.get("candidate")) if isinstance(v, (int, float))]
        scale = "rates and scores in [0, 1]" if all(v <= 1 for v in values) else "scores on a 0-100 scale"
        groups.setdefault(scale, []).append(m)
    figures = []
    for scale, items in groups.items():
        rows = [
            {
                "system": m.get("metric"),
                "mean": m.get("difference"),
                "low": m.get("low"),
                "high": m.get("high"),
                "colour": _COLOUR.get(str(m.get("decision")), _COLOUR["no_change"]),
            }
            for m in items
        ]
        plot = svg_forest(rows, f"candidate - baseline, {scale}", reference=0.0)
        figures.append(
            f'<figure class="card fig"><figcaption>candidate − baseline, {escape(scale)} (dashed: no difference; '
            f"red: regressed, green: improved)</figcaption>{plot}</figure>"
        )
    return f'<div class="figs">{"".join(figures)}</div>'


def _table(metrics: Sequence[Mapping[str, Any]], confidence: Any) -> str:
    head = f"{round(100 * confidence)}% interval" if isinstance(confidence, (int, float)) else "interval"
    rows = [
        [
            escape(m.get("metric")),
            fmt(m.get("baseline")),
            fmt(m.get("candidate")),
            f"<b>{_signed(m.get('difference'))}</b>",
            f'<span class="ci">[{_signed(m.get("low"))}, {_signed(m.get("high"))}]</span>',
            escape(_TESTS.get(str(m.get("test")), m.get("test"))),
            _p(m.get("p_value")),
            _p(m.get("p_holm")),
            f'<b style="color:{_COLOUR.get(str(m.get("decision")), "inherit")}">'
            f"{escape(_DECISION.get(str(m.get('decision')), m.get('decision')))}</b>",
        ]
        for m in metrics
    ]
    return html_table(
        ["metric", "baseline", "candidate", "difference", head, "test", "p", "p (Holm)", "decision"], rows, "compact"
    )


def _judge(judge: Mapping[str, Any] | None) -> str:
    if not judge:
        return ""
    outcomes = judge.get("outcomes") or {}
    text = (
        f"Judge {escape(judge.get('model'))}: {fmt(judge.get('calls'))} calls, both orders"
        f"{'' if (judge.get('samples') or 1) == 1 else ', ' + fmt(judge.get('samples')) + ' samples per order'}; "
        f"candidate won {fmt(outcomes.get('B', 0))}, baseline {fmt(outcomes.get('A', 0))}, ties "
        f"{fmt(outcomes.get('tie', 0))}, orders disagreed {fmt(outcomes.get('inconsistent', 0))} (counted as ties); "
        f"position consistency {fmt(judge.get('consistency'))}."
    )
    seq = judge.get("sequential")
    if seq:
        text += (
            f" Sequential: judged {fmt(seq.get('cases_judged'))} of {fmt(seq.get('cases_total'))} cases "
            f"({fmt(seq.get('calls'))} calls, about {fmt(seq.get('calls_saved_estimate'))} saved); "
            f"{escape(seq.get('decision_rule'))}."
        )
    return f'<p class="note">{text}</p>'


def _flipped_card(case: Mapping[str, Any]) -> str:
    texts = dict(case.get("texts") or {})
    context = [(k, texts[k]) for k in ("prompt", "reference") if k in texts]
    sides = [(k, texts[k]) for k in ("baseline", "candidate") if k in texts]
    body = "".join(
        '<div class="texts">' + "".join(text_block(k, v) for k, v in items) + "</div>"
        for items in (context, sides)
        if items
    )
    what = []
    if case.get("regressed"):
        what.append("worse on " + ", ".join(map(str, case["regressed"])))
    if case.get("improved"):
        what.append("better on " + ", ".join(map(str, case["improved"])))
    colour = _COLOUR["regressed"] if case.get("regressed") else _COLOUR["improved"]
    return (
        f'<div class="card dis"><div class="dis-head">case {escape(case.get("id"))} · '
        f'<b style="color:{colour}">{escape("; ".join(what))}</b></div>{body or empty_note("no texts")}</div>'
    )


def _card(c: Mapping[str, Any]) -> str:
    decision = str(c.get("decision"))
    counts = c.get("flipped_counts") or {}
    head = (
        f"<h3>{escape(c.get('candidate'))} vs {escape(c.get('baseline'))}: "
        f'<span style="color:{_COLOUR.get(decision, "inherit")}">{escape(_DECISION.get(decision, decision))}</span></h3>'
        f'<p class="note">{fmt(c.get("cases"))} paired cases; each metric decided at alpha {fmt(c.get("alpha"), 3)} '
        "after Holm's correction across the metrics; overall: regressed when any metric regressed.</p>"
    )
    flipped = list(c.get("flipped") or [])
    cases = "".join(_flipped_card(f) for f in flipped[:_CASES_SHOWN])
    more = len(flipped) - _CASES_SHOWN
    flipped_part = (
        f"<h4>Flipped cases: {fmt(counts.get('regressed', 0))} regressed, {fmt(counts.get('improved', 0))} improved</h4>"
        + (cases or empty_note("No case flipped on a pass/fail metric or the judge."))
        + (f'<p class="muted">{more} more in the run summary.</p>' if more > 0 else "")
    )
    return (
        f'<div class="card">{head}{_forests(c.get("metrics") or [])}{_table(c.get("metrics") or [], c.get("confidence"))}'
        f"{_judge(c.get('judge'))}</div>{flipped_part}"
    )


def section_compare(s: Mapping[str, Any]) -> str:
    comparisons = s.get("compare", [])
    if not comparisons:
        return ""
    return "".join(_card(c) for c in comparisons)
