"""The one Interval and the one Wilson interval (issue 29 point 7): every caller gets the same
type and the same rule for no observations."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

import respeval
from respeval.stats import Interval, wilson, wilson_interval

SRC = Path(respeval.__file__).parent


@pytest.mark.parametrize(
    "successes, n, low, high",
    [
        (8, 10, 0.4901625, 0.9433178),  # statsmodels proportion_confint(method="wilson")
        (0, 10, 0.0, 0.2775328),
        (10, 10, 0.7224672, 1.0),
        (50, 100, 0.4038315, 0.5961685),
    ],
)
def test_wilson_values(successes, n, low, high):
    assert wilson_interval(successes, n) == pytest.approx((low, high), abs=1e-6)
    interval = wilson(successes, n)
    assert (interval.low, interval.high) == wilson_interval(successes, n)
    assert interval.mid == successes / n and interval.method == "wilson" and interval.confidence == 0.95


def test_one_rule_for_no_observations():
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    assert all(math.isnan(v) for v in wilson(0, 0))
    for bad in ((1, 0), (3, 2), (-1, 4), (0, -1)):
        with pytest.raises(ValueError):
            wilson_interval(*bad)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 2, 1.0)


def test_every_caller_gets_the_same_wilson_and_interval():
    from respeval import judge
    from respeval.metrics import Interval as MetricsInterval
    from respeval.metrics.trajectory import wilson_interval as trajectory_wilson
    from respeval.validate import Interval as ValidationInterval

    assert judge.wilson_interval is wilson_interval is trajectory_wilson
    assert respeval.Interval is Interval is MetricsInterval is ValidationInterval


def test_interval_unpacks_as_low_mid_high_and_serialises():
    interval = Interval(0.1, 0.2, 0.4, 0.9, "poisson bootstrap percentile")
    low, mid, high = interval
    assert (low, mid, high) == (0.1, 0.2, 0.4) and interval[2] == 0.4 and interval.estimate == 0.2
    assert interval.to_dict() == {
        "estimate": 0.2,
        "low": 0.1,
        "high": 0.4,
        "confidence": 0.9,
        "method": "poisson bootstrap percentile",
    }
    assert Interval(math.nan, 0.5, math.nan).to_dict() == {
        "estimate": 0.5,
        "low": None,
        "high": None,
        "confidence": None,
    }


def _definitions(name: str, kind: type) -> list[str]:
    found = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, kind) and node.name == name:
                found.append(str(path.relative_to(SRC)))
    return found


def test_interval_and_wilson_are_defined_once():
    assert _definitions("Interval", ast.ClassDef) == ["stats/intervals.py"]
    assert _definitions("wilson_interval", ast.FunctionDef) == ["stats/intervals.py"]
    # the check can fail: it sees a second definition
    assert _definitions("RowDigest", ast.ClassDef) == ["report/runs.py"]
