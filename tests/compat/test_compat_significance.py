"""respeval.compat.sacrebleu.significance and corpus_score(n_bootstrap=) give sacreBLEU 2.6.0's
numbers exactly: on the full WMT17 corpus against the fixture written by sacreBLEU
(benchmarks/make_fixtures_mt.py), and live against sacreBLEU on a slice."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _helpers.corpora import load_wmt17
from _helpers.paths import FIXTURES, shared_data
from respeval.compat.sacrebleu.metrics import BLEU, CHRF, TER
from respeval.compat.sacrebleu.metrics.base import column_sums
from respeval.compat.sacrebleu.significance import PairedTest, Result, estimate_ci
from respeval.stats import paired


def _fixture(name: str) -> dict:
    """A committed fixture written by sacreBLEU (benchmarks/make_fixtures_mt.py)."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def wmt():
    reference, systems = load_wmt17(shared_data())
    return reference, {name.removeprefix("newstest2017.").removesuffix(".en-de.txt"): s for name, s in systems.items()}


@pytest.fixture(scope="module")
def significance():
    return _fixture("sacrebleu_wmt17_significance.json")


def _plain(result) -> dict:
    return {
        f: None if getattr(result, f) is None else float(getattr(result, f)) for f in ("score", "p_value", "mean", "ci")
    }


@pytest.fixture(autouse=True)
def _default_seed(monkeypatch):
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)


# --- full corpus, against sacreBLEU's recorded results ----------------------------------------


@pytest.mark.parametrize("test", ["bs", "ar"])
def test_paired_test_full_corpus_equals_sacrebleu(wmt, significance, test):
    """1000 paired resamples / 10000 AR trials, 3004 segments, BLEU and chrF: every float equal."""
    reference, systems = wmt
    named = [(name, systems[name]) for name in [significance["baseline"], *significance["systems"]]]
    metrics = {"BLEU": BLEU(references=[reference]), "chrF": CHRF(references=[reference])}
    signatures, scores = PairedTest(named, metrics, references=None, test_type=test)()
    assert scores["System"] == [name for name, _ in named]
    for metric in ("BLEU", "chrF2"):
        assert [_plain(r) for r in scores[metric]] == significance[test][metric], (test, metric)
        assert all(isinstance(r, Result) for r in scores[metric])
    assert str(signatures["BLEU"]).startswith(f"nrefs:1|{test}:{1000 if test == 'bs' else 10000}|seed:12345|case:")


@pytest.mark.parametrize("systems", [slice(0, 2), pytest.param(slice(2, None), marks=pytest.mark.slow)])
def test_ter_paired_tests_on_sacrebleus_own_segment_statistics(significance, systems):
    """TER's statistics are floats: the float32 resample sums and float64 AR products must round as sacreBLEU's."""
    segments = _fixture("sacrebleu_wmt17_ter_segments.json")
    lengths = segments["ref_len"]["default"]

    def stats(name):
        return np.array([[edits, float(n)] for edits, n in zip(segments["edits"]["default"][name], lengths)])

    ter = TER()
    baseline = stats(significance["baseline"])
    base_score = ter.compute_score(column_sums(baseline)).score
    indices = paired.resample_indices(len(baseline), 1000, 12345)
    base_resampled = ter.score_sums(paired.resampled_sums(baseline, indices))
    assert [base_score, *map(float, estimate_ci(base_resampled))] == [
        significance["bs"]["TER"][0][k] for k in ("score", "mean", "ci")
    ]
    mask = paired.swap_mask(len(baseline), 10000, np.random.default_rng(12345))
    for i, name in list(enumerate(significance["systems"], start=1))[systems]:
        system = stats(name)
        score = ter.compute_score(column_sums(system)).score
        resampled = ter.score_sums(paired.resampled_sums(system, indices))
        p_bs = paired.paired_bootstrap(base_resampled, resampled, abs(base_score - score))
        got = {"score": score, "p_value": p_bs, **dict(zip(("mean", "ci"), map(float, estimate_ci(resampled))))}
        assert got == significance["bs"]["TER"][i], name
        p_ar = paired.approximate_randomization(baseline, system, ter.score_sums, abs(base_score - score), mask)
        assert p_ar == significance["ar"]["TER"][i]["p_value"], name


def test_corpus_score_bootstrap_equals_sacrebleu(wmt, significance):
    reference, systems = wmt
    want = significance["corpus_ci"]
    hyps = systems[want["system"]]
    for key, metric in (("BLEU", BLEU()), ("chrF", CHRF())):
        score = metric.corpus_score(hyps, [reference], n_bootstrap=1000)
        assert (score.score, float(score._mean), float(score._ci)) == tuple(
            want[key][k] for k in ("score", "mean", "ci")
        )
        assert "|bs:1000|seed:12345|" in str(metric.get_signature())


# --- live against sacreBLEU on a slice ---------------------------------------------------------

N = 200
NAMES = ["KIT.4950", "RWTH-nmt-ensemble.4921", "online-A.0", "uedin-nmt.4722"]


@pytest.fixture(scope="module")
def sacre_significance():
    return pytest.importorskip("sacrebleu.significance")


def _both_metrics(ter: bool):
    import sacrebleu.metrics as theirs

    ours = {"BLEU": BLEU(lowercase=True), "chrF": CHRF(word_order=2)}
    their = {"BLEU": theirs.BLEU(lowercase=True), "chrF": theirs.CHRF(word_order=2)}
    if ter:  # TER is slow in sacreBLEU (and in respeval's pure-Python TER): a few hundred segments only
        ours["TER"], their["TER"] = TER(normalized=True), theirs.TER(normalized=True)
    return ours, their


@pytest.mark.parametrize(
    "test, options, n, ter",
    [
        ("bs", dict(n_samples=300), N, True),
        ("ar", dict(n_samples=300, n_ar_confidence=200), N, True),
        pytest.param("ar", dict(n_samples=0, n_ar_confidence=0), 2 * N, False, marks=pytest.mark.slow),
    ],
)
def test_paired_test_live(wmt, sacre_significance, test, options, n, ter):
    reference, systems = wmt
    named = [(name, systems[name][:n]) for name in NAMES]
    ours, theirs = _both_metrics(ter)
    our_sigs, our_scores = PairedTest(named, ours, [reference[:n]], test_type=test, **options)()
    their_sigs, their_scores = sacre_significance.PairedTest(
        named, theirs, [reference[:n]], test_type=test, **options
    )()
    assert our_scores.keys() == their_scores.keys()
    assert set(our_scores) == {"System", "BLEU", "chrF2++"} | ({"TER"} if ter else set())
    for metric in set(our_scores) - {"System"}:
        assert [repr(r) for r in our_scores[metric]] == [repr(r) for r in their_scores[metric]], metric
        assert str(our_sigs[metric]).rsplit("|version:", 1)[0] == str(their_sigs[metric]).rsplit("|version:", 1)[0]


@pytest.mark.parametrize("seed", ["none", "0", "7"])
def test_seed_from_the_environment_as_sacrebleu(wmt, sacre_significance, monkeypatch, seed):
    """SACREBLEU_SEED=none is unseeded; 0 seeds the baseline interval but leaves the paired tests unseeded."""
    monkeypatch.setenv("SACREBLEU_SEED", seed)
    reference, systems = wmt
    named = [(name, systems[name][:200]) for name in NAMES[:2]]
    ours = PairedTest(named, {"BLEU": BLEU()}, [reference[:200]], test_type="bs", n_samples=100)
    theirs = sacre_significance.PairedTest(
        named, {"BLEU": __import__("sacrebleu").BLEU()}, [reference[:200]], test_type="bs", n_samples=100
    )
    (our_sig, our_scores), (their_sig, their_scores) = ours(), theirs()
    assert str(our_sig["BLEU"]).split("|")[:3] == str(their_sig["BLEU"]).split("|")[:3]
    if seed == "7":
        assert [repr(r) for r in our_scores["BLEU"]] == [repr(r) for r in their_scores["BLEU"]]
    else:
        # unseeded draws differ from run to run; scores do not, and p-values stay probabilities
        assert [r.score for r in our_scores["BLEU"]] == [r.score for r in their_scores["BLEU"]]
        assert 0 < our_scores["BLEU"][1].p_value <= 1
        if seed == "0":  # the baseline's interval is still seeded with 0
            assert repr(our_scores["BLEU"][0]) == repr(their_scores["BLEU"][0])


def test_ter_corpus_bootstrap_live(wmt):
    sacrebleu = pytest.importorskip("sacrebleu")
    reference, systems = wmt
    hyps, refs = systems["xmu.4910"][:300], [reference[:300]]
    ours = TER(case_sensitive=True).corpus_score(hyps, refs, n_bootstrap=500)
    theirs = sacrebleu.TER(case_sensitive=True).corpus_score(hyps, refs, n_bootstrap=500)
    assert (ours.score, ours._mean, ours._ci, str(ours)) == (theirs.score, theirs._mean, theirs._ci, str(theirs))


def test_paired_test_checks_its_arguments(wmt):
    reference, systems = wmt
    with pytest.raises(ValueError, match="Unknown test type"):
        PairedTest([("a", ["x"])], {"BLEU": BLEU()}, [["x"]], test_type="t")
    with pytest.raises(ValueError, match="empty"):
        PairedTest([], {"BLEU": BLEU()}, [["x"]])
    with pytest.raises(ValueError, match="reference stream 0 has 2 segments but there are 1"):
        PairedTest([("a", ["x"])], {"BLEU": BLEU()}, [["x", "y"]])
    assert repr(Result(1.5, 0.25)) == "score=1.5,p_value=0.25,mean=None,ci=None"
