"""One registry of metric names, one result shape for every metric."""

from __future__ import annotations

import numpy as np
import pytest

import respeval
from respeval.metrics import REGISTRY, MetricOptions, MetricResult, MetricSpec, Registry, UnknownMetricError

PREDS = ["the cat sat on the mat", "a quick brown fox", "hello world", "Paris"]
REFS = ["the cat is on the mat", "the quick brown fox jumps", "hello there world", "paris"]


def test_registry_knows_every_cli_metric():
    names = REGISTRY.names()
    for name in [
        "rouge1",
        "rouge9",
        "rougeL",
        "rougeLsum",
        "bleu",
        "chrf",
        "chrf++",
        "ter",
        "em",
        "exact_match",
        "squad",
    ]:
        assert name in names
    text = REGISTRY.describe()
    assert all(n in text for n in names)


def test_build_groups_a_family_and_keeps_request_order():
    fams = REGISTRY.build_families(["bleu", "rouge1", "rougeL", "chrf"], MetricOptions(stemmer=True))
    assert [f.name for f in fams] == ["bleu", "rouge", "chrf"]
    assert fams[1].types == ("rouge1", "rougeL") and fams[1].stemmer is True


def test_build_rejects_unknown_and_repeated_names():
    with pytest.raises(UnknownMetricError, match="nosuch"):
        REGISTRY.build_families(["rouge1", "nosuch"])
    with pytest.raises(ValueError, match="named twice"):
        REGISTRY.build_families(["rouge1", "rouge1"])


def test_family_options_reach_the_family():
    (fam,) = REGISTRY.build_families(["bleu"], MetricOptions(params={"bleu": {"tokenizer": "intl"}}))
    assert fam.tokenizer == "intl"
    with pytest.raises(TypeError):
        REGISTRY.build_families(["bleu"], MetricOptions(params={"bleu": {"no_such_option": 1}}))


def test_register_a_metric_at_run_time():
    reg = Registry(["respeval.metrics.match"])

    class Length:
        name, stat_names, headline, inputs = "length", ("chars",), ("length",), "text"

        def prepare(self, references):
            return references

        def score(self, prepared, predictions):
            from respeval.metrics import ChunkScores

            v = np.array([float(len(p)) for p in predictions])
            return ChunkScores({"length": v}, v[:, None])

        def corpus(self, sums, rows):
            return {"length": np.asarray(sums)[..., 0] / np.maximum(rows, 1)}

        def signature(self):
            return "length"

    reg.register(MetricSpec("length", "length", "characters", lambda names, options: Length()))
    (fam,) = reg.build_families(["length"])
    assert fam.score(None, ["ab", "abcd"]).columns["length"].tolist() == [2.0, 4.0]
    with pytest.raises(ValueError, match="already registered"):
        reg.register(MetricSpec("length", "length", "again", lambda names, options: Length()))


@pytest.mark.parametrize(
    "call",
    [
        lambda: respeval.rouge(PREDS, REFS, ("rouge1", "rougeL")),
        lambda: respeval.bleu(PREDS, REFS),
        lambda: respeval.chrf(PREDS, REFS),
        lambda: respeval.ter(PREDS, REFS),
        lambda: respeval.exact_match(PREDS, REFS, normalize="squad"),
        lambda: respeval.squad(PREDS, [[r] for r in REFS]),
    ],
    ids=["rouge", "bleu", "chrf", "ter", "exact_match", "squad"],
)
def test_every_result_has_the_same_shape(call):
    res = call()
    assert isinstance(res, MetricResult)
    assert len(res) == len(PREDS)
    assert isinstance(res.columns, dict) and list(res.keys()) == list(res.columns)
    for name, col in res.columns.items():
        assert res[name] is col and len(col) == len(PREDS) and name in res
    with pytest.raises(KeyError, match="not a column"):
        res["no_such_column"]
    corpus = res.corpus_scores()
    assert set(corpus) and all(isinstance(v, float) for v in corpus.values())
    table = res.to_arrow()
    assert table.num_rows == len(PREDS) and table.column_names == list(res.columns)
    assert isinstance(res.signature, str) and res.signature
    boot = res.bootstrap(200, seed=3)
    again = res.bootstrap(200, seed=3)
    assert boot == again
    assert res.bootstrap(200, seed=4) != boot or all(lo == hi for lo, _, hi in boot.values())
    for lo, _mid, hi in boot.values():
        assert np.all(np.asarray(lo) <= np.asarray(hi))


def test_corpus_scores_match_the_headline_numbers():
    bleu = respeval.bleu(PREDS, REFS)
    assert bleu.corpus_scores()["bleu"] == bleu.score
    chrf = respeval.chrf(PREDS, REFS)
    assert chrf.corpus_scores()["chrf"] == chrf.score
    ter = respeval.ter(PREDS, REFS)
    assert ter.corpus_scores()["ter"] == pytest.approx(ter.score, abs=1e-12)
    squad = respeval.squad(PREDS, [[r] for r in REFS])
    assert squad.corpus_scores() == {"squad_em": squad.exact_match, "squad_f1": squad.f1}


def test_generic_bootstrap_equals_rouge_shaped_bootstrap():
    res = respeval.rouge(PREDS, REFS, ("rouge1",))
    generic = respeval.MetricResult.bootstrap(res, 300, 0.9, 11)
    shaped = res.bootstrap(300, 0.9, 11)["rouge1"]
    assert (generic["rouge1_f"].low, generic["rouge1_f"].high) == (shaped.low.fmeasure, shaped.high.fmeasure)


def test_bleu_statistics_stay_integers():
    res = respeval.bleu(PREDS, REFS)
    assert res.stats.dtype == np.int64
    assert res["bleu_correct_1"].dtype == np.int64
