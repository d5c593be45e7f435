"""``respeval.compare``: read the paired cases, compute the metrics and the judge, correct, decide."""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from respeval._sync import run_sync
from respeval.compare.computed import MetricRows, case_keys, compute_metric
from respeval.compare.inputs import Cases, Source, load_cases
from respeval.compare.judged import JudgeRun, SequentialPlan, arun_judge
from respeval.compare.result import Comparison, FlippedCase, MetricComparison, decide, overall_decision
from respeval.metrics import REGISTRY, MetricOptions
from respeval.stats import (
    DEFAULT_SEED,
    SEQUENTIAL_METHOD,
    Interval,
    holm,
    resolve_seed,
    sign_test,
    wilcoxon_signed_rank,
    wilson,
)
from respeval.stats.exact import exact_mean

__all__ = ["acompare", "compare"]

JUDGE_METRIC = "judge"


async def acompare(
    data: Source | None = None,
    *,
    baseline: str = "baseline",
    candidate: str = "candidate",
    baseline_file: Source | None = None,
    candidate_file: Source | None = None,
    metrics: Sequence[str] = ("exact_match",),
    ref_field: str | None = "reference",
    id_field: str = "id",
    response_field: str = "response",
    prompt_field: str | None = "prompt",
    system_field: str = "system",
    template_field: str = "template",
    judge: Any = None,
    judge_samples: int = 1,
    judge_method: Any = None,
    cache: Any = None,
    options: Any = None,
    until_decided: bool = False,
    margin: float = 0.05,
    block: int = 20,
    alpha: float = 0.05,
    confidence: float = 0.95,
    bootstrap: int = 1000,
    seed: int | None = DEFAULT_SEED,
    tokenizer: str = "rouge",
    stemmer: bool = False,
) -> Comparison:
    """The asynchronous :func:`compare` (same arguments)."""
    metrics = list(metrics)
    if not metrics and judge is None:
        raise ValueError("nothing to compare: name at least one metric or give a judge")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if judge_samples < 1:
        raise ValueError(f"judge_samples must be at least 1, got {judge_samples}")
    if until_decided and judge is None:
        raise ValueError("until_decided judges cases until the sequential test decides: give a judge")
    if block < 1:
        raise ValueError(f"block must be at least 1, got {block}")
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap}")
    for name in metrics:
        if name == JUDGE_METRIC or name not in REGISTRY:
            raise ValueError(f"unknown metric {name!r}; available: {', '.join(REGISTRY.names())}")
    needs_reference = any(REGISTRY[name].reference for name in metrics)
    if needs_reference and not ref_field:
        raise ValueError(f"metric(s) {', '.join(m for m in metrics if REGISTRY[m].reference)} need a reference field")
    seed_value = resolve_seed(seed)
    cases = load_cases(
        data,
        baseline=baseline,
        candidate=candidate,
        baseline_file=baseline_file,
        candidate_file=candidate_file,
        id_field=id_field,
        response_field=response_field,
        reference_field=ref_field if needs_reference else None,
        prompt_field=prompt_field,
        system_field=system_field,
        template_field=template_field,
    )
    keys = case_keys(cases.ids)
    options_for_metrics = MetricOptions(tokenizer=tokenizer, stemmer=stemmer)
    computed = [
        compute_metric(
            name,
            cases.baseline,
            cases.candidate,
            cases.references,
            keys,
            options=options_for_metrics,
            n_samples=bootstrap,
            seed=seed_value,
            confidence=confidence,
        )
        for name in metrics
    ]
    rows = [_from_computed(m, confidence) for m in computed]
    judged: JudgeRun | None = None
    m_tests = len(metrics) + (judge is not None)
    if judge is not None:
        model = _load_judge(judge)
        plan = None
        if until_decided:
            # half the error rate for the sequence, half for the fixed test at the end (when the
            # cases run out first), and Holm's strictest level for both, so a decision the
            # sequence reaches survives the correction whatever the other metrics show
            plan = SequentialPlan(alpha=alpha / (2 * m_tests), margin=margin, block=block, seed=seed_value)
        opened = cache
        if isinstance(cache, str) or hasattr(cache, "__fspath__"):
            from respeval.judge.cache import JudgeCache

            opened = JudgeCache(cache)
        try:
            judged = await arun_judge(
                cases, model, samples=judge_samples, method=judge_method, cache=opened, options=options, plan=plan
            )
        finally:
            if opened is not cache and opened is not None:
                opened.close()
        rows.append(_from_judge(judged, cases, keys, bootstrap=bootstrap, seed=seed_value, confidence=confidence))
    adjusted = holm([r.p_value for r in rows])
    for row, p in zip(rows, adjusted):
        row.p_holm = p
        if row.kind == "judge" and row.details.get("sequential", {}).get("settled"):
            row.decision = str(row.details["sequential"]["decision"])
        else:
            row.decision = decide(row.direction, p, alpha, row.higher_is_better)
    comparison = Comparison(
        baseline=cases.baseline_name,
        candidate=cases.candidate_name,
        cases=len(cases),
        alpha=alpha,
        confidence=confidence,
        metrics=rows,
        decision=overall_decision([r.decision for r in rows]),
        flipped=_flipped(cases, computed, judged),
        paired_on=cases.paired_on,
        sources=cases.sources,
        missing=cases.missing,
        judge=_judge_json(judged, confidence) if judged is not None else None,
        seed=seed_value,
        bootstrap=bootstrap,
        stop_reason=judged.stop_reason if judged is not None else None,
        stop_kind=judged.stop_kind if judged is not None else None,
    )
    return comparison


def compare(data: Source | None = None, **kwargs: Any) -> Comparison:
    """Compare a candidate system with a baseline on the same cases.

    Reads one table with a system column (``respeval run``'s output, ``data``, with
    ``baseline=``/``candidate=`` naming two of its systems) or two tables
    (``baseline_file=``, ``candidate_file=``), in JSONL, CSV or Parquet, or as lists of dicts,
    pairs the rows on the id, and for each metric computes each system's value, the paired
    difference with a seeded bootstrap interval, the paired test (McNemar's exact test for
    pass/fail scores, Wilcoxon signed-rank otherwise; the pairwise judge in both orders with
    the sign test) and a decision after Holm's correction across the metrics.

    Args (all keyword):
        baseline, candidate: the two systems' names (their values in the system column).
        baseline_file, candidate_file: two tables instead of ``data``.
        metrics: registry metric names (``exact_match``, ``rouge1``, ``bleu``, ...).
        ref_field: the reference column (``reference``); id_field, response_field,
            prompt_field, system_field, template_field: the other columns' names.
        judge: a judge model (``"openai:gpt-4o-mini"``, a :class:`respeval.judge.JudgeModel`)
            for the pairwise judge in both orders; ``judge_samples``: samples per order (the
            per-case vote margin is kept); ``judge_method``: a configured
            :class:`~respeval.judge.methods.pairwise.Pairwise`; ``cache``: a path or a
            :class:`~respeval.judge.JudgeCache`; ``options``: :class:`~respeval.judge.EngineOptions`.
        until_decided: judge in a seeded random order and stop as soon as the sequential
            test (:class:`respeval.stats.SequentialTest`) decides; ``margin``: the smallest
            net win rate worth detecting; ``block``: cases judged per step.
        alpha: the error rate of every decision (family-wise, Holm); confidence: the
            intervals' level; bootstrap: resamples (0: no intervals); seed: the bootstrap's
            and the case order's seed.
        tokenizer, stemmer: for the lexical metrics.

    Returns:
        A :class:`~respeval.compare.Comparison`: ``.decision``, ``.metrics``,
        ``.flipped``, ``.to_json()``, ``.format()``.

    Example::

        result = respeval.compare(
            "responses.jsonl", baseline="baseline", candidate="candidate",
            metrics=["exact_match", "rouge1"], ref_field="expected",
        )
        print(result.format())
        if result.decision == "regressed":
            raise SystemExit(2)

    Safe to call inside a running event loop (it then runs on a helper thread); in async
    code prefer ``await respeval.compare.acompare(...)``.
    """
    return run_sync(acompare(data, **kwargs), thread_name="respeval-compare")


# help() and inspect.signature show acompare's keyword arguments (compare passes them on as they are)
compare.__signature__ = inspect.signature(acompare)  # type: ignore[attr-defined]


def _load_judge(judge: Any) -> Any:
    if isinstance(judge, str):
        from respeval.judge.specs import load_model

        return load_model(judge)
    if not hasattr(judge, "generate"):
        raise TypeError(f"judge must be a model spec string or a JudgeModel, got {type(judge).__name__}")
    return judge


def _counts(differences: np.ndarray, higher_is_better: bool) -> tuple[int, int, int]:
    better = differences > 0 if higher_is_better else differences < 0
    worse = differences < 0 if higher_is_better else differences > 0
    wins, losses = int(better.sum()), int(worse.sum())
    return wins, losses, int(differences.size - wins - losses)


def _from_computed(m: MetricRows, confidence: float) -> MetricComparison:
    differences = m.candidate_rows - m.baseline_rows
    wins, losses, ties = _counts(differences, m.higher_is_better)
    test = m.test
    if test.test == "mcnemar_exact":
        direction = float(np.sign(test.details["c"] - test.details["b"]))
    elif test.test == "paired_ar":
        direction = float(test.details["direction"])
    else:
        direction = float(np.sign(test.details["r_plus"] - test.details["r_minus"]))
    details: dict[str, Any] = {**test.to_dict(), "sign_test": m.sign.to_dict()}
    for key in ("test", "statistic", "p_value", "method"):
        details.pop(key, None)
    if m.unscored_reasons:
        details["unscored_reasons"] = m.unscored_reasons
    return MetricComparison(
        metric=m.metric,
        kind="pass/fail" if m.pass_fail else ("corpus" if m.test.test == "paired_ar" else "score"),
        column=m.column,
        baseline=m.baseline_value,
        candidate=m.candidate_value,
        difference=m.difference,
        test=test.test,
        statistic=test.statistic,
        p_value=test.p_value,
        method=test.method,
        direction=direction,
        higher_is_better=m.higher_is_better,
        cases=int(m.scored.sum()),
        wins=wins,
        losses=losses,
        ties=ties,
        win_rate=wilson(wins, differences.size, confidence),
        unscored=int((~m.scored).sum()),
        details=details,
    )


def _from_judge(
    run: JudgeRun, cases: Cases, keys: np.ndarray, *, bootstrap: int, seed: int, confidence: float
) -> MetricComparison:
    from respeval.compare.computed import paired_interval

    scored = run.scored
    test_cases = scored
    test = run.sequential
    if test is not None and test.decided_at is not None:
        # the statistics of the sequential test are those of the cases up to its decision
        test_cases = scored[: test.decided_at]
    values = np.array([c.value for c in test_cases], dtype=np.float64)
    outcomes = [c.outcome for c in test_cases]
    n = len(test_cases)
    b_wins, a_wins = outcomes.count("B"), outcomes.count("A")
    wins, losses, ties = int((values > 0).sum()), int((values < 0).sum()), int((values == 0).sum())
    details: dict[str, Any] = {
        "outcomes": {k: outcomes.count(k) for k in ("A", "B", "tie", "inconsistent")},
        "samples": run.samples,
    }
    observed = exact_mean(values) if n else math.nan
    if test is not None and test.decision is not None:
        # settled: the confidence sequence decides; its always-valid p-value, doubled for the
        # two stages of the design (the sequence, then the fixed test when the cases run out)
        state = test.state()
        assert run.plan is not None
        interval = Interval(state.low, observed, state.high, 1 - run.plan.alpha, SEQUENTIAL_METHOD)
        direction = {"improved": 1.0, "regressed": -1.0}.get(state.decision or "", 0.0)
        p_value = min(1.0, 2 * state.p_value)
        test_name, statistic, method = "sequential", 1 / state.p_value, SEQUENTIAL_METHOD
        details["sequential"] = {"decision": state.decision, "settled": True, "p_sequence": state.p_value}
    else:
        significance = sign_test(values) if run.samples == 1 or n == 0 else wilcoxon_signed_rank(values)
        idx = np.array([c.index for c in test_cases], dtype=np.int64)
        interval = paired_interval(
            np.zeros((n, 1)),
            values[:, None],
            lambda sums, sizes: sums[:, 0] / sizes,
            keys[idx],
            n_samples=bootstrap,
            seed=seed,
            confidence=confidence,
            observed=observed,
        )
        direction = float(np.sign(values.sum())) if n else 0.0
        test_name, statistic, p_value, method = (
            significance.test,
            significance.statistic,
            significance.p_value,
            significance.method,
        )
        details.update({k: v for k, v in significance.to_dict().items() if k not in ("test", "statistic", "p_value")})
        if test is not None:
            # the cases ran out (or the judge stopped) before the sequence settled: the fixed test
            # on every case judged decides, its p-value doubled with the sequence's (Bonferroni
            # over the two stages), so the whole design keeps its error rate
            state = test.state()
            p_value = min(1.0, 2 * min(state.p_value, significance.p_value))
            details["sequential"] = {
                "decision": None,
                "settled": False,
                "p_sequence": state.p_value,
                "p_fixed": significance.p_value,
            }
    return MetricComparison(
        metric=JUDGE_METRIC,
        kind="judge",
        column="winner",
        baseline=a_wins / n if n else math.nan,
        candidate=b_wins / n if n else math.nan,
        difference=interval,
        test=test_name,
        statistic=statistic,
        p_value=p_value,
        method=method,
        direction=direction,
        higher_is_better=True,
        cases=n,
        wins=wins,
        losses=losses,
        ties=ties,
        win_rate=wilson(wins, n, confidence),
        unscored=len(run.cases) - len(scored),
        details=details,
    )


def _judge_json(run: JudgeRun, confidence: float) -> dict[str, Any]:
    both = [c for c in run.cases if len(c.winners) == 2 and None not in c.winners.values()]
    consistent = sum(1 for c in both if c.winners["ab"] == c.winners["ba"])
    rate = wilson(consistent, len(both), confidence)
    picks = [
        w == ("A" if o == "ab" else "B")
        for c in run.cases
        for o, w in c.winners.items()
        if w is not None and w != "tie"
    ]
    first = wilson(sum(picks), len(picks), confidence)
    outcomes = [c.outcome for c in run.cases if c.outcome is not None]
    unscored: dict[str, int] = {}
    for c in run.cases:
        if c.value is None:
            key = (c.reason or "unscored").split(":", 1)[0]
            unscored[key] = unscored.get(key, 0) + 1
    out: dict[str, Any] = {
        "model": run.model,
        "method": "pairwise",
        "orders": "both",
        "samples": run.samples,
        "cases_judged": len(run.cases),
        "outcomes": {k: outcomes.count(k) for k in ("A", "B", "tie", "inconsistent")},
        "unscored": sum(unscored.values()),
        "unscored_reasons": unscored,
        "consistency": {"rate": rate.mid, "low": rate.low, "high": rate.high, "n": len(both)} if both else None,
        "first_position_rate": {"rate": first.mid, "low": first.low, "high": first.high, "n": len(picks)}
        if picks
        else None,
        "inconsistent": [c.id for c in run.cases if c.outcome == "inconsistent"],
        "cases": [c.to_json() for c in run.cases],
        "spend": run.spend.to_json(),
        "stop_reason": run.stop_reason,
    }
    if run.sequential is not None and run.plan is not None:
        state = run.sequential.state()
        per_case = run.spend.calls / len(run.cases) if run.cases else 0.0
        cost_per_case = run.spend.cost / len(run.cases) if run.cases else 0.0
        remaining = run.total_cases - len(run.cases)
        full = int(round(per_case * run.total_cases))
        out["sequential"] = {
            "decision": state.decision,
            "settled": state.decision is not None,
            "decision_rule": (
                f"{int(round((1 - run.plan.alpha) * 1000)) / 10:g}% confidence sequence of the net win rate; "
                f"stop when it excludes 0 or lies within +-{run.plan.margin:g}; if the cases run out first, the "
                "fixed test on all of them decides"
            ),
            "method": SEQUENTIAL_METHOD,
            "alpha": run.plan.alpha,
            "margin": run.plan.margin,
            "block": run.plan.block,
            "seed": run.plan.seed,
            "decided_after": run.sequential.decided_at,
            "cases_judged": len(run.cases),
            "cases_total": run.total_cases,
            "calls": run.spend.calls,
            "calls_full_estimate": full,
            "calls_saved_estimate": max(0, full - run.spend.calls),
            "cost_usd": run.spend.cost,
            "cost_saved_usd_estimate": cost_per_case * remaining,
            "interval": {"low": state.low, "high": state.high, "confidence": 1 - run.plan.alpha},
            "p_value": state.p_value,
        }
    return out


def _flipped(cases: Cases, computed: list[MetricRows], judged: JudgeRun | None) -> list[FlippedCase]:
    regressed: dict[int, list[str]] = {}
    improved: dict[int, list[str]] = {}
    for m in computed:
        if not m.pass_fail:
            continue
        index = np.flatnonzero(m.scored)
        good_to_bad = (m.baseline_rows == 1) & (m.candidate_rows == 0)
        bad_to_good = (m.baseline_rows == 0) & (m.candidate_rows == 1)
        for i in index[good_to_bad]:
            regressed.setdefault(int(i), []).append(m.metric)
        for i in index[bad_to_good]:
            improved.setdefault(int(i), []).append(m.metric)
    verdicts: dict[int, str] = {}
    if judged is not None:
        for c in judged.cases:
            if c.outcome is not None:
                verdicts[c.index] = c.outcome
            if c.outcome == "A":
                regressed.setdefault(c.index, []).append(JUDGE_METRIC)
            elif c.outcome == "B":
                improved.setdefault(c.index, []).append(JUDGE_METRIC)
    out = []
    for i in sorted(set(regressed) | set(improved)):
        out.append(
            FlippedCase(
                id=cases.ids[i],
                regressed=regressed.get(i, []),
                improved=improved.get(i, []),
                baseline=cases.baseline[i],
                candidate=cases.candidate[i],
                prompt=cases.prompts[i],
                reference=cases.references[i] if cases.references is not None else None,
                judge=verdicts.get(i),
                index=i,
            )
        )
    out.sort(key=lambda f: (not f.regressed, -len(f.regressed), f.index))
    return out
