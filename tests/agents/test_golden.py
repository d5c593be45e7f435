"""Every expected value in ../shared/data/agents: ADK values with ==, summaries within 1e-12."""

from __future__ import annotations

import json
import math
import os

import pytest

from _helpers.paths import shared_data
from respeval.agents.adk import _mean_in_order, response_match_scores, tool_trajectory_scores
from respeval.agents.loaders import load_eval_set, load_session, parse_invocations
from respeval.metrics.trajectory import response_match_score, trajectory
from respeval.tokenizers.adk import tokenize

# the native run is skipped with a reason when the core is not built, never left out unsaid
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


def test_tau_bench_vertex_values(impl):
    rows = _jsonl(shared_data("agents", "tau_bench", "airline_trajectories.jsonl"))
    expected = json.loads(shared_data("agents", "tau_bench", "expected_airline_trajectories.json").read_text())
    _check_vertex(rows, expected, "get_reservation_details", impl)


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


# --- deepeval ToolCorrectnessMetric (tau_bench/expected_deepeval_tool_correctness.json) -----------

DEEPEVAL_OPTIONS = {
    "default(names,any order)": {},
    "input_parameters": {"input_parameters": True},
    "ordering(weighted LCS)": {"consider_ordering": True},
    "ordering+input_parameters": {"consider_ordering": True, "input_parameters": True},
    "exact(names)": {"exact_match": True},
    "exact+input_parameters": {"exact_match": True, "input_parameters": True},
}


@pytest.mark.parametrize("option_set", list(DEEPEVAL_OPTIONS))
def test_deepeval_tool_correctness_values(option_set):
    from respeval.metrics.tool_correctness import deepeval_tool_correctness

    rows = _jsonl(shared_data("agents", "tau_bench", "airline_trajectories.jsonl"))
    expected = json.loads(shared_data("agents", "tau_bench", "expected_deepeval_tool_correctness.json").read_text())
    assert [r["id"] for r in rows] == [e["id"] for e in expected["rows"]]
    res = deepeval_tool_correctness(
        [r["predicted_trajectory"] for r in rows],
        [r["reference_trajectory"] for r in rows],
        **DEEPEVAL_OPTIONS[option_set],
    )
    assert res["deepeval_tool_correctness"].tolist() == [e[option_set] for e in expected["rows"]]
    assert res.corpus_scores()["deepeval_tool_correctness"] == pytest.approx(expected["mean"][option_set], abs=1e-12)


def test_deepeval_by_hand():
    """README items 7 and 9: t22-r1 by names in any order gives 4/5; identical called tools
    share one "used" slot, so [a(x=1), a(x=1)] against itself scores 0.5."""
    from respeval.metrics.tool_correctness import deepeval_tool_correctness

    rows = {r["id"]: r for r in _jsonl(shared_data("agents", "tau_bench", "airline_trajectories.jsonl"))}
    r = rows["tau-airline-gpt4o-t22-r1"]
    res = deepeval_tool_correctness([r["predicted_trajectory"]], [r["reference_trajectory"]])
    assert res["deepeval_tool_correctness"][0] == 0.8
    twice = [{"tool_name": "a", "tool_input": {"x": 1}}] * 2
    quirk = deepeval_tool_correctness([twice], [twice], input_parameters=True)
    assert quirk["deepeval_tool_correctness"][0] == 0.5
    # without the quirk's trigger (different arguments) both expected calls find a partner
    two = [{"tool_name": "a", "tool_input": {"x": 1}}, {"tool_name": "a", "tool_input": {"x": 2}}]
    assert deepeval_tool_correctness([two], [two], input_parameters=True)["deepeval_tool_correctness"][0] == 1.0


def test_deepeval_through_the_registry():
    from respeval.metrics import REGISTRY, MetricOptions

    (family,) = REGISTRY.build_families(
        ["deepeval_tool_correctness"],
        MetricOptions(params={"deepeval_tool_correctness": {"consider_ordering": True, "input_parameters": True}}),
    )
    rows = _jsonl(shared_data("agents", "tau_bench", "airline_trajectories.jsonl"))
    expected = json.loads(shared_data("agents", "tau_bench", "expected_deepeval_tool_correctness.json").read_text())
    got = family.score(
        family.prepare([r["reference_trajectory"] for r in rows]), [r["predicted_trajectory"] for r in rows]
    )
    assert got.columns["deepeval_tool_correctness"].tolist() == [
        e["ordering+input_parameters"] for e in expected["rows"]
    ]
    assert "rule:ordering" in family.signature()


# --- the rest of the expected files and the README's numbers ------------------------------------


def test_call_counts_per_row(impl):
    for path, exp in (
        (("tau_bench", "airline_trajectories.jsonl"), ("tau_bench", "expected_airline_trajectories.json")),
        (("vertex", "product_agent_byod.jsonl"), ("vertex", "expected_product_agent_byod.json")),
    ):
        rows = _jsonl(shared_data("agents", *path))
        expected = json.loads(shared_data("agents", *exp).read_text())
        res = trajectory(
            [r["predicted_trajectory"] for r in rows], [r["reference_trajectory"] for r in rows], implementation=impl
        )
        assert res.raw_stats["n_pred"].tolist() == [e["n_predicted"] for e in expected["rows"]]
        assert res.raw_stats["n_ref"].tolist() == [e["n_reference"] for e in expected["rows"]]


def test_set_based_reading_of_the_duplicate_rows():
    """The ``notes`` of the two rows where duplicates matter: the set-based precision/recall."""
    rows = _jsonl(shared_data("agents", "tau_bench", "airline_trajectories.jsonl"))
    expected = json.loads(shared_data("agents", "tau_bench", "expected_airline_trajectories.json").read_text())
    preds = [r["predicted_trajectory"] for r in rows]
    refs = [r["reference_trajectory"] for r in rows]
    multiset = trajectory(preds, refs, ["trajectory_precision", "trajectory_recall"])
    sets = trajectory(preds, refs, ["trajectory_precision", "trajectory_recall"], multiplicity=False)
    noted = 0
    for i, e in enumerate(expected["rows"]):
        dup = [n for n in e.get("notes", []) if n.startswith("duplicates matter")]
        if dup:
            p, r = (float(x) for x in dup[0].rsplit(" ", 1)[1].split("/"))
            assert (sets["trajectory_precision"][i], sets["trajectory_recall"][i]) == (p, r)
            assert (multiset["trajectory_precision"][i], multiset["trajectory_recall"][i]) != (p, r)
            noted += 1
        elif e["n_predicted"] and e["n_reference"]:
            # without duplicates the two readings agree
            assert sets["trajectory_precision"][i] == multiset["trajectory_precision"][i] or _has_duplicates(rows[i])
    assert noted == 2


def _has_duplicates(row):
    calls = [json.dumps(c, sort_keys=True) for c in row["predicted_trajectory"]]
    return len(set(calls)) < len(calls)


def test_headline_means_all():
    rows = _jsonl(shared_data("agents", "tau_bench", "airline_trajectories.jsonl"))
    preds = [r["predicted_trajectory"] for r in rows]
    refs = [r["reference_trajectory"] for r in rows]
    corpus = trajectory(preds, refs, VERTEX).corpus_scores()
    assert corpus["trajectory_in_order_match"] == pytest.approx(0.3333333333333333, abs=1e-12)
    assert corpus["trajectory_any_order_match"] == pytest.approx(0.3333333333333333, abs=1e-12)
    adk = trajectory(preds, refs, ["tool_trajectory_avg_score"], match_type="IN_ORDER", ignore_args=True)
    assert adk.corpus_scores()["tool_trajectory_avg_score"] == pytest.approx(0.575, abs=1e-12)


def test_worked_example_t6_r2_ignore_args():
    rows = {r["id"]: r for r in _jsonl(shared_data("agents", "tau_bench", "airline_trajectories.jsonl"))}
    r = rows["tau-airline-gpt4o-t6-r2"]
    p, q = [r["predicted_trajectory"]], [r["reference_trajectory"]]
    strict = trajectory(p, q, VERTEX)
    assert [strict[k][0] for k in VERTEX] == [0.0, 0.0, 0.0, 0.0, 0.0]
    for mt in ("IN_ORDER", "ANY_ORDER"):
        loose = trajectory(p, q, ["tool_trajectory_avg_score"], match_type=mt, ignore_args=True)
        assert loose["tool_trajectory_avg_score"][0] == 1.0


def test_vertex_byod_single_tool_by_hand():
    rows = _jsonl(shared_data("agents", "vertex", "product_agent_byod.jsonl"))
    res = trajectory(
        [r["predicted_trajectory"] for r in rows],
        [r["reference_trajectory"] for r in rows],
        ["trajectory_single_tool_use"],
        tool_name="get_product_price",
    )
    col = "trajectory_single_tool_use[get_product_price]"
    assert res[col].tolist() == [1.0, 1.0, 0.0, 1.0, 0.0]
    summary = res.vertex_summary()
    assert summary[f"{col}/mean"] == 0.6
    assert summary[f"{col}/std"] == pytest.approx(0.5477225575051661, abs=1e-12)


def test_rouge_score_tokens_of_the_german_pairs():
    from respeval.metrics.trajectory import ResponseMatchFamily

    legacy = ResponseMatchFamily(variant="adk-legacy")
    for r in _jsonl(shared_data("agents", "adk", "rouge_german_pairs.jsonl")):
        assert legacy.tokens(r["response"]) == r["expected"]["rouge-score tokens(response)"], r["id"]


def test_bfcl_parallel_by_hand():
    """README: parallel_0 expects two spotify.play calls in any order; parallel_1 two
    calculate_em_force calls differing only in d_time."""
    from respeval.agents.arguments import ArgumentMatcher, allowed_values

    answers = {
        a["id"]: a["ground_truth"]
        for a in _jsonl(shared_data("agents", "bfcl", "possible_answer", "BFCL_v4_parallel.first10.jsonl"))
    }
    gt0 = answers["parallel_0"]
    assert [next(iter(c)) for c in gt0] == ["spotify.play", "spotify.play"]
    matchers = [ArgumentMatcher({k: allowed_values(v) for k, v in c["spotify.play"].items()}) for c in gt0]
    taylor = {"artist": "Taylor Swift", "duration": 20}
    maroon = {"artist": "Maroon 5", "duration": 15}
    # one-to-one in any order: each expected call passes with exactly one of the two predictions
    assert [m.score(taylor).score == 1.0 for m in matchers] == [True, False]
    assert [m.score(maroon).score == 1.0 for m in matchers] == [False, True]
    gt1 = answers["parallel_1"]
    d_times = [c["calculate_em_force"]["d_time"] for c in gt1]
    assert d_times == [[4], [10]]
    rest = [{k: v for k, v in c["calculate_em_force"].items() if k != "d_time"} for c in gt1]
    assert rest[0] == rest[1]


# --- every value of every expected file, by key: a key no check knows fails the test ----------


def _vertex_columns(preds, refs, tool, impl):
    """Every per-row column the Vertex-style expected files carry, and respeval's summary
    (``vertex_summary``: mean, sample std) of each, computed by respeval."""
    cols, summary = {}, {}

    def take(res, column, name=None):
        name = name or column
        cols[name] = res[column].tolist()
        vs = res.vertex_summary()
        summary[f"{name}/mean"], summary[f"{name}/std"] = vs[f"{column}/mean"], vs[f"{column}/std"]

    res = trajectory(preds, refs, [*VERTEX, "trajectory_single_tool_use"], tool_name=tool, implementation=impl)
    for k in [*VERTEX, f"trajectory_single_tool_use[{tool}]"]:
        take(res, k)
    cols["n_predicted"] = res.raw_stats["n_pred"].tolist()
    cols["n_reference"] = res.raw_stats["n_ref"].tolist()
    for key in ("EXACT", "IN_ORDER", "ANY_ORDER", "IN_ORDER,ignore_args", "ANY_ORDER,ignore_args"):
        mt, *flag = key.split(",")
        r = trajectory(
            preds, refs, ["tool_trajectory_avg_score"], match_type=mt, ignore_args=bool(flag), implementation=impl
        )
        take(r, "tool_trajectory_avg_score", f"adk:{key}")
    f32 = trajectory(
        preds, refs, ["trajectory_precision", "trajectory_recall"], vertex_float32=True, implementation=impl
    )
    for k in ("trajectory_precision", "trajectory_recall"):
        take(f32, k, f"{k}[vertex_sdk_float32]")
    summary["row_count"] = len(res)
    return cols, summary


@pytest.mark.parametrize(
    "data, expected_file, tool",
    [
        (
            ("tau_bench", "airline_trajectories.jsonl"),
            ("tau_bench", "expected_airline_trajectories.json"),
            "get_reservation_details",
        ),
        (("vertex", "product_agent_byod.jsonl"), ("vertex", "expected_product_agent_byod.json"), "get_product_price"),
    ],
)
def test_every_key_of_the_vertex_style_files_is_checked(impl, data, expected_file, tool):
    """Each per-row value (``==``) and each summary value (1e-12) of the file, found by its
    key: a column or summary the checks above do not know makes this fail, so no value of
    the data can go unchecked, and the row ids must line up with the data's rows."""
    rows = _jsonl(shared_data("agents", *data))
    expected = json.loads(shared_data("agents", *expected_file).read_text())
    assert len(rows) == len(expected["rows"]) == expected["summary"]["row_count"] > 0
    for r, e in zip(rows, expected["rows"]):
        for key in ("id", "prompt"):
            if key in e:
                assert r[key] == e[key]
    cols, summary = _vertex_columns(
        [r["predicted_trajectory"] for r in rows], [r["reference_trajectory"] for r in rows], tool, impl
    )
    informational = {"id", "prompt", "notes"}
    checked = 0
    for i, e in enumerate(expected["rows"]):
        unknown = set(e) - informational - set(cols)
        assert not unknown, f"row {i}: no check for {sorted(unknown)}"
        for key, want in e.items():
            if key not in informational:
                assert cols[key][i] == want, (i, key)
                checked += 1
    assert checked == len(expected["rows"]) * (len(cols))
    for key, want in expected["summary"].items():
        assert key in summary, f"no check for the summary {key!r}"
        assert summary[key] == pytest.approx(want, abs=1e-12), key
        checked += 1
    assert checked == len(expected["rows"]) * len(cols) + len(expected["summary"])


def test_every_key_of_the_deepeval_file_is_checked():
    expected = json.loads(shared_data("agents", "tau_bench", "expected_deepeval_tool_correctness.json").read_text())
    assert set(expected["mean"]) == set(DEEPEVAL_OPTIONS)
    for e in expected["rows"]:
        assert set(e) - {"id"} == set(DEEPEVAL_OPTIONS), e["id"]


def test_every_key_of_the_adk_files_is_checked():
    pairs = _pairs()
    keys = {k for p in pairs for k in p["expected_values"]}
    known = {
        f"tool_trajectory_avg_score[{mt}{flag}]"
        for mt in ("EXACT", "IN_ORDER", "ANY_ORDER")
        for flag in ("", ",ignore_args")
    }
    known |= {"response_match_score[adk>=2.8]", "response_match_score[adk 1.x-2.0: rouge-score rouge1 F, stemmer]"}
    assert keys == known
    assert all(set(v) == {"per_invocation", "overall"} for p in pairs for v in p["expected_values"].values())
    german = _jsonl(shared_data("agents", "adk", "rouge_german_pairs.jsonl"))
    assert len(german) == 6
    assert {k for r in german for k in r["expected"]} == {
        "adk>=2.8 tokens(response)",
        "response_match_score[adk>=2.8]",
        "response_match_score[adk 1.x-2.0]",
        "rouge-score tokens(response)",
    }


def test_the_loader_files_list_every_eval_file_and_session_there():
    """``expected_loader.json`` and ``expected_sessions.json`` name every eval file and
    session dump under adk/ (so the loader tests cover them all) and each entry is checked
    field by field by the tests above."""
    root = shared_data("agents", "adk")
    loader = json.loads((root / "expected_loader.json").read_text())
    sessions = json.loads((root / "expected_sessions.json").read_text())
    found = sorted(
        str(p.relative_to(root)) for p in root.rglob("*.json") if p.name.endswith((".test.json", ".evalset.json"))
    )
    assert sorted(loader) == found and len(found) == 13
    dumps = sorted(str(p.relative_to(root / "adk-samples")) for p in (root / "adk-samples").rglob("*.session.json"))
    assert sorted(sessions) == dumps and len(dumps) == 2
    assert {k for v in loader.values() for k in v} == {"format", "eval_set_id", "eval_cases"}
    assert {k for v in loader.values() for c in v["eval_cases"] for k in c} == {
        "eval_id",
        "kind",
        "invocations",
        "tool_calls_per_invocation",
        "final_response_texts_empty",
        "session_input",
    }
    assert {k for v in sessions.values() for k in v} == {
        "events",
        "invocations",
        "invocations_with_user_text",
        "tool_calls_per_invocation",
        "tool_names_per_invocation",
    }
