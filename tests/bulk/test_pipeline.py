"""Bulk scoring (``respeval score`` over files): many systems, slices, bad rows, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from _helpers.corpora import load_realsumm, load_wmt17
from _helpers.paths import shared_data
from respeval.bulk import score_files
from respeval.metrics.rouge import rouge

TYPES = ("rouge1", "rouge2", "rougeL")


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "respeval", "score", *args], capture_output=True, text=True, timeout=300
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_wmt17_sixteen_systems_match_library_exactly(tmp_path: Path):
    data = shared_data("wmt17_en_de")
    reference, systems = load_wmt17(data.parent)
    paths = sorted(str(p) for p in (data / "systems").iterdir())
    baseline = Path(paths[0]).stem
    summary = json.loads(
        cli(
            *[x for p in paths for x in ("--pred", p)],
            "--ref",
            str(data / "newstest2017-ende-ref.de"),
            "--metrics",
            ",".join(TYPES),
            "--chunk-size",
            "1000",
            "--compare",
            baseline,
            "--bootstrap",
            "200",
            "--json",
            "--quiet",
        ).stdout
    )
    table = {row["system"]: row for row in summary["systems"]}
    assert len(table) == 16 and summary["rows_scored"] == 16 * 3004 and summary["rows_failed"] == 0
    for path in paths:
        lib = rouge(systems[Path(path).name], reference, TYPES).mean()
        row = table[Path(path).stem]
        for t in TYPES:
            assert row["values"][f"{t}_f"] == lib[t].fmeasure, (path, t)
            assert row["values"][f"{t}_p"] == lib[t].precision
            low, high = row["intervals"][f"{t}_f"]
            assert low < lib[t].fmeasure < high
    comps = summary["comparisons"]
    assert len(comps) == 15 and all(c["baseline"] == baseline for c in comps)
    for c in comps:
        assert 0 < c["p_value"]["rouge1_f"] <= 1
        assert c["delta"]["rouge1_f"] == pytest.approx(
            table[c["system"]]["values"]["rouge1_f"] - table[baseline]["values"]["rouge1_f"], abs=1e-12
        )
    # systems whose means differ a lot are significantly different at 1000 trials
    assert min(c["p_value"]["rouge1_f"] for c in comps) < 0.01


def test_realsumm_system_field_and_group_by(tmp_path: Path):
    rows = load_realsumm(shared_data())
    src = tmp_path / "realsumm.jsonl"
    with src.open("w") as fh:
        for r in rows:
            fh.write(
                json.dumps(
                    {
                        "system": r["system"],
                        "kind": r["kind"],
                        "doc": str(r["doc_id"]),
                        "response": r["prediction"],
                        "reference": r["reference"],
                    }
                )
                + "\n"
            )
    out = tmp_path / "rows.parquet"
    summary = score_files(
        str(src),
        metrics=TYPES + ("rougeLsum",),
        system_field="system",
        group_by="kind",
        id_field="doc",
        out=str(out),
        chunk_size=400,
        bootstrap=100,
        stemmer=True,
    )
    systems = sorted({r["system"] for r in rows})
    overall = {r.system: r for r in summary.table if r.group is None}
    assert sorted(overall) == systems and summary.rows_scored == 2500
    for s in systems:
        mine = [r for r in rows if r["system"] == s]
        lib = rouge(
            [r["prediction"] for r in mine], [r["reference"] for r in mine], TYPES + ("rougeLsum",), stemmer=True
        ).mean()
        for t in TYPES + ("rougeLsum",):
            assert overall[s].values[f"{t}_f"] == lib[t].fmeasure
    sliced = [r for r in summary.table if r.group is not None]
    assert {r.group for r in sliced} == {"abs", "ext"}
    assert sum(r.rows for r in sliced) == 2500
    import pyarrow.parquet as pq

    table = pq.read_table(out)
    assert table.num_rows == 2500
    assert set(table.column_names) >= {"system", "row", "doc", "kind", "rouge1_f", "rougeLsum_f"}


def _bad_input(tmp_path: Path) -> tuple[Path, Path]:
    pred = tmp_path / "p.jsonl"
    pred.write_text(
        "\n".join(
            [
                json.dumps({"response": "the cat sat"}),
                json.dumps({"response": 5}),  # line 2: not a string
                "{not json",  # line 3: malformed
                json.dumps({"other": "x"}),  # line 4: missing field
                json.dumps({"response": "a dog"}),
                json.dumps({"response": "fine row"}),
            ]
        )
        + "\n"
    )
    ref = tmp_path / "r.txt"
    ref.write_bytes(b"the cat sat down\nx\ny\nz\n\xff\xfe bad utf8\nfine row here\n")  # line 5: invalid UTF-8
    return pred, ref


def test_on_error_fail_names_file_line_and_field(tmp_path: Path):
    pred, ref = _bad_input(tmp_path)
    proc = cli("--pred", str(pred), "--ref", str(ref), "--quiet", check=False)
    assert proc.returncode == 1
    assert f"{pred}:2: field 'response': expected a string, got int" in proc.stderr


@pytest.mark.parametrize("mode", ["skip", "record"])
def test_on_error_skip_and_record_account_for_every_row(tmp_path: Path, mode: str):
    pred, ref = _bad_input(tmp_path)
    out = tmp_path / "rows.jsonl"
    summary = json.loads(
        cli(
            "--pred",
            str(pred),
            "--ref",
            str(ref),
            "--on-error",
            mode,
            "--out",
            str(out),
            "--json",
            "--quiet",
            "--chunk-size",
            "4",
        ).stdout
    )
    assert summary["rows_total"] == 6
    assert summary["rows_scored"] == 2 and summary["rows_failed"] == 4
    scored = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["row"] for r in scored] == [0, 5]
    if mode == "record":
        errors = [json.loads(x) for x in Path(summary["errors_output"]).read_text().splitlines()]
        assert [e["record"] for e in errors] == [1, 2, 3, 4]
        reasons = " | ".join(e["reason"] for e in errors)
        assert f"{pred}:2: field 'response': expected a string, got int" in reasons
        assert f"{pred}:3: malformed JSON" in reasons
        assert f"{pred}:4: field 'response': missing" in reasons
        assert f"{ref}:5: invalid UTF-8" in reasons
    else:
        assert summary["errors_output"] is None


def _big_corpus(tmp_path: Path) -> tuple[Path, Path]:
    reference, systems = load_wmt17(shared_data())
    names = sorted(systems)
    preds = [line for n in names[:8] for line in systems[n]]
    refs = reference * 8
    p, r = tmp_path / "pred.txt", tmp_path / "ref.txt"
    p.write_text("\n".join(preds) + "\n", encoding="utf-8")
    r.write_text("\n".join(refs) + "\n", encoding="utf-8")
    return p, r


@pytest.mark.parametrize("ext", ["jsonl", "parquet"])
def test_sigkill_then_resume_equals_uninterrupted_run(tmp_path: Path, ext: str):
    pred, ref = _big_corpus(tmp_path)
    args = [
        "--pred",
        str(pred),
        "--ref",
        str(ref),
        "--metrics",
        "rouge1,rouge2,rougeL,rougeLsum",
        "--stem",
        "--chunk-size",
        "500",
        "--bootstrap",
        "50",
        "--json",
        "--quiet",
    ]
    full = tmp_path / f"full.{ext}"
    want = json.loads(cli(*args, "--out", str(full)).stdout)

    out = tmp_path / f"resumed.{ext}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "respeval", "score", *args, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    parts = Path(str(out) + ".parts")
    deadline = time.time() + 120
    while time.time() < deadline and len(list(parts.glob("*.meta.json"))) < 5:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(list(parts.glob("*.meta.json")))
    assert 5 <= done_before < 48, "the run must be killed part-way"
    assert not out.exists()

    got = json.loads(cli(*args, "--out", str(out), "--resume").stdout)
    assert got["resumed_chunks"] >= 5
    assert out.read_bytes() == full.read_bytes() if ext == "jsonl" else _same_parquet(out, full)
    assert got["systems"] == want["systems"]
    assert not parts.exists()


def _same_parquet(a: Path, b: Path) -> bool:
    import pyarrow.parquet as pq

    return pq.read_table(a).equals(pq.read_table(b))


def test_resume_refuses_changed_inputs(tmp_path: Path):
    pred, ref = _bad_input(tmp_path)
    out = tmp_path / "rows.jsonl"
    parts = Path(str(out) + ".parts")
    parts.mkdir()
    (parts / "manifest.json").write_text(json.dumps({"fingerprint": "something else"}))
    proc = cli(
        "--pred",
        str(pred),
        "--ref",
        str(ref),
        "--on-error",
        "skip",
        "--out",
        str(out),
        "--resume",
        "--quiet",
        check=False,
    )
    assert proc.returncode == 1 and "cannot resume" in proc.stderr


def test_memory_stays_chunked(tmp_path: Path):
    """Per-row outputs are never all in memory: parts appear while the run goes on."""
    pred, ref = _big_corpus(tmp_path)
    seen = []
    out = tmp_path / "rows.jsonl"

    def progress(n: int) -> None:
        seen.append(len(list(Path(str(out) + ".parts").glob("*.results.jsonl"))))

    summary = score_files(
        str(pred), str(ref), metrics=["rouge1"], out=str(out), chunk_size=4000, bootstrap=0, progress=progress
    )
    assert summary.rows_scored == 8 * 3004
    # parts are written by a helper thread, at most a chunk or two behind the scoring
    assert len(seen) == -(-8 * 3004 // 4000) and seen == sorted(seen)
    assert all(done >= k - 2 for k, done in enumerate(seen, start=1))
    with out.open() as lines:
        assert sum(1 for _ in lines) == 8 * 3004


def test_table_does_not_depend_on_chunking_and_equals_library_bootstrap(tmp_path: Path):
    """Values and intervals: the same for any chunk size or thread count, and equal to
    ``rouge(...).mean()`` / ``.bootstrap()`` on the same rows (same seed)."""
    reference, systems = load_wmt17(shared_data())
    hyps = systems[sorted(systems)[3]]
    pred, ref = tmp_path / "p.txt", tmp_path / "r.txt"
    pred.write_text("\n".join(hyps) + "\n", encoding="utf-8")
    ref.write_text("\n".join(reference) + "\n", encoding="utf-8")
    tables = [
        score_files(str(pred), str(ref), metrics=TYPES, chunk_size=size, bootstrap=300, seed=7, threads=threads).table
        for size, threads in ((97, 1), (1000, 2), (50_000, None))
    ]
    assert tables[0] == tables[1] == tables[2]
    row = tables[0][0]
    lib = rouge(hyps, reference, TYPES)
    mean, boot = lib.mean(), lib.bootstrap(n=300, ci=0.95, seed=7)
    for t in TYPES:
        assert row.values[f"{t}_f"] == mean[t].fmeasure
        assert row.intervals[f"{t}_f"] == (boot[t].low.fmeasure, boot[t].high.fmeasure)
        assert row.intervals[f"{t}_r"] == (boot[t].low.recall, boot[t].high.recall)


def test_collector_keeps_rows_only_for_a_paired_comparison():
    """Without --compare the collector's memory does not grow with the corpus."""
    from respeval.bulk import StatsCollector, build_families

    families = build_families(["rouge1"])
    lean = StatsCollector(families, bootstrap=10)
    paired = StatsCollector(families, bootstrap=10, keep_rows=True)
    for start in range(0, 3000, 1000):
        keys = np.arange(start, start + 1000)
        for c in (lean, paired):
            c.add("s", None, keys, {families[0].name: np.full((1000, 3), 0.5)})
    assert lean.rows("s", None) == paired.rows("s", None) == 3000
    assert np.array_equal(lean.sums("s", None, families[0]), [1500.0] * 3)
    with pytest.raises(RuntimeError, match="keep_rows"):
        lean.matrix("s", None, families[0])
    assert paired.matrix("s", None, families[0]).shape == (3000, 3)
    assert lean.replicates("s", None, families[0])[0].shape[1] == 3


def test_small_slices_hold_rows_and_give_the_same_intervals():
    """Slices smaller than the accumulators keep rows instead; intervals do not change."""
    from respeval.bulk import StatsCollector, build_families
    from respeval.bulk.summary import corpus_row
    from respeval.stats import bootstrap_add, new_accumulator, replicate_sums, resolve_seed

    families = build_families(["rouge1"])
    name = families[0].name
    stats = np.random.default_rng(5).random((500, 3))
    chunked = StatsCollector(families, bootstrap=200, seed=9)  # 500 rows > 200: switches part-way
    for start in range(0, 500, 60):
        chunked.add("s", None, np.arange(start, min(start + 60, 500)), {name: stats[start : start + 60]})
    whole = StatsCollector(families, bootstrap=200, seed=9)
    whole.add("s", None, np.arange(500), {name: stats})
    assert chunked._series[("s", None, name)].replicates is not None
    assert corpus_row("s", None, chunked, confidence=0.9) == corpus_row("s", None, whole, confidence=0.9)

    tiny = StatsCollector(families, bootstrap=200, seed=9)
    tiny.add("s", None, np.arange(50), {name: stats[:50]})  # never outgrows the accumulators
    assert tiny._series[("s", None, name)].replicates is None
    acc = new_accumulator(3, 200)
    bootstrap_add(acc, stats[:50], np.arange(50), resolve_seed(9))
    sums, sizes = replicate_sums(acc)
    want = np.percentile(sums[:, 2] / sizes, [5, 95])
    assert corpus_row("s", None, tiny, confidence=0.9).intervals["rouge1_f"] == tuple(want)


def test_a_non_finite_statistic_names_its_record():
    from respeval.bulk import StatsCollector, build_families

    families = build_families(["rouge1"])
    stats = np.zeros((3, 3))
    stats[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"record 11 of system 's': rouge statistic rouge1_f is nan"):
        StatsCollector(families, bootstrap=5).add("s", None, np.array([10, 11, 12]), {families[0].name: stats})
