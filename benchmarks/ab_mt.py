"""The MT tokenizers' entry points and chrF's character n-grams, two builds of the core
A against B, interleaved in one process (issue 34: cext/mt_scan.h, the GC pause).

    cp .venv/lib/python3.11/site-packages/respeval/_core.*.so /tmp/before.so   # change cext/, rebuild:
    python benchmarks/ab_mt.py /tmp/before.so .venv/lib/python3.11/site-packages/respeval/_core.cpython-311-x86_64-linux-gnu.so

Each workload is what one BLEU / chrF++ call does on one side of WMT17 en-de: the
reference (3,004 segments) through ``tokenize_13a_ids``, ``chrf_words_ids`` (a fresh
vocabulary each time) and ``chrf_chars``; ``mt_reference_rows`` and
``tokenize_13a_tokens`` of it (the lists the GC pause is for, with sacreBLEU's objects
from one corpus_bleu call in the heap, as in mt_report.py); and ``rouge_pair_stats`` of
each system's characters against the reference's, 6-grams (chrF's kernel).  Every
workload's output is checked equal between the builds first.  Each round runs A and B in
a random order; the per-round ratio B/A and its quartiles are printed per workload.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from _helpers.corpora import load_wmt17  # noqa: E402
from _helpers.paths import SHARED_DATA  # noqa: E402
from ab import interleave, load_core, report  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    import sacrebleu

    reference, systems = load_wmt17(SHARED_DATA)
    hyps = list(systems.values())
    sacrebleu.corpus_bleu(hyps[0], [reference])  # the peer's leftovers in the heap
    cores = {"A": load_core(args.before, "a"), "B": load_core(args.after, "b")}
    print(f"load average (1 min) {os.getloadavg()[0]:.2f}; {args.rounds} rounds; A {args.before}, B {args.after}")

    def chars(core, texts):
        ids, off = core.chrf_chars(texts)
        return np.frombuffer(ids, np.int32), np.frombuffer(off, np.int64)

    ref_chars = chars(cores["A"], reference)
    hyp_chars = [chars(cores["A"], h) for h in hyps]
    pairs = np.arange(len(reference), dtype=np.int64)
    vocab = int(max(max(int(h[0].max()) for h in hyp_chars), int(ref_chars[0].max()))) + 1

    def char_pairs(core):
        out = np.zeros((len(reference), 6), np.int64)
        for h in hyp_chars:
            core.rouge_pair_stats(*h, *ref_chars, pairs, pairs, 6, False, vocab, out, np.zeros(0, np.int64), 1)
        return out

    workloads = {
        "tokenize_13a_ids": (lambda c: c.tokenize_13a_ids(c.Vocab(), reference), 1),
        "chrf_words_ids": (lambda c: c.chrf_words_ids(c.Vocab(), reference), 1),
        "chrf_chars": (lambda c: c.chrf_chars(reference), 1),
        "mt_reference_rows": (lambda c: c.mt_reference_rows(reference), 1),
        "tokenize_13a_tokens": (lambda c: c.tokenize_13a_tokens(reference), 1),
        "rouge_pair_stats, chrF's 6-grams, 16 systems": (char_pairs, len(hyps)),
    }
    for name, (fn, per) in workloads.items():
        a, b = fn(cores["A"]), fn(cores["B"])
        same = (a == b).all() if isinstance(a, np.ndarray) else a == b
        if not same:
            raise SystemExit(f"{name}: the builds differ")

        def one(side, fn=fn):
            t = time.perf_counter()
            fn(cores[side])
            return time.perf_counter() - t

        per_row, ratios = interleave(one, args.rounds, per * len(reference))
        report(per_row, {"A": "before", "B": "after"}, ratios, name, digits=3)


if __name__ == "__main__":
    main()
