"""Issue 32.3: ``respeval score --input NAME=FILE`` names a system (a file alone is named by
its stem, and a process substitution's stem is a number: ``<(cmd)`` is ``/dev/fd/63``)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from _helpers.cli import run_cli as run
from respeval.cli.score import named_inputs

REFS = ["the cat sat on the mat", "a dog ran in the park", "rain fell all day"]
SYSTEMS = {
    "baseline": ["the cat sat", "a dog ran", "rain fell"],
    "candidate": ["the cat sat on the mat", "a dog ran in a park", "it rained all day"],
}


@pytest.fixture
def corpus(tmp_path: Path) -> dict[str, Path]:
    paths = {"refs": tmp_path / "refs.txt"}
    paths["refs"].write_text("\n".join(REFS) + "\n", encoding="utf-8")
    for i, (name, lines) in enumerate(SYSTEMS.items()):
        paths[name] = tmp_path / f"out{i}.txt"  # stems out0, out1: not the systems' names
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def score(capsys, *inputs: str, refs: Path, more: tuple[str, ...] = ()) -> dict:
    argv = ["score", *(x for i in inputs for x in ("--input", i)), "--references", str(refs)]
    code, out, err = run(capsys, *argv, "--metric", "rouge1", "--bootstrap", "0", "--quiet", "--json", *more)
    assert code == 0, err
    return json.loads(out)


def values(summary: dict) -> dict[str, dict]:
    return {s["system"]: s["values"] for s in summary["systems"]}


def test_name_equals_file_names_the_system_and_a_file_alone_keeps_its_stem(capsys, corpus, tmp_path):
    named = score(capsys, f"baseline={corpus['baseline']}", f"candidate={corpus['candidate']}", refs=corpus["refs"],
                  more=("--compare", "baseline", "--out", str(tmp_path / "rows.jsonl")))  # fmt: skip
    plain = score(capsys, str(corpus["baseline"]), str(corpus["candidate"]), refs=corpus["refs"])
    assert list(values(named)) == ["baseline", "candidate"] and list(values(plain)) == ["out0", "out1"]
    assert list(values(named).values()) == list(values(plain).values())  # the same numbers, named
    assert [c["system"] for c in named["comparisons"]] == ["candidate"]
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert [r["system"] for r in rows] == ["baseline"] * 3 + ["candidate"] * 3
    mixed = score(capsys, f"baseline={corpus['baseline']}", str(corpus["candidate"]), refs=corpus["refs"])
    assert list(values(mixed)) == ["baseline", "out1"]


def _pipe(text: str) -> str:
    """A /dev/fd/N path, as the shell's ``<(cmd)`` gives one."""
    read, write = os.pipe()
    threading.Thread(target=lambda: (os.write(write, text.encode()), os.close(write)), daemon=True).start()
    return f"/dev/fd/{read}"


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd (process substitution's paths)")
def test_a_process_substitution_is_named_by_its_name_not_by_its_file_descriptor(capsys, corpus):
    pipe = _pipe("\n".join(SYSTEMS["candidate"]) + "\n")
    summary = score(capsys, f"baseline={corpus['baseline']}", f"candidate={pipe}", refs=corpus["refs"])
    plain = score(capsys, str(corpus["baseline"]), str(corpus["candidate"]), refs=corpus["refs"])
    assert list(values(summary)) == ["baseline", "candidate"]
    assert values(summary)["candidate"] == values(plain)["out1"]


def test_what_a_name_is(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "odd=name.txt").write_text("x\n")
    assert named_inputs(["a=x.txt", "y.txt", "dir/b=c.txt", "odd=name.txt", " c =/dev/fd/63"]) == (
        ["x.txt", "y.txt", "dir/b=c.txt", "odd=name.txt", "/dev/fd/63"],
        ["a", None, None, None, "c"],
    )


@pytest.mark.parametrize(
    "inputs, message",
    [
        (("x={baseline}", "x={candidate}"), "two systems are named 'x'"),
        (("out0={candidate}", "{baseline}"), "two systems are named 'out0'"),
        (("x=",), "no file after 'x='"),
    ],
)
def test_names_that_cannot_be_are_refused(capsys, corpus, inputs, message):
    argv = [x for i in inputs for x in ("--input", i.format(**{k: str(v) for k, v in corpus.items()}))]
    code, _, err = run(capsys, "score", *argv, "--references", str(corpus["refs"]), "--quiet")
    assert code == 1 and message in err, err


def test_a_resume_under_other_names_is_refused(capsys, corpus, tmp_path):
    """The names are in the output rows, so they are part of what a resume checks."""
    from respeval.bulk import score_files

    out = tmp_path / "rows.jsonl"
    files = {"baseline": str(corpus["baseline"]), "candidate": str(corpus["candidate"])}

    def stop(rows: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        score_files(files, str(corpus["refs"]), metrics=["rouge1"], out=str(out), chunk_size=1, bootstrap=0,
                    progress=stop)  # fmt: skip
    assert Path(f"{out}.parts").is_dir() and not out.exists()
    argv = ["score", "--input", f"old={corpus['baseline']}", "--input", f"new={corpus['candidate']}",
            "--references", str(corpus["refs"]), "--metric", "rouge1", "--bootstrap", "0", "--chunk-size", "1",
            "--out", str(out), "--resume", "--quiet"]  # fmt: skip
    code, _, err = run(capsys, *argv)
    assert code == 1 and "cannot resume" in err, err
    argv = [x.replace("old=", "baseline=").replace("new=", "candidate=") for x in argv]
    code, _, err = run(capsys, *argv)  # the names it was started with: it resumes
    assert code == 0 and out.exists(), err


def test_the_python_api_takes_names_too(corpus):
    from respeval.bulk import score_files

    named = score_files({"baseline": str(corpus["baseline"]), "candidate": corpus["candidate"]}, str(corpus["refs"]),
                        metrics=["rouge1"], bootstrap=0)  # fmt: skip
    plain = score_files([str(corpus["baseline"]), str(corpus["candidate"])], str(corpus["refs"]), metrics=["rouge1"],
                        bootstrap=0)  # fmt: skip
    assert [s["system"] for s in named.to_json()["systems"]] == ["baseline", "candidate"]
    assert [s["values"] for s in named.to_json()["systems"]] == [s["values"] for s in plain.to_json()["systems"]]
    with pytest.raises(ValueError, match="a system name is empty"):
        score_files({" ": str(corpus["baseline"])}, str(corpus["refs"]), metrics=["rouge1"], bootstrap=0)
