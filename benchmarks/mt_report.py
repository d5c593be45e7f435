"""BLEU, chrF, TER and SQuAD: respeval vs sacreBLEU 2.6.0 and the official SQuAD
script logic, in one process, one thread, interleaved.

    python benchmarks/mt_report.py            # prints a markdown table
    python benchmarks/mt_report.py --quick    # one round, TER on 300 segments
    python benchmarks/mt_report.py --only bleu chrf++ --rounds 7   # some workloads, more rounds

Each workload is what an evaluation job does: corpus BLEU / chrF of all 16 WMT17
systems against the reference (one call per system, references re-read each
time by both tools), TER of one whole system (3,004 segments), SQuAD v2.0 EM/F1 of
the dev set.  Rounds interleave the two tools (A B A B ...), so they share whatever
load the machine has; the table gives the ratio of the best calls and the median and
range of the ratios round by round.  Before timing, each workload's scores are
checked equal (within 1e-9) between the two tools.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import platform
import re
import string
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import report_json  # noqa: E402
from _helpers.corpora import load_wmt17, read_jsonl  # noqa: E402
from _helpers.paths import SHARED_DATA as DATA  # noqa: E402

WORKLOADS = ("bleu", "chrf", "chrf++", "ter", "squad")


def host_cpu() -> str:
    """The CPU's model name and count, and the instruction-set path the core runs."""
    from respeval import _core

    name = report_json.cpu_model() or platform.processor() or platform.machine()
    return f"{name}, {os.cpu_count()} CPUs, respeval SIMD path {_core.simd_path()}"


def interleaved(theirs, ours, rounds: int) -> tuple[list[float], list[float]]:
    """Wall times of ``rounds`` calls of each, alternating."""
    a, b = [], []
    for _ in range(rounds):
        for fn, times in ((theirs, a), (ours, b)):
            gc.collect()
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return a, b


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
    ap.add_argument("--only", nargs="+", choices=WORKLOADS, default=list(WORKLOADS), help="these workloads only")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5, TER 3; --quick 1)")
    report_json.add_option(ap)
    args = ap.parse_args()
    rounds = args.rounds or (1 if args.quick else 5)
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
    load0 = os.getloadavg()
    rows = []
    results: dict = {}

    def row(key, name, theirs, ours, target, n_rounds=rounds):
        if key not in args.only:
            return
        want, got = theirs(), ours()  # the same numbers first
        if any(abs(x - y) > 1e-9 for x, y in zip(want, got)) or len(want) != len(got):
            raise SystemExit(f"{name}: respeval {got} differs from the peer {want}")
        a, b = interleaved(theirs, ours, n_rounds)
        per_round = sorted(x / y for x, y in zip(a, b))
        rows.append((name, min(a), min(b), per_round, target))
        results[key] = {
            "name": name,
            "peer_best_s": min(a),
            "respeval_best_s": min(b),
            "target": target,
            "met": None if target is None else min(a) / min(b) >= target,
            **report_json.ratio(a, b),
        }
        print(
            f"{name}: peer {min(a):.3f}s, respeval {min(b):.4f}s, {min(a) / min(b):.1f}x", file=sys.stderr, flush=True
        )

    row(
        "bleu",
        "corpus BLEU, 16 systems (13a, 48,064 segments)",
        lambda: [sacrebleu.corpus_bleu(h, [reference]).score for h in hyps],
        lambda: [bleu(h, reference, threads=1).score for h in hyps],
        50,
    )
    row(
        "chrf",
        "corpus chrF, 16 systems",
        lambda: [CHRF().corpus_score(h, [reference]).score for h in hyps],
        lambda: [chrf(h, reference, threads=1).score for h in hyps],
        60,
    )
    row(
        "chrf++",
        "corpus chrF++, 16 systems",
        lambda: [CHRF(word_order=2).corpus_score(h, [reference]).score for h in hyps],
        lambda: [chrf(h, reference, word_order=2, threads=1).score for h in hyps],
        60,
    )
    n_ter = 300 if args.quick else len(reference)
    row(
        "ter",
        f"TER corpus score, 1 system ({n_ter:,} segments)",
        lambda: [TER().corpus_score(hyps[0][:n_ter], [reference[:n_ter]]).score],
        lambda: [ter(hyps[0][:n_ter], reference[:n_ter], threads=1).score],
        120,
        args.rounds or (1 if args.quick else 3),
    )
    golds = read_jsonl(DATA / "squad" / "dev-v2.0-gold.jsonl")
    preds = json.loads((DATA / "squad" / "predictions-v2.0" / "bert.json").read_text(encoding="utf-8"))
    pl = [preds.get(g["id"]) for g in golds]
    gl = [g["answers"] for g in golds]

    def ours_squad():
        res = squad(pl, gl, version="v2")
        return [res.exact_match, res.f1]

    row(
        "squad",
        f"SQuAD v2.0 EM/F1, dev set ({len(golds):,} questions)",
        lambda: list(official_v2(golds, preds)),
        ours_squad,
        None,
    )
    load1 = os.getloadavg()

    print(f"Host: {host_cpu()}.")
    print(f"Load average (1 min) before / after: {load0[0]:.2f} / {load1[0]:.2f}; {rounds} interleaved rounds.")
    print()
    print("| workload | peer, best (s) | respeval, best (s) | best / best | per round: median [min, max] | target |")
    print("|---|---:|---:|---:|---:|---|")
    for name, theirs, ours, per_round, target in rows:
        median = per_round[len(per_round) // 2]
        if target is None:
            verdict = "-"
        elif theirs / ours >= target:
            verdict = f"{target}x: met"
        else:
            verdict = f"{target}x: **not met** ({target / (theirs / ours):.2f}x short)"
        print(
            f"| {name} | {theirs:.3f} | {ours:.4f} | {theirs / ours:.1f}x | {median:.1f}x "
            f"[{per_round[0]:.1f}, {per_round[-1]:.1f}] | {verdict} |"
        )
    report_json.write(args.json, "mt_report.py", {"quick": args.quick, "rounds": rounds, "workloads": results}, load0)


if __name__ == "__main__":
    main()
