"""Issue 12.2, 12.3 and 12.15 for every command that writes files (judge, gate, validate,
report; ``score`` is in tests/bulk/test_nothing_lost.py): an output is never an input, never
truncated by a run that has not replaced it, and never written by two runs at once."""

from __future__ import annotations

import errno
import json
import os
import threading
from pathlib import Path

import pytest

from _helpers import kill
from _helpers.cli import run_cli as run


def items(path: Path, n: int = 6) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(
                json.dumps({"id": f"q{i}", "prompt": f"Q{i}?", "reference": f"A{i}.", "response": f"A{i}."}) + "\n"
            )
    return path


def judged(path: Path) -> Path:
    """A results table with Vertex's judge and human columns, for validate and report."""
    rows = [{"id": i, "q/score": i % 2, "q/human_rating": (i // 2) % 2} for i in range(12)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("spelling", ["same", "symlink"])
def test_no_command_writes_over_its_input(tmp_path, capsys, spelling):
    """12.3: judge --input x --out x emptied the input; gate, validate and report overwrote it."""
    data = items(tmp_path / "items.jsonl")
    table = judged(tmp_path / "judged.jsonl")
    summary = tmp_path / "summary.json"
    assert run(capsys, "validate", "--results", str(table), "--summary-out", str(summary), "--bootstrap", "20")[0] == 0

    def alias(path: Path) -> Path:
        if spelling == "same":
            return path
        link = path.with_name(f"link{len(list(path.parent.glob('link*')))}-{path.name}")
        link.symlink_to(path)
        return link

    saved = {p: p.read_bytes() for p in (data, table, summary)}
    cases = [
        (["judge", "--input", str(data), "--model", "fake:", "--out", str(alias(data)), "--quiet"], "--out"),
        (["judge", "--input", str(data), "--model", "fake:", "--cache", str(alias(data)), "--quiet"], "--cache"),
        (
            ["judge", "--method", "pairwise", "--input", str(data), "--model", "fake:", "--out", str(alias(data))],
            "--out",
        ),
        (["gate", "--input", str(data), "--out", str(alias(data))], "--out"),
        (["gate", "--input", str(data), "--junit", str(alias(data))], "--junit"),
        (["validate", "--results", str(table), "--summary-out", str(alias(table))], "--summary-out"),
        (["validate", "--results", str(table), "--report", str(alias(table))], "--report"),
        (["report", str(summary), "--out", str(alias(summary))], "--out"),
    ]
    for args, option in cases:
        code, _, err = run(capsys, *args)
        assert code == 1 and f"{option} " in err and "is the same file as" in err, (args, err)
    assert {p: p.read_bytes() for p in saved} == saved


def test_two_outputs_that_are_one_file_are_refused(tmp_path, capsys):
    data = items(tmp_path / "items.jsonl")
    out = tmp_path / "out.jsonl"
    code, _, err = run(capsys, "gate", "--input", str(data), "--out", str(out), "--junit", str(out))
    assert code == 1 and "are the same file" in err and not out.exists()


def test_a_failed_replay_only_run_keeps_the_previous_output(tmp_path, capsys):
    """12.15: --replay-only stops on a cache miss; the last complete --out stays."""
    data = items(tmp_path / "items.jsonl", 4)
    out = tmp_path / "r.jsonl"
    assert run(capsys, "judge", "--input", str(data), "--model", "fake:", "--out", str(out), "--quiet")[0] == 0
    before = out.read_bytes()
    more = items(tmp_path / "more.jsonl", 6)
    cache = f"{out}.cache.sqlite"
    code, _, err = run(
        capsys, "judge", "--input", str(more), "--model", "fake:", "--out", str(out), "--cache", cache,
        "--replay-only", "--quiet", "--concurrency", "1",
    )  # fmt: skip
    assert code == 3 and "cache miss" in err
    assert out.read_bytes() == before
    assert len(Path(f"{out}.partial").read_text().splitlines()) == 4  # what the failed run did judge


def test_judge_rows_go_to_a_partial_file_until_the_run_completes(tmp_path, capsys):
    data = items(tmp_path / "items.jsonl", 5)
    out = tmp_path / "r.jsonl"
    out.write_text("previous results\n")
    code, text, _ = run(
        capsys, "judge", "--input", str(data), "--model", "fake:", "--out", str(out), "--budget-calls", "2", "--quiet"
    )
    assert code == 4 and out.read_text() == "previous results\n"
    assert f"rows judged so far: {out}.partial" in text
    code, text, _ = run(capsys, "judge", "--input", str(data), "--model", "fake:", "--out", str(out), "--quiet")
    assert code == 0 and len(out.read_text().splitlines()) == 5 and not Path(f"{out}.partial").exists()
    assert f"per-row results: {out}" in text


def test_a_second_judge_run_on_the_same_output_stops_at_once(tmp_path, capsys):
    """12.2 for the judge: the lock beside --out names the running one."""
    data = items(tmp_path / "items.jsonl", 40)
    out = tmp_path / "r.jsonl"
    argv = [
        "judge",
        "--input",
        str(data),
        "--model",
        "fake:latency=0.05",
        "--out",
        str(out),
        "--quiet",
        "--concurrency",
        "1",
    ]
    first, first_out = kill.run(argv, cwd=tmp_path, wait=False)
    try:
        for _ in range(3000):
            if Path(f"{out}.partial").exists():
                break
            threading.Event().wait(0.01)
        code, _, err = run(capsys, *argv)
        assert code == 1 and f"pid {first.pid}" in err
    finally:
        first.join(120)
    assert first.exitcode == 0, first_out.read_text()
    assert len(out.read_text().splitlines()) == 40


def test_gate_disk_full_keeps_the_previous_output(tmp_path, capsys, monkeypatch):
    """12.3: the decisions were written over the old file, which a failure then left cut short."""
    from respeval.gate import GateRow

    data = items(tmp_path / "items.jsonl", 8)
    out = tmp_path / "decisions.jsonl"
    out.write_text("the previous decisions\n")
    real = GateRow.to_json
    calls = [0]

    def to_json(self):
        calls[0] += 1
        if calls[0] == 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self)

    monkeypatch.setattr(GateRow, "to_json", to_json)
    code, _, err = run(capsys, "gate", "--input", str(data), "--out", str(out))
    assert code == 1 and f"cannot write {out}: no space left on device" in err
    assert out.read_text() == "the previous decisions\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["decisions.jsonl", "items.jsonl"]
    monkeypatch.setattr(GateRow, "to_json", real)
    assert run(capsys, "gate", "--input", str(data), "--out", str(out))[0] == 0
    assert len(out.read_text().splitlines()) == 8


def test_report_and_validate_create_the_output_folder_and_leave_no_temporary_file(tmp_path, capsys):
    table = judged(tmp_path / "judged.jsonl")
    summary = tmp_path / "run" / "validation.json"
    report = tmp_path / "html" / "report.html"
    assert run(capsys, "validate", "--results", str(table), "--summary-out", str(summary), "--bootstrap", "20")[0] == 0
    assert run(capsys, "report", str(summary.parent), "--out", str(report), "--bootstrap", "20")[0] == 0
    assert json.loads(summary.read_text())["schema"] and report.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in summary.parent.iterdir()] == ["validation.json"]
    assert [p.name for p in report.parent.iterdir()] == ["report.html"]
    assert not list(tmp_path.rglob("*.lock")) and not list(tmp_path.rglob(".*tmp"))


def test_a_missing_report_input_and_a_link_loop_are_named(tmp_path, capsys):
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    code, _, err = run(capsys, "report", str(loop), "--out", str(tmp_path / "r.html"))
    assert code == 1 and "symbolic link loop" in err
    assert not os.path.exists(tmp_path / "r.html")


def test_judge_reads_a_fifo_once(tmp_path, capsys):
    """A sibling of 12.10: the judge checked its input, then opened it again (a FIFO hung)."""
    data = items(tmp_path / "items.jsonl", 5).read_bytes()
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    out = tmp_path / "r.jsonl"
    try:
        code, output = kill.run(
            ["judge", "--input", str(fifo), "--model", "fake:", "--out", str(out), "--quiet"], cwd=tmp_path, timeout=60
        )
    finally:
        if feeder.is_alive():
            with open(fifo, "rb") as fh:
                fh.read()
    assert code == 0, output
    assert len(out.read_text().splitlines()) == 5


def test_evaluate_checks_its_outputs_and_resumes_on_content(tmp_path, capsys, monkeypatch):
    """Siblings of 12.3, 12.7 and 12.16 in ``respeval evaluate`` (its own parts and resume)."""
    data = items(tmp_path / "items.jsonl", 9)
    before = data.read_bytes()
    code, _, err = run(capsys, "evaluate", "--input", str(data), "--metric", "exact_match", "--out", str(data))
    assert code == 1 and "is the same file as --input" in err and data.read_bytes() == before
    argv = [
        "evaluate",
        "--input",
        "items.jsonl",
        "--metric",
        "exact_match",
        "--out",
        "rows.jsonl",
        "--chunk-size",
        "2",
        "--quiet",
    ]
    code, output = kill.run(argv, cwd=tmp_path, kill_at=("respeval.evaluate.run._Parts.write", 3))
    assert code == -9, output
    monkeypatch.chdir(tmp_path.parent)  # the same input, spelled another way
    absolute = [str(tmp_path / a) if a in ("items.jsonl", "rows.jsonl") else a for a in argv]
    st = data.stat()
    data.write_bytes(before.replace(b"A1.", b"A7.", 1))  # same size, mtime restored
    os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns))
    code, _, err = run(capsys, *absolute, "--resume")
    assert code == 1 and "cannot resume" in err
    data.write_bytes(before)
    code, output = kill.run(argv, cwd=tmp_path, kill_at=("respeval.evaluate.run._Parts.write", 3))
    assert code == -9, output
    code, _, err = run(capsys, *absolute, "--resume")
    assert code == 0, err
    assert len((tmp_path / "rows.jsonl").read_text().splitlines()) == 9


def test_agent_out_is_never_its_input(tmp_path, capsys):
    """A sibling of 12.3: ``respeval agent --out`` wrote over whatever it was given."""
    from respeval.agents.example import example_paths

    expected, actual = example_paths()
    copy = tmp_path / "expected.evalset.json"
    copy.write_bytes(Path(expected).read_bytes())
    before = copy.read_bytes()
    args = ["agent", "--references", str(copy), *[x for a in actual for x in ("--input", str(a))], "--out", str(copy)]
    code, _, err = run(capsys, *args)
    assert code == 1 and "--out" in err and "is the same file as --references" in err
    assert copy.read_bytes() == before
