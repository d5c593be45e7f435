"""Issue 12, the bulk run's files: nothing lost, nothing truncated, exact resume.

Each test names the issue point it holds.  Runs go through the command line
(``respeval.cli.main`` in this process, or a forked child that SIGKILLs itself at a chosen
moment: ``_helpers.kill``), as a user would run them.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from _helpers import kill
from _helpers.cli import run_cli

N = 90  # rows
CHUNK = "10"
BAD = {7, 23, 58}  # rows of the predictions file that are bad


def write_corpus(directory: Path, n: int = N, bad: set[int] = BAD, name: str = "pred.jsonl") -> tuple[Path, Path]:
    """A JSONL of predictions (some lines bad) and a plain-text file of references."""
    words = "the cat sat on a mat while dogs ran home quickly under bright blue sky".split()
    pred, ref = directory / name, directory / "ref.txt"
    with pred.open("w", encoding="utf-8") as p, ref.open("w", encoding="utf-8") as r:
        for i in range(n):
            text = " ".join(words[(i * 7 + j) % len(words)] for j in range(3 + i % 9))
            row = {"id": f"q{i}", "response": text} if i not in bad else {"id": f"q{i}", "response": i}
            p.write(json.dumps(row) + "\n")
            r.write(" ".join(words[(i * 5 + j) % len(words)] for j in range(4 + i % 5)) + "\n")
    return pred, ref


def score_args(pred: Path, ref: Path, out: Path, on_error: str = "skip", *extra: str) -> list[str]:
    return [
        "score",
        "--pred",
        str(pred),
        "--ref",
        str(ref),
        "--id-field",
        "id",
        "--out",
        str(out),
        "--on-error",
        on_error,
        "--chunk-size",
        CHUNK,
        "--bootstrap",
        "20",
        "--json",
        "--quiet",
        *extra,
    ]


def stable(summary: dict) -> dict:
    """A summary without what differs between any two runs (time) or is about the run
    rather than the results (how many chunks a resume reused)."""
    return {k: v for k, v in summary.items() if k not in ("seconds", "resumed_chunks")}


def rows_of(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


# --------------------------------------------------------------------------- point 1


def test_kill_at_the_cleanup_then_resume_loses_no_row(tmp_path, capsys):
    """12.1: SIGKILL when the parts are being removed, a part file gone as a partial cleanup
    leaves it, then --resume: every row is there (the parts are checked, the lost one
    scored again), byte for byte the uninterrupted run's output."""
    pred, ref = write_corpus(tmp_path)
    code, want, _ = run_cli(capsys, *score_args(pred, ref, tmp_path / "full.jsonl"))
    assert code == 0
    out = tmp_path / "rows.jsonl"
    code, _ = kill.run(score_args(pred, ref, out), cwd=tmp_path, kill_at=("shutil.rmtree", 1))
    assert code == -9
    parts = Path(f"{out}.parts")
    if parts.exists():  # a cleanup that got as far as one results file
        next(iter(sorted(parts.glob("part-000001.results.*")))).unlink()
    code, got, err = run_cli(capsys, *score_args(pred, ref, out), "--resume")
    assert code == 0, err
    assert out.read_bytes() == (tmp_path / "full.jsonl").read_bytes()
    assert len(rows_of(out)) == N - len(BAD)
    assert stable(json.loads(got))["rows_total"] == N
    assert not parts.exists() and not list(tmp_path.glob("rows.jsonl.parts*"))


def test_a_damaged_or_missing_part_is_scored_again(tmp_path, capsys):
    """12.1: parts are checked (size, counts) before a resume reuses them."""
    pred, ref = write_corpus(tmp_path)
    run_cli(capsys, *score_args(pred, ref, tmp_path / "full.csv"))
    out = tmp_path / "rows.csv"
    code, _ = kill.run(score_args(pred, ref, out), cwd=tmp_path, kill_at=("respeval.bulk.run.score_chunk", 9))
    assert code == -9
    parts = Path(f"{out}.parts")  # chunks 0-5 at least are complete (the writer is <= 2 chunks behind)
    (parts / "part-000002.results.csv").write_text("row,id\n")  # truncated by hand
    (parts / "part-000004.results.csv").unlink()
    code, got, err = run_cli(capsys, *score_args(pred, ref, out), "--resume")
    assert code == 0, err
    assert json.loads(got)["resumed_chunks"] == 2  # chunks 0 and 1; 2 is damaged
    assert out.read_bytes() == (tmp_path / "full.csv").read_bytes()


def test_the_join_refuses_a_part_that_vanished(tmp_path):
    """12.1: a part removed between the check and the join stops the run with a message;
    the output is not replaced by a shorter one."""
    from respeval.bulk.parts import Parts, PartsError

    pred, ref = write_corpus(tmp_path)
    out = tmp_path / "rows.jsonl"
    out.write_text("previous\n")
    real_finish = Parts.finish

    def finish(self, metas, errors_out):
        (self.dir / "part-000003.results.jsonl").unlink()
        return real_finish(self, metas, errors_out)

    import respeval

    Parts.finish = finish
    try:
        with pytest.raises(PartsError, match=r"part 3 of .*rows.jsonl is missing or damaged.*--resume"):
            respeval.score_files(str(pred), str(ref), id_field="id", out=str(out), on_error="skip", chunk_size=10)
    finally:
        Parts.finish = real_finish
    assert out.read_text() == "previous\n"


# --------------------------------------------------------------------------- point 2


def test_a_second_run_on_the_same_output_stops_at_once_and_names_the_first(tmp_path, capsys):
    """12.2: an OS lock beside the output, held for the whole run."""
    pred, ref = write_corpus(tmp_path)
    out = tmp_path / "rows.jsonl"
    first, first_out = kill.run(score_args(pred, ref, out), cwd=tmp_path, slow=("numpy.savez", 0.15), wait=False)
    try:
        deadline = 60.0
        while not Path(f"{out}.parts").exists() and deadline > 0:
            threading.Event().wait(0.02)
            deadline -= 0.02
        code, _, err = run_cli(capsys, *score_args(pred, ref, out))
        assert code == 1
        assert f"pid {first.pid}" in err and "is being written by another respeval run" in err
    finally:
        first.join(120)
    assert first.exitcode == 0, first_out.read_text()
    assert len(rows_of(out)) == N - len(BAD)
    assert not Path(f"{out}.lock").exists()


# --------------------------------------------------------------------------- point 3


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_an_output_that_is_an_input_is_refused_before_anything_is_touched(tmp_path, capsys, spelling):
    """12.3: same device and inode, however the path is written."""
    pred, ref = write_corpus(tmp_path, bad=set())
    before = pred.read_bytes()
    out = {
        "same": pred,
        "dot": tmp_path / "." / pred.name,
        "symlink": tmp_path / "link.jsonl",
        "hardlink": tmp_path / "hard.jsonl",
    }[spelling]
    if spelling == "symlink":
        out.symlink_to(pred)
    if spelling == "hardlink":
        os.link(pred, out)
    code, _, err = run_cli(capsys, *score_args(pred, ref, out))
    assert code == 1 and "is the same file as --input" in err
    code, _, err = run_cli(capsys, *score_args(pred, ref, tmp_path / "o.jsonl", "record"), "--errors", str(out))
    assert code == 1 and "--errors" in err and "is the same file as --input" in err
    assert pred.read_bytes() == before
    assert not list(tmp_path.glob("*.parts")) and not list(tmp_path.glob("*.lock"))


# --------------------------------------------------------------------------- point 6


@pytest.mark.parametrize("on_error", ["skip", "record"])
def test_counts_and_errors_after_a_resume_equal_the_uninterrupted_run(tmp_path, capsys, on_error):
    """12.6: every count and the errors file, whatever --on-error says."""
    pred, ref = write_corpus(tmp_path)
    code, want, _ = run_cli(capsys, *score_args(pred, ref, tmp_path / "full.jsonl", on_error))
    out = tmp_path / "rows.jsonl"
    code, _ = kill.run(score_args(pred, ref, out, on_error), cwd=tmp_path, kill_at=("respeval.bulk.run.score_chunk", 8))
    assert code == -9
    code, got, err = run_cli(capsys, *score_args(pred, ref, out, on_error), "--resume")
    assert code == 0, err
    got_summary, want_summary = json.loads(got), json.loads(want)
    assert got_summary["resumed_chunks"] >= 3
    assert (got_summary["rows_total"], got_summary["rows_failed"]) == (N, len(BAD))
    assert stable(got_summary) == {
        **stable(want_summary),
        "output": str(out),
        "errors_output": got_summary["errors_output"],
    }
    if on_error == "record":
        assert Path(got_summary["errors_output"]).read_bytes() == (tmp_path / "full.jsonl.errors.jsonl").read_bytes()


# --------------------------------------------------------------------------- point 7


def test_resume_checks_the_content_not_size_and_mtime(tmp_path, capsys):
    """12.7: an input rewritten with the same size and its mtime restored (cp -p) is caught."""
    pred, ref = write_corpus(tmp_path)
    out = tmp_path / "rows.jsonl"
    code, _ = kill.run(score_args(pred, ref, out), cwd=tmp_path, kill_at=("respeval.bulk.run.score_chunk", 6))
    assert code == -9
    st = ref.stat()
    text = ref.read_text(encoding="utf-8")
    ref.write_text(text.replace("cat", "dog", 1), encoding="utf-8")  # same size, one word changed
    os.utime(ref, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert ref.stat().st_size == st.st_size and ref.stat().st_mtime_ns == st.st_mtime_ns
    code, _, err = run_cli(capsys, *score_args(pred, ref, out), "--resume")
    assert code == 1
    assert f"{ref} is not the file the interrupted run read" in err and "without --resume" in err


# --------------------------------------------------------------------------- point 9


def test_a_csv_cell_longer_than_pythons_csv_limit_scores(tmp_path, capsys):
    """12.9: no artificial field limit (Python's csv module stops at 131,072 characters)."""
    long = " ".join(["word"] * 40_000)  # 199,999 characters
    src = tmp_path / "rows.csv"
    src.write_text(f'response,reference\n"{long}",word word\nshort one,short two\n', encoding="utf-8")
    code, out, err = run_cli(capsys, "score", "--pred", str(src), "--metrics", "rouge1", "--json", "--quiet")
    assert code == 0, err
    assert json.loads(out)["rows_scored"] == 2


def test_validate_reads_a_csv_with_a_long_cell(tmp_path):
    """12.9, a sibling: the whole-table CSV loader of validate and report."""
    from respeval.validate import load_table

    src = tmp_path / "judged.csv"
    src.write_text("response,judge/score,judge/human_rating\n" + "x" * 200_000 + ",1,1\n", encoding="utf-8")
    assert len(load_table(src)["response"][0]) == 200_000


# --------------------------------------------------------------------------- point 10


def test_a_named_fifo_is_read_once_and_the_progress_bar_does_not_drain_it(tmp_path):
    """12.10: no counting pass over a pipe; progress without an ETA."""
    pred, ref = write_corpus(tmp_path, bad=set())
    fifo = tmp_path / "pred.fifo.jsonl"
    os.mkfifo(fifo)
    data = pred.read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    args = ["score", "--pred", str(fifo), "--ref", str(ref), "--metrics", "rouge1", "--json"]  # no --quiet
    try:
        code, output = kill.run(args, cwd=tmp_path, timeout=30)
    finally:
        if feeder.is_alive():  # unblock the feeder of a reader that never came back
            with open(fifo, "rb") as fh:
                fh.read()
    assert code == 0, output
    assert json.loads(output[output.index("{") :])["rows_scored"] == N


def test_dev_stdin_is_read_once(tmp_path):
    """12.10: ``cmd | respeval score --pred /dev/stdin`` with the progress bar on.  JSON lines
    on a pipe were read as plain text (issue 28.23): refused, or read as JSON lines when told."""
    pred, ref = write_corpus(tmp_path, bad=set())
    argv = [sys.executable, "-m", "respeval", "score", "--pred", "/dev/stdin", "--ref", str(ref), "--json"]
    proc = subprocess.run(argv, input=pred.read_bytes(), capture_output=True, timeout=120)
    assert proc.returncode == 1 and "name it .jsonl" in proc.stderr.decode()
    proc = subprocess.run([*argv, "--input-format", "jsonl"], input=pred.read_bytes(), capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    piped = json.loads(proc.stdout)
    assert piped["rows_scored"] == N
    from_file = json.loads(
        subprocess.run([*argv[:5], str(pred), *argv[6:]], capture_output=True, timeout=120, check=True).stdout
    )
    assert piped["systems"][0]["values"] == from_file["systems"][0]["values"]


# --------------------------------------------------------------------------- point 11


def test_disk_full_on_parquet_is_a_clean_message_and_resume_finishes(tmp_path, capsys, monkeypatch):
    """12.11 (injected ENOSPC; the real thing on a tiny tmpfs is the next test)."""
    import pyarrow.parquet as pq

    pred, ref = write_corpus(tmp_path)
    run_cli(capsys, *score_args(pred, ref, tmp_path / "full.parquet"))
    out = tmp_path / "rows.parquet"
    real = pq.ParquetWriter.write_table
    calls = [0]

    def write_table(self, *args, **kwargs):
        calls[0] += 1
        if calls[0] > 7:
            raise OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", write_table)
    code, _, err = run_cli(capsys, *score_args(pred, ref, out))
    assert code == 1
    assert f"cannot write {out}: no space left on device" in err and "--resume" in err
    assert "Traceback" not in err and "Exception ignored" not in err
    monkeypatch.setattr(pq.ParquetWriter, "write_table", real)
    code, got, err = run_cli(capsys, *score_args(pred, ref, out), "--resume")
    assert code == 0, err
    assert json.loads(got)["resumed_chunks"] >= 2
    assert pq.read_table(out).equals(pq.read_table(tmp_path / "full.parquet"))


def _unshare_available() -> bool:
    if shutil.which("unshare") is None or not sys.platform.startswith("linux"):
        return False
    probe = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /tmp"],
        capture_output=True,
    )
    return probe.returncode == 0


needs_tmpfs = pytest.mark.skipif(not _unshare_available(), reason="no user namespaces here to mount a small tmpfs")


@pytest.mark.slow
@needs_tmpfs
def test_disk_full_on_a_real_small_file_system(tmp_path):
    """12.11 for real: a 256 KB tmpfs (in a user namespace), then more room and --resume."""
    import pyarrow.parquet as pq

    pred, ref = write_corpus(tmp_path, n=2000)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    args = " ".join(score_args(pred, ref, mnt / "rows.parquet")[1:]).replace(
        f"--chunk-size {CHUNK}", "--chunk-size 100"
    )
    script = f"""
    mount -t tmpfs -o size=256k tmpfs {mnt} || exit 99
    {sys.executable} -m respeval score {args} > {tmp_path}/first.out 2> {tmp_path}/first.err
    echo $? > {tmp_path}/first.code
    mount -o remount,size=64m {mnt}
    {sys.executable} -m respeval score {args} --resume > {tmp_path}/second.out 2> {tmp_path}/second.err
    echo $? > {tmp_path}/second.code
    cp {mnt}/rows.parquet {tmp_path}/resumed.parquet
    """
    subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script], timeout=300, check=True)
    err = (tmp_path / "first.err").read_text()
    assert (tmp_path / "first.code").read_text().strip() == "1"
    assert f"cannot write {mnt}/rows.parquet: no space left on device" in err and "Traceback" not in err
    assert (tmp_path / "second.code").read_text().strip() == "0", (tmp_path / "second.err").read_text()
    full = tmp_path / "full.parquet"
    import respeval

    respeval.score_files(str(pred), str(ref), id_field="id", out=str(full), on_error="skip", bootstrap=20)
    assert pq.read_table(tmp_path / "resumed.parquet").equals(pq.read_table(full))


# --------------------------------------------------------------------------- point 13


@pytest.mark.parametrize("ext", ["parquet", "csv", "jsonl"])
@pytest.mark.parametrize("case", ["empty input", "every row bad"])
def test_nothing_scored_gives_a_valid_empty_file_and_says_so(tmp_path, capsys, ext, case):
    """12.13: a valid empty file with the schema, and a summary that says nothing was scored."""
    import pyarrow.parquet as pq

    pred = tmp_path / "pred.jsonl"
    pred.write_text("" if case == "empty input" else '{"id": "a", "response": 1, "reference": "x"}\n')
    out = tmp_path / f"rows.{ext}"
    args = ["score", "--pred", str(pred), "--id-field", "id", "--out", str(out), "--on-error", "skip", "--quiet"]
    code, text, err = run_cli(capsys, *args)
    assert code == 0, err
    assert "nothing was scored" in text
    code, js, _ = run_cli(capsys, *args, "--json")
    assert any("nothing was scored" in n for n in json.loads(js)["notes"])
    if ext == "parquet":
        table = pq.read_table(out)
        assert table.num_rows == 0 and table.column_names[:2] == ["row", "id"] and "rouge1_f" in table.column_names
    elif ext == "csv":
        assert out.read_text().splitlines()[0].startswith("row,id,rouge1_p")
    else:
        assert out.read_bytes() == b""


# --------------------------------------------------------------------------- point 15


def test_a_symlink_loop_is_named_as_such(tmp_path, capsys):
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    code, _, err = run_cli(capsys, "score", "--pred", str(loop), "--quiet")
    assert code == 1 and "symbolic link loop" in err and "No such file" not in err


def test_compare_and_errors_are_checked_before_any_data_is_read(tmp_path, capsys):
    """12.15: --compare nosuch, and --errors without --on-error record (ignored before)."""
    pred, ref = write_corpus(tmp_path)  # line 8 is bad: reading would stop there first
    code, _, err = run_cli(capsys, "score", "--pred", str(pred), "--ref", str(ref), "--compare", "nosuch", "--quiet")
    assert code == 1 and "--compare 'nosuch' is not a system of this run; systems: pred" in err
    errors = tmp_path / "errors.jsonl"
    code, _, err = run_cli(
        capsys, "score", "--pred", str(pred), "--ref", str(ref), "--on-error", "skip", "--errors", str(errors)
    )
    assert code == 1 and "--on-error record" in err and not errors.exists()


@pytest.mark.parametrize("second", ["same", "./"])
def test_the_same_file_as_pred_and_ref_scores_it_against_itself(tmp_path, capsys, second):
    text = tmp_path / "x.txt"
    text.write_text("the cat sat\na dog ran home\n")
    ref = str(text) if second == "same" else os.path.join(str(tmp_path), ".", "x.txt")
    code, out, err = run_cli(capsys, "score", "--pred", str(text), "--ref", ref, "--metrics", "rouge1", "--json")
    assert code == 0, err
    assert json.loads(out)["systems"][0]["values"]["rouge1_f"] == 1.0


def test_integer_ids_are_accepted_and_written_as_strings(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = tmp_path / "in.jsonl"
    src.write_text(
        '{"id": 7, "response": "a b", "reference": "a b"}\n{"id": "x8", "response": "c", "reference": "d"}\n'
    )
    table = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [7, 8], "response": ["a b", "c"], "reference": ["a b", "d"]}), table)
    for path, want in ((src, ["7", "x8"]), (table, ["7", "8"])):
        out = tmp_path / f"{path.suffix[1:]}-rows.jsonl"
        code, _, err = run_cli(capsys, "score", "--pred", str(path), "--id-field", "id", "--out", str(out), "--quiet")
        assert code == 0, err
        assert [r["id"] for r in rows_of(out)] == want
    src.write_text('{"id": 1.5, "response": "a", "reference": "a"}\n')
    code, _, err = run_cli(capsys, "score", "--pred", str(src), "--id-field", "id", "--quiet")
    assert code == 1 and "field 'id': expected a string or an integer, got float" in err


def test_an_output_of_unknown_format_is_refused_before_anything_is_written(tmp_path, capsys):
    pred, ref = write_corpus(tmp_path, bad=set())
    code, _, err = run_cli(capsys, "score", "--pred", str(pred), "--ref", str(ref), "--out", str(tmp_path / "o.txt"))
    assert code == 1 and "use a .parquet, .jsonl or .csv file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pred.jsonl", "ref.txt"]


# --------------------------------------------------------------------------- point 16


def test_resume_with_the_same_input_spelled_absolute_instead_of_relative(tmp_path, capsys, monkeypatch):
    pred, ref = write_corpus(tmp_path)
    run_cli(capsys, *score_args(pred, ref, tmp_path / "full.jsonl"))
    relative = score_args(Path("pred.jsonl"), Path("ref.txt"), Path("rows.jsonl"))
    code, _ = kill.run(relative, cwd=tmp_path, kill_at=("respeval.bulk.run.score_chunk", 5))
    assert code == -9
    monkeypatch.chdir(tmp_path.parent)
    code, _, err = run_cli(capsys, *score_args(pred, ref, tmp_path / "rows.jsonl"), "--resume")
    assert code == 0, err
    assert (tmp_path / "rows.jsonl").read_bytes() == (tmp_path / "full.jsonl").read_bytes()


def test_a_killed_runs_lock_is_free_even_if_its_worker_processes_live_on(tmp_path):
    """12.2: the lock belongs to the run's process, not to the workers it forked (an flock is
    inherited by them, and a killed run's orphans kept every rerun out)."""
    import signal
    import time

    from respeval.io.files import LockedError, OutputLock

    out = tmp_path / "rows.jsonl"
    worker_pid = tmp_path / "worker.pid"
    pid = os.fork()
    if pid == 0:  # the run: takes the lock, forks a long-lived worker, waits to be killed
        try:
            OutputLock(out).acquire()
            worker = os.fork()
            if worker == 0:
                time.sleep(60)
                os._exit(0)
            worker_pid.write_text(str(worker))
            time.sleep(60)
        finally:
            os._exit(1)
    worker = None
    try:
        for _ in range(1000):
            if worker_pid.exists() and worker_pid.read_text():
                worker = int(worker_pid.read_text())
                break
            time.sleep(0.01)
        with pytest.raises(LockedError, match=f"pid {pid} on"):
            OutputLock(out).acquire()
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        lock = OutputLock(out).acquire()  # the orphaned worker still runs: the lock is free anyway
        with pytest.raises(LockedError, match="another run in this process"):
            OutputLock(out).acquire()
        lock.release()
        assert not Path(f"{out}.lock").exists()
    finally:
        if worker is not None:
            os.kill(worker, signal.SIGKILL)


def test_system_names_do_not_depend_on_how_paths_are_spelled(tmp_path, monkeypatch):
    """12.16, a sibling: with colliding file stems the names were the paths as typed, so a
    resume spelled differently named the systems differently."""
    from respeval.bulk.chunks import Inputs

    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "out.txt").write_text("x\n")
    monkeypatch.chdir(tmp_path)

    def names(*preds: str) -> list[str]:
        return Inputs(list(preds), None, "text", "text", None, None, None).system_names()

    assert names("a/out.txt", "b/out.txt") == ["a/out", "b/out"]
    assert names(str(tmp_path / "a/out.txt"), "./b/out.txt") == ["a/out", "b/out"]
    assert names("a/out.txt", "b/other.txt") == ["out", "other"]
