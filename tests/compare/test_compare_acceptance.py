"""Issue 30, acceptance 3: a planted regression is regressed with the CI exit code; an identical
candidate is "no significant change" on 100 seeded repeats at the documented false-alarm
rate; the sequential mode reaches the same decisions with its error rate held and fewer
judge calls.  The numbers for more repeats and cases: benchmarks/compare_sequential.py."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

import respeval
from _helpers.compare_sim import noisy_judge, responses
from respeval.cli import main
from respeval.judge import EngineOptions, FakeModel
from respeval.stats import binomial_test

ALPHA = 0.05
OPTIONS = EngineOptions(concurrency=16)


def band(repeats: int, rate: float = ALPHA) -> float:
    """The false alarms that ``repeats`` runs at ``rate`` stay under, 2 sigma above the mean."""
    return repeats * rate + 2 * (repeats * rate * (1 - rate)) ** 0.5


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_planted_regression_is_regressed_with_the_ci_exit_code(tmp_path, capsys):
    data = write_jsonl(tmp_path / "responses.jsonl", responses(400, "regression", seed=0))
    junit = tmp_path / "compare.xml"
    args = ["compare", "--input", str(data), "--baseline", "baseline", "--candidate", "candidate"]
    args += [
        "--metrics",
        "exact_match,rouge1",
        "--ref-field",
        "expected",
        "--judge",
        "python:_helpers.compare_sim:judge",
    ]
    assert main([*args, "--json", "--fail-on", "regression", "--junit", str(junit)]) == 2
    out, err = capsys.readouterr()
    data_out = json.loads(out)
    assert data_out["decision"] == "regressed" and "FAILED: candidate regressed against baseline" in err
    assert {m["metric"]: m["decision"] for m in data_out["metrics"]} == {
        "exact_match": "regressed",
        "rouge1": "regressed",
        "judge": "regressed",
    }
    assert data_out["flipped_counts"]["regressed"] >= 32  # the 8% planted, and noise
    assert data_out["flipped"][0]["direction"] == "regressed"
    suite = ET.parse(junit).getroot()
    assert suite.get("failures") == "4" and suite.get("tests") == "4"
    assert main(args) == 0  # no --fail-on: the decision is reported, CI is not failed
    assert "decision: REGRESSED" in capsys.readouterr().out


def _false_alarm_size(trials: int) -> float:
    """P(an exact binomial test of ``trials`` fair coins has p <= alpha): its true size."""
    from respeval.stats import binomial_pmf

    return sum(binomial_pmf(k, trials) for k in range(trials + 1) if binomial_test(k, trials).p_value <= ALPHA)


def test_an_identical_candidate_is_no_change_at_the_documented_false_alarm_rate():
    """100 seeded repeats, the candidate a second draw of the baseline's system, exact_match,
    rouge1 and the noisy judge: overall false alarms at most alpha (Holm's family-wise bound)
    within 2 sigma; and the raw McNemar and sign tests fire as often as their exact size says
    (computed per repeat from its discordant pairs), within 2 sigma either way."""
    alarms = 0
    fired = {"exact_match": 0.0, "judge": 0.0}
    expected = {"exact_match": 0.0, "judge": 0.0}
    variance = {"exact_match": 0.0, "judge": 0.0}
    for repeat in range(100):
        rows = responses(200, "identical", seed=repeat)
        result = respeval.compare(
            rows,
            metrics=["exact_match", "rouge1"],
            ref_field="expected",
            judge=FakeModel(noisy_judge(repeat)),
            options=OPTIONS,
            bootstrap=0,
            seed=repeat,
        )
        alarms += result.decision != "no_change"
        for name in fired:
            m = result.metric(name)
            size = _false_alarm_size(m.wins + m.losses)
            fired[name] += m.p_value <= ALPHA
            expected[name] += size
            variance[name] += size * (1 - size)
    print(f"overall false alarms {alarms}/100; raw tests fired {fired}, expected {expected}")
    assert alarms <= band(100)
    for name in fired:
        assert abs(fired[name] - expected[name]) <= 2 * variance[name] ** 0.5, (name, fired[name], expected[name])


def _both_modes(scenario: str, repeats: int, cases: int) -> dict:
    out = {"fixed": [], "sequential": [], "calls": {"fixed": 0, "sequential": 0}}
    for repeat in range(repeats):
        rows = responses(cases, scenario, seed=repeat)
        for mode in ("fixed", "sequential"):
            model = FakeModel(noisy_judge(repeat))
            result = respeval.compare(
                rows,
                metrics=["exact_match", "rouge1"],
                ref_field="expected",
                judge=model,
                options=OPTIONS,
                until_decided=mode == "sequential",
                bootstrap=0,
                seed=repeat,
            )
            out[mode].append(result.decision)
            out["calls"][mode] += model.calls
    return out


def _check_sequential(repeats: int, cases: int) -> None:
    regression = _both_modes("regression", repeats, cases)
    assert regression["fixed"] == regression["sequential"] == ["regressed"] * repeats
    assert regression["calls"]["sequential"] < 0.8 * regression["calls"]["fixed"]
    identical = _both_modes("identical", repeats, cases)
    assert sum(d != "no_change" for d in identical["sequential"]) <= band(repeats)
    agree = sum(a == b for a, b in zip(identical["fixed"], identical["sequential"]))
    assert agree >= repeats - band(repeats)  # they differ only where one of them raised a false alarm
    assert identical["calls"]["sequential"] <= identical["calls"]["fixed"]


def test_the_sequential_mode_reaches_the_same_decisions_with_fewer_judge_calls():
    _check_sequential(repeats=10, cases=1000)


@pytest.mark.slow
def test_the_sequential_mode_on_100_repeats():
    _check_sequential(repeats=100, cases=1000)
