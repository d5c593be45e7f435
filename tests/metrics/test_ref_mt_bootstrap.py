"""Bootstrap CIs and paired significance tests against sacreBLEU 2.6.0."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _helpers.paths import FIXTURES, SHARED_DATA
from _helpers.reference import bleu as B
from _helpers.reference import chrf as C
from respeval.metrics import sacrebleu_scores
from respeval.stats import sacrebleu as BS

DATA = SHARED_DATA
WMT = DATA / "wmt17_en_de"

# respeval's score arithmetic on the oracles' statistics: the resampling under test is respeval's
SCORE_FNS = {
    "BLEU": lambda stats: sacrebleu_scores.compute_bleu(stats).score,
    "chrF": lambda stats: sacrebleu_scores.chrf_score(stats),
    "TER": lambda stats: sacrebleu_scores.compute_ter(stats).score,
}


# --- fixtures -------------------------------------------------------------------------------------


def _fixture(name):
    path = FIXTURES / name
    if not path.is_file():
        pytest.skip(f"{path} missing: run benchmarks/make_fixtures_mt.py")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def significance():
    return _fixture("sacrebleu_wmt17_significance.json")


@pytest.fixture(scope="module")
def stats(wmt):
    """``stats(system, metric)``: per-segment statistics, computed on first use.

    BLEU and chrF rows come from our reference implementation; TER rows are sacreBLEU's
    own (from the fixture; test_ref_ter checks ours equal them), as ``[int, float]``.
    """
    reference, systems = wmt
    segments = _fixture("sacrebleu_wmt17_ter_segments.json")
    bleu_refs = B.prepare_references([reference])
    chrf_refs = C.prepare_references([reference])
    extract = {
        "BLEU": lambda name: B.corpus_stats(systems[name], bleu_refs),
        "chrF": lambda name: C.corpus_stats(systems[name], chrf_refs),
        "TER": lambda name: [
            [edits, float(length)]
            for edits, length in zip(segments["edits"]["default"][name], segments["ref_len"]["default"])
        ],
    }
    cache = {}

    def get(name, metric):
        if (name, metric) not in cache:
            cache[name, metric] = extract[metric](name)
        return cache[name, metric]

    return get


# Two of the fixture's four systems: BLEU/chrF p-values 0.24/0.31 and 0.012/0.11 (bs).
FAST_SYSTEMS = ["xmu.4910", "KIT.4950"]


def _as_dict(result):
    """A result as plain floats, the fixture's format (float32 values convert exactly)."""
    fields = ("score", "p_value", "mean", "ci")
    return {f: None if getattr(result, f) is None else float(getattr(result, f)) for f in fields}


# --- single-system confidence intervals -----------------------------------------------------------


def test_corpus_ci_matches_sacrebleu_and_readme(wmt, significance):
    reference, systems = wmt
    expected = significance["corpus_ci"]
    hyps = systems[expected["system"]]
    bleu_mean, bleu_ci = BS.bootstrap_ci(B.corpus_stats(hyps, [reference]), SCORE_FNS["BLEU"])
    chrf_mean, chrf_ci = BS.bootstrap_ci(C.corpus_stats(hyps, [reference]), SCORE_FNS["chrF"])
    assert (bleu_mean, bleu_ci) == (expected["BLEU"]["mean"], expected["BLEU"]["ci"])
    assert (float(chrf_mean), float(chrf_ci)) == (expected["chrF"]["mean"], expected["chrF"]["ci"])
    # sacreBLEU's README: BLEU = 22.675 (μ = 22.669 ± 0.598), chrF2 = 51.953 (μ = 51.953 ± 0.462)
    assert (f"{bleu_mean:.3f}", f"{bleu_ci:.3f}") == ("22.669", "0.598")
    assert (f"{chrf_mean:.3f}", f"{chrf_ci:.3f}") == ("51.953", "0.462")


def test_corpus_ci_live(wmt):
    metrics = pytest.importorskip("sacrebleu.metrics")
    reference, systems = wmt
    hyps, refs = systems["online-F.0"][:700], [reference[:700]]
    theirs = metrics.BLEU().corpus_score(hyps, refs, n_bootstrap=300)
    ours = BS.bootstrap_ci(B.corpus_stats(hyps, refs), SCORE_FNS["BLEU"], n_samples=300)
    assert ours == (theirs._mean, theirs._ci)


# --- paired tests on the full corpus (fixture from sacreBLEU's PairedTest) ------------------------


def _expected(significance, test, metric):
    return significance[test][metric if metric != "chrF" else "chrF2"]


def _check_bs(stats, significance, metric, names):
    expected = _expected(significance, "bs", metric)
    baseline = stats(significance["baseline"], metric)
    assert _as_dict(BS.baseline_result(baseline, SCORE_FNS[metric], test="bs")) == expected[0]
    p_values = set()
    for name in names:
        index = significance["systems"].index(name) + 1
        result = BS.paired_bootstrap(baseline, stats(name, metric), SCORE_FNS[metric])
        assert _as_dict(result) == expected[index], (metric, name)
        p_values.add(result.p_value)
    assert len(p_values) > 1  # not every p-value is the minimum 1/1001


def _check_ar(stats, significance, metric, names):
    expected = _expected(significance, "ar", metric)
    baseline = stats(significance["baseline"], metric)
    assert _as_dict(BS.baseline_result(baseline, SCORE_FNS[metric], test="ar")) == expected[0]
    for name in names:
        index = significance["systems"].index(name) + 1
        result = BS.paired_approximate_randomization(baseline, stats(name, metric), SCORE_FNS[metric])
        assert _as_dict(result) == expected[index], (metric, name)


@pytest.mark.parametrize("metric", ["BLEU", "chrF", "TER"])
def test_paired_bootstrap(stats, significance, metric):
    # TER rows are read from the fixture, so all its systems are cheap to test
    _check_bs(stats, significance, metric, significance["systems"] if metric == "TER" else FAST_SYSTEMS)


@pytest.mark.parametrize("metric", ["BLEU", "TER"])  # chrF: live test below, all in the slow one
def test_paired_ar_one_system(stats, significance, metric):
    _check_ar(stats, significance, metric, ["KIT.4950"])


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["BLEU", "chrF", "TER"])
def test_paired_tests_all_systems(stats, significance, metric):
    _check_bs(stats, significance, metric, significance["systems"])
    _check_ar(stats, significance, metric, significance["systems"])


# --- paired tests live, with AR confidence intervals ----------------------------------------------


@pytest.mark.parametrize("test", ["bs", "ar"])
def test_paired_tests_live(wmt, test):
    metrics = pytest.importorskip("sacrebleu.metrics")
    significance_module = pytest.importorskip("sacrebleu.significance")
    reference, systems = wmt
    n = 300
    names = ["KIT.4950", "RWTH-nmt-ensemble.4921", "online-A.0"]
    refs = [reference[:n]]
    named = [(name, systems[name][:n]) for name in names]
    options = dict(n_samples=500 if test == "ar" else 0, n_ar_confidence=200 if test == "ar" else -1)
    oracle = {"BLEU": metrics.BLEU(lowercase=True), "chrF": metrics.CHRF(word_order=2)}
    _, theirs = significance_module.PairedTest(named, oracle, refs, test_type=test, **options)()
    ours_fns = {
        "BLEU": (lambda h: B.corpus_stats(h, refs, lowercase=True), SCORE_FNS["BLEU"]),
        "chrF2++": (
            lambda h: C.corpus_stats(h, refs, word_order=2),
            lambda s: sacrebleu_scores.chrf_score(s, word_order=2),
        ),
    }
    for metric, (extract, score_fn) in ours_fns.items():
        baseline = extract(named[0][1])
        got = [BS.baseline_result(baseline, score_fn, test=test, **options)]
        for _, hyps in named[1:]:
            if test == "bs":
                got.append(BS.paired_bootstrap(baseline, extract(hyps), score_fn))
            else:
                got.append(
                    BS.paired_approximate_randomization(
                        baseline, extract(hyps), score_fn, n_samples=500, n_ar_confidence=200
                    )
                )
        assert [_as_dict(r) for r in got] == [_as_dict(r) for r in theirs[metric]], metric


# --- building blocks ------------------------------------------------------------------------------


def test_p_value_counts_strictly_greater_plus_one():
    assert BS.p_value(np.array([0.1, 0.5, 0.5, 0.9]), 0.5) == (1 + 1) / 5
    assert BS.p_value(np.zeros(9), 0.0) == 0.1


def test_interval_indices():
    scores = list(range(1000))[::-1]
    mean, ci = BS.estimate_ci(scores)
    assert mean == 499.5 and ci == 0.5 * (974 - 25)
    assert BS.bootstrap_ci([[1, 1]] * 5, lambda s: float(s[0]), n_samples=10) == (5.0, 0.0)


def test_resampling_is_seeded():
    a = BS.resample_indices(50, 20, seed=1)
    assert (a == BS.resample_indices(50, 20, seed=1)).all()
    assert not (a == BS.resample_indices(50, 20, seed=2)).all()
    assert (a == np.random.default_rng(1).choice(50, size=(20, 50), replace=True)).all()


def test_resamples_are_summed_in_float32():
    seen = []
    BS.bootstrap_scores([[1, 2], [3, 4]], lambda s: seen.append(s.dtype) or 0.0, n_samples=3)
    assert seen == [np.float32] * 3


def test_sum_rows_and_validation():
    assert BS.sum_rows([[1, 2.5], [3, 4]]) == [4, 6.5]
    with pytest.raises(ValueError):
        BS.sum_rows([])
    with pytest.raises(ValueError):
        BS.paired_bootstrap([[1]], [[1], [2]], float)
    with pytest.raises(ValueError):
        BS.baseline_result([[1]], float, test="xx")


def test_identical_systems_get_the_minimum_p_value():
    # sacreBLEU quirk: a zero observed difference is never exceeded *strictly*, so a
    # system compared with itself gets p = 1 / (n + 1) in both tests.
    rows = [[i % 7, 3] for i in range(40)]
    score = lambda s: float(s[0]) / float(s[1])  # noqa: E731
    assert BS.paired_bootstrap(rows, rows, score, n_samples=200).p_value == 1 / 201
    assert BS.paired_approximate_randomization(rows, rows, score, n_samples=200).p_value == 1 / 201
