"""ROUGE on the real corpora equals rouge-score 0.1.2 within 1e-12.

rouge-score's outputs for every REALSumm row and every WMT17 system (with and
without stemming) are stored in tests/fixtures/rouge_oracle.npz by
benchmarks/make_rouge_fixtures.py (4 minutes of rouge-score); a live rouge-score
run on a subset checks the fixture itself is still rouge-score's.
"""

from __future__ import annotations

import numpy as np
import pytest

from _helpers.corpora import load_realsumm, load_wmt17
from _helpers.paths import FIXTURES, shared_data
from respeval.compat import rouge_scorer as compat_rouge_scorer
from respeval.metrics.rouge import rouge

TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
FIXTURE = FIXTURES / "rouge_oracle.npz"
TOLERANCE = 1e-12


@pytest.fixture(scope="module")
def corpora() -> dict[str, tuple[list[str], list[str]]]:
    data = shared_data()
    out = {}
    rows = load_realsumm(data)
    out["realsumm"] = ([r["prediction"] for r in rows], [r["reference"] for r in rows])
    reference, systems = load_wmt17(data)
    for name, hyps in systems.items():
        out[f"wmt17/{name}"] = (hyps, reference)
    return out


@pytest.fixture(scope="module")
def oracle() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as stored:
        return {k: stored[k] for k in stored.files}


def _matrix(preds, refs, stem, impl) -> np.ndarray:
    res = rouge(preds, refs, TYPES, stemmer=stem, implementation=impl)
    return np.column_stack([res[f"{t}_{x}"] for t in TYPES for x in "prf"])


def _assert_close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape, what
    diff = np.abs(got - want)
    worst = np.unravel_index(np.argmax(diff), diff.shape)
    assert diff.max() <= TOLERANCE, (
        f"{what}: max |diff| {diff.max():.3g} at row {worst[0]}, column {worst[1]} "
        f"({TYPES[worst[1] // 3]} {'PRF'[worst[1] % 3]}): {got[worst]!r} vs rouge-score {want[worst]!r}"
    )


def test_fixture_covers_every_corpus(corpora, oracle):
    for stem in ("nostem", "stem"):
        for name, (preds, _) in corpora.items():
            assert oracle[f"{stem}:{name}"].shape == (len(preds), 12)
    assert sum(len(p) for p, _ in corpora.values()) == 2500 + 16 * 3004


@pytest.mark.parametrize("stem", [False, True], ids=["nostem", "stem"])
def test_native_equals_rouge_score_on_every_row(corpora, oracle, stem):
    pytest.importorskip("respeval._core", reason="respeval._core is not built")
    for name, (preds, refs) in corpora.items():
        key = f"{'stem' if stem else 'nostem'}:{name}"
        _assert_close(_matrix(preds, refs, stem, "native"), oracle[key], key)


@pytest.mark.parametrize("stem", [False, True], ids=["nostem", "stem"])
def test_reference_equals_rouge_score_on_a_subset(corpora, oracle, stem):
    """The pure-Python reference is as slow as rouge-score: a quarter of REALSumm and two systems."""
    for name in ["realsumm", *sorted(k for k in corpora if k.startswith("wmt17/"))[:2]]:
        preds, refs = corpora[name]
        rows = slice(0, 600) if name == "realsumm" else slice(0, 1500)
        key = f"{'stem' if stem else 'nostem'}:{name}"
        _assert_close(_matrix(preds[rows], refs[rows], stem, "python"), oracle[key][rows], key)


@pytest.mark.parametrize("stem", [False, True], ids=["nostem", "stem"])
def test_fixture_is_still_rouge_score_live(corpora, oracle, stem):
    """rouge-score itself, run now, agrees with the stored fixture and with the compat API."""
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    theirs = rouge_scorer.RougeScorer(list(TYPES), use_stemmer=stem)
    ours = compat_rouge_scorer.RougeScorer(list(TYPES), use_stemmer=stem)
    for name in ["realsumm", sorted(k for k in corpora if k.startswith("wmt17/"))[-1]]:
        preds, refs = corpora[name]
        idx = list(range(0, len(preds), max(1, len(preds) // 60)))
        key = f"{'stem' if stem else 'nostem'}:{name}"
        live = np.array([[v for t in TYPES for v in theirs.score(refs[i], preds[i])[t]] for i in idx])
        _assert_close(live, oracle[key][idx], f"fixture vs live rouge-score, {key}")
        batch = ours.score_batch([refs[i] for i in idx], [preds[i] for i in idx])
        mine = np.array([[v for t in TYPES for v in row[t]] for row in batch])
        _assert_close(mine, live, f"compat score_batch vs live rouge-score, {key}")
