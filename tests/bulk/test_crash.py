"""Issue 12, acceptance 2: SIGKILL at any moment, then ``--resume``, gives the uninterrupted
run's output, errors file and summary, byte for byte.

Kill moments are drawn over a run's events (``_helpers.kill``): reading a block of lines, scoring a
chunk, renaming a written file, entering the final join, and the cleanup of the parts; the
slow test takes ~35 moments per format and mode, adds kills at random times and kills of the
resumed run itself.  Every JSONL, CSV
and Parquet output and every ``--on-error`` mode.  The summary is compared without its
``seconds`` (a clock reading) and ``resumed_chunks`` (how the run got there).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from _helpers import kill

N = 96
CHUNK = 9
WORDS = "the cat sat on a mat while dogs ran home quickly under bright blue sky and rain".split()

# phase -> (target, how many calls a whole run makes: filled by _events)
PHASES = {
    # a block of lines read (JSONL lines the native reader takes never reach json.loads)
    "reading": "respeval.io.readers._LineBlocks.take",
    "scoring": "respeval.bulk.run.score_chunk",
    "writing": "os.replace",
    "join": "respeval.bulk.parts.Parts._finish",
    "cleanup": "shutil.rmtree",
    "cleanup-files": "os.unlink",
}


def _text(i: int, salt: int) -> str:
    return " ".join(WORDS[(i * salt + j) % len(WORDS)] for j in range(2 + (i * salt) % 11))


def corpus(directory: Path, bad: bool) -> list[str]:
    """Two systems against one reference file, ids and a group field; with ``bad``, some
    lines of each file are bad (a number for a text, malformed JSON, invalid UTF-8)."""
    ref_lines = []
    for i in range(N):
        line = _text(i, 5).encode()
        if bad and i == 40:
            line = b"\xff\xfe broken"
        ref_lines.append(line)
    (directory / "ref.txt").write_bytes(b"\n".join(ref_lines) + b"\n")
    for name, salt, broken in (("a", 7, {3, 50}), ("b", 3, {77})):
        with (directory / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
            for i in range(N):
                row = {"id": i if i % 2 else f"s{i}", "response": _text(i, salt), "kind": "odd" if i % 3 else "three"}
                if bad and i in broken:
                    fh.write("{not json\n" if i == 50 else json.dumps({**row, "response": 0}) + "\n")
                else:
                    fh.write(json.dumps(row) + "\n")
    return ["--pred", "a.jsonl", "--pred", "b.jsonl", "--ref", "ref.txt"]


def command(inputs: list[str], out: str, on_error: str) -> list[str]:
    args = ["score", *inputs, "--id-field", "id", "--group-by", "kind", "--metrics", "rouge1,rougeL,bleu"]
    args += ["--out", out, "--on-error", on_error, "--chunk-size", str(CHUNK), "--bootstrap", "30", "--compare", "a"]
    return [*args, "--json", "--quiet"]


def stable(output: str) -> dict:
    summary = json.loads(output[output.index("{") :])
    return {k: v for k, v in summary.items() if k not in ("seconds", "resumed_chunks")}


def _outputs(directory: Path, name: str) -> tuple[bytes, bytes | None]:
    errors = directory / f"{name}.errors.jsonl"
    return (directory / name).read_bytes(), errors.read_bytes() if errors.exists() else None


def _reference(directory: Path, ext: str, on_error: str) -> tuple[list[str], dict, tuple[bytes, bytes | None]]:
    inputs = corpus(directory, bad=on_error != "fail")
    code, output = kill.run(command(inputs, f"full.{ext}", on_error), cwd=directory)
    assert code == 0, output
    return inputs, stable(output), _outputs(directory, f"full.{ext}")


def _kill_then_resume(directory: Path, ext: str, on_error: str, kills: list[dict], want) -> None:
    inputs, summary, files = want
    name = f"rows.{ext}"
    args = command(inputs, name, on_error)
    for i, how in enumerate(kills):
        code, output = kill.run(args + (["--resume"] if i else []), cwd=directory, **how)
        # a resumed run may finish before the moment chosen for it: then it is simply done
        assert code == -9 or (i and code == 0), f"{how}: the run was not killed ({output})"
    code, output = kill.run(args + ["--resume"], cwd=directory)
    assert code == 0, f"{kills}: {output}"
    got = stable(output)
    assert got == {**summary, "output": name, "errors_output": got["errors_output"]}, kills
    assert _outputs(directory, name) == files, kills
    leftovers = sorted(p.name for p in directory.iterdir() if p.name.startswith("rows."))
    assert leftovers == sorted([name] + ([f"{name}.errors.jsonl"] if on_error == "record" else [])), leftovers


def _events(directory: Path, ext: str, on_error: str, inputs: list[str]) -> dict[str, int]:
    counts = kill.count_calls(command(inputs, f"count.{ext}", on_error), list(PHASES.values()), cwd=directory)
    return {phase: counts[target] for phase, target in PHASES.items()}


# a few moments in CI: every output format, every --on-error mode and every phase at least once
CASES = [
    ("jsonl", "fail", "reading", 0.5),
    ("csv", "skip", "cleanup", 1.0),
    ("parquet", "record", "join", 1.0),
    ("jsonl", "record", "writing", 0.6),
    ("parquet", "skip", "scoring", 0.5),
]
COUNTS = {"scoring": -(-N // CHUNK), "join": 1, "cleanup": 1}


@pytest.mark.parametrize(("ext", "on_error", "phase", "where"), CASES, ids=[f"{e}-{m}-{p}" for e, m, p, _ in CASES])
def test_a_kill_then_resume_gives_the_uninterrupted_run(tmp_path, ext, on_error, phase, where):
    want = _reference(tmp_path, ext, on_error)
    if phase in COUNTS:
        total = COUNTS[phase]
    else:
        total = _events(tmp_path, ext, on_error, want[0])[phase]
    nth = max(1, round(where * total))
    _kill_then_resume(tmp_path, ext, on_error, [{"kill_at": (PHASES[phase], nth)}], want)


@pytest.mark.slow
@pytest.mark.parametrize("ext", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize("on_error", ["fail", "skip", "record"])
def test_many_kills_then_resume_give_the_uninterrupted_run(tmp_path, ext, on_error):
    """Every phase at several moments, random times, and kills of the resumed runs."""
    rng = random.Random(f"{ext}-{on_error}")
    want = _reference(tmp_path, ext, on_error)
    events = _events(tmp_path, ext, on_error, want[0])
    code, output = kill.run(command(want[0], f"timed.{ext}", on_error), cwd=tmp_path)
    assert code == 0, output
    seconds = json.loads(output[output.index("{") :])["seconds"]
    plans: list[list[dict]] = []
    for phase, total in events.items():
        for nth in sorted({1, total, *rng.sample(range(1, total + 1), min(total, 4))}):
            plans.append([{"kill_at": (PHASES[phase], nth)}])
    for _ in range(6):
        plans.append([{"kill_after": rng.uniform(0.0, seconds)}])
    for _ in range(4):  # the resumed run killed too, at another moment
        first, second = rng.sample(sorted(events), 2)
        plans.append(
            [
                {"kill_at": (PHASES[first], rng.randint(1, events[first]))},
                {"kill_at": (PHASES[second], rng.randint(1, max(1, events[second] // 2)))},
            ]
        )
    for plan in plans:
        for p in tmp_path.glob("rows.*"):
            if p.is_dir():
                import shutil

                shutil.rmtree(p)
            else:
                p.unlink()
        try:
            _kill_then_resume(tmp_path, ext, on_error, plan, want)
        except AssertionError as exc:
            if "was not killed" in str(exc) and any("kill_after" in how for how in plan):
                continue  # the timer fired after the run had finished: nothing to test
            raise
