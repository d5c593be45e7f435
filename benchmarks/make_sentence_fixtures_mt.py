"""Precompute sacreBLEU 2.6.0's sentence-level BLEU, chrF and chrF++ on every line of
every WMT17 system into tests/fixtures/sacrebleu_wmt17_sentences.npz (sacreBLEU
needs about two minutes for that; the tests compare against the fixture and
against live sacreBLEU on a sample).

    python benchmarks/make_sentence_fixtures_mt.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from _helpers.corpora import load_wmt17  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "sacrebleu_wmt17_sentences.npz"


def main() -> None:
    from sacrebleu.metrics import BLEU, CHRF

    reference, systems = load_wmt17(ROOT.parent / "shared" / "data")
    bleu = BLEU(effective_order=True)
    chrf, chrfpp = CHRF(), CHRF(word_order=2)
    arrays = {}
    for name, hyps in systems.items():
        arrays[f"bleu:{name}"] = np.array([bleu.sentence_score(h, [r]).score for h, r in zip(hyps, reference)])
        arrays[f"chrf:{name}"] = np.array([chrf.sentence_score(h, [r]).score for h, r in zip(hyps, reference)])
        arrays[f"chrf++:{name}"] = np.array([chrfpp.sentence_score(h, [r]).score for h, r in zip(hyps, reference)])
        print(name, flush=True)
    np.savez_compressed(FIXTURE, **arrays)
    print(f"wrote {FIXTURE} ({FIXTURE.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
