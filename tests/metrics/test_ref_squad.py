"""Reference SQuAD EM/F1 against the official scripts' published values, and the simple matchers."""

from __future__ import annotations

import json
import re
import string
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers.paths import SHARED_DATA
from _helpers.reference import squad as S

DATA = SHARED_DATA
SQUAD = DATA / "squad"

# The table in shared/data/README.md (official evaluate-v1.1 / v2.0 on these golds).
V1_EXPECTED = {
    "bert.json": (86.20624408703878, 92.19557978351129),
    "slqa-plus.json": (81.94891201513718, 88.38386312172172),
    "r-net-plus.json": (82.46925260170293, 88.47785965423243),
    "match-lstm-with-ans-ptr.json": (67.63481551561021, 76.75556184979696),
    "logistic-regression-baseline.json": (40.14191106906339, 50.98153647324482),
}
V2_EXPECTED = {
    "bert.json": (78.74168280973637, 81.77528052374727),
    "nlnet.json": (75.82750779078582, 78.77776770381455),
    "bidaf-self-attention-elmo.json": (65.70369746483618, 67.8764892145134),
}


def _path(*parts):
    path = SQUAD.joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"SQuAD data not found: {path}")
    return path


@pytest.fixture(scope="module")
def golds_v1():
    return S.load_gold_jsonl(_path("dev-1.1-gold.jsonl"))


@pytest.fixture(scope="module")
def golds_v2():
    return S.load_gold_jsonl(_path("dev-v2.0-gold.jsonl"))


def _predictions(version, name):
    return json.loads(_path(f"predictions-v{version}", name).read_text(encoding="utf-8"))


# --- corpus values ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(V1_EXPECTED))
def test_v1_published_values(golds_v1, name):
    result = S.evaluate_v1(golds_v1, _predictions("1.1", name))
    em, f1 = V1_EXPECTED[name]
    assert result["exact_match"] == pytest.approx(em, abs=1e-9)
    assert result["f1"] == pytest.approx(f1, abs=1e-9)


@pytest.mark.parametrize("name", list(V2_EXPECTED))
def test_v2_published_values(golds_v2, name):
    result = S.evaluate_v2(golds_v2, _predictions("2.0", name))
    em, f1 = V2_EXPECTED[name]
    assert result["exact"] == pytest.approx(em, abs=1e-9)
    assert result["f1"] == pytest.approx(f1, abs=1e-9)
    assert result["total"] == 11873
    assert result["HasAns_total"] + result["NoAns_total"] == 11873


def test_v2_bert_breakdown(golds_v2):
    result = S.evaluate_v2(golds_v2, _predictions("2.0", "bert.json"))
    assert round(result["HasAns_exact"], 3) == 74.106
    assert round(result["HasAns_f1"], 3) == 80.182
    assert round(result["NoAns_exact"], 3) == 83.364
    assert result["NoAns_f1"] == result["NoAns_exact"]  # unanswerable: F1 is 0 or 1


def test_official_nested_format_gives_the_same_golds(golds_v1, golds_v2):
    assert S.load_official_dataset(_path("dev-1.1-from-explorer.json")) == golds_v1
    assert S.load_official_dataset(_path("dev-v2.0-from-explorer.json")) == golds_v2


def test_v1_missing_predictions_count_as_zero(golds_v1):
    predictions = _predictions("1.1", "logistic-regression-baseline.json")
    assert set(golds_v1) - set(predictions)  # some ids are missing in this file
    only_first = {qid: predictions[qid] for qid in list(golds_v1)[:100] if qid in predictions}
    full = S.evaluate_v1(list(golds_v1.items())[:100], only_first)
    diluted = S.evaluate_v1(golds_v1, only_first)
    assert diluted["exact_match"] == pytest.approx(full["exact_match"] * 100 / len(golds_v1))


def test_v2_requires_every_prediction():
    with pytest.raises(ValueError, match="no prediction"):
        S.evaluate_v2({"q1": ["x"], "q2": []}, {"q1": "x"})


def test_v2_no_answer_threshold():
    golds = {"q1": ["Paris"], "q2": []}
    predictions = {"q1": "Paris", "q2": "London"}
    assert S.evaluate_v2(golds, predictions)["exact"] == 50.0
    flipped = S.evaluate_v2(golds, predictions, na_probs={"q1": 0.9, "q2": 0.9}, na_prob_thresh=0.5)
    assert flipped["exact"] == 50.0 and flipped["HasAns_exact"] == 0.0 and flipped["NoAns_exact"] == 100.0


def test_v2_drops_golds_that_normalise_to_empty():
    # "The" normalises to "" and is dropped; the remaining gold decides
    assert S.evaluate_v2({"q": ["The", "cat"]}, {"q": ""})["exact"] == 0.0
    assert S.evaluate_v2({"q": ["The"]}, {"q": ""})["exact"] == 100.0


def test_empty_gold_list_raises_like_the_script():
    with pytest.raises(ValueError):
        S.max_over_ground_truths(S.squad_exact_match, "a", [])


# --- per-answer edge cases (semantics.md) --------------------------------------------------------

EM_CASES = [
    ("", "", True),
    ("a", "a", True),
    ("the cat", "cat", True),
    ("“Paris”", "Paris", False),
    ("Paris—France", "Paris France", False),
    ("café", "cafe", False),
    ("ÉCOLE", "école", True),
    ("1,000", "1000", True),
    ("3.5", "35", True),
    ("don't", "dont", True),
    ("theater", "the ater", False),
    ("a\xa0b", "a b", True),
    ("北京 欢迎", "北京欢迎", False),
]


@pytest.mark.parametrize("prediction,gold,expected", EM_CASES)
def test_exact_match_edge_cases(prediction, gold, expected):
    assert S.squad_exact_match(prediction, gold) is expected


F1_CASES = [
    ("", "", 0, 1),
    ("a", "a", 0, 1),
    ("cat cat", "cat", 2 / 3, 2 / 3),
    ("北京 欢迎", "北京欢迎", 0, 0),
    ("the cat sat", "a cat sat down", 0.8, 0.8),
    ("x", "", 0, 0),
]


@pytest.mark.parametrize("prediction,gold,v1,v2", F1_CASES)
def test_f1_edge_cases(prediction, gold, v1, v2):
    assert S.squad_f1(prediction, gold) == pytest.approx(v1)
    assert S.squad_f1(prediction, gold, version="v2") == pytest.approx(v2)


def test_f1_returns_int_zero_like_the_script():
    assert type(S.squad_f1("", "")) is int
    assert type(S.squad_f1("", "", version="v2")) is int
    with pytest.raises(ValueError):
        S.squad_f1("a", "b", version="v3")


def test_normalize_answer_examples():
    assert S.normalize_answer("The  Cat's   HAT!") == "cats hat"
    assert S.normalize_answer("An apple, a day") == "apple day"
    assert S.normalize_answer("“Paris”") == "“paris”"  # Unicode punctuation is kept


# An independent transcription of the official script's functions, as the oracle.
def _official_normalize(s):
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def _official_f1_v1(prediction, ground_truth):
    prediction_tokens = _official_normalize(prediction).split()
    ground_truth_tokens = _official_normalize(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


_answer = st.text(alphabet=st.sampled_from(list("aAnthe ,.'-“”—ÉéX1\xa0\t")), max_size=16)


@settings(max_examples=400, deadline=None)
@given(prediction=_answer, gold=_answer)
def test_random_answers_match_the_official_functions(prediction, gold):
    assert S.normalize_answer(prediction) == _official_normalize(prediction)
    assert S.squad_f1(prediction, gold) == _official_f1_v1(prediction, gold)
    v2 = S.squad_f1(prediction, gold, version="v2")
    pred_tokens, gold_tokens = _official_normalize(prediction).split(), _official_normalize(gold).split()
    if pred_tokens and gold_tokens:
        assert v2 == _official_f1_v1(prediction, gold)
    else:
        assert v2 == int(pred_tokens == gold_tokens)
    assert S.token_f1(prediction, gold) == float(v2)


# --- simple matchers -----------------------------------------------------------------------------


def test_exact_match_is_raw_equality():
    assert S.exact_match("Paris", "Paris")
    assert not S.exact_match("Paris ", "Paris")
    assert not S.exact_match("paris", "Paris")
    assert S.exact_match("", "")


@pytest.mark.parametrize(
    "prediction,reference,expected",
    [
        ("“Paris”", "paris", True),
        ("Paris—France", "ParisFrance", True),
        ("Paris—France", "Paris France", False),
        ("  The   cat! ", "the cat", True),  # articles are kept, whitespace collapsed
        ("the cat", "cat", False),
        ("ÉCOLE", "école", True),
        ("café", "cafe", False),
        ("$5", "5", False),  # symbols (category S) are kept
        ("北京，欢迎。", "北京欢迎", True),
        ("", " ", True),
    ],
)
def test_normalized_match(prediction, reference, expected):
    assert S.normalized_match(prediction, reference) is expected


def test_token_f1_empty_handling_and_custom_normaliser():
    assert S.token_f1("", "") == 1.0
    assert S.token_f1("a", "the") == 1.0  # both normalise to no tokens
    assert S.token_f1("x", "") == 0.0
    assert S.token_f1("cat cat", "cat") == pytest.approx(2 / 3)
    assert S.token_f1("The cat", "the", normalize=S.normalize_unicode) == pytest.approx(2 / 3)
    assert isinstance(S.token_f1("x", "y"), float)
