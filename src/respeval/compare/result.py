"""The result of a comparison: per metric each system's value, the difference with its
interval, the test and its p-value (raw and Holm-corrected), the decision; the overall
decision; the cases that flipped; what the judge did.

Decisions (``DECISIONS``): a metric is ``improved`` or ``regressed`` when its Holm-corrected
p-value is at most ``alpha`` (the sequential judge: when its confidence sequence settles),
in the direction its test found, oriented by whether higher is better; otherwise
``no_change`` (no significant change).  Overall: ``regressed`` when any metric regressed (a
regression anywhere blocks a release, even beside an improvement), else ``improved`` when
any improved, else ``no_change``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from respeval.stats import Interval

__all__ = ["DECISIONS", "Comparison", "FlippedCase", "MetricComparison", "decide", "overall_decision"]

DECISIONS = ("improved", "no_change", "regressed")
_LABEL = {"improved": "improved", "no_change": "no significant change", "regressed": "REGRESSED"}
TEST_NAMES = {
    "mcnemar_exact": "McNemar exact",
    "wilcoxon": "Wilcoxon signed-rank",
    "sign_test": "sign test",
    "paired_ar": "approx. randomization",
    "sequential": "sequential (always valid)",
}


def _number(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


def decide(direction: float, p_holm: float, alpha: float, higher_is_better: bool = True) -> str:
    """One metric's decision from its test's direction (candidate - baseline) and corrected p."""
    if not math.isnan(p_holm) and p_holm <= alpha and direction != 0:
        better = direction > 0 if higher_is_better else direction < 0
        return "improved" if better else "regressed"
    return "no_change"


def overall_decision(decisions: list[str]) -> str:
    if "regressed" in decisions:
        return "regressed"
    if "improved" in decisions:
        return "improved"
    return "no_change"


@dataclass
class MetricComparison:
    """One metric of the comparison (see the module docstring).

    ``kind``: ``pass/fail`` (McNemar), ``score`` (Wilcoxon) or ``judge`` (the pairwise
    judge: each system's value is its win rate over the scored pairs, the difference the
    mean paired outcome).  ``wins``/``losses``/``ties``: cases where the candidate is
    better / worse / equal; ``win_rate`` the Wilson interval of ``wins / cases``.
    """

    metric: str
    kind: str
    column: str
    baseline: float
    candidate: float
    difference: Interval
    test: str
    statistic: float
    p_value: float
    method: str
    direction: float
    higher_is_better: bool
    cases: int
    wins: int
    losses: int
    ties: int
    win_rate: Interval
    unscored: int = 0
    p_holm: float = math.nan
    decision: str = "no_change"
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        diff = self.difference
        return {
            "metric": self.metric,
            "kind": self.kind,
            "column": self.column,
            "baseline": _number(self.baseline),
            "candidate": _number(self.candidate),
            "difference": {
                "value": _number(diff.mid),
                "low": _number(diff.low),
                "high": _number(diff.high),
                "confidence": diff.confidence,
                "method": diff.method,
            },
            "test": self.test,
            "method": self.method,
            "statistic": _number(self.statistic),
            "p_value": _number(self.p_value),
            "p_holm": _number(self.p_holm),
            "decision": self.decision,
            "higher_is_better": self.higher_is_better,
            "cases": self.cases,
            "unscored": self.unscored,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
            "win_rate": {
                "rate": _number(self.win_rate.mid),
                "low": _number(self.win_rate.low),
                "high": _number(self.win_rate.high),
                "method": "wilson",
            },
            **({"details": self.details} if self.details else {}),
        }


@dataclass
class FlippedCase:
    """A case that changed between the systems: the metrics it regressed and improved on
    (pass/fail metrics and the judge's consistent verdicts), and its texts."""

    id: str
    regressed: list[str]
    improved: list[str]
    baseline: str
    candidate: str
    prompt: str | None = None
    reference: Any = None
    judge: str | None = None
    index: int = 0

    @property
    def direction(self) -> str:
        return "regressed" if self.regressed else "improved"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "direction": self.direction,
            "regressed": self.regressed,
            "improved": self.improved,
            "prompt": self.prompt,
            "reference": self.reference,
            "baseline": self.baseline,
            "candidate": self.candidate,
        }
        if self.judge is not None:
            out["judge"] = self.judge
        return out


@dataclass
class Comparison:
    """Baseline against candidate on the same cases (see :func:`respeval.compare`).

    ``metrics`` in the order asked, the judge last; ``decision`` overall; ``flipped`` the
    cases that changed, regressions first; ``judge`` what the pairwise judge did (None
    without one); ``missing`` the cases each system produced no response for.
    """

    baseline: str
    candidate: str
    cases: int
    alpha: float
    confidence: float
    metrics: list[MetricComparison]
    decision: str
    flipped: list[FlippedCase]
    paired_on: tuple[str, ...] = ("id",)
    sources: list[str] = field(default_factory=list)
    missing: dict[str, list[str]] = field(default_factory=dict)
    judge: dict[str, Any] | None = None
    seed: int | None = None
    bootstrap: int = 0
    stop_reason: str | None = None
    stop_kind: str | None = None

    def metric(self, name: str) -> MetricComparison:
        for m in self.metrics:
            if m.metric == name:
                return m
        raise KeyError(f"no metric {name!r} in this comparison ({', '.join(m.metric for m in self.metrics)})")

    @property
    def regressed(self) -> bool:
        return self.decision == "regressed"

    def to_json(self) -> dict[str, Any]:
        return {
            "comparison": "respeval.compare/1",
            "baseline": self.baseline,
            "candidate": self.candidate,
            "cases": self.cases,
            "paired_on": list(self.paired_on),
            "sources": self.sources,
            "alpha": self.alpha,
            "confidence": self.confidence,
            "correction": "holm",
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "metrics": [m.to_json() for m in self.metrics],
            "decision": self.decision,
            "decisions": {m.metric: m.decision for m in self.metrics},
            "missing_responses": {k: len(v) for k, v in self.missing.items()},
            "flipped": [f.to_json() for f in self.flipped],
            "flipped_counts": {
                "regressed": sum(1 for f in self.flipped if f.regressed),
                "improved": sum(1 for f in self.flipped if not f.regressed),
            },
            "judge": self.judge,
            "stop_reason": self.stop_reason,
        }

    def format(self, *, flipped: int = 10) -> str:
        """A plain-text report: the metrics table, the decision, the judge, the flipped cases."""
        pct = int(round(self.confidence * 100))
        lines = [
            f"{self.candidate} vs {self.baseline}: {self.cases} paired cases (paired on {', '.join(self.paired_on)})",
        ]
        for system, ids in self.missing.items():
            lines.append(
                f"  {system}: no response for {len(ids)} case(s), scored as empty (first: {', '.join(ids[:3])})"
            )
        head = (
            f"{'metric':<14} {'baseline':>9} {'candidate':>9}  {'difference [' + str(pct) + '% CI]':<28} "
            f"{'test':<26} {'p':>8} {'p (Holm)':>8}  decision"
        )
        lines += ["", head]
        for m in self.metrics:
            d = m.difference
            ci = f"{d.mid:+.4f} [{d.low:+.4f}, {d.high:+.4f}]" if not math.isnan(d.low) else f"{d.mid:+.4f}"
            lines.append(
                f"{m.metric:<14} {m.baseline:>9.4f} {m.candidate:>9.4f}  {ci:<28} "
                f"{TEST_NAMES.get(m.test, m.test):<26} {_p(m.p_value):>8} {_p(m.p_holm):>8}  {_LABEL[m.decision]}"
            )
        changed = [f"{m.metric} {m.decision}" for m in self.metrics if m.decision != "no_change"]
        lines += [
            "",
            f"decision: {_LABEL[self.decision]}"
            + (f" ({'; '.join(changed)})" if changed else "")
            + f"  [alpha {self.alpha:g}, Holm over {len(self.metrics)} metric(s)]",
        ]
        if self.judge:
            lines.append(_format_judge(self.judge))
        if self.stop_reason:
            lines.append(f"STOPPED: {self.stop_reason}")
        if self.flipped:
            reg = sum(1 for f in self.flipped if f.regressed)
            lines += ["", f"flipped cases: {reg} regressed, {len(self.flipped) - reg} improved (regressions first)"]
            for f in self.flipped[:flipped]:
                what = []
                if f.regressed:
                    what.append("worse on " + ", ".join(f.regressed))
                if f.improved:
                    what.append("better on " + ", ".join(f.improved))
                lines.append(f"  {f.id}: {'; '.join(what)}")
            if len(self.flipped) > flipped:
                lines.append(f"  ... {len(self.flipped) - flipped} more (--json lists them all)")
        return "\n".join(lines)


def _p(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.2e}" if value < 1e-4 else f"{value:.4f}"


def _format_judge(judge: dict[str, Any]) -> str:
    spend = judge.get("spend") or {}
    parts = [f"judge: {judge.get('model')}, {spend.get('calls', 0)} calls"]
    consistency = judge.get("consistency")
    if consistency and consistency.get("rate") is not None:
        parts.append(f"position consistency {consistency['rate']:.3f}")
    counts = judge.get("outcomes") or {}
    if counts:
        parts.append(
            f"outcomes: candidate {counts.get('B', 0)}, baseline {counts.get('A', 0)}, tie {counts.get('tie', 0)}, "
            f"inconsistent {counts.get('inconsistent', 0)} (counted as ties)"
        )
    if judge.get("unscored"):
        parts.append(f"unscored {judge['unscored']}")
    text = "; ".join(parts)
    seq = judge.get("sequential")
    if seq:
        text += (
            f"\nsequential: {seq['decision_rule']}; judged {seq['cases_judged']} of {seq['cases_total']} cases "
            f"({seq['calls']} calls; a full run: about {seq['calls_full_estimate']}, saved about "
            f"{seq['calls_saved_estimate']})" + ("" if seq.get("settled") else "; not settled: the cases ran out")
        )
        if seq.get("cost_saved_usd_estimate"):
            text += f"; cost saved about ${seq['cost_saved_usd_estimate']:.4f}"
    return text
