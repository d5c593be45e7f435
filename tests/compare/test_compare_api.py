"""``respeval.compare``: values, differences and intervals, the test per metric kind, Holm,
decisions and their orientation, the flipped cases, the JSON the CLI prints."""

from __future__ import annotations

import asyncio
import math
import random

import numpy as np
import pytest

import respeval
from respeval.stats import holm, mcnemar_exact, wilcoxon_signed_rank


def table(n: int, worse: float, seed: int = 0, flip: float = 0.0) -> list[dict]:
    """A run table: the baseline right on 80% of cases; the candidate wrong on ``worse`` of
    the cases the baseline got right, and on ``flip`` of the others noise either way."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        ref = f"the capital of country {i} is city {i}"
        base_ok = rng.random() < 0.8
        cand_ok = base_ok and rng.random() >= worse
        if rng.random() < flip:
            cand_ok = not cand_ok
        base = ref if base_ok else f"it is town {i + 1}"
        cand = ref if cand_ok else f"it is town {i + 2}"
        rows.append({"id": i, "system": "baseline", "response": base, "reference": ref, "prompt": f"Capital {i}?"})
        rows.append({"id": i, "system": "candidate", "response": cand, "reference": ref, "prompt": f"Capital {i}?"})
    return rows


def responses(rows, system):
    return [r["response"] for r in rows if r["system"] == system]


def test_values_differences_and_tests_are_the_statistics_modules():
    rows = table(300, worse=0.1)
    result = respeval.compare(rows, metrics=["exact_match", "rouge1"], bootstrap=500)
    em, r1 = result.metric("exact_match"), result.metric("rouge1")
    refs = [r["reference"] for r in rows if r["system"] == "baseline"]
    base, cand = responses(rows, "baseline"), responses(rows, "candidate")
    base_em = np.array([b == ref for b, ref in zip(base, refs)], dtype=float)
    cand_em = np.array([c == ref for c, ref in zip(cand, refs)], dtype=float)
    assert em.baseline == base_em.mean() and em.candidate == cand_em.mean()
    assert em.difference.mid == pytest.approx(cand_em.mean() - base_em.mean(), abs=1e-15)
    assert em.kind == "pass/fail" and em.test == "mcnemar_exact"
    assert em.p_value == mcnemar_exact(base_em == 1, cand_em == 1).p_value
    assert em.difference.low < em.difference.mid < em.difference.high < 0
    f_base = respeval.rouge(base, refs, ("rouge1",))["rouge1_f"]
    f_cand = respeval.rouge(cand, refs, ("rouge1",))["rouge1_f"]
    assert r1.kind == "score" and r1.test == "wilcoxon"
    assert r1.p_value == wilcoxon_signed_rank(f_cand - f_base).p_value
    assert r1.baseline == pytest.approx(f_base.mean(), abs=1e-15)
    assert [em.p_holm, r1.p_holm] == holm([em.p_value, r1.p_value])
    assert em.decision == r1.decision == result.decision == "regressed"
    assert em.wins == 0 and em.losses == int(((base_em == 1) & (cand_em == 0)).sum())


def test_json_has_what_the_issue_asks_per_metric_and_overall():
    data = respeval.compare(table(100, worse=0.0), metrics=["exact_match", "rouge1"]).to_json()
    for m in data["metrics"]:
        assert {"metric", "baseline", "candidate", "difference", "test", "statistic", "p_value", "decision"} <= set(m)
        assert set(m["difference"]) >= {"value", "low", "high", "confidence"}
        assert m["decision"] in ("improved", "no_change", "regressed")
    assert data["decision"] == "no_change" and data["decisions"] == {"exact_match": "no_change", "rouge1": "no_change"}


def test_identical_systems_are_no_change_with_a_zero_interval():
    rows = table(50, worse=0.0)
    result = respeval.compare(rows, metrics=["exact_match", "rouge1", "bleu"])
    assert result.decision == "no_change" and not result.flipped
    for m in result.metrics:
        assert m.p_value == 1.0 and m.difference.mid == 0 and m.difference.low == m.difference.high == 0


def test_an_improvement_is_improved():
    rows = table(300, worse=0.0)
    for r in rows:  # the candidate answers the wrong cases right
        if r["system"] == "candidate":
            r["response"] = r["reference"]
    better = respeval.compare(rows, metrics=["exact_match"])
    assert better.decision == "improved" and better.flipped[0].improved == ["exact_match"]


def test_overall_a_regression_anywhere_wins():
    from respeval.compare.result import overall_decision

    assert overall_decision(["improved", "regressed"]) == "regressed"
    assert overall_decision(["improved", "no_change"]) == "improved"
    assert overall_decision(["no_change"]) == "no_change"


def test_lower_is_better_for_ter_and_corpus_metrics_use_approximate_randomization():
    rows = table(200, worse=0.2)
    result = respeval.compare(rows, metrics=["ter", "bleu"])
    ter, bleu = result.metric("ter"), result.metric("bleu")
    assert ter.test == bleu.test == "paired_ar" and ter.kind == "corpus"
    assert ter.difference.mid > 0 and ter.higher_is_better is False and ter.decision == "regressed"
    assert bleu.difference.mid < 0 and bleu.decision == "regressed"
    refs = [r["reference"] for r in rows if r["system"] == "baseline"]
    assert bleu.baseline == pytest.approx(respeval.bleu(responses(rows, "baseline"), refs).score, abs=1e-9)


def test_flipped_cases_list_regressions_first_with_their_texts():
    rows = table(200, worse=0.1, flip=0.05, seed=3)
    result = respeval.compare(rows, metrics=["exact_match"])
    kinds = [f.direction for f in result.flipped]
    assert "improved" in kinds and "regressed" in kinds
    assert kinds == sorted(kinds, key=lambda k: k != "regressed")
    first = result.flipped[0]
    assert first.reference == first.baseline != first.candidate and first.prompt.startswith("Capital")
    counts = result.to_json()["flipped_counts"]
    em = result.metric("exact_match")
    assert counts == {"regressed": em.losses, "improved": em.wins}


def test_intervals_are_seeded_and_do_not_depend_on_the_row_order():
    rows = table(120, worse=0.1)
    a = respeval.compare(rows, metrics=["rouge1"], seed=5).metric("rouge1").difference
    b = respeval.compare(rows[::-1], metrics=["rouge1"], seed=5).metric("rouge1").difference
    c = respeval.compare(rows, metrics=["rouge1"], seed=6).metric("rouge1").difference
    assert a == b and a != c
    ar = [respeval.compare(r, metrics=["chrf"], seed=5).metric("chrf") for r in (rows, rows[::-1])]
    assert ar[0].p_value == ar[1].p_value and ar[0].difference == ar[1].difference
    assert math.isnan(respeval.compare(rows, metrics=["rouge1"], bootstrap=0).metric("rouge1").difference.low)


def test_compare_works_inside_a_running_event_loop():
    rows = table(30, worse=0.0)

    async def inside() -> str:
        return respeval.compare(rows, metrics=["exact_match"]).decision

    assert asyncio.run(inside()) == "no_change"


def test_options_are_checked():
    rows = table(10, worse=0.0)
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        respeval.compare(rows, metrics=["nope"])
    with pytest.raises(ValueError, match="nothing to compare"):
        respeval.compare(rows, metrics=[])
    with pytest.raises(ValueError, match="give a judge"):
        respeval.compare(rows, metrics=["exact_match"], until_decided=True)
    with pytest.raises(ValueError, match="tool calls"):
        respeval.compare(rows, metrics=["trajectory_recall"])
    with pytest.raises(ValueError, match="alpha"):
        respeval.compare(rows, metrics=["exact_match"], alpha=1.5)


def test_reference_free_metrics_need_no_reference_field():
    rows = [{k: v for k, v in r.items() if k != "reference"} for r in table(20, worse=0.0)]
    result = respeval.compare(rows, metrics=["json_valid"], ref_field=None)
    assert result.metric("json_valid").baseline == 0.0 and result.decision == "no_change"
