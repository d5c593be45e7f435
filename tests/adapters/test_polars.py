"""respeval.polars: expressions over whole column batches give respeval's numbers exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest

import respeval
from _helpers.paths import shared_data

pl = pytest.importorskip("polars", reason="polars is not installed: pip install 'respeval[polars]'")

import respeval._adapters.polars as adapter  # noqa: E402  (after the skip: the adapter needs polars)
import respeval.polars  # noqa: E402,F401  (registers the namespace)
from _helpers.corpora import read_jsonl  # noqa: E402

NAMES = ["C-3MA.4959", "FBK.4870", "KIT.4950"]


@pytest.fixture(scope="module")
def frame(wmt):
    reference, systems = wmt
    return pl.DataFrame(
        {
            "system": [n for n in NAMES for _ in reference],
            "hyp": [h for n in NAMES for h in systems[n]],
            "ref": reference * len(NAMES),
        }
    )


def test_row_expressions_equal_respeval_columns(frame):
    got = frame.select(
        pl.col("hyp").respeval.rouge_n("ref", 2).alias("r2"),
        pl.col("hyp").respeval.rouge_l("ref", stemmer=True).alias("rl"),
        pl.col("hyp").respeval.rouge("ref", ["rouge1", "rougeLsum"]).alias("rouge"),
        pl.col("hyp").respeval.sentence_bleu("ref").alias("sb"),
        pl.col("hyp").respeval.chrf(pl.col("ref"), word_order=2).alias("cf"),
        pl.col("hyp").respeval.exact_match("ref").alias("em"),
    )
    hyps, refs = frame["hyp"].to_list(), frame["ref"].to_list()
    r = respeval.rouge(hyps, refs, ("rouge2",))
    assert np.array_equal(got["r2"].to_numpy(), r["rouge2_f"])
    assert np.array_equal(got["rl"].to_numpy(), respeval.rouge(hyps, refs, ("rougeL",), stemmer=True)["rougeL_f"])
    both = respeval.rouge(hyps, refs, ("rouge1", "rougeLsum"))
    for field in ("rouge1_p", "rouge1_r", "rouge1_f", "rougeLsum_p", "rougeLsum_r", "rougeLsum_f"):
        assert np.array_equal(got["rouge"].struct.field(field).to_numpy(), both[field]), field
    assert np.array_equal(got["sb"].to_numpy(), respeval.bleu(hyps, refs).sentence)
    sacrebleu = pytest.importorskip("sacrebleu")  # and sacreBLEU's own, bit for bit (issue 28.14)
    first = len(frame) // len(NAMES)  # the first system's rows
    want = [sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(hyps[:first], refs[:first])]
    assert got["sb"].to_list()[:first] == want
    assert np.array_equal(got["cf"].to_numpy(), respeval.chrf(hyps, refs, word_order=2).sentence)
    assert np.array_equal(got["em"].to_numpy(), respeval.exact_match(hyps, refs)["exact_match"])


def test_corpus_scores_per_group_are_sums_of_statistics(frame, wmt):
    reference, systems = wmt
    got = frame.group_by("system", maintain_order=True).agg(
        pl.col("hyp").respeval.corpus_bleu("ref").alias("bleu"),
        pl.col("hyp").respeval.corpus_chrf("ref").alias("chrf"),
        pl.col("hyp").respeval.sentence_bleu("ref").mean().alias("mean_sentence_bleu"),
    )
    assert got["system"].to_list() == NAMES
    for row in got.iter_rows(named=True):
        assert row["bleu"] == respeval.bleu(systems[row["system"]], reference).score
        assert row["chrf"] == respeval.chrf(systems[row["system"]], reference).score
        assert row["bleu"] != row["mean_sentence_bleu"]
    stats = frame.select(pl.col("hyp").respeval.bleu_stats("ref").alias("s")).unnest("s")
    assert np.array_equal(stats.to_numpy(), respeval.bleu(frame["hyp"].to_list(), frame["ref"].to_list()).stats)


def test_lazy_and_streaming_engines_give_the_same_numbers_without_a_call_per_row(frame, monkeypatch):
    calls = []
    real = adapter.rouge

    def counting(preds, *args, **kwargs):
        calls.append(len(preds))
        return real(preds, *args, **kwargs)

    monkeypatch.setattr(adapter, "rouge", counting)
    want = respeval.rouge(frame["hyp"].to_list(), frame["ref"].to_list(), ("rougeL",))["rougeL_f"]
    for engine in ("in-memory", "streaming"):
        calls.clear()
        got = frame.lazy().select(pl.col("hyp").respeval.rouge_l("ref")).collect(engine=engine)
        assert np.array_equal(got.to_series().to_numpy(), want), engine
        assert sum(calls) == frame.height and len(calls) <= max(1, frame.height // 1000), (engine, calls[:5])


def test_multiple_references_and_squad_gold_lists():
    golds = read_jsonl(shared_data("squad", "dev-1.1-gold.jsonl"))
    predictions = json.loads(shared_data("squad", "predictions-v1.1", "bert.json").read_text(encoding="utf-8"))
    df = pl.DataFrame({"answers": [g["answers"] for g in golds], "pred": [predictions[g["id"]] for g in golds]})
    got = df.select(
        pl.col("pred").respeval.squad_em("answers").alias("em"),
        pl.col("pred").respeval.squad_f1("answers").alias("f1"),
        pl.col("pred").respeval.rouge_l("answers").alias("rl"),
    )
    want = respeval.squad(df["pred"].to_list(), df["answers"].to_list())
    assert np.array_equal(got["em"].to_numpy(), want["squad_em"])
    assert np.array_equal(got["f1"].to_numpy(), want["squad_f1"])
    assert 100 * got["f1"].mean() == pytest.approx(92.19557978351129, abs=1e-9)
    multi = respeval.rouge(df["pred"].to_list(), df["answers"].to_list(), ("rougeL",))["rougeL_f"]
    assert np.array_equal(got["rl"].to_numpy(), multi)


def test_nulls_give_null_and_are_left_out_of_corpus_scores():
    df = pl.DataFrame({"hyp": ["the cat sat", None, "hello there"], "ref": ["the cat sat down", "x", None]})
    got = df.select(
        pl.col("hyp").respeval.rouge_l("ref").alias("rl"),
        pl.col("hyp").respeval.rouge("ref", ["rouge1"]).alias("r"),
        pl.col("hyp").respeval.corpus_bleu("ref").alias("bleu"),
    )
    assert got["rl"].to_list()[1:] == [None, None] and got["r"].to_list()[1:] == [None, None]
    assert got["rl"][0] == respeval.rouge(["the cat sat"], ["the cat sat down"], ("rougeL",))["rougeL_f"][0]
    assert got["bleu"].to_list() == [respeval.bleu(["the cat sat"], ["the cat sat down"]).score] * 3
    empty = pl.DataFrame({"hyp": [None], "ref": ["x"]}, schema={"hyp": pl.String, "ref": pl.String})
    assert empty.select(pl.col("hyp").respeval.corpus_bleu("ref")).item() is None


def test_bad_rouge_type_is_rejected_when_the_expression_is_built():
    with pytest.raises(ValueError, match="Invalid rouge type|rougen requires positive n"):
        pl.col("hyp").respeval.rouge_n("ref", 0)
