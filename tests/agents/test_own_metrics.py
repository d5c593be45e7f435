"""respeval's own trajectory metrics that no anchor has: steps to the first matching call,
Kendall tau of the matched calls' order, the set-based reading of precision/recall."""

from __future__ import annotations

import math

import pytest

from respeval.metrics.trajectory import trajectory

# the native run is skipped with a reason when the core is not built, never left out unsaid


def c(name, **args):
    return {"tool_name": name, "tool_input": args}


def test_steps_to_first_match(impl):
    preds = [
        [c("think"), c("search", q=1), c("book")],  # first match at step 2
        [c("book")],  # first and only call matches
        [c("think"), c("search", q=2)],  # nothing matches: undefined
        [],
    ]
    refs = [[c("search", q=1), c("book")], [c("book")], [c("search", q=1)], [c("book")]]
    res = trajectory(preds, refs, ["trajectory_steps_to_first_match"], implementation=impl)
    col = res["trajectory_steps_to_first_match"]
    assert col[:2].tolist() == [2.0, 1.0]
    assert math.isnan(col[2]) and math.isnan(col[3])
    # the corpus value is the mean over the rows where it is defined
    assert res.corpus_scores()["trajectory_steps_to_first_match"] == 1.5
    assert not res.errors


def test_kendall_tau(impl):
    a, b, d = c("a"), c("b"), c("d")
    preds = [[a, b, d], [d, b, a], [b, a, d], [a], [a, a, b]]
    refs = [[a, b, d], [a, b, d], [a, b, d], [a, b], [a, b, a]]
    res = trajectory(preds, refs, ["trajectory_kendall_tau"], implementation=impl)
    col = res["trajectory_kendall_tau"].tolist()
    assert col[0] == 1.0  # same order
    assert col[1] == -1.0  # reversed: all 3 pairs discordant
    assert col[2] == pytest.approx(1 / 3)  # one of 3 pairs swapped: (2 - 1) / 3
    assert math.isnan(col[3])  # one match: no pair to order
    # duplicates pair k-th with k-th: pred a0 a1 b, ref a0 b a1 -> (0,0) (1,2) (2,1): one discordant pair
    assert col[4] == pytest.approx(1 / 3)
    assert res.corpus_scores()["trajectory_kendall_tau"] == pytest.approx((1 - 1 + 1 / 3 + 1 / 3) / 4)


def test_set_based_precision_recall(impl):
    s = c("search", q=1)
    preds = [[s, s, c("book")], [s]]
    refs = [[s, c("pay")], [s, s]]
    multi = trajectory(preds, refs, ["trajectory_precision", "trajectory_recall"], implementation=impl)
    sets = trajectory(
        preds, refs, ["trajectory_precision", "trajectory_recall"], multiplicity=False, implementation=impl
    )
    assert multi["trajectory_precision"].tolist() == [1 / 3, 1.0]
    assert sets["trajectory_precision"].tolist() == [2 / 3, 1.0]  # both searches are "in the reference"
    assert multi["trajectory_recall"].tolist() == [0.5, 0.5]
    assert sets["trajectory_recall"].tolist() == [0.5, 1.0]  # both reference searches "were called"
    assert "multiplicity:set" in sets.signature
