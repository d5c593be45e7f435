"""Every expected value in ../shared/data/agents: ADK values with ==, summaries within 1e-12."""

from __future__ import annotations

import json
import math
import os

import pytest

from _helpers.paths import shared_data
from respeval import _backend
from respeval.agents.adk import _mean_in_order, response_match_scores, tool_trajectory_scores
from respeval.agents.loaders import load_eval_set, load_session, parse_invocations
from respeval.metrics.trajectory import response_match_score, trajectory
from respeval.tokenizers.adk import tokenize

IMPLS = ["python"] + (["native"] if _backend.native_available() else [])
VERTEX = [
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_any_order_match",
    "trajectory_precision",
    "trajectory_recall",
]


def _jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _check_vertex(rows, expected, tool, impl):
    preds = [r["predicted_trajectory"] for r in rows]
    refs = [r["reference_trajectory"] for r in rows]
    single = f"trajectory_single_tool_use[{tool}]"
    res = trajectory(preds, refs, [*VERTEX, "trajectory_single_tool_use"], tool_name=tool, implementation=impl)
    for i, e in enumerate(expected["rows"]):
        for k in [*VERTEX, single]:
            assert res[k][i] == e[k], (i, k)
    summary = res.vertex_summary()
    assert summary["row_count"] == expected["summary"]["row_count"]
    for k in [*VERTEX, single]:
        for stat in ("mean", "std"):
            assert summary[f"{k}/{stat}"] == pytest.approx(expected["summary"][f"{k}/{stat}"], abs=1e-12)
    # the ADK match types on the same pairs
    for key in ("EXACT", "IN_ORDER", "ANY_ORDER", "IN_ORDER,ignore_args", "ANY_ORDER,ignore_args"):
        mt, *flag = key.split(",")
        r = trajectory(
            preds, refs, ["tool_trajectory_avg_score"], match_type=mt, ignore_args=bool(flag), implementation=impl
        )
        assert r["tool_trajectory_avg_score"].tolist() == [e[f"adk:{key}"] for e in expected["rows"]]
        assert r.vertex_summary()["tool_trajectory_avg_score/mean"] == pytest.approx(
            expected["summary"][f"adk:{key}/mean"], abs=1e-12
        )
    # what the classic SDK displays: the service's float32, shortest decimal
    f32 = trajectory(
        preds, refs, ["trajectory_precision", "trajectory_recall"], vertex_float32=True, implementation=impl
    )
    for k in ("trajectory_precision", "trajectory_recall"):
        assert f32[k].tolist() == [e[f"{k}[vertex_sdk_float32]"] for e in expected["rows"]]
        assert f32.vertex_summary()[f"{k}/mean"] == pytest.approx(
            expected["summary"][f"{k}[vertex_sdk_float32]/mean"], abs=1e-12
        )
        assert f32.vertex_summary()[f"{k}/std"] == pytest.approx(
            expected["summary"][f"{k}[vertex_sdk_float32]/std"], abs=1e-12
        )


@pytest.mark.parametrize("impl", IMPLS)
def test_tau_bench_vertex_values(impl):
    rows = _jsonl(shared_data("agents", "tau_bench", "airline_trajectories.jsonl"))
    expected = json.loads(shared_data("agents", "tau_bench", "expected_airline_trajectories.json").read_text())
    _check_vertex(rows, expected, "get_reservation_details", impl)


@pytest.mark.parametrize("impl", IMPLS)
def test_vertex_byod_values(impl):
    rows = _jsonl(shared_data("agents", "vertex", "product_agent_byod.jsonl"))
    expected = json.loads(shared_data("agents", "vertex", "expected_product_agent_byod.json").read_text())
    _check_vertex(rows, expected, "get_product_price", impl)


def test_worked_examples_by_hand():
    """The README's hand-worked rows, re-derived independently of the expected files."""
    rows = {r["id"]: r for r in _jsonl(shared_data("agents", "tau_bench", "airline_trajectories.jsonl"))}

    def one(row_id, **kw):
        r = rows[row_id]
        res = trajectory([r["predicted_trajectory"]], [r["reference_trajectory"]], VERTEX, **kw)
        return {k: res[k][0] for k in VERTEX}

    assert one("tau-airline-gpt4o-t20-r2") == dict(zip(VERTEX, [0.0, 1.0, 1.0, 0.75, 1.0]))
    assert one("tau-airline-gpt4o-t19-r2") == dict(zip(VERTEX, [0.0, 0.0, 0.0, 0.5, 1 / 3]))
    assert one("tau-airline-gpt4o-t22-r1")["trajectory_precision"] == 3 / 9  # duplicates count once each
    assert one("tau-airline-gpt4o-t12-r0") == dict(zip(VERTEX, [0.0, 1.0, 1.0, 0.0, 1.0]))  # empty reference
    assert one("tau-airline-gpt4o-t21-r1") == dict(zip(VERTEX, [1.0] * 5))  # both empty


def test_headline_means():
    rows = _jsonl(shared_data("agents", "tau_bench", "airline_trajectories.jsonl"))
    preds = [r["predicted_trajectory"] for r in rows]
    refs = [r["reference_trajectory"] for r in rows]
    corpus = trajectory(preds, refs, VERTEX).corpus_scores()
    assert corpus["trajectory_exact_match"] == 0.025
    assert corpus["trajectory_precision"] == pytest.approx(0.17816874466783886, abs=1e-12)
    assert corpus["trajectory_recall"] == pytest.approx(0.47779040404040407, abs=1e-12)
    adk = trajectory(preds, refs, ["tool_trajectory_avg_score"], match_type="ANY_ORDER", ignore_args=True)
    assert adk.corpus_scores()["tool_trajectory_avg_score"] == pytest.approx(0.5833333333333334, abs=1e-12)


def _pairs():
    return json.loads(shared_data("agents", "adk", "adk_invocation_pairs.json").read_text())


@pytest.mark.parametrize("impl", IMPLS)
def test_adk_invocation_pairs(impl):
    checked = 0
    for pair in _pairs():
        actual = parse_invocations(pair["actual_invocations"])
        expected = parse_invocations(pair["expected_invocations"])
        for key, want in pair["expected_values"].items():
            if key.startswith("tool_trajectory_avg_score["):
                mt, *flag = key[len("tool_trajectory_avg_score[") : -1].split(",")
                per = tool_trajectory_scores(
                    actual, expected, match_type=mt, ignore_args=bool(flag), implementation=impl
                )
            else:
                variant = "adk" if "adk>=2.8" in key else "adk-legacy"
                per = response_match_scores(actual, expected, variant=variant)
            assert per == want["per_invocation"], (pair["eval_id"], key)
            assert _mean_in_order(per) == want["overall"], (pair["eval_id"], key)
            checked += 1
    assert checked == 256


def test_rouge_german_pairs_tokens_and_scores():
    for r in _jsonl(shared_data("agents", "adk", "rouge_german_pairs.jsonl")):
        e = r["expected"]
        assert tokenize(r["response"]) == e["adk>=2.8 tokens(response)"], r["id"]
        assert (
            response_match_score([r["response"]], [r["reference"]])["response_match_score"][0]
            == (e["response_match_score[adk>=2.8]"])
        )
        legacy = response_match_score([r["response"]], [r["reference"]], variant="adk-legacy")
        assert legacy["response_match_score"][0] == e["response_match_score[adk 1.x-2.0]"]


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("Crème brûlée", ["crème", "brûlée"]),
        ("naïve café résumé", ["naïve", "café", "résumé"]),
        ("北京欢迎你", ["北", "京", "欢", "迎", "你"]),
        ("２０２４年", ["2024", "年"]),
        ("Привет мир", ["привет", "мир"]),
        ("Ⅻ 12 ١٢", ["xii", "12", "١٢"]),
        ("ＡＢＣ Running", ["abc", "run"]),
        ("Hello, World! It's 3.14", ["hello", "world", "it", "s", "3", "14"]),
        ("Status of device_2 is off.", ["statu", "of", "devic", "2", "is", "off"]),
    ],
)
def test_adk_tokenizer_table(text, tokens):
    assert tokenize(text) == tokens


def test_both_empty_responses_score_zero():
    assert response_match_score([""], [""])["response_match_score"][0] == 0.0


def test_every_eval_file_loads_to_the_expected_counts(monkeypatch):
    root = shared_data("agents", "adk")
    expected = json.loads((root / "expected_loader.json").read_text())
    monkeypatch.chdir(root)  # legacy turn lists are named after the path they were opened with
    for rel, want in expected.items():
        es = load_eval_set(rel)
        assert es.format == want["format"], rel
        if want["eval_set_id"] != "(generated)":
            assert es.eval_set_id == want["eval_set_id"]
        assert [c.eval_id for c in es.cases] == [c["eval_id"] for c in want["eval_cases"]]
        for case, wc in zip(es.cases, want["eval_cases"]):
            assert case.kind == wc["kind"]
            assert case.session_input == wc["session_input"], rel
            if case.invocations is None:
                assert wc["invocations"] is None
                continue
            assert len(case.invocations) == wc["invocations"], rel
            assert [len(i.calls) for i in case.invocations] == wc["tool_calls_per_invocation"], rel
            assert [i.final_text == "" for i in case.invocations] == wc["final_response_texts_empty"], rel


def test_every_session_loads_to_the_expected_counts():
    root = shared_data("agents", "adk", "adk-samples")
    expected = json.loads(shared_data("agents", "adk", "expected_sessions.json").read_text())
    for rel, want in expected.items():
        s = load_session(os.path.join(root, rel))
        assert len(s.events) == want["events"]
        assert len(s.invocations) == want["invocations"]
        assert sum(1 for i in s.invocations if i.user_text) == want["invocations_with_user_text"]
        assert [len(i.calls) for i in s.invocations] == want["tool_calls_per_invocation"]
        assert [[c["name"] for c in i.calls] for i in s.invocations] == want["tool_names_per_invocation"]


def test_bfcl_allowed_values_by_hand():
    from respeval.agents.arguments import ArgumentMatcher, allowed_values

    answers = _jsonl(shared_data("agents", "bfcl", "possible_answer", "BFCL_v4_simple_python.first10.jsonl"))
    gt = answers[0]["ground_truth"][0]["calculate_triangle_area"]
    spec = {k: allowed_values(v) for k, v in gt.items()}
    matcher = ArgumentMatcher(spec)
    assert matcher.score({"base": 10, "height": 5}).score == 1.0  # unit may be omitted
    assert matcher.score({"base": 10, "height": 5, "unit": "units"}).score == 1.0
    assert matcher.score({"base": 10, "height": 5, "unit": "cm"}).score < 1.0
    assert matcher.score({"base": 10, "height": 5, "unit": "Units"}).score == 1.0  # BFCL string normalisation
    assert not math.isnan(matcher.score({}).score)
