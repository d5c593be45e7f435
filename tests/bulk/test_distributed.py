"""The same bulk scoring on a Dask LocalCluster (127.0.0.1) equals the single-process run."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from _helpers.corpora import load_wmt17
from _helpers.paths import shared_data
from respeval.bulk import score_table

distributed = pytest.importorskip("distributed", reason="respeval[dask] is not installed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

METRICS = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def _corpus(tmp_path: Path, n_files: int, rows_per_file: int) -> tuple[list[Path], pa.Table]:
    reference, systems = load_wmt17(shared_data())
    names = sorted(systems)
    files, tables = [], []
    for i in range(n_files):
        hyps = systems[names[i % len(names)]]
        start = (i * 997) % (len(hyps) - rows_per_file)
        t = pa.table(
            {
                "id": [f"{i}-{j}" for j in range(rows_per_file)],
                "response": hyps[start : start + rows_per_file],
                "reference": reference[start : start + rows_per_file],
            }
        )
        path = tmp_path / "in" / f"part-{i:03d}.parquet"
        path.parent.mkdir(exist_ok=True)
        pq.write_table(t, path)
        files.append(path)
        tables.append(t)
    return files, pa.concat_tables(tables)


@pytest.fixture(scope="module")
def client():
    from respeval.distributed.dask import local_cluster

    cluster = local_cluster(n_workers=2)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _assert_same(summary, out: Path, whole: pa.Table):
    want_rows, want = score_table(whole, metrics=METRICS, id_field="id", stemmer=True, bootstrap=200)
    got_rows = pq.read_table(out)
    assert got_rows.num_rows == whole.num_rows
    assert got_rows.column("row").to_pylist() == list(range(whole.num_rows))  # none lost or duplicated
    assert got_rows.equals(want_rows)
    assert summary.table[0].values == want.table[0].values
    assert summary.table[0].intervals == want.table[0].intervals


def test_dask_equals_single_process(tmp_path: Path, client):
    from respeval.distributed.dask import score_parquet

    files, whole = _corpus(tmp_path, n_files=5, rows_per_file=600)
    out = tmp_path / "rows.parquet"
    summary = score_parquet(
        str(tmp_path / "in" / "*.parquet"),
        str(out),
        metrics=METRICS,
        id_field="id",
        stemmer=True,
        client=client,
        bootstrap=200,
    )
    _assert_same(summary, out, whole)
    assert not Path(str(out) + ".parts").exists()


def test_dask_survives_a_killed_worker(tmp_path: Path, client):
    from respeval.distributed.dask import score_parquet

    files, whole = _corpus(tmp_path, n_files=12, rows_per_file=1500)
    out = tmp_path / "rows.parquet"
    result: dict = {}

    def run() -> None:
        try:
            result["summary"] = score_parquet(
                [str(f) for f in files],
                str(out),
                metrics=METRICS,
                id_field="id",
                stemmer=True,
                client=client,
                bootstrap=200,
            )
        except BaseException as exc:  # reported by the assertion below
            result["error"] = exc

    worker_pids = list(client.run(os.getpid).values())
    thread = threading.Thread(target=run)
    thread.start()
    parts = Path(str(out) + ".parts")
    deadline = time.time() + 120
    while time.time() < deadline and not list(parts.glob("run-*/part-*.parquet")):
        time.sleep(0.01)
    os.kill(worker_pids[0], signal.SIGKILL)
    thread.join(timeout=300)
    assert "error" not in result, result.get("error")
    assert worker_pids[0] not in client.run(os.getpid).values(), "the worker was not killed"
    assert len(list(parts.parent.glob("rows.parquet.parts"))) == 0
    _assert_same(result["summary"], out, whole)


def test_dask_driver_killed_then_rerun_gives_the_complete_output(tmp_path: Path, client):
    """Issue 12, "Also": SIGKILL of the driver (its tasks may still run on the cluster),
    then the same command again: the output is complete and exact, nothing is left over."""
    from _helpers import kill
    from respeval.distributed.dask import score_parquet

    files, whole = _corpus(tmp_path, n_files=3, rows_per_file=100)
    out = tmp_path / "rows.parquet"
    address = client.scheduler.address
    argv = ["score", "--engine", "dask", "--scheduler", address, "--pred", str(tmp_path / "in" / "*.parquet")]
    argv += ["--metrics", ",".join(METRICS), "--id-field", "id", "--stem", "--out", str(out), "--quiet"]
    code, output = kill.run(argv, cwd=tmp_path, kill_at=("respeval.distributed.dask.ChunkStats.from_arrays", 1))
    assert code == -9, output
    assert not out.exists() and Path(f"{out}.parts").exists()
    summary = score_parquet(
        [str(f) for f in files], str(out), metrics=METRICS, id_field="id", stemmer=True, client=client, bootstrap=200
    )
    _assert_same(summary, out, whole)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "rows.parquet"]


def test_missing_file_is_named(tmp_path: Path, client):
    from respeval.distributed.dask import score_parquet

    with pytest.raises(FileNotFoundError, match="nope.parquet"):
        score_parquet([str(tmp_path / "nope.parquet")], str(tmp_path / "o.parquet"), client=client)


def test_cli_engine_dask(tmp_path: Path):
    import json
    import subprocess
    import sys

    files, whole = _corpus(tmp_path, n_files=3, rows_per_file=200)
    out = tmp_path / "rows.parquet"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "respeval",
            "score",
            "--engine",
            "dask",
            "--pred",
            str(tmp_path / "in" / "*.parquet"),
            "--metrics",
            "rouge1,rougeL",
            "--out",
            str(out),
            "--json",
            "--quiet",
            "--bootstrap",
            "100",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    _, want = score_table(whole, metrics=("rouge1", "rougeL"), bootstrap=100)
    assert summary["systems"][0]["values"] == want.table[0].values
    assert pq.read_table(out).num_rows == 600
