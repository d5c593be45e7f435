"""ROUGE speed and memory report: respeval vs rouge-score-rs vs rouge-score, as markdown.

    python benchmarks/report.py            # the full report (~5 minutes)
    python benchmarks/report.py --quick    # smaller workloads (~1 minute), labelled as such

The same workloads as bench_rouge.py (see corpus.py), plus the short pairs with every
reference made distinct (``corpus.distinct_references``: same tokens, no reference shared),
timed directly with time.perf_counter: one warm-up call on a slice of the pairs, then N
rounds in which the contenders' calls are interleaved (A B C A B C ...), so that they share
whatever load the machine has; each contender's best call counts (N = 7 on short pairs and
3 on long documents; 2 and 1 for the pure-Python ones), and the ratio of two contenders is
also taken round by round (same round, same load) to report its median and range. The CPU time of the process (time.process_time) is
recorded too: on a shared machine pairs per CPU-second is the steadier single-thread figure,
since a process accrues no CPU time while it waits for a core.

Every measurement runs in a fresh subprocess:

* speed A (RAYON_NUM_THREADS=1): respeval threads=1, rouge-score-rs, respeval threads=N,
  interleaved: the one-thread comparison and respeval's 1 -> N scaling;
* speed B (RAYON_NUM_THREADS unset, so rouge-score-rs uses every core): respeval threads=N
  and rouge-score-rs, interleaved: the all-threads comparison. rouge-score-rs reads
  RAYON_NUM_THREADS once per process, hence two processes;
* speed C: rouge-score and respeval's pure-Python reference, on evenly spread subsets;
* memory: one process per library that scores the 100,000 short pairs once (no stemming,
  all threads) and reports its peak RSS (ru_maxrss) after scoring minus the RSS after
  imports, loading the pairs and a 100-pair warm-up (the peak is reset to that baseline
  through /proc/self/clear_refs first), so no library's memory pollutes another's.

Each worker checks that the scores it timed equal respeval's on the same pairs (per pair,
within 1e-12); the report refuses to print numbers for a library that disagrees.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402
import report_json  # noqa: E402

SHORT_TYPES = ("rouge1", "rouge2", "rougeL")
LONG_TYPES = ("rougeLsum",)
NCPU = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

# rounds: best of N interleaved calls, (short, long), for the fast and the slow contenders
FULL = dict(
    short=corpus.N_SHORT,
    rouge_score=5_000,
    python_ref=2_000,
    long=None,
    long_rouge_score=16,
    long_python_ref=8,
    mem_slow=corpus.N_SHORT,
    rounds={"fast": (7, 3), "slow": (2, 1)},
)
QUICK = dict(
    short=20_000,
    rouge_score=1_000,
    python_ref=500,
    long=160,
    long_rouge_score=4,
    long_python_ref=2,
    mem_slow=5_000,
    rounds={"fast": (3, 2), "slow": (1, 1)},
)


# --- worker side (runs in a fresh process) ---------------------------------------------------


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _check(library: str, result, preds, refs, types, stem) -> None:
    import numpy as np

    got = corpus.as_matrix(library, result, types)
    want = corpus.as_matrix("respeval", corpus.runner("respeval", types, stem, 1)(preds, refs), types)
    diff = float(np.max(np.abs(got - want))) if len(got) else 0.0
    if got.shape != want.shape or diff > 1e-12:
        raise SystemExit(
            f"{library} disagrees with respeval (max |diff| {diff:.3g}, stem={stem}, types={types}): not timing it"
        )


def worker_speed(job: dict, data: dict) -> list[dict]:
    """Time several contenders on each workload with their calls interleaved (A B C A B C
    ...), so that they see the same machine load; best of ``rounds`` calls each."""
    sizes = job["sizes"]
    rs_threads = job["rs_threads"]
    subsets = {"rouge-score": ("rouge_score", "long_rouge_score"), "respeval-python": ("python_ref", "long_python_ref")}
    out = []
    workloads = [("short", SHORT_TYPES, (False, True)), ("long", LONG_TYPES, (False, True))]
    if job["pace"] == "fast" and "distinct" in data:
        workloads.insert(1, ("distinct", SHORT_TYPES, (False,)))
    for workload, types, stems in workloads:
        rounds = sizes["rounds"][job["pace"]][workload == "long"]
        for stem in stems:
            contenders = []
            for lib, threads in job["contenders"]:
                preds, refs = data[workload]
                if lib in subsets:
                    preds, refs = corpus.subset((preds, refs), sizes[subsets[lib][workload == "long"]])
                fn = corpus.runner(lib, types, stem, threads)
                k = max(1, min(1000, len(preds) // 10))
                fn(preds[:k], refs[:k])  # warm-up: thread pools, lazy imports, caches
                contenders.append(
                    dict(
                        lib=lib,
                        threads=rs_threads if threads is None else threads,
                        fn=fn,
                        preds=preds,
                        refs=refs,
                        best=float("inf"),
                        cpu=float("inf"),
                        cpu_at_best=0.0,
                        walls=[],
                        cpus=[],
                        result=None,
                    )
                )
            for _ in range(rounds):
                for c in contenders:
                    c["result"] = None
                    gc.collect()
                    c0 = time.process_time()
                    t0 = time.perf_counter()
                    c["result"] = c["fn"](c["preds"], c["refs"])
                    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                    c["walls"].append(wall)
                    c["cpus"].append(cpu)
                    if wall < c["best"]:
                        c["best"], c["cpu_at_best"] = wall, cpu
                    c["cpu"] = min(c["cpu"], cpu)
            for c in contenders:
                _check(c["lib"], c["result"], c["preds"], c["refs"], types, stem)
                n = len(c["preds"])
                out.append(
                    dict(
                        library=c["lib"],
                        workload=workload,
                        stem=stem,
                        threads=c["threads"],
                        pairs=n,
                        best=c["best"],
                        rate=n / c["best"],
                        cpu=c["cpu"],
                        cpu_rate=n / c["cpu"],
                        cpu_at_best=c["cpu_at_best"],
                        walls=c["walls"],
                        cpus=c["cpus"],
                        rounds=rounds,
                        process=job["name"],
                    )
                )
                c["result"] = None
    return out


def _rss_now_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise OSError("no VmRSS")


def _reset_peak() -> bool:
    """Reset the peak RSS (ru_maxrss / VmHWM) to the current RSS (Linux >= 4.0)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def worker_memory(job: dict, data: dict) -> dict:
    lib = job["library"]
    preds, refs = data["short"]
    if lib in ("rouge-score", "respeval-python"):
        preds, refs = preds[: job["sizes"]["mem_slow"]], refs[: job["sizes"]["mem_slow"]]
    fn = corpus.runner(lib, SHORT_TYPES, False, None)
    fn(preds[:100], refs[:100])
    gc.collect()
    # The baseline: RSS after imports, the pairs and the warm-up. The peak is reset to it
    # first, so a transient peak while loading cannot hide the peak of scoring.
    if _reset_peak():
        base = _rss_now_mb()
    else:
        base = _maxrss_mb()
    result = fn(preds, refs)
    peak = _maxrss_mb()
    del result
    return dict(library=lib, pairs=len(preds), baseline_mb=base, peak_mb=peak, delta_mb=peak - base)


def worker_main(job_json: str, data_path: str) -> None:
    job = json.loads(job_json)
    with open(data_path, "rb") as f:
        data = pickle.load(f)
    # import the library (and build/check respeval's core) before any measurement
    for lib, _ in job.get("contenders", [(job["library"], 1)]):
        corpus.runner(lib, SHORT_TYPES, False, 1)
    out = worker_speed(job, data) if job["kind"] == "speed" else worker_memory(job, data)
    print("RESULT " + json.dumps(out))


# --- parent side -----------------------------------------------------------------------------


def run_job(job: dict, data_path: str, rayon: str | None = None) -> object:
    env = dict(os.environ)
    env.pop("RAYON_NUM_THREADS", None)
    if rayon is not None:
        env["RAYON_NUM_THREADS"] = rayon
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", json.dumps(job), "--data", data_path],
        env=env,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"worker {job} failed:\n{proc.stdout}\n{proc.stderr}")
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")][-1]
    who = " + ".join(
        f"{lib} threads={t or ('rayon' if lib == 'rouge-score-rs' else 1)}"
        for lib, t in job.get("contenders", [(job["library"], None)])
    )
    print(f"  {job['kind']:<6} {who} RAYON_NUM_THREADS={rayon or 'unset'}: {took:.0f}s", file=sys.stderr)
    return json.loads(line[len("RESULT ") :])


def machine() -> str:
    cpu = report_json.cpu_model() or "?"
    from importlib.metadata import version

    try:
        head = subprocess.run(
            ["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            [
                "git",
                "-C",
                str(HERE.parent),
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                "cext",
                "CMakeLists.txt",
                "src/respeval/metrics",
                "src/respeval/tokenizers",
                "src/respeval/_inputs.py",
                "src/respeval/_backend.py",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        commit = f"respeval commit {head}{' + uncommitted changes to the ROUGE path' if dirty else ''}; "
    except (OSError, subprocess.CalledProcessError):
        commit = ""
    libs = ", ".join(f"{n} {version(n)}" for n in ("respeval", "rouge-score-rs", "rouge-score", "numpy"))
    return (
        f"{NCPU} CPUs ({cpu}), Python {platform.python_version()}, {platform.system()} "
        f"{platform.release()}; {commit}{libs}"
    )


def fmt_rate(x: float) -> str:
    return f"{x:,.0f}"


def report(sizes: dict, quick: bool) -> tuple[str, dict]:
    """The markdown report, and its key results for ``--json``."""
    if not corpus.data_available():
        raise SystemExit(corpus.missing_message())
    short = corpus.short_pairs(sizes["short"])
    distinct = corpus.distinct_references(short)
    long_docs = corpus.long_pairs(sizes["long"])
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        data_path = str(Path(tmp) / "pairs.pkl")
        with open(data_path, "wb") as f:
            pickle.dump({"short": short, "distinct": distinct, "long": long_docs}, f, protocol=pickle.HIGHEST_PROTOCOL)
        speed: list[dict] = []
        # A: one thread each (and respeval's 1 -> N scaling), interleaved in one process
        speed += run_job(
            dict(
                kind="speed",
                name="A",
                pace="fast",
                sizes=sizes,
                rs_threads=1,
                library="respeval",
                contenders=[("respeval", 1), ("rouge-score-rs", None), ("respeval", NCPU)],
            ),
            data_path,
            rayon="1",
        )
        # B: all threads each, interleaved in one process
        speed += run_job(
            dict(
                kind="speed",
                name="B",
                pace="fast",
                sizes=sizes,
                rs_threads=NCPU,
                library="respeval",
                contenders=[("respeval", NCPU), ("rouge-score-rs", None)],
            ),
            data_path,
            rayon=None,
        )
        # C: the pure-Python ones, on subsets
        speed += run_job(
            dict(
                kind="speed",
                name="C",
                pace="slow",
                sizes=sizes,
                rs_threads=1,
                library="rouge-score",
                contenders=[("rouge-score", None), ("respeval-python", None)],
            ),
            data_path,
        )
        memory = [
            run_job(dict(kind="memory", library=lib, sizes=sizes), data_path)
            for lib in ("respeval", "rouge-score-rs", "rouge-score", "respeval-python")
        ]
    load1 = os.getloadavg()

    def get(lib, workload, stem, threads, process=None):
        """One measurement; by default respeval at NCPU threads comes from process B (where it
        is interleaved with rouge-score-rs on all threads), everything else from A or C."""
        if process is None:
            process = "B" if threads == NCPU > 1 else ("C" if lib in ("rouge-score", "respeval-python") else "A")
        for r in speed:
            if (r["library"], r["workload"], r["stem"], r["threads"], r["process"]) == (
                lib,
                workload,
                stem,
                threads,
                process,
            ):
                return r
        return None

    def versus(ours, peer) -> dict:
        """respeval's speed over the peer's: best / best, and per round (same process only)."""
        found = {"best": ours["rate"] / peer["rate"], "pairs": ours["pairs"], "peer_pairs": peer["pairs"]}
        if ours["process"] == peer["process"]:
            found.update(report_json.ratio(peer["walls"], ours["walls"]))
        return found

    results: dict = {
        "load_average_1min": [load0[0], load1[0]],
        "rates": [
            {k: r[k] for k in ("library", "workload", "stem", "threads", "pairs", "rate", "cpu_rate", "process")}
            for r in speed
        ],
        "memory": memory,
        "versus": {},
        "targets": [],
    }
    for workload in ("short", "distinct", "long"):
        for stem in (False, True):
            key = f"{workload}/{'stem' if stem else 'no_stem'}"
            for peer, threads in (("rouge-score-rs", 1), ("rouge-score-rs", NCPU), ("rouge-score", 1)):
                ours = get("respeval", workload, stem, threads)
                theirs = get(peer, workload, stem, threads)
                if ours is not None and theirs is not None:
                    results["versus"].setdefault(key, {})[f"{peer}/{threads}"] = versus(ours, theirs)

    out = []
    w = out.append
    w(f"Machine: {machine()}.")
    w(f"Load average (1 min) before / after: {load0[0]:.2f} / {load1[0]:.2f}.")
    if quick:
        w("**--quick run: reduced workloads, numbers are indicative only.**")
    w("")
    rows = [
        ("respeval", 1),
        ("respeval", NCPU),
        ("rouge-score-rs", 1),
        ("rouge-score-rs", NCPU),
        ("rouge-score", 1),
        ("respeval-python", 1),
    ]
    titles = {
        "short": f"rouge1+rouge2+rougeL, {len(short[0]):,} short real pairs",
        "long": f"rougeLsum, {len(long_docs[0]):,} long documents (1,000+ tokens a side)",
    }
    for workload in ("short", "long"):
        w(
            f"**{titles[workload]}** (pairs/s of the best call; ratio vs rouge-score-rs at the "
            "same thread count, timed interleaved with it in the same process)"
        )
        w("")
        w("| library | threads | pairs timed | no stemming | vs rs | Porter stemming | vs rs |")
        w("|---|---:|---:|---:|---:|---:|---:|")
        for lib, threads in rows:
            cells = []
            pairs = None
            for stem in (False, True):
                r = get(lib, workload, stem, threads)
                if r is None:
                    cells += ["-", "-"]
                    continue
                pairs = r["pairs"]
                base = get("rouge-score-rs", workload, stem, threads)
                cells += [fmt_rate(r["rate"]), f"{r['rate'] / base['rate']:.2f}x" if base else "-"]
            if pairs is None:
                continue
            name = lib
            if lib == "rouge-score-rs":
                name += f" (RAYON_NUM_THREADS={'1' if threads == 1 else 'unset'})"
            w(f"| {name} | {threads} | {pairs:,} | " + " | ".join(cells) + " |")
        w("")
    w(
        "**One thread, pairs per CPU-second** (the least CPU time of any call; steadier than "
        "wall time when the machine is shared)"
    )
    w("")
    w("| workload | library | no stemming | vs rs | Porter stemming | vs rs |")
    w("|---|---|---:|---:|---:|---:|")
    for workload in ("short", "long"):
        for lib in ("respeval", "rouge-score-rs", "rouge-score", "respeval-python"):
            cells = []
            for stem in (False, True):
                r, base = get(lib, workload, stem, 1), get("rouge-score-rs", workload, stem, 1)
                cells += [fmt_rate(r["cpu_rate"]), f"{r['cpu_rate'] / base['cpu_rate']:.2f}x"]
            w(f"| {workload} | {lib} | " + " | ".join(cells) + " |")
    w("")
    w(
        "**Thread scaling, 1 → %d threads** (pairs/s ratio; respeval: both thread counts "
        "interleaved in one process; rouge-score-rs: RAYON_NUM_THREADS=1 vs unset, two "
        "processes)" % NCPU
    )
    w("")
    w("| workload | respeval no stem | respeval stem | rouge-score-rs no stem | rouge-score-rs stem |")
    w("|---|---:|---:|---:|---:|")
    for workload in ("short", "long"):
        cells = []
        for lib in ("respeval", "rouge-score-rs"):
            for stem in (False, True):
                if lib == "respeval":  # both from process A, interleaved
                    a, b = get(lib, workload, stem, 1), get(lib, workload, stem, NCPU, "A")
                else:  # from processes A and B (RAYON_NUM_THREADS is per process)
                    a, b = get(lib, workload, stem, 1), get(lib, workload, stem, NCPU)
                cells.append(f"{b['rate'] / a['rate']:.2f}x" if a and b else "-")
        w(f"| {workload} | " + " | ".join(cells) + " |")
    w("")
    w(
        "**Peak memory** scoring the short pairs once (rouge1+rouge2+rougeL, no stemming, all "
        "threads; fresh process per library; ru_maxrss after scoring minus the RSS after imports, "
        "data and a 100-pair warm-up, with the peak reset to that baseline first; the result "
        "is alive at the measurement)"
    )
    w("")
    w("| library | pairs | peak RSS increase | per 1,000 pairs |")
    w("|---|---:|---:|---:|")
    for m in memory:
        w(f"| {m['library']} | {m['pairs']:,} | {m['delta_mb']:.1f} MB | {m['delta_mb'] / m['pairs'] * 1000:.2f} MB |")
    w("")
    w(
        "**Issue 14 targets** (one thread each unless stated; ratio of the best calls, then the "
        "median and range of the ratios round by round, each round timing both interleaved)"
    )
    w("")
    w("| workload | target | best / best | per round: median [min, max] | by CPU time | verdict |")
    w("|---|---:|---:|---:|---:|---|")
    targets = [
        ("rouge1+2+L, short pairs, vs rouge-score-rs", "short", False, 10.0, None),
        ("the same, Porter stemming", "short", True, 18.0, None),
        ("the same, every reference distinct", "distinct", False, 5.0, None),
        ("rougeLsum, long documents, vs rouge-score-rs", "long", False, 8.0, None),
        (f"threads={NCPU} vs threads=1, short pairs (wall)", "short", False, 1.8, "threads"),
        (f"threads={NCPU} vs threads=1, short pairs, stemming (wall)", "short", True, 1.8, "threads"),
    ]
    for label, workload, stem, target, kind in targets:
        if kind == "threads":
            a, b = get("respeval", workload, stem, NCPU, "A"), get("respeval", workload, stem, 1)
        else:
            a, b = get("respeval", workload, stem, 1), get("rouge-score-rs", workload, stem, 1)
        if a is None or b is None:
            w(f"| {label} | {target:g}x | - | - | - | not measured |")
            results["targets"].append({"label": label, "workload": workload, "stem": stem, "target": target})
            continue
        ratio = a["rate"] / b["rate"]
        rounds = sorted(y / x for x, y in zip(a["walls"], b["walls"]))
        median = (
            rounds[len(rounds) // 2]
            if len(rounds) % 2
            else sum(rounds[len(rounds) // 2 - 1 : len(rounds) // 2 + 1]) / 2
        )
        cpu = "-" if kind == "threads" else f"{a['cpu_rate'] / b['cpu_rate']:.2f}x"
        verdict = "met" if ratio >= target else f"**not met** ({target / ratio:.2f}x short)"
        results["targets"].append(
            {
                "label": label,
                "workload": workload,
                "stem": stem,
                "kind": kind or "vs rouge-score-rs",
                "target": target,
                "met": ratio >= target,
                "cpu": None if kind == "threads" else a["cpu_rate"] / b["cpu_rate"],
                **report_json.ratio(b["walls"], a["walls"]),
            }
        )
        w(
            f"| {label} | {target:g}x | {ratio:.2f}x | {median:.2f}x [{rounds[0]:.2f}, {rounds[-1]:.2f}] "
            f"| {cpu} | {verdict} |"
        )
    return "\n".join(out), results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller workloads (~1 minute)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    report_json.add_option(ap)
    args = ap.parse_args()
    if args.worker:
        worker_main(args.worker, args.data)
        return
    t0 = time.perf_counter()
    load0 = os.getloadavg()
    text, results = report(QUICK if args.quick else FULL, args.quick)
    print(text)
    report_json.write(args.json, "report.py", {"quick": args.quick, **results}, load0)
    print(f"\n(report took {time.perf_counter() - t0:.0f}s)", file=sys.stderr)


if __name__ == "__main__":
    main()
