"""BLEU, chrF, TER and SQuAD: respeval vs sacreBLEU 2.6.0 and the official SQuAD
script logic, in one process, one thread, best of N runs.

    python benchmarks/mt_report.py            # prints a markdown table
    python benchmarks/mt_report.py --quick    # fewer repeats, TER on 300 segments

Each workload is what an evaluation job does: corpus BLEU / chrF of all 16 WMT17
systems against the reference (one call per system, references re-read each
time by both tools), TER of one system, SQuAD v2.0 EM/F1 of the dev set.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import string
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT / "tests"))
from _helpers.corpora import load_wmt17  # noqa: E402


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


# The official SQuAD v2.0 script's logic (evaluate-v2.0.py), inlined as the baseline.
def _normalize_answer(s):
    def remove_articles(text):
        return re.sub(re.compile(r"\b(a|an|the)\b", re.UNICODE), " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def _f1(a_gold, a_pred):
    gold_toks = _normalize_answer(a_gold).split() if a_gold else []
    pred_toks = _normalize_answer(a_pred).split() if a_pred else []
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def official_v2(golds, preds):
    exact, f1 = {}, {}
    for g in golds:
        answers = [a for a in g["answers"] if _normalize_answer(a)] or [""]
        p = preds[g["id"]]
        exact[g["id"]] = max(int(_normalize_answer(a) == _normalize_answer(p)) for a in answers)
        f1[g["id"]] = max(_f1(a, p) for a in answers)
    n = len(exact)
    return 100.0 * sum(exact.values()) / n, 100.0 * sum(f1.values()) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    repeats = 1 if args.quick else 3
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import sacrebleu
    from sacrebleu.metrics import CHRF, TER

    import respeval  # noqa: F401
    from respeval.metrics.bleu import bleu
    from respeval.metrics.chrf import chrf
    from respeval.metrics.match import squad
    from respeval.metrics.ter import ter

    reference, systems = load_wmt17(DATA)
    hyps = list(systems.values())
    bleu(hyps[0][:50], reference[:50])  # warm up (import-time build check)
    rows = []

    def row(name, theirs, ours, n_items, unit):
        rows.append((name, theirs, ours, n_items, unit))
        print(f"{name}: sacrebleu/official {theirs:.3f}s, respeval {ours:.3f}s, {theirs / ours:.1f}x", flush=True)

    row(
        "corpus BLEU, 16 systems (13a)",
        best(lambda: [sacrebleu.corpus_bleu(h, [reference]).score for h in hyps], repeats),
        best(lambda: [bleu(h, reference, threads=1).score for h in hyps], repeats),
        16 * 3004,
        "segments",
    )
    row(
        "corpus chrF, 16 systems",
        best(lambda: [CHRF().corpus_score(h, [reference]).score for h in hyps], repeats),
        best(lambda: [chrf(h, reference, threads=1).score for h in hyps], repeats),
        16 * 3004,
        "segments",
    )
    row(
        "corpus chrF++, 16 systems",
        best(lambda: [CHRF(word_order=2).corpus_score(h, [reference]).score for h in hyps], repeats),
        best(lambda: [chrf(h, reference, word_order=2, threads=1).score for h in hyps], repeats),
        16 * 3004,
        "segments",
    )
    n_ter = 300 if args.quick else 1000
    row(
        f"TER, 1 system, {n_ter} segments",
        best(lambda: TER().corpus_score(hyps[0][:n_ter], [reference[:n_ter]]).score, 1),
        best(lambda: ter(hyps[0][:n_ter], reference[:n_ter]).score, 1),
        n_ter,
        "segments",
    )
    golds = [json.loads(x) for x in (DATA / "squad" / "dev-v2.0-gold.jsonl").open(encoding="utf-8")]
    preds = json.loads((DATA / "squad" / "predictions-v2.0" / "bert.json").read_text(encoding="utf-8"))
    pl = [preds.get(g["id"]) for g in golds]
    gl = [g["answers"] for g in golds]
    row(
        "SQuAD v2.0 EM/F1, dev set",
        best(lambda: official_v2(golds, preds), repeats),
        best(lambda: squad(pl, gl, version="v2"), repeats),
        len(golds),
        "questions",
    )

    print()
    print("| workload | sacreBLEU / official script (s) | respeval (s) | speed-up |")
    print("|---|---:|---:|---:|")
    for name, theirs, ours, n, unit in rows:
        print(f"| {name} ({n:,} {unit}) | {theirs:.3f} | {ours:.3f} | {theirs / ours:.1f}x |")


if __name__ == "__main__":
    main()
