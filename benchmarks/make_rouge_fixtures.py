"""Precompute rouge-score 0.1.2's outputs on the real corpora into a test fixture.

rouge-score needs about four minutes for every REALSumm row and every WMT17
system with and without stemming, too long for each CI run, so its exact
float outputs are stored in ``tests/fixtures/rouge_oracle.npz`` and the test
suite compares against them (plus a live rouge-score run on a subset).

    python benchmarks/make_rouge_fixtures.py            # regenerate the fixture
    python benchmarks/make_rouge_fixtures.py --check    # compare respeval live, print max differences
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from _helpers.corpora import load_realsumm, load_wmt17  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
FIXTURE = ROOT / "tests" / "fixtures" / "rouge_oracle.npz"
TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def corpora() -> dict[str, tuple[list[str], list[str]]]:
    """name -> (predictions, references), in a fixed order."""
    out = {}
    rows = load_realsumm(DATA)
    out["realsumm"] = ([r["prediction"] for r in rows], [r["reference"] for r in rows])
    reference, systems = load_wmt17(DATA)
    for name, hyps in systems.items():
        out[f"wmt17/{name}"] = (hyps, reference)
    return out


def oracle(preds: list[str], refs: list[str], stem: bool) -> np.ndarray:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(list(TYPES), use_stemmer=stem)
    out = np.empty((len(preds), 3 * len(TYPES)))
    for i, (p, r) in enumerate(zip(preds, refs)):
        s = scorer.score(r, p)
        out[i] = [v for t in TYPES for v in s[t]]
    return out


def ours(preds: list[str], refs: list[str], stem: bool) -> np.ndarray:
    from respeval.metrics.rouge import rouge

    res = rouge(preds, refs, TYPES, stemmer=stem)
    return np.column_stack([res[f"{t}_{x}"] for t in TYPES for x in "prf"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare respeval with the stored fixture")
    args = ap.parse_args()
    data = corpora()
    if args.check:
        stored = np.load(FIXTURE)
        for stem in (False, True):
            for name, (p, r) in data.items():
                key = f"{'stem' if stem else 'nostem'}:{name}"
                diff = np.abs(ours(p, r, stem) - stored[key]).max()
                print(f"{key}: max |diff| = {diff:.3g}")
        return
    arrays = {}
    for stem in (False, True):
        for name, (p, r) in data.items():
            t = time.perf_counter()
            arrays[f"{'stem' if stem else 'nostem'}:{name}"] = oracle(p, r, stem)
            print(f"{name} stem={stem}: {len(p)} rows in {time.perf_counter() - t:.1f}s", flush=True)
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(FIXTURE, **arrays)
    print(f"wrote {FIXTURE} ({FIXTURE.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
