"""respeval.duckdb: SQL functions over Arrow batches give respeval's numbers exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest

import respeval
from _helpers.paths import shared_data

duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed: pip install 'respeval[duckdb]'")
pa = pytest.importorskip("pyarrow")

import respeval.duckdb  # noqa: E402  (after the skip: the adapter needs duckdb)
from _helpers.corpora import read_jsonl  # noqa: E402


@pytest.fixture(scope="module")
def con_wmt(wmt):
    """Five WMT17 systems (5 x 3,004 rows: many DuckDB vectors) in one table."""
    reference, all_systems = wmt
    names = sorted(all_systems)[:5]
    systems = {n: all_systems[n] for n in names}
    table = pa.table(
        {
            "system": [n for n in names for _ in reference],
            "row": [i for _ in names for i in range(len(reference))],
            "hyp": [h for n in names for h in systems[n]],
            "ref": reference * len(names),
        }
    )
    con = respeval.duckdb.register(duckdb.connect())
    con.register("wmt_arrow", table)
    con.execute("CREATE TABLE wmt AS SELECT * FROM wmt_arrow")
    return con, reference, systems


def test_corpus_bleu_and_chrf_from_sql_equal_respeval_for_every_system(con_wmt):
    con, reference, systems = con_wmt
    rows = con.sql(
        "SELECT system, corpus_bleu(bleu_stats(hyp, ref)), corpus_chrf(chrf_stats(hyp, ref)), "
        "avg(sentence_bleu(hyp, ref)) FROM wmt GROUP BY system ORDER BY system"
    ).fetchall()
    assert [r[0] for r in rows] == sorted(systems)
    for system, corpus_bleu, corpus_chrf, mean_sentence_bleu in rows:
        assert corpus_bleu == respeval.bleu(systems[system], reference).score
        assert corpus_chrf == respeval.chrf(systems[system], reference).score
        assert corpus_bleu != mean_sentence_bleu  # sums of statistics, not a mean of sentence scores
    assert round(dict((r[0], r[1]) for r in rows)["C-3MA.4959"], 2) == 22.67


def test_bleu_stats_struct_holds_respeval_statistics(con_wmt):
    con, reference, systems = con_wmt
    got = con.execute(
        "SELECT unnest(bleu_stats(hyp, ref)) FROM wmt WHERE system = 'FBK.4870' ORDER BY row"
    ).fetchnumpy()
    assert list(got) == respeval.duckdb.bleu_stat_names()
    want = respeval.bleu(systems["FBK.4870"], reference).stats
    assert np.array_equal(np.column_stack([np.asarray(got[c]) for c in got]), want)


def test_sentence_functions_equal_respeval_columns(con_wmt):
    con, reference, systems = con_wmt
    got = con.sql(
        "SELECT rouge_n(hyp, ref, CAST(1 + row % 3 AS INTEGER)) AS rn, rouge_l(hyp, ref) AS rl, "
        "sentence_bleu(hyp, ref) AS sb, chrf(hyp, ref) AS cf, exact_match(hyp, ref) AS em "
        "FROM wmt WHERE system = 'KIT.4950' ORDER BY row"
    ).fetchnumpy()
    hyps = systems["KIT.4950"]
    r = respeval.rouge(hyps, reference, ("rouge1", "rouge2", "rouge3", "rougeL"))
    orders = np.arange(len(hyps)) % 3
    want_rn = np.choose(orders, [r["rouge1_f"], r["rouge2_f"], r["rouge3_f"]])
    assert np.array_equal(got["rn"], want_rn)
    assert np.array_equal(got["rl"], r["rougeL_f"])
    assert np.array_equal(got["sb"], respeval.bleu(hyps, reference).sentence)
    assert np.array_equal(got["cf"], respeval.chrf(hyps, reference).sentence)
    assert np.array_equal(got["em"], respeval.exact_match(hyps, reference)["exact_match"])
    sacrebleu = pytest.importorskip("sacrebleu")  # and sacreBLEU's own, bit for bit (issue 28.14)
    assert got["sb"].tolist() == [sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(hyps, reference)]


def test_squad_functions_equal_respeval_on_squad_dev():
    golds = read_jsonl(shared_data("squad", "dev-1.1-gold.jsonl"))
    predictions = json.loads(shared_data("squad", "predictions-v1.1", "bert.json").read_text(encoding="utf-8"))
    table = pa.table(
        {
            "id": [g["id"] for g in golds],
            "answers": [g["answers"] for g in golds],
            "prediction": [predictions[g["id"]] for g in golds],
        }
    )
    con = respeval.duckdb.register(duckdb.connect())
    con.register("squad_arrow", table)
    got = con.sql(
        "SELECT squad_em(prediction, answers) AS em, squad_f1(prediction, answers) AS f1 FROM squad_arrow"
    ).fetchnumpy()
    want = respeval.squad(table["prediction"].to_pylist(), table["answers"].to_pylist())
    assert np.array_equal(got["em"], want["squad_em"]) and np.array_equal(got["f1"], want["squad_f1"])
    # the official script's corpus F1 (the data README's value) from SQL
    assert 100 * got["f1"].mean() == pytest.approx(92.19557978351129, abs=1e-9)


def test_nulls_give_null_and_empty_groups_give_null():
    con = respeval.duckdb.register(duckdb.connect())
    rows = con.sql(
        "SELECT rouge_l(h, r), sentence_bleu(h, r) FROM (VALUES ('a b', NULL), (NULL, 'a'), ('a b', 'a c')) v(h, r)"
    ).fetchall()
    assert rows[0] == (None, None) and rows[1] == (None, None)
    assert rows[2] == (
        respeval.rouge(["a b"], ["a c"], ("rougeL",))["rougeL_f"][0],
        respeval.bleu(["a b"], ["a c"]).sentence[0],
    )
    empty = con.sql("SELECT corpus_bleu(bleu_stats(h, r)) FROM (VALUES ('a', 'b')) v(h, r) WHERE h = 'z'").fetchall()
    assert empty == [(None,)]


def test_options_at_registration_and_errors_that_name_the_function():
    con = respeval.duckdb.register(duckdb.connect())
    plain = con.sql("SELECT rouge_l('cats running', 'cat runs')").fetchall()[0][0]
    respeval.duckdb.register(con, stemmer=True)
    stemmed = con.sql("SELECT rouge_l('cats running', 'cat runs')").fetchall()[0][0]
    assert (plain, stemmed) == (0.0, 1.0)
    respeval.duckdb.register(con, bleu_tokenizer="char")
    char = con.sql("SELECT corpus_bleu(bleu_stats('abcd', 'abce'))").fetchall()[0][0]
    assert char == respeval.bleu(["abcd"], ["abce"], tokenizer="char").score
    with pytest.raises(duckdb.Error, match="rouge_n: n must be 1..9, got 0"):
        con.sql("SELECT rouge_n('a', 'b', 0)").fetchall()


def test_missing_duckdb_is_a_clear_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_duckdb(name, *args, **kwargs):
        if name == "duckdb":
            raise ModuleNotFoundError("No module named 'duckdb'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_duckdb)
    monkeypatch.delitem(__import__("sys").modules, "duckdb")
    with pytest.raises(ImportError, match=r"pip install 'respeval\[duckdb\]'"):
        respeval.duckdb.register(object())
