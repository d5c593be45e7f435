"""Issue 28.16 and 28.27: every file a run writes is created exclusively under a unique name
(never through a symbolic link planted at a fixed name), the input/output guard checks every
path a run writes (lock files, the judge's OUT.partial, the parts folder), and every output
follows the umask."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from _helpers.cli import run_cli as run


def items(path: Path, n: int = 4, *, bad: bool = False) -> Path:
    lines = [
        json.dumps({"id": f"q{i}", "prompt": f"Q{i}?", "reference": f"A{i}.", "response": f"A{i}."}) for i in range(n)
    ]
    if bad:
        lines.insert(1, '{"id": "broken", "response": ')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


VICTIM = "do not overwrite me\n"


def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_text(VICTIM, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- planted links


def _cases(tmp_path: Path) -> list[tuple[list[str], list[str]]]:
    """(argv, the fixed names beside the outputs that a run used to open with open(..., "w"))."""
    data = str(items(tmp_path / "items.jsonl"))
    bad = str(items(tmp_path / "bad.jsonl", bad=True))
    t = str(tmp_path)
    return [
        (
            ["evaluate", "--input", bad, "--metric", "exact_match", "--out", f"{t}/ev.jsonl", "--on-error", "record",
             "--quiet"],
            ["ev.jsonl.tmp", "ev.jsonl.errors.jsonl.tmp", "ev.jsonl.lock"],
        ),
        (
            ["evaluate", "--input", data, "--metric", "exact_match", "--out", f"{t}/ev.parquet", "--quiet"],
            ["ev.parquet.tmp"],
        ),
        (
            ["score", "--pred", bad, "--metrics", "rouge1", "--out", f"{t}/sc.jsonl", "--on-error", "record",
             "--quiet", "--bootstrap", "0"],
            ["sc.jsonl.errors.jsonl.tmp", "sc.jsonl.lock", "sc.jsonl.errors.jsonl.lock"],
        ),
        (
            ["judge", "--input", data, "--model", "fake:", "--out", f"{t}/j.jsonl", "--quiet"],
            ["j.jsonl.partial", "j.jsonl.lock"],
        ),
        (
            ["judge", "--method", "pairwise", "--input", data, "--model", "fake:", "--out", f"{t}/p.jsonl", "--quiet"],
            ["p.jsonl.partial"],
        ),
        (
            ["judge", "--method", "adaptive-rubric", "--input", data, "--model", "fake:", "--out", f"{t}/a.jsonl",
             "--rubrics-out", f"{t}/rub.json", "--quiet"],
            ["a.jsonl.partial", "rub.json.lock"],
        ),
        (
            ["gate", "--input", data, "--out", f"{t}/g.jsonl", "--junit", f"{t}/g.xml"],
            ["g.jsonl.lock", "g.xml.lock"],
        ),
    ]  # fmt: skip


@pytest.mark.parametrize("case", range(7))
def test_a_symlink_planted_at_a_fixed_temporary_name_is_never_followed(tmp_path, capsys, case):
    target = victim(tmp_path)
    argv, names = _cases(tmp_path)[case]
    for name in names:
        (tmp_path / name).symlink_to(target)
    code, _, err = run(capsys, *argv)
    assert target.read_text(encoding="utf-8") == VICTIM, (argv, err)
    assert code in (0, 1), err  # done, or refused with a message (never through the link)
    if code == 1:
        assert "symbolic link" in err, err


def test_score_errors_temporary_is_never_the_input(tmp_path, capsys):
    """The issue's case: the errors file's temporary (ERRORS + ".tmp") was the input."""
    preds = items(tmp_path / "preds.jsonl", bad=True)
    before = preds.read_bytes()
    errors = tmp_path / "e.jsonl"
    os.link(preds, tmp_path / "e.jsonl.tmp")
    code, _, err = run(
        capsys, "score", "--pred", str(preds), "--metrics", "rouge1", "--out", str(tmp_path / "out.jsonl"),
        "--on-error", "record", "--errors", str(errors), "--quiet", "--bootstrap", "0",
    )  # fmt: skip
    assert code == 0, err
    assert preds.read_bytes() == before
    assert len(errors.read_text().splitlines()) == 1


# --------------------------------------------------------------------------- the guard


def test_the_guard_checks_the_judges_partial_file(tmp_path, capsys):
    """OUT.partial a hard link to the input: the judge emptied the input writing its rows there."""
    data = items(tmp_path / "items.jsonl")
    before = data.read_bytes()
    os.link(data, tmp_path / "r.jsonl.partial")
    code, _, err = run(capsys, "judge", "--input", str(data), "--model", "fake:", "--out", str(tmp_path / "r.jsonl"))
    assert code == 1 and "is the same file as --input" in err and "r.jsonl.partial" in err, err
    assert data.read_bytes() == before


@pytest.mark.parametrize("command", ["score", "evaluate", "judge", "gate"])
def test_the_guard_checks_the_lock_file(tmp_path, capsys, command):
    """OUT.lock a hard link to the input: taking the lock truncated the input."""
    data = items(tmp_path / "items.jsonl")
    before = data.read_bytes()
    os.link(data, tmp_path / "r.jsonl.lock")
    out = str(tmp_path / "r.jsonl")
    argv = {
        "score": ["score", "--pred", str(data), "--metrics", "rouge1", "--out", out, "--quiet"],
        "evaluate": ["evaluate", "--input", str(data), "--metric", "exact_match", "--out", out, "--quiet"],
        "judge": ["judge", "--input", str(data), "--model", "fake:", "--out", out, "--quiet"],
        "gate": ["gate", "--input", str(data), "--out", out],
    }[command]
    code, _, err = run(capsys, *argv)
    assert code == 1 and "r.jsonl.lock" in err and "is the same file as" in err, err
    assert data.read_bytes() == before


@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_the_guard_checks_the_parts_folder(tmp_path, capsys, command):
    """A run that does not resume removes OUT.parts/: an input inside it was deleted."""
    folder = tmp_path / "r.jsonl.parts"
    folder.mkdir()
    data = items(folder / "in.jsonl")
    before = data.read_bytes()
    out = str(tmp_path / "r.jsonl")
    argv = {
        "score": ["score", "--pred", str(data), "--metrics", "rouge1", "--out", out, "--quiet"],
        "evaluate": ["evaluate", "--input", str(data), "--metric", "exact_match", "--out", out, "--quiet"],
    }[command]
    code, _, err = run(capsys, *argv)
    assert code == 1 and "parts" in err and "inside" in err, err
    assert data.read_bytes() == before


# --------------------------------------------------------------------------- the umask


def test_every_output_follows_the_umask(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    old = os.umask(0o027)
    try:
        data = str(items(tmp_path / "items.jsonl"))
        assert run(capsys, "score", "--pred", data, "--metrics", "rouge1", "--out", "s.jsonl", "--summary-out",
                   "sum.json", "--report", "s.html", "--quiet", "--bootstrap", "0")[0] == 0  # fmt: skip
        assert run(capsys, "score", "--pred", data, "--metrics", "rouge1", "--out", "s.parquet", "--quiet",
                   "--bootstrap", "0")[0] == 0  # fmt: skip
        assert run(capsys, "report", "sum.json", "--out", "r.html")[0] == 0
        assert run(capsys, "gate", "--input", data, "--out", "g.jsonl", "--junit", "g.xml")[0] == 0
        assert run(capsys, "judge", "--method", "adaptive-rubric", "--input", data, "--model", "fake:",
                   "--out", "a.jsonl", "--rubrics-out", "rub.json", "--quiet")[0] == 0  # fmt: skip
        assert run(capsys, "judge", "--input", data, "--model", "fake:", "--out", "j.jsonl", "--summary-out",
                   "j.json", "--report", "j.html", "--quiet")[0] == 0  # fmt: skip
        assert run(capsys, "evaluate", "--input", data, "--metric", "exact_match", "--out", "e.csv",
                   "--summary-out", "e.json", "--report", "e.html", "--quiet")[0] == 0  # fmt: skip
    finally:
        os.umask(old)
    modes = {
        p.name: stat.S_IMODE(p.stat().st_mode)
        for p in tmp_path.iterdir()
        if p.is_file() and p.name != "items.jsonl" and not p.name.endswith(".sqlite")
    }
    assert len(modes) >= 15, modes
    assert {name: mode for name, mode in modes.items() if mode != 0o640} == {}


@pytest.mark.parametrize("which", ["judge-template", "judge-instruction", "pairwise-summary", "evaluate-template"])
def test_the_guard_checks_every_file_a_command_reads(tmp_path, capsys, which):
    """Siblings: a prompt template, an @FILE system instruction and a spec are inputs too, and a
    whole-run judge method's --summary-out and --report are outputs (they were not checked)."""
    data = str(items(tmp_path / "items.jsonl"))
    template = tmp_path / "t.jsonl"  # a name every command takes as an output
    template.write_text("Judge {response} against {reference}.", encoding="utf-8")
    before = template.read_bytes()
    t = str(template)
    argv, option = {
        "judge-template": (["judge", "--input", data, "--model", "fake:", "--template", t, "--out", t], "--template"),
        "judge-instruction": (
            ["judge", "--input", data, "--model", "fake:", "--system-instruction", "@" + t, "--summary-out", t],
            "--system-instruction",
        ),
        "pairwise-summary": (
            ["judge", "--method", "pairwise", "--input", data, "--model", "fake:", "--out", t, "--summary-out", t],
            "are the same file",
        ),
        "evaluate-template": (
            ["evaluate", "--input", data, "--template", t, "--model", "fake:", "--out", t, "--quiet"],
            "--template",
        ),
    }[which]
    code, _, err = run(capsys, *argv)
    assert code == 1 and option in err and ("is the same file as" in err or "are the same file" in err), err
    assert template.read_bytes() == before


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_write_columns_goes_through_a_new_temporary_and_never_a_planted_link(tmp_path, suffix):
    """The one atomic table writer (io.writers.write_columns: efficiency --out, dataset
    generate --out) leaves a link planted at OUT.tmp alone, and no temporary behind."""
    from respeval.io.readers import read_columns
    from respeval.io.writers import write_columns

    out = tmp_path / f"cases{suffix}"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    os.symlink(victim, f"{out}.tmp")
    assert write_columns(out, {"id": ["a", "b"], "score": [1.0, 0.5]}) == 2
    assert victim.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, victim.name, f"{out.name}.tmp"])
    with read_columns(out, ["id"]) as reader:
        chunk = next(iter(reader))
    assert list(chunk.columns["id"]) == ["a", "b"]


def test_a_link_planted_at_the_judge_cache_or_a_monitor_store_is_refused(tmp_path, capsys):
    """SQLite writes the file a link points to: the judge's cache (default OUT.cache.sqlite)
    and a monitor's store refuse a symbolic link, and the file it points to is left as it was."""
    from respeval.bulk.parts import RunFingerprint
    from respeval.io.files import FileError
    from respeval.judge.cache import JudgeCache
    from respeval.monitor.store import Store

    target = victim(tmp_path)
    data = items(tmp_path / "items.jsonl")
    os.symlink(target, tmp_path / "r.jsonl.cache.sqlite")
    code, _, err = run(capsys, "judge", "--input", str(data), "--model", "fake:", "--out", str(tmp_path / "r.jsonl"))
    assert code == 1 and "r.jsonl.cache.sqlite is a symbolic link" in err and "judge cache" in err, err
    for path, opener in (
        (tmp_path / "c.sqlite", JudgeCache),
        (tmp_path / "m.sqlite", lambda p: Store(p, RunFingerprint({}))),
    ):
        os.symlink(target, path)
        with pytest.raises(FileError, match="is a symbolic link"):
            opener(str(path))
    assert target.read_text(encoding="utf-8") == VICTIM
