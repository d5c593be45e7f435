"""respeval.hf: HF ``evaluate``'s metrics with respeval's numbers.

Every check compares against what HF's Hub module computes.  The Hub modules need the network
to load, so (as the issue allows) the reference is the library each Hub module calls, called the
way the module calls it: rouge-score's scorer and BootstrapAggregator, sacreBLEU's corpus
scores, and the official SQuAD scripts (their readable restatement in ``_helpers/reference``).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import respeval.hf
from _helpers.paths import shared_data
from _helpers.reference import squad as official_squad

SYSTEM = "C-3MA.4959"
OTHER = "FBK.4870"


@pytest.fixture(scope="module")
def evaluate():
    return pytest.importorskip("evaluate", reason="HF evaluate is not installed: pip install 'respeval[hf]'")


@pytest.fixture(scope="module")
def loaded(evaluate):
    """Every respeval module loaded through evaluate.load(path), once."""
    return {name: evaluate.load(respeval.hf.path(name)) for name in respeval.hf.NAMES}


def _same(got: dict, want: dict) -> None:
    assert list(got) == list(want)
    for key in want:
        assert got[key] == want[key], key
        assert type(got[key]) is type(want[key]) or isinstance(got[key], float), key


# ------------------------------------------------------------------ module loading


def test_path_names_each_module_and_rejects_unknown_names():
    for name in respeval.hf.NAMES:
        assert respeval.hf.path(name).endswith(name)
    with pytest.raises(ValueError, match="sacrebleu"):
        respeval.hf.path("bleu")
    with pytest.raises(ValueError, match="available"):
        respeval.hf.path("bertscore")


def test_modules_load_offline_with_hf_class_names(loaded, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    names = {name: module.name for name, module in loaded.items()}
    assert names == {
        "rouge": "rouge",
        "sacrebleu": "sacrebleu",
        "chrf": "chr_f",
        "ter": "ter",
        "squad": "squad",
        "squad_v2": "squad_v2",
    }
    assert "computed by respeval" in loaded["rouge"].description


# ------------------------------------------------------------------ rouge


def _rouge_score_like_hf(predictions, references, rouge_types, use_aggregator, use_stemmer, seed):
    """What HF's rouge module does: rouge-score per pair, then BootstrapAggregator's mid F."""
    from rouge_score import rouge_scorer, scoring

    scorer = rouge_scorer.RougeScorer(rouge_types=rouge_types, use_stemmer=use_stemmer)
    multi = isinstance(references[0], list)
    scores = [(scorer.score_multi if multi else scorer.score)(r, p) for r, p in zip(references, predictions)]
    if not use_aggregator:
        return {key: [s[key].fmeasure for s in scores] for key in scores[0]}
    np.random.seed(seed)
    aggregator = scoring.BootstrapAggregator()
    for s in scores:
        aggregator.add_scores(s)
    return {key: value.mid.fmeasure for key, value in aggregator.aggregate().items()}


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_aggregated_matches_rouge_score_bootstrap_on_wmt17(wmt, use_stemmer):
    pytest.importorskip("rouge_score", reason="rouge-score is the reference here: pip install 'respeval[test]'")
    reference, systems = wmt
    preds, refs = systems[SYSTEM][:800], reference[:800]
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    want = _rouge_score_like_hf(preds, refs, types, True, use_stemmer, seed=7)
    np.random.seed(7)
    got = respeval.hf.rouge.compute(predictions=preds, references=refs, use_stemmer=use_stemmer)
    _same(got, want)


def test_rouge_per_row_and_multi_reference_match_rouge_score(wmt):
    pytest.importorskip("rouge_score", reason="rouge-score is the reference here: pip install 'respeval[test]'")
    reference, systems = wmt
    preds = systems[SYSTEM][:500]
    refs = [[reference[i], systems[OTHER][i]] for i in range(500)]
    types = ["rouge1", "rougeL"]
    want = _rouge_score_like_hf(preds, refs, types, False, False, seed=0)
    got = respeval.hf.rouge.compute(predictions=preds, references=refs, rouge_types=types, use_aggregator=False)
    assert got == want


def test_rouge_through_evaluate_load_equals_plain_compute(wmt, evaluate, loaded):
    reference, systems = wmt
    preds, refs = systems[SYSTEM][:300], reference[:300]
    # evaluate seeds numpy's global RNG around compute() with the module's seed
    got = evaluate.load(respeval.hf.path("rouge"), seed=3).compute(predictions=preds, references=refs)
    np.random.seed(3)
    want = respeval.hf.rouge.compute(predictions=preds, references=refs)
    assert got == want and list(got) == ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    rows = loaded["rouge"].compute(predictions=preds, references=refs, use_aggregator=False, rouge_types=["rouge2"])
    assert rows == respeval.hf.rouge.compute(preds, refs, rouge_types=["rouge2"], use_aggregator=False)
    split = loaded["rouge"].compute(
        predictions=preds[:3], references=refs[:3], tokenizer=str.split, use_aggregator=False, rouge_types=["rouge1"]
    )
    assert split == respeval.hf.rouge.compute(preds[:3], refs[:3], ["rouge1"], False, tokenizer=str.split)


# ------------------------------------------------------------------ sacreBLEU-based: BLEU, chrF, TER


def _bleu_like_hf(sacrebleu, predictions, references, **options):
    streams = [list(s) for s in zip(*references)]
    out = sacrebleu.corpus_bleu(predictions, streams, **options)
    return {
        "score": out.score,
        "counts": out.counts,
        "totals": out.totals,
        "precisions": out.precisions,
        "bp": out.bp,
        "sys_len": out.sys_len,
        "ref_len": out.ref_len,
    }


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"lowercase": True, "tokenize": "intl"},
        {"smooth_method": "floor", "smooth_value": 0.2, "use_effective_order": True},
        {"smooth_method": "add-k"},
        {"tokenize": "char"},
    ],
    ids=["defaults", "lc-intl", "floor-eff", "add-k", "char"],
)
def test_sacrebleu_matches_sacrebleu_on_wmt17(wmt, options):
    sacrebleu = pytest.importorskip("sacrebleu", reason="sacreBLEU is the reference here")
    reference, systems = wmt
    n = 3004 if not options else 800  # the defaults on the whole corpus, variants on a part (sacreBLEU is slow)
    preds, reference = systems[SYSTEM][:n], reference[:n]
    refs = [[r, o] for r, o in zip(reference, systems[OTHER])]
    want = _bleu_like_hf(sacrebleu, preds, refs, **options)
    _same(respeval.hf.sacrebleu.compute(preds, refs, **options), want)
    single = respeval.hf.sacrebleu.compute(preds, reference, **options)
    _same(single, _bleu_like_hf(sacrebleu, preds, [[r] for r in reference], **options))


def test_sacrebleu_through_evaluate_load(wmt, loaded):
    reference, systems = wmt
    preds = systems[SYSTEM]
    got = loaded["sacrebleu"].compute(predictions=preds, references=[[r] for r in reference])
    _same(got, respeval.hf.sacrebleu.compute(preds, reference))
    assert round(got["score"], 2) == 22.67  # the data README's verified value


def test_sacrebleu_errors_name_the_problem(wmt):
    with pytest.raises(ValueError, match="same number of references"):
        respeval.hf.sacrebleu.compute(["a", "b"], [["a", "x"], ["b"]])
    with pytest.raises(ValueError, match="ja-mecab"):
        respeval.hf.sacrebleu.compute(["a"], ["a"], tokenize="ja-mecab")
    with pytest.raises(ValueError, match="2 entries but references has 1"):
        respeval.hf.sacrebleu.compute(["a", "b"], ["a"])


@pytest.mark.parametrize(
    "options",
    [{}, {"word_order": 2}, {"word_order": 2, "lowercase": True, "eps_smoothing": True}, {"whitespace": True}],
    ids=["chrf", "chrf++", "lc-eps", "whitespace"],
)
def test_chrf_matches_sacrebleu_on_wmt17(wmt, loaded, options):
    sacrebleu = pytest.importorskip("sacrebleu", reason="sacreBLEU is the reference here")
    reference, systems = wmt
    n = 1500 if not options else 600
    preds = systems[SYSTEM][:n]
    refs = [[r, o] for r, o in zip(reference[:n], systems[OTHER])]
    full = {
        "char_order": 6,
        "word_order": 0,
        "beta": 2,
        "lowercase": False,
        "whitespace": False,
        "eps_smoothing": False,
    }
    full.update(options)
    metric = sacrebleu.CHRF(*full.values())
    out = metric.corpus_score(preds, [list(s) for s in zip(*refs)])
    want = {"score": out.score, "char_order": out.char_order, "word_order": out.word_order, "beta": out.beta}
    _same(respeval.hf.chrf.compute(preds, refs, **options), want)
    _same(loaded["chrf"].compute(predictions=preds, references=refs, **options), want)


@pytest.mark.parametrize(
    "options",
    [{}, {"case_sensitive": True}, {"normalized": True, "ignore_punct": True}],
    ids=["defaults", "cased", "norm-nopunct"],
)
def test_ter_matches_sacrebleu_on_wmt17(wmt, loaded, options):
    sacrebleu = pytest.importorskip("sacrebleu", reason="sacreBLEU is the reference here")
    reference, systems = wmt
    n = 250 if not options else 120  # TER is the slow pure-Python path in both
    preds = systems[SYSTEM][:n]
    refs = [[r, o] for r, o in zip(reference[:n], systems[OTHER][:n])]
    metric = sacrebleu.TER(
        normalized=options.get("normalized", False),
        no_punct=options.get("ignore_punct", False),
        case_sensitive=options.get("case_sensitive", False),
    )
    out = metric.corpus_score(preds, [list(s) for s in zip(*refs)])
    want = {"score": out.score, "num_edits": out.num_edits, "ref_length": out.ref_length}
    _same(respeval.hf.ter.compute(preds, refs, **options), want)
    _same(loaded["ter"].compute(predictions=preds, references=refs, **options), want)


# ------------------------------------------------------------------ SQuAD


def _squad_rows(version: str, system: str):
    golds = official_squad.load_gold_jsonl(
        shared_data("squad", "dev-1.1-gold.jsonl" if version == "v1" else "dev-v2.0-gold.jsonl")
    )
    folder = "predictions-v1.1" if version == "v1" else "predictions-v2.0"
    predictions = json.loads(shared_data("squad", folder, system).read_text(encoding="utf-8"))
    references = [
        {"id": qid, "answers": {"text": answers, "answer_start": [0] * len(answers)}} for qid, answers in golds.items()
    ]
    return golds, predictions, references


@pytest.mark.parametrize(
    ("system", "exact", "f1"),
    [
        ("bert.json", 86.20624408703878, 92.19557978351129),
        ("logistic-regression-baseline.json", 40.14191106906339, 50.98153647324482),
    ],
)
def test_squad_v1_matches_the_official_script(system, exact, f1):
    golds, predictions, references = _squad_rows("v1", system)
    preds = [{"id": qid, "prediction_text": text} for qid, text in predictions.items()]
    want = official_squad.evaluate_v1(golds, predictions)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = respeval.hf.squad.compute(predictions=preds, references=references)
    assert got == want == {"exact_match": exact, "f1": f1}
    unanswered = [str(w.message) for w in caught if "without a prediction" in str(w.message)]
    assert len(unanswered) == any(qid not in predictions for qid in golds)


def test_squad_v1_through_evaluate_load(loaded):
    golds, predictions, references = _squad_rows("v1", "r-net-plus.json")
    preds = [{"id": qid, "prediction_text": text} for qid, text in predictions.items()]
    got = loaded["squad"].compute(predictions=preds, references=references)
    assert got == {"exact_match": 82.46925260170293, "f1": 88.47785965423243}


def _no_answer_probabilities(qids: list[str]) -> dict[str, float]:
    """Distinct probabilities (so thresholds are unambiguous), seeded."""
    order = np.random.default_rng(20261129).permutation(len(qids))
    return {qid: float((k + 1) / (len(qids) + 2)) for qid, k in zip(qids, order)}


def _best_by_threshold(raw, has_answer, texts, no_answer):
    """The threshold search restated: at threshold t every question whose no-answer probability is
    above t abstains (right only if unanswerable); the best total over t (distinct probabilities)."""
    qids = list(raw)
    probs = np.array([np.float32(no_answer[q]) for q in qids], dtype=np.float64)
    answered = np.array([raw[q] if has_answer[q] else float(not texts[q]) for q in qids])
    abstained = np.array([float(not has_answer[q]) for q in qids])
    order = np.argsort(probs, kind="stable")
    totals = abstained.sum() + np.cumsum((answered - abstained)[order])
    best = int(np.argmax(totals))
    if totals[best] <= abstained.sum():
        return 100.0 * abstained.sum() / len(qids), 0.0
    return 100.0 * totals[best] / len(qids), float(probs[order[best]])


@pytest.mark.parametrize("threshold", [1.0, 0.5])
def test_squad_v2_matches_the_official_script(threshold):
    golds, predictions, references = _squad_rows("v2", "bert.json")
    no_answer = _no_answer_probabilities(list(predictions))
    preds = [
        {"id": qid, "prediction_text": text, "no_answer_probability": no_answer[qid]}
        for qid, text in predictions.items()
    ]
    got = respeval.hf.squad_v2.compute(predictions=preds, references=references, no_answer_threshold=threshold)
    rounded = {q: float(np.float32(p)) for q, p in no_answer.items()}
    want = official_squad.evaluate_v2(golds, predictions, na_probs=rounded, na_prob_thresh=threshold)
    assert list(got) == [*want, "best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh"]
    assert {k: got[k] for k in want} == want
    if threshold == 1.0:
        assert (got["exact"], got["f1"]) == (78.74168280973637, 81.77528052374727)
    has_answer = {qid: bool(answers) for qid, answers in golds.items()}
    raw = {
        name: dict(
            zip(
                golds,
                respeval.squad([predictions[q] for q in golds], list(golds.values()), version="v2")[column].tolist(),
            )
        )
        for name, column in (("exact", "squad_em"), ("f1", "squad_f1"))
    }
    for name in ("exact", "f1"):
        best, thresh = _best_by_threshold(raw[name], has_answer, predictions, no_answer)
        assert got[f"best_{name}_thresh"] == thresh
        assert got[f"best_{name}"] == pytest.approx(best, rel=1e-12, abs=1e-12)


def test_squad_v2_through_evaluate_load_equals_plain_compute(loaded):
    golds, predictions, references = _squad_rows("v2", "nlnet.json")
    no_answer = _no_answer_probabilities(list(predictions))
    preds = [
        {"id": qid, "prediction_text": text, "no_answer_probability": no_answer[qid]}
        for qid, text in predictions.items()
    ]
    got = loaded["squad_v2"].compute(predictions=preds, references=references, no_answer_threshold=0.7)
    assert got == respeval.hf.squad_v2.compute(preds, references, no_answer_threshold=0.7)
    assert got["total"] == len(golds) and got["HasAns_total"] + got["NoAns_total"] == len(golds)


def test_squad_v2_names_a_missing_prediction():
    refs = [{"id": "q1", "answers": {"text": ["x"]}}, {"id": "q2", "answers": {"text": []}}]
    with pytest.raises(ValueError, match="'q2'"):
        respeval.hf.squad_v2.compute([{"id": "q1", "prediction_text": "x", "no_answer_probability": 0.0}], refs)


def test_squad_v2_small_case_by_hand():
    refs = [
        {"id": "a", "answers": {"text": ["Paris"], "answer_start": [0]}},
        {"id": "b", "answers": {"text": [], "answer_start": []}},
        {"id": "c", "answers": [{"text": "the red car"}]},
    ]
    preds = [
        {"id": "a", "prediction_text": "paris", "no_answer_probability": 0.1},
        {"id": "b", "prediction_text": "something", "no_answer_probability": 0.9},
        {"id": "c", "prediction_text": "red bus", "no_answer_probability": 0.3},
    ]
    got = respeval.hf.squad_v2.compute(preds, refs)
    # a: exact; b: answered an unanswerable question; c: F1 of {red, bus} vs {red, car} = 0.5
    assert got["exact"] == pytest.approx(100 / 3) and got["f1"] == pytest.approx(100 * 1.5 / 3)
    assert (got["HasAns_total"], got["NoAns_total"], got["NoAns_exact"]) == (2, 1, 0.0)
    # abstaining on b (probability 0.9) is right: best keeps a and c answered
    assert got["best_f1"] == pytest.approx(100 * 2.5 / 3) and got["best_f1_thresh"] == pytest.approx(0.3, abs=1e-7)
    thresholded = respeval.hf.squad_v2.compute(preds, refs, no_answer_threshold=0.5)
    assert thresholded["NoAns_exact"] == 100.0
