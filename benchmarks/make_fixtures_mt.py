"""Regenerate the sacreBLEU fixtures used by the ``tests/metrics/test_ref_*.py`` MT tests.

Runs sacreBLEU (the oracle) on the WMT17 en-de data in ``../shared/data/wmt17_en_de`` and
writes compact JSON files into ``tests/fixtures/``:

``sacrebleu_wmt17_corpus.json``
    Corpus BLEU (13a, intl, char, zh, none, lowercased 13a; with counts and totals),
    chrF variants and TER for all 16 systems.
``sacrebleu_wmt17_ter_segments.json``
    Per-segment TER edits and reference lengths: default options for all systems, and
    the normalisation variants for two systems. (sacreBLEU's TER takes ~10-25 s per
    system, too slow to rerun in every test session.)
``sacrebleu_wmt17_significance.json``
    Paired bootstrap and approximate randomization results (as ``--paired-bs`` /
    ``--paired-ar``) for BLEU, chrF and TER, and ``corpus_score(n_bootstrap=1000)``
    confidence intervals.

Usage::

    python benchmarks/make_fixtures_mt.py            # everything (several minutes)
    python benchmarks/make_fixtures_mt.py --only corpus

The script needs ``sacrebleu==2.6.0`` and numpy; ``SACREBLEU_SEED`` must be unset.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "wmt17_en_de"
FIXTURES = ROOT / "tests" / "fixtures"

BLEU_VARIANTS = {
    "13a": {},
    "intl": {"tokenize": "intl"},
    "char": {"tokenize": "char"},
    "zh": {"tokenize": "zh"},
    "none": {"tokenize": "none"},
    "13a-lc": {"lowercase": True},
}
CHRF_VARIANTS = {
    "chrF": {},
    "chrF-eps": {"eps_smoothing": True},
    "chrF++": {"word_order": 2},
    "chrF++-eps": {"word_order": 2, "eps_smoothing": True},
    "chrF-ws": {"whitespace": True},
    "chrF-lc": {"lowercase": True},
    "chrF1-c4": {"beta": 1, "char_order": 4},
}
TER_VARIANTS = {
    "normalized": {"normalized": True},
    "no_punct": {"no_punct": True},
    "case_sensitive": {"case_sensitive": True},
    "normalized-asian": {"normalized": True, "asian_support": True},
    "normalized-no_punct-cs": {"normalized": True, "no_punct": True, "case_sensitive": True},
}
TER_VARIANT_SYSTEMS = ["online-A.0", "uedin-nmt.4722"]
PAIRED_BASELINE = "LIUM-NMT.4900"
PAIRED_SYSTEMS = ["LMU-nmt-single.4893", "xmu.4910", "SYSTRAN.4847", "KIT.4950"]
CI_SYSTEM = "C-3MA.4959"


def load_data():
    """Reference lines and {system name: lines} (name = file name minus prefix/suffix)."""
    reference = (DATA / "newstest2017-ende-ref.de").read_text(encoding="utf-8").splitlines()
    systems = {}
    for path in sorted((DATA / "systems").glob("newstest2017.*.en-de.txt")):
        name = path.name[len("newstest2017.") : -len(".en-de.txt")]
        systems[name] = path.read_text(encoding="utf-8").splitlines()
    return reference, systems


def make_corpus(reference: list[str], systems: dict[str, list[str]]) -> dict:
    """Corpus scores of every system for every variant."""
    from sacrebleu.metrics import BLEU, CHRF, TER

    bleus = {key: BLEU(**kw, references=[reference]) for key, kw in BLEU_VARIANTS.items()}
    chrfs = {key: CHRF(**kw, references=[reference]) for key, kw in CHRF_VARIANTS.items()}
    ter = TER(references=[reference])
    out = {}
    for name, hyps in systems.items():
        start = time.time()
        entry = {"bleu": {}, "chrf": {}}
        for key, metric in bleus.items():
            s = metric.corpus_score(hyps, None)
            entry["bleu"][key] = {
                "score": s.score,
                "counts": s.counts,
                "totals": s.totals,
                "sys_len": s.sys_len,
                "ref_len": s.ref_len,
            }
        for key, metric in chrfs.items():
            entry["chrf"][key] = metric.corpus_score(hyps, None).score
        s = ter.corpus_score(hyps, None)
        entry["ter"] = {"score": s.score, "num_edits": s.num_edits, "ref_length": s.ref_length}
        out[name] = entry
        print(f"  corpus {name}: {time.time() - start:.1f}s", file=sys.stderr)
    return out


def make_ter_segments(reference: list[str], systems: dict[str, list[str]]) -> dict:
    """Per-segment TER statistics (edits per system, reference lengths per variant)."""
    from sacrebleu.metrics import TER

    out: dict = {"ref_len": {}, "edits": {}}
    variants = {"default": ({}, list(systems))}
    variants.update({key: (kw, TER_VARIANT_SYSTEMS) for key, kw in TER_VARIANTS.items()})
    for key, (kw, names) in variants.items():
        metric = TER(**kw, references=[reference])
        out["edits"][key] = {}
        for name in names:
            start = time.time()
            rows = metric._extract_corpus_statistics(systems[name], None)
            ref_lens = [row[1] for row in rows]
            assert all(length == int(length) for length in ref_lens)  # one reference
            out["ref_len"][key] = [int(length) for length in ref_lens]
            out["edits"][key][name] = [int(row[0]) for row in rows]
            print(f"  TER {key} {name}: {time.time() - start:.1f}s", file=sys.stderr)
    return out


def _result(result) -> dict:
    """A sacreBLEU significance ``Result`` as plain JSON numbers (float32 -> float)."""
    as_float = lambda v: None if v is None else float(v)  # noqa: E731
    return {
        "score": as_float(result.score),
        "p_value": as_float(result.p_value),
        "mean": as_float(result.mean),
        "ci": as_float(result.ci),
    }


def make_significance(reference: list[str], systems: dict[str, list[str]]) -> dict:
    """Paired tests as the CLI runs them, and single-system bootstrap CIs."""
    from sacrebleu.metrics import BLEU, CHRF, TER
    from sacrebleu.significance import PairedTest

    named = [(name, systems[name]) for name in [PAIRED_BASELINE] + PAIRED_SYSTEMS]
    out: dict = {"baseline": PAIRED_BASELINE, "systems": PAIRED_SYSTEMS}
    for test in ("bs", "ar"):
        start = time.time()
        metrics = {
            "BLEU": BLEU(references=[reference]),
            "chrF": CHRF(references=[reference]),
            "TER": TER(references=[reference]),
        }
        _, scores = PairedTest(named, metrics, references=None, test_type=test)()
        out[test] = {metric: [_result(r) for r in results] for metric, results in scores.items() if metric != "System"}
        print(f"  paired-{test}: {time.time() - start:.1f}s", file=sys.stderr)

    out["corpus_ci"] = {"system": CI_SYSTEM}
    for key, metric in (("BLEU", BLEU()), ("chrF", CHRF())):
        s = metric.corpus_score(systems[CI_SYSTEM], [reference], n_bootstrap=1000)
        out["corpus_ci"][key] = {"score": s.score, "mean": float(s._mean), "ci": float(s._ci)}
    return out


def write(name: str, payload: dict, compact: bool = False) -> None:
    """Write JSON: indented for score tables, on one line for long per-segment arrays."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    path = FIXTURES / name
    text = json.dumps(payload, separators=(",", ":")) if compact else json.dumps(payload, indent=1)
    path.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["corpus", "ter", "significance"], action="append")
    args = parser.parse_args()
    if "SACREBLEU_SEED" in os.environ:
        sys.exit("unset SACREBLEU_SEED: the fixtures use sacreBLEU's default seed 12345")
    import sacrebleu

    reference, systems = load_data()
    header = {"sacrebleu_version": sacrebleu.__version__, "n_segments": len(reference)}
    parts = args.only or ["corpus", "ter", "significance"]
    if "corpus" in parts:
        write("sacrebleu_wmt17_corpus.json", {**header, "systems": make_corpus(reference, systems)})
    if "ter" in parts:
        write(
            "sacrebleu_wmt17_ter_segments.json",
            {**header, **make_ter_segments(reference, systems)},
            compact=True,
        )
    if "significance" in parts:
        write("sacrebleu_wmt17_significance.json", {**header, **make_significance(reference, systems)})


if __name__ == "__main__":
    main()
