"""The speed table of docs/speed.md, regenerated from the benchmark reports' ``--json`` files.

    python benchmarks/speed_table.py                  # every report in turn, then the table: ~48 minutes on 2 cores
    python benchmarks/speed_table.py --quick          # smaller workloads, ~10 minutes; "quick, indicative only"
    python benchmarks/speed_table.py --from DIR       # the table from JSON files already collected, no rerun
    python benchmarks/speed_table.py --from DIR --check   # exit 1 if docs/speed.md's table differs

Each report (``RUNS``) runs in its own process, one after the other, with ``--json`` (the judge
benchmark with pytest-benchmark's ``--benchmark-json``); its printout goes to ``NAME.log`` and
its results to ``NAME.json`` in ``--out`` (``runs.json`` records each command, its exit code
and minutes).  The table between ``<!-- speed-table:begin -->`` and ``<!-- speed-table:end -->``
in docs/speed.md is then rewritten: a line naming the host's CPU, cores, the load average over
the runs, the date and the commit, then one row per job with the ratios as measured (the median
of the per-round ratios and their range), every target the report checks with its verdict, and
the command that reproduces the row.  A report that failed leaves its rows saying so; the
script then exits 1.  ``--check`` is not for CI: the numbers move from run to run.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "speed.md"
BEGIN = "<!-- speed-table:begin -->"
END = "<!-- speed-table:end -->"
DEFAULT_OUT = Path("/tmp/respeval-speed-table")


@dataclass(frozen=True)
class Run:
    name: str  # NAME.json / NAME.log in the output folder
    full: tuple[str, ...]  # arguments to python
    quick: tuple[str, ...]
    json_flag: str = "--json"

    def argv(self, quick: bool) -> tuple[str, ...]:
        return self.quick if quick else self.full

    def command(self, quick: bool) -> str:
        return "python " + shlex.join(self.argv(quick))


TRAJECTORY_QUICK_ROWS = ("--rows", "131072")
BULK = ("benchmarks/bulk_report.py", "--interleaved", "--formats", "jsonl", "csv", "parquet")
RUNS = (
    Run("report", ("benchmarks/report.py",), ("benchmarks/report.py", "--quick")),
    Run(
        "peers_rouge",
        ("benchmarks/peers_report.py", "--only", "rouge"),
        ("benchmarks/peers_report.py", "--only", "rouge", "--rounds", "3"),
    ),
    Run(
        "peers_bleu", ("benchmarks/peers_report.py", "--only", "bleu"), ("benchmarks/peers_report.py", "--only", "bleu")
    ),
    Run("prototype", ("benchmarks/prototype_report.py",), ("benchmarks/prototype_report.py", "--rounds", "2")),
    Run("mt", ("benchmarks/mt_report.py",), ("benchmarks/mt_report.py", "--quick")),
    Run(
        "trajectory", ("benchmarks/trajectory_report.py",), ("benchmarks/trajectory_report.py", *TRAJECTORY_QUICK_ROWS)
    ),
    Run(
        "trajectory_cli",
        ("benchmarks/trajectory_cli_report.py",),
        ("benchmarks/trajectory_cli_report.py", *TRAJECTORY_QUICK_ROWS),
    ),
    Run(
        "adk",
        ("benchmarks/adk_report.py",),
        ("benchmarks/adk_report.py", "--invocations", "4000", "--rounds", "3"),
    ),
    Run(
        "bulk",
        (*BULK, "--repeats", "3", "--sizes", "100000", "1000000"),
        (*BULK, "--repeats", "1", "--sizes", "20000", "100000"),
    ),
    Run(
        "evaluate",
        ("benchmarks/evaluate_report.py", "--skip-custom"),
        ("benchmarks/evaluate_report.py", "--skip-custom", "--judge-rows", "2000", "--judge-rounds", "2"),
    ),
    Run(
        "judge",
        ("-m", "pytest", "benchmarks/bench_judge.py", "-p", "no:cacheprovider"),
        ("-m", "pytest", "benchmarks/bench_judge.py", "-p", "no:cacheprovider", "-k", "http_nocache"),
        json_flag="--benchmark-json",
    ),
)
BY_NAME = {run.name: run for run in RUNS}


# --- running the reports -----------------------------------------------------------------------


def manifest_of(folder: Path) -> dict:
    """``runs.json``: each run's command, whether it was quick, its exit code and minutes."""
    path = folder / "runs.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"runs": {}}


def run_reports(out: Path, quick: bool, names: list[str]) -> bool:
    """Run the reports ``names`` in turn; True when every one exited 0."""
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "runs.json"
    manifest = manifest_of(out)
    ok = True
    for k, name in enumerate(names, 1):
        run = BY_NAME[name]
        result, log = out / f"{name}.json", out / f"{name}.log"
        result.unlink(missing_ok=True)  # a failed run must not leave an older run's numbers behind
        print(f"[{k}/{len(names)}] {run.command(quick)}", file=sys.stderr, flush=True)
        start = time.perf_counter()
        with open(log, "w", encoding="utf-8") as fh:
            code = subprocess.call(
                [sys.executable, *run.argv(quick), run.json_flag, str(result)], cwd=ROOT, stdout=fh, stderr=fh
            )
        minutes = (time.perf_counter() - start) / 60
        ok &= code == 0 and result.exists()
        manifest["runs"][name] = {"command": run.command(quick), "quick": quick, "returncode": code, "minutes": minutes}
        manifest_path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        print(f"      exit {code}, {minutes:.1f} min (log: {log})", file=sys.stderr, flush=True)
    return ok


def load(folder: Path) -> tuple[dict, dict]:
    """The reports' JSON documents by run name, and the manifest (empty when absent)."""
    docs = {}
    for run in RUNS:
        path = folder / f"{run.name}.json"
        if path.exists():
            docs[run.name] = json.loads(path.read_text(encoding="utf-8"))
    return docs, manifest_of(folder)


# --- numbers as text ---------------------------------------------------------------------------


def num(v: float) -> str:
    """A ratio to the precision its size deserves: 0.93, 7.4, 77, 2,300."""
    if v >= 20:
        return f"{v:,.0f}"
    if v >= 2:
        return f"{v:.1f}"
    return f"{v:.2f}"


def rate(v: float) -> str:
    """A rate in rows or pairs a second: 2,300, 111k, 1.2M."""
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e4:
        return f"{v / 1e3:,.0f}k"
    return f"{v:,.0f}"


def median_range(r: dict, fmt=num, unit: str = "") -> str:
    """Per-round values: their median and, when they moved, [min-max]: 7.4x [7.0-7.6]."""
    lo, hi = fmt(r["min"]), fmt(r["max"])
    return fmt(r["median"]) + unit + ("" if lo == hi else f" [{lo}-{hi}]")


def times(r: dict) -> str:
    return median_range(r, unit="x")


def rates(r: dict) -> str:
    return median_range(r, rate)


def verdict(target: float, met: bool, unit: str = "x") -> str:
    return f"target {target:,g}{unit}: " + ("met" if met else "**not met**")


# --- the rows ----------------------------------------------------------------------------------


class Missing(Exception):
    """A row's report did not run (or wrote no JSON)."""


def _results(docs: dict, name: str) -> dict:
    if name not in docs:
        raise Missing(name)
    return docs[name]["results"]


def _target(res: dict, workload: str, stem: bool, kind: str) -> dict | None:
    return next(
        (t for t in res["targets"] if (t["workload"], t["stem"], t.get("kind")) == (workload, stem, kind)), None
    )


def _with_target(ratio_text: str, target: dict | None) -> str:
    """report.py judges a target by the best calls' ratio: that one is named when it differs."""
    if target is None or "met" not in target:
        return ratio_text
    return f"{ratio_text} ({_best(target)}{verdict(target['target'], target['met'])})"


def _best(ratio: dict) -> str:
    """The best calls' ratio, where it is not the median's number already."""
    return f"best / best {num(ratio['best'])}x, " if num(ratio["best"]) != num(ratio["median"]) else ""


def row_rouge_short(docs: dict) -> tuple[str, str]:
    res = _results(docs, "report")
    vs = res["versus"]
    pairs = vs["short/no_stem"]["rouge-score-rs/1"]["pairs"]
    rs = []
    for workload, stem, tag in (
        ("short", False, ""),
        ("short", True, "stemmed "),
        ("distinct", False, "every reference distinct "),
    ):
        found = vs.get(f"{workload}/{'stem' if stem else 'no_stem'}", {}).get("rouge-score-rs/1")
        if found:
            rs.append(_with_target(tag + times(found), _target(res, workload, stem, "vs rouge-score-rs")))
    parts = ["rouge-score-rs (Rust): " + ", ".join(rs)]
    slow = vs["short/no_stem"].get("rouge-score/1")
    if slow:
        parts.append(f"rouge-score: {num(slow['best'])}x (best call, {slow['peer_pairs']:,} pairs)")
    threads = [
        _with_target(("stemmed " if stem else "") + times(t), t)
        for stem in (False, True)
        if (t := _target(res, "short", stem, "threads")) and "median" in t
    ]
    if threads:
        parts.append("threads=2 over threads=1: " + ", ".join(threads))
    if "prototype" in docs:
        proto = docs["prototype"]["results"]["workloads"]
        parts.append(
            f"the limit prototype reaches {times(proto['no stemming']['prototype_vs_rs'])} / "
            f"{times(proto['stemming']['prototype_vs_rs'])} stemmed over rouge-score-rs on this CPU (CPU time)"
        )
    return f"rouge1+rouge2+rougeL, {pairs:,} real pairs, one thread", "; ".join(parts)


def _peer(table: dict, prefix: str) -> dict | None:
    return next((v for k, v in table["peers"].items() if k.startswith(prefix)), None)


def row_peers_rouge(docs: dict) -> tuple[str, str]:
    res = _results(docs, "peers_rouge")
    tables = res["tables"]
    cores = docs["peers_rouge"]["host"]["cores"]
    parts = []
    rs = [_peer(tables[f"rouge/short/{s}"], "rouge-score-rs") for s in ("no_stem", "stem")]
    parts.append(f"{times(rs[0])} rouge-score-rs `score_batch` ({times(rs[1])} stemmed)")
    rust = _peer(tables["rouge/short/no_stem"], "rouge-rust")
    if rust:
        parts.append(f"{times(rust)} rouge-rust (`fast_rouge.score_batch_flat`, no stemming)")
    tm = tables.get("rouge/torchmetrics")
    if tm:
        parts.append(f"{times(_peer(tm, 'torchmetrics'))} torchmetrics' `rouge_score` (2,000 pairs)")
    long_rs = [_peer(tables[f"rouge/long/{s}"], "rouge-score-rs") for s in ("no_stem", "stem")]
    parts.append(f"rougeLsum {times(long_rs[0])} / {times(long_rs[1])} (stemmed) rouge-score-rs")
    missed = [
        f"{title['title']}: {peer}"
        for title in tables.values()
        for peer, found in title["peers"].items()
        if found["met"] is False
    ]
    if missed:
        parts.append("slower than a peer (target 1x: **not met**): " + "; ".join(missed))
    absent = [name for name, version in res["versions"].items() if version is None]
    if absent:
        parts.append(f"not installed, not measured: {', '.join(absent)}")
    return f"rouge1+2+L and rougeLsum at equal threads ({cores}), peers on all their threads", "; ".join(parts)


def row_prototype(docs: dict) -> tuple[str, str]:
    work = _results(docs, "prototype")["workloads"]

    def part(tag: str) -> str:
        w = work[tag]
        return f"{median_range(w['respeval_over_prototype'])} ({verdict(w['target'], w['met'], '')})"

    return (
        "rouge1+2+L against the C limit prototype (one thread, CPU time)",
        f"{part('no stemming')} of its speed on short pairs, {part('stemming')} stemmed; "
        f"{part('long, no stemming')} on rougeLsum long documents, {part('long, stemming')} stemmed",
    )


def row_rouge_long(docs: dict) -> tuple[str, str]:
    res = _results(docs, "report")
    vs = res["versus"]
    rs = [
        _with_target(
            tag + times(vs[f"long/{key}"]["rouge-score-rs/1"]), _target(res, "long", stem, "vs rouge-score-rs")
        )
        for stem, key, tag in ((False, "no_stem", ""), (True, "stem", "stemmed "))
    ]
    parts = ["rouge-score-rs: " + ", ".join(rs)]
    slow = vs["long/no_stem"].get("rouge-score/1")
    if slow:
        parts.append(f"rouge-score: {num(slow['best'])}x (best call, {slow['peer_pairs']:,} documents)")
    documents = vs["long/no_stem"]["rouge-score-rs/1"]["pairs"]
    return f"rougeLsum, {documents:,} documents of 1,000+ tokens, one thread", "; ".join(parts)


def _mt(docs: dict, key: str) -> str:
    w = _results(docs, "mt")["workloads"][key]
    text = times(w)
    if w["target"] is not None:
        text += f" ({_best(w)}{verdict(w['target'], w['met'])})"
    return text


def row_mt(docs: dict) -> tuple[str, str]:
    names = {"bleu": "BLEU", "chrf": "chrF", "chrf++": "chrF++"}
    return (
        "corpus BLEU / chrF / chrF++, 16 WMT17 systems, one thread",
        ", ".join(f"{label} {_mt(docs, key)}" for key, label in names.items()) + " sacreBLEU",
    )


def row_peers_bleu(docs: dict) -> tuple[str, str]:
    res = _results(docs, "peers_bleu")
    tables, diffs = res["tables"], res["differences"]
    parts = []
    bs = _peer(tables["bleu/corpus"], "bleuscore")
    if bs:
        diff = diffs["bleuscore, largest |BLEU difference|"]
        parts.append(f"{times(bs)} bleuscore (Rust, parallel; equal to sacreBLEU here within {diff:.1e})")
    tm = _peer(tables["bleu/corpus"], "torchmetrics")
    if tm:
        diff = diffs["torchmetrics sacre_bleu_score, largest |BLEU difference|"]
        parts.append(f"{times(tm)} torchmetrics' `sacre_bleu_score` (CPU torch; BLEU within {diff:.1e})")
    for key, label, diff_key in (
        ("bleu/chrf++", "chrF++", "torchmetrics chrf_score (chrF++)"),
        ("bleu/ter", "TER (500 segments)", "torchmetrics translation_edit_rate"),
    ):
        if key in tables:
            d = diffs[diff_key]
            parts.append(
                f"torchmetrics' {label} {times(_peer(tables[key], 'torchmetrics'))}, "
                f"though its score is {d['torchmetrics']:.4f} where sacreBLEU's is {d['respeval']:.4f}"
            )
    if res["versions"].get("torchmetrics") is None:
        parts.append("torchmetrics not installed, not measured")
    return "corpus BLEU, 16 WMT17 systems, other peers", "; ".join(parts)


def row_ter(docs: dict) -> tuple[str, str]:
    w = _results(docs, "mt")["workloads"]["ter"]
    return w["name"].replace("TER corpus score", "TER") + ", native", _mt(docs, "ter") + " sacreBLEU"


def row_squad(docs: dict) -> tuple[str, str]:
    w = _results(docs, "mt")["workloads"]["squad"]
    return w["name"], f"{_mt(docs, 'squad')} the official script"


def row_evaluate(docs: dict) -> tuple[str, str]:
    j = _results(docs, "evaluate")["judge"]
    return (
        "LLM judge path of `respeval.evaluate`, local endpoint",
        f"{rates(j['rows_per_s'])} judged rows/s (wall, {j['rows']:,} rows a round); "
        f"{num(j['cpu_us_per_row']['median'])} us of CPU a row, {rate(j['rows_per_cpu_s'])} rows per CPU-second",
    )


def row_trajectory(docs: dict) -> tuple[str, str]:
    res = _results(docs, "trajectory")
    forms = res["forms"]
    labels = {
        "arrow-struct": "Arrow structs",
        "json": "JSON text",
        "arrow-json": "an Arrow string column",
        "dicts": "lists of dicts",
    }
    parts = [
        "the pure-Python twin: "
        + ", ".join(f"{times(forms[f]['native_over_twin'])} from {labels.get(f, f)}" for f in forms)
    ]
    if res["adk"]:
        adk = res["adk"]
        parts.append(f"{times(adk['native_over_adk'])} ADK {adk['version']}'s evaluator (objects prebuilt)")
    parts.append(
        "native rows/s "
        + ", ".join(f"{rate(forms[f]['native_rows_per_s_overall'])} from {labels.get(f, f)}" for f in forms)
    )
    return f"trajectory metrics (Vertex six + ADK), {res['rows']:,} tau-bench rows, one thread, CPU time", "; ".join(
        parts
    )


def row_trajectory_cli(docs: dict) -> tuple[str, str]:
    res = _results(docs, "trajectory_cli")
    labels = {
        "jsonl": "nested JSONL",
        "csv": "CSV",
        "parquet-text": "Parquet text columns",
        "parquet-nested": "nested Parquet",
    }
    parts = [
        f"{rate(f['rows_per_s'])} rows/s from {labels.get(name, name)} ({num(f['over_library'])}x the library's time, "
        f"{f['peak_rss_mb']:,.0f} MB peak)"
        for name, f in res["formats"].items()
    ]
    return f"`respeval score`, trajectory metrics, {res['rows']:,} rows, one thread (one run each)", "; ".join(parts)


def row_adk(docs: dict) -> tuple[str, str]:
    res = _results(docs, "adk")
    contenders = res["contenders"]
    parts = []
    for name, label in (
        ("respeval evaluate_agent", "through `evaluate_agent`"),
        ("respeval load_eval_set + tool_trajectory_scores", "through `load_eval_set` + `tool_trajectory_scores`"),
    ):
        c = contenders[name]
        parts.append(f"{times(c['adk_over_this_cpu'])} {label} ({verdict(c['target'], c['met'])})")
    return (
        f"two ADK eval-set files ({res['invocations']:,} invocations) to the trajectory scores, one thread, CPU time",
        f"ADK {res['adk_version']}'s `load_eval_set_from_file` + `TrajectoryEvaluator`: " + ", ".join(parts),
    )


def row_bulk(docs: dict) -> tuple[str, str]:
    res = _results(docs, "bulk")
    one = [r for r in res["runs"] if r["threads"] == 1]
    fmts = " / ".join(r["format"] for r in one)
    cpu = " / ".join(times(r["cli_over_library_cpu"]) for r in one)
    wall = " / ".join(times(r["cli_over_library_wall"]) for r in one)
    peak = " / ".join(f"{r['cli_peak_rss_mb']:,.0f}" for r in one)
    parts = [
        f"{cpu} the CPU time of `respeval.rouge` + `.bootstrap` on lists in memory ({fmts}, one thread; wall {wall})",
        f"peak RSS {peak} MB",
    ]
    if res["threads_1_over_2"]:
        parts.append(
            "`--threads 2` over `--threads 1`: "
            + " / ".join(times(res["threads_1_over_2"][f]) for f in res["threads_1_over_2"])
        )
    return (
        f"`respeval score`, {res['rows']:,} rows in (JSONL, CSV, Parquet), Parquet out, ROUGE-1/2/L + bootstrap",
        "; ".join(parts),
    )


JUDGE_TARGET_ROWS_PER_S = 1_000  # bench_judge.TARGET_ROWS_PER_S, not imported: that module needs httpx and pytest


def row_judge(docs: dict) -> tuple[str, str]:
    if "judge" not in docs:
        raise Missing("judge")
    bench = next(b for b in docs["judge"]["benchmarks"] if b["name"] == "test_http_nocache")
    rows, stats, extra = bench["extra_info"]["rows"], bench["stats"], bench["extra_info"]
    per_s = {"median": rows / stats["median"], "min": rows / stats["max"], "max": rows / stats["min"]}
    cpu = extra.get("cpu_us_per_row_rounds") or [extra["cpu_us_per_row"]]
    cpu_spread = {"median": sorted(cpu)[len(cpu) // 2], "min": min(cpu), "max": max(cpu)}
    return (
        "judge engine, loopback transport, no cache",
        f"{rates(per_s)} rows/s ({verdict(JUDGE_TARGET_ROWS_PER_S, per_s['median'] >= JUDGE_TARGET_ROWS_PER_S, ' rows/s')}); "
        f"{rates(cpu_spread)} us of engine CPU a row, {rate(1e6 / cpu_spread['median'])} rows per CPU-second",
    )


# (the row, its job when its report is missing, the runs whose commands reproduce it)
ROWS = (
    (row_rouge_short, "rouge1+rouge2+rougeL, 100k real pairs", ("report", "prototype")),
    (row_peers_rouge, "ROUGE at equal threads, peers on all their threads", ("peers_rouge",)),
    (row_prototype, "rouge1+2+L against the C limit prototype", ("prototype",)),
    (row_rouge_long, "rougeLsum, 1,000-token documents", ("report",)),
    (row_mt, "corpus BLEU / chrF / chrF++, 16 WMT17 systems", ("mt",)),
    (row_peers_bleu, "corpus BLEU, 16 WMT17 systems, other peers", ("peers_bleu",)),
    (row_ter, "TER, one WMT17 system", ("mt",)),
    (row_squad, "SQuAD v2.0 EM/F1, dev set", ("mt",)),
    (row_evaluate, "LLM judge path of `respeval.evaluate`, local endpoint", ("evaluate",)),
    (row_trajectory, "trajectory metrics (Vertex six + ADK), tau-bench rows", ("trajectory",)),
    (row_trajectory_cli, "`respeval score`, trajectory metrics", ("trajectory_cli",)),
    (row_adk, "two ADK eval-set files to the trajectory scores", ("adk",)),
    (row_bulk, "`respeval score`, ROUGE-1/2/L + bootstrap, JSONL / CSV / Parquet in", ("bulk",)),
    (row_judge, "judge engine, loopback transport, no cache", ("judge",)),
)


# --- the table ---------------------------------------------------------------------------------


def _host(docs: dict) -> dict:
    """The judge benchmark's host sits in pytest-benchmark's machine_info."""
    return {name: doc.get("host") or doc.get("machine_info", {}).get("host") for name, doc in docs.items()}


def host_line(docs: dict, manifest: dict) -> str:
    hosts = [h for h in _host(docs).values() if h]
    if not hosts:
        return "No report's results were found."

    def each(key: str) -> str:
        return " / ".join(dict.fromkeys(str(h[key]) for h in hosts))

    loads = [h["load_average"][0] for h in hosts] + [
        h["load_average_before"][0] for h in hosts if h.get("load_average_before")
    ]
    days = sorted({h["date"][:10] for h in hosts})
    dates = days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"
    commit = each("commit")
    if any(h.get("uncommitted_changes") for h in hosts):
        commit += " with uncommitted changes"
    minutes = sum(r["minutes"] for r in manifest.get("runs", {}).values())
    took = f"; the runs took {minutes:.0f} minutes" if minutes else ""
    return (
        f"Host: {each('cpu')}, {each('cores')} cores; load average (1 min) {min(loads):.1f}-{max(loads):.1f} "
        f"over the runs; {dates}; commit {commit}; Python {each('python')}{took}."
    )


def commands(names: tuple[str, ...], manifest: dict) -> str:
    quick = _quick(manifest)
    found = [manifest.get("runs", {}).get(name, {}).get("command") or BY_NAME[name].command(quick) for name in names]
    return "; ".join(f"`{c}`" for c in dict.fromkeys(found))


def _quick(manifest: dict) -> bool:
    return any(r.get("quick") for r in manifest.get("runs", {}).values())


def not_measured(name: str, manifest: dict) -> str:
    run = manifest.get("runs", {}).get(name)
    if run and run.get("returncode"):
        return f"not measured: the report exited {run['returncode']} (its printout: `{name}.log`)"
    return f"not measured: `{name}` did not run or wrote no results"


def render(docs: dict, manifest: dict) -> str:
    """The block between the markers (the markers excluded)."""
    out = [host_line(docs, manifest), ""]
    if _quick(manifest):
        out += ["**quick, indicative only**: smaller workloads and fewer rounds than the full commands.", ""]
    out += [
        "Ratios are respeval's speed over the peer's: the median of the per-round ratios (the two timed "
        "interleaved in the same round) and [their range over the rounds]; best / best where stated.",
        "",
        "| job | respeval vs | reproduced by |",
        "|---|---|---|",
    ]
    for row, job_when_missing, names in ROWS:
        try:
            job, text = row(docs)
        except Missing as missing:
            job, text = job_when_missing, not_measured(str(missing), manifest)
        except (KeyError, StopIteration) as exc:  # a report's JSON from another version of it
            job, text = job_when_missing, f"not measured: the results lack {exc!s}"
        out.append(f"| {job} | {text} | {commands(names, manifest)} |")
    return "\n".join(out)


def rewrite(text: str, block: str) -> str:
    """``text`` with what lies between the markers replaced by ``block``."""
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < begin:
        raise SystemExit(f"the markers {BEGIN} ... {END} are not in the page")
    return text[: begin + len(BEGIN)] + "\n" + block + "\n" + text[end:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller workloads and fewer rounds, indicative only")
    ap.add_argument("--from", dest="source", type=Path, metavar="DIR", help="render from JSON files in DIR, no rerun")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the runs' JSON and logs go ({DEFAULT_OUT})")
    ap.add_argument(
        "--only", nargs="+", choices=[r.name for r in RUNS], help="run these reports only (others' files are kept)"
    )
    ap.add_argument("--check", action="store_true", help="exit 1 if the page's table differs; write nothing")
    ap.add_argument("--doc", type=Path, default=DOC, help="the page with the markers (docs/speed.md)")
    args = ap.parse_args(argv)
    page = args.doc.read_text(encoding="utf-8")
    rewrite(page, "")  # the markers are there: before any report runs
    ok = True
    folder = args.source
    if folder is None:
        ok = run_reports(args.out, args.quick, args.only or [r.name for r in RUNS])
        folder = args.out
    docs, manifest = load(folder)
    new = rewrite(page, render(docs, manifest))
    if args.check:
        if new != page:
            print(f"{args.doc}: the speed table differs from the one rendered from {folder}", file=sys.stderr)
            return 1
        return 0 if ok else 1
    if new != page:
        args.doc.write_text(new, encoding="utf-8")
        print(f"rewrote the speed table in {args.doc}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
