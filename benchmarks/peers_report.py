"""respeval against what users would pick instead, at equal threads, interleaved (issue 34).

    python benchmarks/peers_report.py                     # every group, ~7 minutes on 2 cores (torchmetrics most of it)
    python benchmarks/peers_report.py --only rouge        # rouge-score-rs and rouge-rust on all threads
    python benchmarks/peers_report.py --only bleu         # bleuscore; torchmetrics where installed

ROUGE (``--only rouge``): rouge-score-rs 0.2.1 with its own ``score_batch`` on all cores
(``RAYON_NUM_THREADS`` unset: rayon's pool has one thread per CPU) and rouge-rust
(``fast_rouge``, ``score_batch_flat``, parallel, no stemming, rouge1/2/L only) against
``respeval.rouge(..., threads=os.cpu_count())``, on the 100,000 short real pairs (with and
without Porter stemming) and rougeLsum on the 864 long documents (benchmarks/corpus.py).
torchmetrics' ``rouge_score`` (functional, pure Python per pair) runs on 2,000 of the short pairs.

BLEU (``--only bleu``): corpus BLEU of the 16 WMT17 systems, respeval one thread against
bleuscore 0.2.0 (Rust; ``ref_len_method="sacrebleu"``, parallel) and torchmetrics'
``SacreBLEUScore`` (13a), plus chrF++ and TER against torchmetrics' ``CHRFScore`` and
``TranslationEditRate`` on one system; torchmetrics runs on the CPU build of torch.

Each group is timed interleaved round by round (A B C A B C ...), wall time, a garbage
collection before each call; the table gives the best call of each, the ratio of the best
calls, and the median and range of the per-round ratios.  Every peer's numbers are compared
with respeval's before timing; a peer that differs is reported with the difference (it is
not timed as the same job when the difference is more than rounding).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

os.environ.pop("RAYON_NUM_THREADS", None)  # before rouge_score_rs is imported: all cores
os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402
import report_json  # noqa: E402
from mt_report import host_cpu  # noqa: E402

GROUPS = ("rouge", "bleu")
SHORT = ("rouge1", "rouge2", "rougeL")
# what --json writes: every table by its key, and every peer's difference from respeval's numbers
RESULTS: dict = {"tables": {}, "differences": {}, "versions": {}}


def _installed(module: str) -> str | None:
    import importlib.metadata as md

    names = {"fast_rouge": "rouge-rust", "bleuscore": "bleuscore", "torchmetrics": "torchmetrics"}
    try:
        __import__(module)
        return md.version(names.get(module, module))
    except Exception as exc:  # noqa: BLE001 - report why a peer is absent, whatever it was
        print(f"{module}: not measured ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None


def interleave(contenders: dict, rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {k: [] for k in contenders}
    for _ in range(rounds):
        for key, fn in contenders.items():
            gc.collect()
            t = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t)
    return times


def table(
    key: str, title: str, times: dict[str, list[float]], ours: str, peers: list[str], target: float | None
) -> None:
    found = RESULTS["tables"][key] = {"title": title, "target": target, "peers": {}}
    print(f"\n**{title}**\n")
    print("| peer | peer best (s) | respeval best (s) | best / best | per round: median [min, max] | target |")
    print("|---|---:|---:|---:|---:|---|")
    for peer in peers:
        per = sorted(a / b for a, b in zip(times[peer], times[ours]))
        med = per[len(per) // 2] if len(per) % 2 else (per[len(per) // 2 - 1] + per[len(per) // 2]) / 2
        best = min(times[peer]) / min(times[ours])
        if target is None:
            verdict = "-"
        elif med >= target:
            verdict = f">= {target}x: met"
        else:
            verdict = f">= {target}x: **not met** ({target / med:.2f}x short)"
        print(
            f"| {peer} | {min(times[peer]):.4f} | {min(times[ours]):.4f} | {best:.2f}x | "
            f"{med:.2f}x [{per[0]:.2f}, {per[-1]:.2f}] | {verdict} |"
        )
        found["peers"][peer] = {
            "peer_best_s": min(times[peer]),
            "respeval_best_s": min(times[ours]),
            "met": None if target is None else med >= target,
            **report_json.ratio(times[peer], times[ours]),
        }
    sys.stdout.flush()


def _max_diff(a, b) -> float:
    import numpy as np

    return float(np.max(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))))


def rouge_group(rounds: int) -> None:
    import numpy as np
    import rouge_score_rs

    import respeval

    threads = os.cpu_count() or 1
    fast_rouge_version = _installed("fast_rouge")
    tm_version = _installed("torchmetrics")
    RESULTS["versions"].update(
        {"rouge-score-rs": rouge_score_rs.__version__, "rouge-rust": fast_rouge_version, "torchmetrics": tm_version}
    )
    short = tuple(list(x) for x in corpus.short_pairs())
    long_docs = tuple(list(x) for x in corpus.long_pairs())
    print(
        f"rouge-score-rs {rouge_score_rs.__version__} (RAYON_NUM_THREADS unset: {threads} threads), "
        f"rouge-rust {fast_rouge_version or 'absent'}, torchmetrics {tm_version or 'absent'}; "
        f"respeval threads={threads}; {rounds} interleaved rounds, wall time"
    )
    for workload, (preds, refs), types in (("short", short, SHORT), ("long", long_docs, ("rougeLsum",))):
        for stem in (False, True):
            ours = lambda p=preds, r=refs, t=types, s=stem: respeval.rouge(p, r, t, stemmer=s, threads=threads)  # noqa: E731
            want = corpus.as_matrix("respeval", ours(), types)
            rs = corpus.runner("rouge-score-rs", types, stem)
            got = corpus.as_matrix("rouge-score-rs", rs(preds, refs), types)
            if not np.array_equal(got, want):
                sys.exit(f"rouge-score-rs differs from respeval ({workload}, stem={stem}): {_max_diff(got, want)}")
            contenders = {
                "respeval": ours,
                f"rouge-score-rs score_batch ({threads} threads)": lambda f=rs, p=preds, r=refs: f(p, r),
            }
            if workload == "short" and not stem and fast_rouge_version:
                import fast_rouge

                flat = fast_rouge.score_batch_flat(refs, preds)
                mat = np.column_stack(
                    [getattr(flat, f"{t}_{x}") for t in types for x in ("precision", "recall", "fmeasure")]
                )
                if not np.array_equal(mat, want):
                    sys.exit(f"rouge-rust differs from respeval: {_max_diff(mat, want)}")
                contenders[f"rouge-rust score_batch_flat ({threads} threads)"] = lambda p=preds, r=refs: (
                    fast_rouge.score_batch_flat(r, p)
                )
            times = interleave(contenders, rounds if workload == "short" else max(3, rounds // 2))
            tag = "Porter stemming" if stem else "no stemming"
            what = "rouge1+2+L, 100,000 short pairs" if workload == "short" else "rougeLsum, 864 long documents"
            table(
                f"rouge/{workload}/{'stem' if stem else 'no_stem'}",
                f"{what}, {tag}, {threads} threads each",
                times,
                "respeval",
                [k for k in contenders if k != "respeval"],
                1.0,
            )
    if tm_version:
        from torchmetrics.functional.text import rouge_score

        p, r = corpus.subset(short, 2000)

        def tm_rouge():
            return [rouge_score(x, y, rouge_keys=SHORT) for x, y in zip(p, r)]

        got = tm_rouge()
        ours_small = respeval.rouge(p, r, SHORT, threads=threads)
        diff = max(
            abs(float(g[f"{t}_fmeasure"]) - float(ours_small[f"{t}_f"][i])) for i, g in enumerate(got) for t in SHORT
        )
        print(
            f"\ntorchmetrics rouge_score vs respeval on 2,000 pairs, largest |F difference|: {diff:.2e} (torchmetrics computes in float32)"
        )
        RESULTS["differences"]["torchmetrics rouge_score, largest |F difference|"] = diff
        times = interleave(
            {"respeval": lambda: respeval.rouge(p, r, SHORT, threads=threads), "torchmetrics rouge_score": tm_rouge}, 3
        )
        table(
            "rouge/torchmetrics",
            "rouge1+2+L, 2,000 short pairs (every 50th), no stemming",
            times,
            "respeval",
            ["torchmetrics rouge_score"],
            None,
        )


def bleu_group(rounds: int) -> None:
    sys.path.insert(0, str(HERE.parent / "tests"))
    from _helpers.corpora import load_wmt17
    from _helpers.paths import SHARED_DATA
    from respeval.metrics.bleu import bleu
    from respeval.metrics.chrf import chrf
    from respeval.metrics.ter import ter

    reference, systems = load_wmt17(SHARED_DATA)
    hyps = list(systems.values())
    refs_nested = [[r] for r in reference]
    ours = [bleu(h, reference, threads=1).score for h in hyps]
    bs_version = _installed("bleuscore")
    tm_version = _installed("torchmetrics")
    RESULTS["versions"].update({"bleuscore": bs_version, "torchmetrics": tm_version})
    print(
        f"\nbleuscore {bs_version or 'absent'}, torchmetrics {tm_version or 'absent'}; respeval one thread; "
        f"{rounds} interleaved rounds, wall time"
    )
    contenders = {"respeval": lambda: [bleu(h, reference, threads=1).score for h in hyps]}
    if bs_version:
        import bleuscore

        def bs():
            return [100 * bleuscore.compute(refs_nested, h, ref_len_method="sacrebleu")["bleu"] for h in hyps]

        diff = _max_diff(bs(), ours)
        print(f"bleuscore vs respeval (= sacreBLEU), 16 systems, largest |BLEU difference|: {diff:.2e}")
        RESULTS["differences"]["bleuscore, largest |BLEU difference|"] = diff
        contenders["bleuscore compute (Rust)"] = bs
    if tm_version:
        from torchmetrics.functional.text import sacre_bleu_score

        def tm_bleu():
            return [100 * float(sacre_bleu_score(h, refs_nested, tokenize="13a")) for h in hyps]

        diff = _max_diff(tm_bleu(), ours)
        print(f"torchmetrics sacre_bleu_score vs respeval, largest |BLEU difference|: {diff:.2e} (float32 inside)")
        RESULTS["differences"]["torchmetrics sacre_bleu_score, largest |BLEU difference|"] = diff
        contenders["torchmetrics sacre_bleu_score"] = tm_bleu
    times = interleave(contenders, rounds)
    table(
        "bleu/corpus",
        "corpus BLEU, 16 WMT17 systems (48,064 segments)",
        times,
        "respeval",
        [k for k in contenders if k != "respeval"],
        None,
    )
    if tm_version:
        from torchmetrics.functional.text import chrf_score, translation_edit_rate

        h0 = hyps[0]
        ours_chrf = chrf(h0, reference, word_order=2, threads=1).score
        theirs = 100 * float(chrf_score(h0, refs_nested, n_word_order=2))
        print(f"\ntorchmetrics chrf_score (chrF++) {theirs:.6f} vs respeval {ours_chrf:.6f}")
        RESULTS["differences"]["torchmetrics chrf_score (chrF++)"] = {"torchmetrics": theirs, "respeval": ours_chrf}
        times = interleave(
            {
                "respeval": lambda: chrf(h0, reference, word_order=2, threads=1).score,
                "torchmetrics chrf_score": lambda: chrf_score(h0, refs_nested, n_word_order=2),
            },
            3,
        )
        table(
            "bleu/chrf++",
            "chrF++, one WMT17 system (3,004 segments)",
            times,
            "respeval",
            ["torchmetrics chrf_score"],
            None,
        )
        n = 500
        ours_ter = ter(h0[:n], reference[:n], threads=1).score
        theirs = 100 * float(translation_edit_rate(h0[:n], refs_nested[:n]))
        print(f"\ntorchmetrics translation_edit_rate {theirs:.6f} vs respeval TER {ours_ter:.6f} ({n} segments)")
        RESULTS["differences"]["torchmetrics translation_edit_rate"] = {"torchmetrics": theirs, "respeval": ours_ter}
        times = interleave(
            {
                "respeval": lambda: ter(h0[:n], reference[:n], threads=1).score,
                "torchmetrics translation_edit_rate": lambda: translation_edit_rate(h0[:n], refs_nested[:n]),
            },
            3,
        )
        table(
            "bleu/ter",
            f"TER, {n} segments of one WMT17 system",
            times,
            "respeval",
            ["torchmetrics translation_edit_rate"],
            None,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", choices=GROUPS, default=list(GROUPS))
    ap.add_argument("--rounds", type=int, default=7)
    report_json.add_option(ap)
    args = ap.parse_args()
    if not corpus.data_available():
        sys.exit(corpus.missing_message())
    load0 = os.getloadavg()
    print(f"Host: {host_cpu()}. Load average (1/5/15 min) before: {load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f}")
    if "rouge" in args.only:
        rouge_group(args.rounds)
    if "bleu" in args.only:
        bleu_group(max(3, args.rounds // 2))
    load1 = os.getloadavg()
    print(f"\nLoad average (1/5/15 min) after: {load1[0]:.2f} / {load1[1]:.2f} / {load1[2]:.2f}")
    report_json.write(args.json, "peers_report.py", {"groups": args.only, "rounds": args.rounds, **RESULTS}, load0)


if __name__ == "__main__":
    main()
