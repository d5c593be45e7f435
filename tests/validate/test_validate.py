"""respeval.validate: agreement, correlation and pairwise statistics against their oracles.

scikit-learn (a test dependency only) is the oracle for every agreement number, scipy (when
installed) for the correlations, and a brute-force pair count for Kendall's tau-b everywhere.
"""

from __future__ import annotations

import json
import math
import warnings
from itertools import combinations

import numpy as np
import pytest

from respeval import validate as val

sk_metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn is the test oracle")

TOL = 1e-12


def _sk(fn, *args, **kwargs):
    """A scikit-learn metric, its undefined-metric warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOL


def _random_labels(rng: np.random.Generator) -> tuple[list, list]:
    """Random (judge, human) label lists: 1-6 classes, 1-80 rows, often correlated, sometimes
    strings, sometimes a class only one side uses."""
    k = int(rng.integers(1, 7))
    n = int(rng.integers(1, 81))
    human = rng.integers(0, k, n)
    judge = rng.integers(0, k, n)
    if rng.random() < 0.5:
        judge = np.where(rng.random(n) < 0.7, human, judge)
    if rng.random() < 0.2:
        judge = np.where(judge == 0, k, judge)  # a label humans never used
    if rng.random() < 0.3:
        names = np.array(["fail", "pass", "tie", "A", "B", "C", "D"])
        return names[judge].tolist(), names[human].tolist()
    return judge.tolist(), human.tolist()


# --------------------------------------------------------------------------- agreement vs scikit-learn


def test_every_agreement_number_equals_scikit_learn_on_random_label_sets():
    rng = np.random.default_rng(20261129)
    for _ in range(100):
        judge, human = _random_labels(rng)
        a = val.agreement(judge, human)
        expected = {
            "accuracy": sk_metrics.accuracy_score(human, judge),
            "balanced_accuracy": _sk(sk_metrics.balanced_accuracy_score, human, judge),
            "macro_precision": _sk(sk_metrics.precision_score, human, judge, average="macro"),
            "macro_recall": _sk(sk_metrics.recall_score, human, judge, average="macro"),
            "macro_f1": _sk(sk_metrics.f1_score, human, judge, average="macro"),
            "weighted_f1": _sk(sk_metrics.f1_score, human, judge, average="weighted"),
            "cohen_kappa": _sk(sk_metrics.cohen_kappa_score, human, judge),
            "cohen_kappa_linear": _sk(sk_metrics.cohen_kappa_score, human, judge, weights="linear"),
            "cohen_kappa_quadratic": _sk(sk_metrics.cohen_kappa_score, human, judge, weights="quadratic"),
        }
        for name, want in expected.items():
            assert _close(getattr(a, name), float(want)), (name, getattr(a, name), want, judge, human)
        labels = sorted(set(judge) | set(human))
        assert list(a.confusion.labels) == labels
        np.testing.assert_array_equal(a.confusion.matrix, _sk(sk_metrics.confusion_matrix, human, judge, labels=labels))
        p, r, f, s = _sk(sk_metrics.precision_recall_fscore_support, human, judge, labels=labels)
        for i, label in enumerate(labels):
            c = a.per_class[label]
            assert (c.precision, c.recall, c.f1, c.support) == pytest.approx((p[i], r[i], f[i], s[i]), abs=TOL)


def test_explicit_label_order_sets_the_weighted_kappa_distances():
    judge, human = [1, 2, 5, 5, 4, 1], [1, 3, 5, 4, 4, 2]
    levels = [1, 2, 3, 4, 5]
    a = val.agreement(judge, human, labels=levels)
    assert a.confusion.labels == tuple(levels)
    for weights, name in (
        (None, "cohen_kappa"),
        ("linear", "cohen_kappa_linear"),
        ("quadratic", "cohen_kappa_quadratic"),
    ):
        want = sk_metrics.cohen_kappa_score(human, judge, labels=levels, weights=weights)
        assert getattr(a, name) == pytest.approx(want, abs=TOL)
    np.testing.assert_array_equal(a.confusion.matrix, sk_metrics.confusion_matrix(human, judge, labels=levels))


def test_degenerate_inputs():
    one = val.agreement(["pass"] * 4, ["pass"] * 4)
    assert one.accuracy == 1.0 and one.macro_f1 == 1.0
    assert math.isnan(one.cohen_kappa)  # no chance agreement to beat: undefined, like scikit-learn
    swapped = val.agreement(["A", "A"], ["B", "B"])
    assert swapped.accuracy == 0.0 and swapped.per_class["A"].recall == 0.0
    assert swapped.per_class["B"].precision == 0.0  # never predicted: 0, scikit-learn's zero_division
    with pytest.raises(ValueError, match="3 labels but human has 2"):
        val.agreement([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="at least one"):
        val.agreement([], [])
    with pytest.raises(ValueError, match="not in labels"):
        val.agreement([1, 9], [1, 2], labels=[1, 2])
    with pytest.raises(ValueError, match="cannot be ordered"):
        val.agreement([1, "A"], [1, "A"])


def test_names_are_honest():
    a = val.agreement([0, 1, 1, 2], [0, 1, 2, 2])
    assert not hasattr(a, "balanced_f1")
    assert "support-weighted" in val.AGREEMENT_FIELDS["weighted_f1"]
    assert "recall" in val.AGREEMENT_FIELDS["balanced_accuracy"]
    assert "support-weighted" in val.Agreement.__doc__ or "support-weighted" in val.__doc__


def test_to_dict_is_json_ready():
    a = val.agreement(np.array([1, 2, 2]), np.array([1, 2, 1]))
    d = json.loads(json.dumps(a.to_dict(), allow_nan=False))
    assert d["labels"] == [1, 2] and d["confusion"]["matrix"] == [[1, 1], [0, 1]]
    assert d["per_class"][0] == {"label": 1, "precision": 1.0, "recall": 0.5, "f1": 2 / 3, "support": 2, "predicted": 1}


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_is_seeded_and_equals_resampling_by_hand():
    rng = np.random.default_rng(5)
    human = rng.integers(0, 3, 120)
    judge = np.where(rng.random(120) < 0.6, human, rng.integers(0, 3, 120))
    a = val.agreement(judge.tolist(), human.tolist())
    first = a.bootstrap(n=120, seed=7)
    assert first == a.bootstrap(n=120, seed=7)
    assert first != a.bootstrap(n=120, seed=8)
    idx = np.random.default_rng(7).integers(0, 120, size=(120, 120))
    for name, fn in (
        ("accuracy", sk_metrics.accuracy_score),
        ("macro_f1", lambda h, j: _sk(sk_metrics.f1_score, h, j, average="macro")),
        ("cohen_kappa_quadratic", lambda h, j: _sk(sk_metrics.cohen_kappa_score, h, j, weights="quadratic")),
    ):
        by_hand = np.array([fn(human[i], judge[i]) for i in idx])
        low, high = np.percentile(by_hand, [2.5, 97.5])
        assert first[name].low == pytest.approx(low, abs=TOL)
        assert first[name].high == pytest.approx(high, abs=TOL)
        assert first[name].estimate == getattr(a, name)
        assert first[name].low <= first[name].estimate <= first[name].high


def test_bootstrap_in_blocks_equals_one_draw(monkeypatch):
    a = val.agreement([0, 1, 1, 2, 2, 0, 1], [0, 1, 2, 2, 2, 1, 1])
    p = val.pairwise_consistency(["A", "B", "A", "TIE", "B", "A", "A"], ["A", "A", "A", "TIE", "B", "B", "A"])
    c = val.correlations([1, 2, 3, 4, 5, 6, 7], [2, 1, 4, 3, 6, 7, 5])
    whole = (a.bootstrap(n=50, seed=3), p.bootstrap(n=50, seed=3), c.bootstrap(n=50, seed=3))
    from respeval.validate import resampling

    monkeypatch.setattr(resampling, "_BLOCK_ROWS", 14)  # two resamples per block
    assert (a.bootstrap(n=50, seed=3), p.bootstrap(n=50, seed=3), c.bootstrap(n=50, seed=3)) == whole


def test_rate_and_correlation_intervals_equal_resampling_by_hand():
    rng = np.random.default_rng(9)
    first = rng.choice(["A", "B", "TIE"], 80).tolist()
    second = [x if rng.random() < 0.7 else "B" for x in first]
    p = val.pairwise_consistency(first, second)
    idx = np.random.default_rng(4).integers(0, 80, size=(100, 80))
    same = np.array([a == b for a, b in zip(first, second)])
    low, high = np.percentile(same[idx].mean(axis=1), [2.5, 97.5])
    boot = p.bootstrap(n=100, seed=4)["consistency"]
    assert (boot.low, boot.high) == pytest.approx((low, high), abs=TOL)
    x, y = rng.normal(size=80), rng.normal(size=80)
    taus = [val.kendall_tau_b(x[i], y[i]) for i in idx]
    boot = val.correlations(x, y).bootstrap(n=100, seed=4)["kendall_tau_b"]
    assert (boot.low, boot.high) == pytest.approx(tuple(np.percentile(taus, [2.5, 97.5])), abs=TOL)


# --------------------------------------------------------------------------- correlations


def _tau_b_brute_force(x, y) -> float:
    con = dis = tx = ty = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            tx += 1
        elif dy == 0:
            ty += 1
        elif dx * dy > 0:
            con += 1
        else:
            dis += 1
    den = math.sqrt((con + dis + tx) * (con + dis + ty))
    return (con - dis) / den if den else math.nan


def _random_pairs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    x = rng.integers(0, int(rng.integers(1, 6)), n).astype(float) if rng.random() < 0.5 else rng.normal(size=n)
    y = rng.integers(0, 4, n).astype(float) if rng.random() < 0.5 else x + rng.normal(size=n)
    return x, y


def test_kendall_tau_b_equals_brute_force_with_ties():
    rng = np.random.default_rng(11)
    for _ in range(150):
        x, y = _random_pairs(rng, int(rng.integers(2, 60)))
        assert _close(val.kendall_tau_b(x, y), _tau_b_brute_force(x, y))


def test_correlations_equal_scipy():
    stats = pytest.importorskip("scipy.stats", reason="scipy not installed: the brute-force tau-b test still ran")
    rng = np.random.default_rng(12)
    for n in [2, 3, 10, 257, 3000] * 20:
        x, y = _random_pairs(rng, n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = (stats.pearsonr(x, y).statistic, stats.spearmanr(x, y).statistic, stats.kendalltau(x, y).statistic)
        c = val.correlations(x, y)
        for got, ref in zip((c.pearson, c.spearman, c.kendall_tau_b), want):
            assert _close(got, float(ref)), (n, got, ref)
        np.testing.assert_allclose(val.rankdata(x), stats.rankdata(x), atol=0)


def test_correlation_edge_cases():
    assert math.isnan(val.pearson([1, 1, 1], [1, 2, 3]))
    assert math.isnan(val.kendall_tau_b([1, 2, 3], [5, 5, 5]))
    assert math.isnan(val.spearman([1], [2]))
    assert val.kendall_tau_b([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    assert val.kendall_tau_b([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    with pytest.raises(ValueError, match="NaN"):
        val.pearson([1.0, math.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="same length"):
        val.correlations([1, 2, 3], [1, 2])


def test_system_level_correlates_system_means():
    metric = [0.1, 0.3, 0.2, 0.6, 0.5, 0.9]
    human = [1.0, 2.0, 2.0, 1.0, 4.0, 5.0]
    systems = ["a", "a", "b", "b", "c", "c"]
    c = val.metric_human_correlation(metric, human, systems=systems, level="system")
    assert c.level == "system" and c.units == ("a", "b", "c") and c.n == 3
    assert c.kendall_tau_b == val.kendall_tau_b([0.2, 0.4, 0.7], [1.5, 1.5, 4.5])
    assert c.pearson == pytest.approx(val.pearson([0.2, 0.4, 0.7], [1.5, 1.5, 4.5]), abs=TOL)
    with pytest.raises(ValueError, match="needs systems"):
        val.metric_human_correlation(metric, human, level="system")
    boot = c.bootstrap(n=50, seed=1)
    assert set(boot) == {"pearson", "spearman", "kendall_tau_b"}


# --------------------------------------------------------------------------- pairwise and verbosity


def test_pairwise_consistency_by_hand():
    original = ["A", "A", "B", "TIE", "A", "B"]
    swapped = ["A", "B", "B", "TIE", "TIE", "A"]
    p = val.pairwise_consistency(original, swapped, first_shown="A")
    assert p.n == 6
    assert p.consistency == pytest.approx(3 / 6)
    assert p.flip_rate == pytest.approx(2 / 6)  # rows 2 and 6
    assert p.tie_rate == pytest.approx(3 / 12)  # three ties among twelve verdicts
    # decisive verdicts: original A,A,B,A,B (first slot = A: 3 of 5); swapped A,B,B,A
    # (first slot = B: 2 of 4) -> 5 of 9 pick the response shown first
    assert p.first_position_rate == pytest.approx(5 / 9)
    assert p.consistency_kappa == val.agreement(swapped, original).cohen_kappa
    boot = p.bootstrap(n=200, seed=1)
    assert boot["consistency"].low <= 0.5 <= boot["consistency"].high
    assert val.pairwise_consistency(original, swapped).first_position_rate is None


def test_verbosity_pairwise_by_hand():
    judge = ["A", "A", "B", "TIE", "A"]
    human = ["A", "B", "B", "A", "B"]
    len_a, len_b = [10, 50, 5, 10, 30], [5, 20, 9, 10, 30]  # last two: tie verdict / equal lengths
    v = val.verbosity_pairwise(
        judge, human=human, length_first=len_a, length_second=len_b, first="A", second="B", n_boot=0
    )
    assert v.n == 3
    assert v.judge == pytest.approx(1.0)  # A longer, A longer, B longer: always the longer one
    assert v.human == pytest.approx(2 / 3)  # of rows 0-2 humans picked the longer in rows 0 and 2
    assert v.excess == pytest.approx(1 / 3)


def test_verbosity_pointwise_rewards_length():
    rng = np.random.default_rng(2)
    lengths = rng.integers(5, 300, 200)
    human = rng.integers(1, 6, 200)
    judge = np.clip(human + (lengths > 150), 1, 5)
    v = val.verbosity_pointwise(judge.tolist(), lengths.tolist(), human.tolist(), n_boot=100, seed=1)
    assert v.judge > v.human and v.excess == pytest.approx(v.judge - v.human)
    assert v.intervals["excess"].low > 0


# --------------------------------------------------------------------------- columns, files, one metric end to end


def test_find_metrics_uses_vertex_names():
    cols = [
        "prompt",
        "fluency/score",
        "fluency/human_rating",
        "safety/score",
        "pref/pairwise_choice",
        "pref/human_pairwise_choice",
        "pref/pairwise_choice_swapped",
    ]
    found = val.find_metrics(cols)
    assert found == [
        val.MetricColumns("fluency", "pointwise", "fluency/score", "fluency/human_rating"),
        val.MetricColumns(
            "pref", "pairwise", "pref/pairwise_choice", "pref/human_pairwise_choice", "pref/pairwise_choice_swapped"
        ),
    ]


def test_rows_missing_either_side_are_dropped_together_and_counted():
    table = {
        "q/score": [5, None, 3, float("nan"), 4, "", 2],
        "q/human_rating": [5, 4, None, None, 4, 3, 1],
        "response": ["a b", "c", "d e f", "g", "h i", "j", "k l m n"],
    }
    (r,) = val.validate_table(table, n_boot=0)
    assert r.rows == 7 and r.used == 3
    assert r.dropped == {"judge_missing": 2, "human_missing": 1, "both_missing": 1, "total": 4}
    assert r.agreement.n == 3 and r.agreement.accuracy == pytest.approx(2 / 3)
    assert r.correlation.n == 3
    assert [d["row"] for d in r.disagreements] == [6]
    assert r.disagreements[0]["texts"] == {"response": "k l m n"}


def test_mean_ratings_are_correlated_not_rounded_into_labels():
    r = val.validate_pair([4.5, 3.0, 2.5, 1.0], [4.0, 3.0, 2.0, 2.0], n_boot=0)
    assert r.agreement is None and "not labels" in r.agreement_note
    assert r.correlation.kendall_tau_b == val.kendall_tau_b([4.5, 3.0, 2.5, 1.0], [4.0, 3.0, 2.0, 2.0])


def test_pairwise_metric_end_to_end():
    table = {
        "p/pairwise_choice": ["CANDIDATE", "BASELINE", "TIE", "CANDIDATE", None],
        "p/pairwise_choice_swapped": ["CANDIDATE", "CANDIDATE", "TIE", None, "BASELINE"],
        "p/human_pairwise_choice": ["CANDIDATE", "CANDIDATE", "BASELINE", "CANDIDATE", "TIE"],
        "response": ["long long long", "x", "y y", "z", "w"],
        "baseline_model_response": ["short", "x x x", "y", "z z", "w"],
    }
    (r,) = val.validate_table(table, n_boot=20, seed=1)
    assert r.kind == "pairwise" and r.used == 4 and r.dropped["judge_missing"] == 1
    assert r.correlation is None  # pairwise choices are nominal
    assert r.pairwise.n == 3 and r.pairwise.consistency == pytest.approx(2 / 3)
    assert r.pairwise.first_position_rate is None  # Vertex does not say which was shown first
    assert "1 rows without a swapped verdict" in r.pairwise_note
    assert r.verbosity.kind == "pairwise"
    assert r.disagreements[0]["gap"] == 2.0  # opposite winners first
    json.dumps(r.to_dict(), allow_nan=False)


@pytest.mark.parametrize("ext", ["jsonl", "json", "csv", "parquet"])
def test_load_table_formats(tmp_path, ext):
    rows = [
        {"id": 1, "m/score": 4, "m/human_rating": 5, "response": "a, b"},
        {"id": 2, "m/score": None, "m/human_rating": 3, "response": "c"},
    ]
    path = tmp_path / f"t.{ext}"
    if ext == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif ext == "json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    elif ext == "csv":
        path.write_text('id,m/score,m/human_rating,response\n1,4,5,"a, b"\n2,,3,c\n', encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)
    table = val.load_table(path)
    assert table == {"id": [1, 2], "m/score": [4, None], "m/human_rating": [5, 3], "response": ["a, b", "c"]}


def test_load_table_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n{oops\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:2: invalid JSON"):
        val.load_table(bad)
    with pytest.raises(ValueError, match="unknown table format"):
        val.load_table(tmp_path / "x.xlsx")


def test_join_tables_by_order_and_by_id():
    results = {"id": ["a", "b", "c"], "m/score": [1, 2, 3]}
    labels = {"id": ["c", "a"], "m/human_rating": [3, 1]}
    joined = val.join_tables(results, labels, id_field="id")
    assert joined["m/human_rating"] == [1, None, 3]
    with pytest.raises(ValueError, match="3 rows but labels has 2"):
        val.join_tables(results, labels)
    with pytest.raises(ValueError, match="more than once"):
        val.join_tables(results, {"id": ["a", "a"], "m/human_rating": [1, 2]}, id_field="id")


def test_dotted_columns_reach_into_objects():
    table = {"scores": [{"r2": 0.5}, {"r2": 0.25}, {}]}
    assert val.table_column(table, "scores.r2") == [0.5, 0.25, None]
    with pytest.raises(ValueError, match="no column 'nope'"):
        val.table_column(table, "nope")


def test_join_tables_refuses_repeated_ids_in_the_results():
    # issue 12, point 14: a repeated results id silently reused one human label for two rows
    results = {"id": ["a", "b", "a", "c", "c"], "m/score": [1, 2, 3, 4, 5]}
    labels = {"id": ["a", "b", "c"], "m/human_rating": [1, 2, 3]}
    with pytest.raises(ValueError, match=r"results: 2 'id' value\(s\) appear more than once: 'a', 'c'"):
        val.join_tables(results, labels, id_field="id")
    with pytest.raises(ValueError, match=r"labels: 1 'id' value\(s\) appear more than once: 7"):
        val.join_tables({"id": [7, 8]}, {"id": [7, 7.0, 8], "m/human_rating": [1, 2, 3]}, id_field="id")


def test_validate_command_names_repeated_result_ids(tmp_path, capsys):
    from respeval.cli import main as validate_main

    results = tmp_path / "judged.jsonl"
    results.write_text("".join(f'{{"id": "{i}", "m/score": 1}}\n' for i in ("x", "y", "x")), encoding="utf-8")
    labels = tmp_path / "human.jsonl"
    labels.write_text('{"id": "x", "m/human_rating": 1}\n{"id": "y", "m/human_rating": 0}\n', encoding="utf-8")
    code = validate_main(["validate", "--results", str(results), "--labels", str(labels), "--id-field", "id"])
    assert code == 1
    assert "results: 1 'id' value(s) appear more than once: 'x'" in capsys.readouterr().err
