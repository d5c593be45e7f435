"""Known ROUGE values: the rouge_testdata numbers, rouge-score's edge cases, the API."""

from __future__ import annotations

import math

import numpy as np
import pytest

from _helpers.paths import shared_data
from respeval.metrics.rouge import rouge, validate_types

TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def _lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


@pytest.mark.parametrize(
    "line, stem, expected",
    [
        (
            0,
            False,
            {
                "rouge1": (0.68750, 0.40741, 0.51163),
                "rouge2": (0.53333, 0.30769, 0.39024),
                "rougeL": (0.68750, 0.40741, 0.51163),
            },
        ),
        (1, False, {"rouge1": (0.65385, 0.40476, 0.50000), "rouge2": (0.48000, 0.29268, 0.36364)}),
        (1, True, {"rouge1": (0.69231, 0.42857, 0.52941)}),
    ],
)
def test_rouge_testdata_values(impl, line, stem, expected):
    folder = shared_data("rouge_testdata")
    target = _lines(folder / "target.txt")[line]
    prediction = _lines(folder / "prediction.txt")[line]
    res = rouge([prediction], [target], tuple(expected), stemmer=stem, implementation=impl)
    for t, (p, r, f) in expected.items():
        got = res.score(t, 0)
        assert got.precision == pytest.approx(p, abs=5e-6)
        assert got.recall == pytest.approx(r, abs=5e-6)
        assert got.fmeasure == pytest.approx(f, abs=5e-6)


def test_rouge_testdata_lsum_multi_sentence(impl):
    folder = shared_data("rouge_testdata")
    target = (folder / "target_multi.0.txt").read_text(encoding="utf-8")
    prediction = (folder / "prediction_multi.0.txt").read_text(encoding="utf-8")
    got = rouge([prediction], [target], ["rougeLsum"], stemmer=True, implementation=impl).score("rougeLsum", 0)
    assert got == pytest.approx((0.66667, 0.36538, 0.47205), abs=5e-6)


# (target, prediction) -> {type: (P, R, F)} from ../shared/semantics.md
EDGE_CASES = [
    ("", "", {t: (0, 0, 0) for t in TYPES}),
    ("a", "", {t: (0, 0, 0) for t in TYPES}),
    ("", "a", {t: (0, 0, 0) for t in TYPES}),
    ("a", "a", {"rouge1": (1, 1, 1), "rouge2": (0, 0, 0), "rougeL": (1, 1, 1), "rougeLsum": (1, 1, 1)}),
    ("A", "a", {"rouge1": (1, 1, 1), "rouge2": (0, 0, 0), "rougeL": (1, 1, 1), "rougeLsum": (1, 1, 1)}),
    (
        "the the the",
        "the",
        {"rouge1": (1, 1 / 3, 0.5), "rouge2": (0, 0, 0), "rougeL": (1, 1 / 3, 0.5), "rougeLsum": (1, 1 / 3, 0.5)},
    ),
    (
        "a a a b",
        "a b b b",
        {
            "rouge1": (0.5, 0.5, 0.5),
            "rouge2": (1 / 3, 1 / 3, 1 / 3),
            "rougeL": (0.5, 0.5, 0.5),
            "rougeLsum": (0.5, 0.5, 0.5),
        },
    ),
    ("北京", "北京", {t: (0, 0, 0) for t in TYPES}),
    ("Привет мир", "Привет мир", {t: (0, 0, 0) for t in TYPES}),
    ("!!!", "???", {t: (0, 0, 0) for t in TYPES}),
    ("w1 w2 w3 w4 w5", "w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5", {"rougeLsum": (0.4, 0.8, 0.4 * 0.8 * 2 / 1.2)}),
]


@pytest.mark.parametrize("target, prediction, expected", EDGE_CASES)
def test_edge_cases(impl, target, prediction, expected):
    res = rouge([prediction], [target], tuple(expected), implementation=impl)
    for t, want in expected.items():
        got = res.score(t, 0)
        assert got == pytest.approx(want, abs=1e-15), t


@pytest.mark.parametrize("target, prediction, expected", EDGE_CASES)
def test_edge_cases_equal_rouge_score(target, prediction, expected):
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    from respeval.compat import rouge_scorer as ours

    theirs = rouge_scorer.RougeScorer(list(TYPES)).score(target, prediction)
    mine = ours.RougeScorer(list(TYPES)).score(target, prediction)
    for t in TYPES:
        assert tuple(mine[t]) == tuple(theirs[t])
        assert [type(v) for v in mine[t]] == [type(v) for v in theirs[t]], t


def test_multiple_references_pick_highest_f_first_on_ties(impl):
    res = rouge(["a b c", "x"], [["z", "a b", "a b c", "a b c"], ["y", "q"]], ["rouge1", "rougeL"], implementation=impl)
    assert res["rouge1_f"][0] == 1.0 and res["rouge1_ref"][0] == 2
    assert res["rouge1_f"][1] == 0.0 and res["rouge1_ref"][1] == 0  # all zero: the first wins


def test_reference_text_shared_by_rows_scores_like_separate_texts(impl):
    preds = ["the cat sat", "a cat sat down", "cats sit"]
    shared = rouge(preds, ["the cat sat down"] * 3, TYPES, implementation=impl)
    for i, p in enumerate(preds):
        alone = rouge([p], ["the cat sat down"], TYPES, implementation=impl)
        for col in shared.keys():
            assert shared[col][i] == alone[col][0]


def test_mean_and_bootstrap_are_seeded(impl):
    preds = [f"word{i % 7} other{i % 3} thing" for i in range(200)]
    refs = [f"word{i % 5} other{i % 2} thing" for i in range(200)]
    res = rouge(preds, refs, ["rouge1"], implementation=impl)
    mean = res.mean()["rouge1"]
    assert mean.fmeasure == pytest.approx(float(np.mean(res["rouge1_f"])))
    a = res.bootstrap(n=200, seed=7)["rouge1"]
    b = res.bootstrap(n=200, seed=7)["rouge1"]
    c = res.bootstrap(n=200, seed=8)["rouge1"]
    assert a == b
    assert a != c
    assert a.low.fmeasure <= a.mid.fmeasure <= a.high.fmeasure
    assert a.low.fmeasure < mean.fmeasure < a.high.fmeasure


def test_validate_types_like_rouge_score():
    assert validate_types(["rouge1", "rouge9", "rougeL", "rougeLsum"]) == ("rouge1", "rouge9", "rougeL", "rougeLsum")
    with pytest.raises(ValueError, match="rougen requires positive n"):
        validate_types(["rouge0"])
    for bad in ("rouge10", "rougen", "bleu"):
        with pytest.raises(ValueError, match="Invalid rouge type"):
            validate_types([bad])


@pytest.mark.parametrize(
    "preds, refs, error, message",
    [
        (["a", None], ["a", "b"], TypeError, r"predictions\[1\] is None"),
        (["a", 3], ["a", "b"], TypeError, r"predictions\[1\] is int"),
        (["a", "b"], ["a", None], TypeError, r"references\[1\] is None"),
        (["a", "b"], ["a", ["x", 5]], TypeError, r"references\[1\]\[1\] is int"),
        (["a", "b"], ["a", []], ValueError, r"references\[1\] is an empty list"),
        (["a", "b"], ["a"], ValueError, "predictions has 2 rows but references has 1"),
        ("abc", ["a"], TypeError, "not a single str"),
    ],
)
def test_bad_input_names_the_row(impl, preds, refs, error, message):
    with pytest.raises(error, match=message):
        rouge(preds, refs, implementation=impl)


def test_accepts_numpy_arrow_and_empty(impl):
    pa = pytest.importorskip("pyarrow")
    preds = np.array(["a b c", "d e"], dtype=object)
    refs = pa.array(["a b", "d e f"])
    res = rouge(preds, refs, ["rouge1"], implementation=impl)
    assert res["rouge1_r"].tolist() == [1.0, 2 / 3]
    empty = rouge([], [], ["rouge1"], implementation=impl)
    assert len(empty) == 0 and empty.mean()["rouge1"].fmeasure == 0.0
    assert math.isclose(res.to_arrow().column("rouge1_p")[1].as_py(), 1.0)


@pytest.mark.parametrize("types", [["rougeL"], ["rougeLsum"], ["rouge1", "rougeL", "rougeLsum"]])
def test_no_rows_with_a_token_batch_tokenizer(impl, types):
    """Tokenizers other than rouge-score's go through token batches; with no rows there
    (a chunk whose rows were all bad) the LCS columns have width 1 and length 0, which
    reshape(0, -1) could not infer (`score --tokenizer rouge-unicode --out` stopped)."""
    empty = rouge([], [], types, tokenizer="rouge-unicode", implementation=impl)
    assert len(empty) == 0 and all(empty.mean()[t].fmeasure == 0.0 for t in types)
