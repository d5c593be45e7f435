"""Resume fingerprints, as a property: kill a run partway (a real SIGKILL, at a seeded
chunk), change any ONE input of a number -- the data, a custom metric's code or a constant
of a module it imports, any option, the judge's model, base URL, template or system
instruction, a metric's options or threshold -- and ``--resume`` is refused with a message
naming what changed; change nothing and the resumed output is byte for byte the output of
an uninterrupted run.  For ``evaluate`` (issue 28, points 8 and 9) and ``score``.

Every variant is enumerated (none left to chance); the seeded part is where the kill lands.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from _helpers import kill
from _helpers.judge_server import JudgeServer, evaluate_responder

SEED = int(os.environ.get("RESPEVAL_SEED", "20261129"))
ROWS, CHUNK = 40, 8  # five chunks; the kill lands before the 2nd, 3rd or 4th is written

SPEC = """\
metrics:
  - exact_match
  - {metric: regex, name: has_digit, pattern: "[0-9]"}
  - {metric: bleu, max_order: 3}
  - {custom: "checks.py:short"}
  - pointwise: claims
    template: "Policy: {context}\\nAnswer: {response}"
    system_instruction: "You are an expert claims auditor."
    threshold: 3
"""

CHECKS = '''
from helpers import LIMIT

WEIGHT = 1


def short(row):
    """1 when the response is short."""
    return len(row["response"]) * WEIGHT < LIMIT
'''

HELPERS = "LIMIT = 24\n"
TEMPLATE = "Reference: {reference}\nAnswer: {response}\nIs the answer right?"


def write_project(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    with (root / "rows.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(ROWS):
            answer = f"city {i % 7}"
            response = answer if i % 3 == 0 else f"It is {answer}, as the policy says (row {i})."
            row = {"id": i, "response": response, "reference": answer, "context": f"Policy {i % 5}: {answer}."}
            fh.write(json.dumps(row) + "\n")
    (root / "spec.yaml").write_text(SPEC)
    (root / "checks.py").write_text(CHECKS)
    (root / "helpers.py").write_text(HELPERS)
    (root / "judge.txt").write_text(TEMPLATE)


@pytest.fixture(scope="module")
def servers():
    with JudgeServer(responder=evaluate_responder) as a, JudgeServer(responder=evaluate_responder) as b:
        yield a, b


def base_args(server: JudgeServer) -> list[str]:
    return [
        "evaluate",
        "--input",
        "rows.jsonl",
        "--spec",
        "spec.yaml",
        "--model",
        "openai:judge-a",
        "--base-url",
        server.url,
        "--template",
        "judge.txt",
        "--system-instruction",
        "You grade answers.",
        "--chunk-size",
        str(CHUNK),
        "--bootstrap",
        "0",
        "--quiet",
        "--out",
        "out.jsonl",
    ]


def edit(path: str, old: str, new: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        file = root / path
        text = file.read_text()
        assert old in text, (path, old)
        file.write_text(text.replace(old, new, 1))

    return change


def option(flag: str, value: str | None) -> Callable[[list[str]], list[str]]:
    """Set (or, with None, remove) one option of the command."""

    def change(args: list[str]) -> list[str]:
        args = list(args)
        if flag in args:
            i = args.index(flag)
            del args[i : i + 2]
        if value is not None:
            args[-2:-2] = [flag, value]
        return args

    return change


# (what changed, how: a change to the files or to the command line, the words the refusal must say)
EVALUATE_VARIANTS: list[tuple[str, Callable[[Path], None] | None, Callable[[list[str]], list[str]] | None, str]] = [
    ("data", edit("rows.jsonl", "city 3", "city 33"), None, "the data"),
    ("custom-metric-code", edit("checks.py", "* WEIGHT <", "* WEIGHT <="), None, "the code of metric 'short'"),
    (
        "custom-metric-module-constant",
        edit("checks.py", "WEIGHT = 1", "WEIGHT = 2"),
        None,
        "the code of metric 'short'",
    ),
    ("imported-module-constant", edit("helpers.py", "LIMIT = 24", "LIMIT = 30"), None, "the code of metric 'short'"),
    (
        "custom-metric-version",
        edit("spec.yaml", '"checks.py:short"}', '"checks.py:short", version: "2"}'),
        None,
        "the code of metric 'short'",
    ),
    ("metric-option", edit("spec.yaml", 'pattern: "[0-9]"', 'pattern: "[0-9]+"'), None, "metric 'has_digit'"),
    ("unsigned-metric-option", edit("spec.yaml", "max_order: 3", "max_order: 2"), None, "metric 'bleu'"),
    ("threshold", edit("spec.yaml", "threshold: 3", "threshold: 4"), None, "metric 'claims'"),
    (
        "judge-max-tokens",
        edit("spec.yaml", "threshold: 3", "threshold: 3\n    max_tokens: 64"),
        None,
        "metric 'claims'",
    ),
    ("spec-system-instruction", edit("spec.yaml", "expert claims", "strict claims"), None, "metric 'claims'"),
    ("spec-template", edit("spec.yaml", "Answer: {response}", "Response: {response}"), None, "metric 'claims'"),
    ("template-file", edit("judge.txt", "Is the answer right?", "Is it right?"), None, "metric 'judge'"),
    ("metric-added", edit("spec.yaml", "  - exact_match\n", "  - exact_match\n  - chrf\n"), None, "the metrics"),
    ("system-instruction", None, option("--system-instruction", "You grade strictly."), "metric 'judge'"),
    ("judge-model", None, option("--model", "openai:judge-b"), "the judge model"),
    ("base-url", None, None, "the judge model"),  # the second server's URL
    ("samples", None, option("--samples", "3"), "the judge samples per row"),
    ("chunk-size", None, option("--chunk-size", str(CHUNK + 1)), "the chunk size"),
    ("on-error", None, option("--on-error", "skip"), "on_error"),
    ("id-field", None, option("--id-field", "id"), "the columns"),
]


def _kill_point(name: str) -> int:
    """Which ``_Parts.write`` call the kill lands on: the 2nd to the 4th, seeded per variant."""
    return random.Random(f"{SEED}:{name}").randint(2, 4)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, servers):
    root = tmp_path_factory.mktemp("clean")
    write_project(root)
    code, output = kill.run(base_args(servers[0]), cwd=root)
    assert code == 0, output
    return (root / "out.jsonl").read_bytes()


def killed_run(tmp_path: Path, args: list[str], name: str) -> Path:
    root = tmp_path / "run"
    write_project(root)
    code, output = kill.run(args, cwd=root, kill_at=("respeval.evaluate.run._Parts.write", _kill_point(name)))
    assert code == -9, output
    assert (root / "out.jsonl.parts").is_dir() and not (root / "out.jsonl").exists()
    return root


@pytest.mark.parametrize(
    ("name", "change_files", "change_args", "words"), EVALUATE_VARIANTS, ids=[v[0] for v in EVALUATE_VARIANTS]
)
def test_evaluate_resume_refuses_any_one_changed_input(tmp_path, servers, name, change_files, change_args, words):
    args = base_args(servers[0])
    root = killed_run(tmp_path, args, name)
    if change_files is not None:
        change_files(root)
    elif change_args is not None:
        args = change_args(args)
    else:
        args = option("--base-url", servers[1].url)(args)
    code, output = kill.run([*args, "--resume"], cwd=root)
    assert code == 1, output
    assert "cannot resume into out.jsonl" in output and words in output, output
    assert "Traceback" not in output
    assert (root / "out.jsonl.parts").is_dir()  # nothing was thrown away: undo the change and resume


def test_evaluate_resume_with_nothing_changed_is_byte_identical(tmp_path, servers, uninterrupted):
    for point in (2, 3, 4):
        root = tmp_path / f"at-{point}"
        write_project(root)
        code, output = kill.run(base_args(servers[0]), cwd=root, kill_at=("respeval.evaluate.run._Parts.write", point))
        assert code == -9, output
        code, output = kill.run([*base_args(servers[0]), "--resume"], cwd=root)
        assert code == 0, output
        assert (root / "out.jsonl").read_bytes() == uninterrupted
        assert not (root / "out.jsonl.parts").exists()


def test_evaluate_resume_refuses_code_it_cannot_read_unless_versioned(tmp_path):
    """A built-in as a custom metric: its code cannot be fingerprinted, so a resume refuses
    and says how to give it a version; with ``@VERSION`` it resumes."""
    write_project(tmp_path)
    for target, refused in (("python:builtins:len", True), ("python:builtins:len@1", False)):
        args = ["evaluate", "--input", "rows.jsonl", "--metric", target, "--chunk-size", str(CHUNK), "--quiet"]
        args += ["--bootstrap", "0", "--out", "out.jsonl"]
        code, output = kill.run(args, cwd=tmp_path, kill_at=("respeval.evaluate.run._Parts.write", 3))
        assert code == -9, output
        code, output = kill.run([*args, "--resume"], cwd=tmp_path)
        if refused:
            assert code == 1, output
            assert "cannot prove" in output and "built-in" in output and "@VERSION" in output, output
        else:
            assert code == 0, output
            assert [json.loads(x)["len/score"] for x in (tmp_path / "out.jsonl").read_text().splitlines()] == [4.0] * 40


# --------------------------------------------------------------------------- score


def score_args() -> list[str]:
    return [
        "score",
        "--pred",
        "preds.jsonl",
        "--ref",
        "refs.jsonl",
        "--metrics",
        "bleu,rougeL",
        "--chunk-size",
        "10",
        "--quiet",
        "--out",
        "scores.jsonl",
    ]


def write_score_inputs(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    words = "the cat sat on a mat with hats and bats in vats".split()
    with (root / "preds.jsonl").open("w") as p, (root / "refs.jsonl").open("w") as r:
        for i in range(60):
            pred = " ".join(rng.choice(words) for _ in range(8)).capitalize() + "."
            ref = " ".join(rng.choice(words) for _ in range(8)).capitalize() + "."
            p.write(json.dumps({"id": i, "response": pred, "answer": pred.lower()}) + "\n")
            r.write(json.dumps({"id": i, "reference": ref, "gold": ref.upper()}) + "\n")


SCORE_VARIANTS = [
    ("metrics", option("--metrics", "bleu,rougeL,chrf"), "the metrics"),
    ("metric-option", option("--metric-option", "bleu.smooth=floor"), "metric 'bleu'"),
    ("unsigned-metric-option", option("--metric-option", "bleu.max_order=3"), "the metric options"),
    ("stem", lambda args: [*args[:-2], "--stem", *args[-2:]], "metric 'rouge'"),
    ("tokenizer", option("--tokenizer", "rouge-unicode"), "metric 'rouge'"),
    ("pred-field", option("--pred-field", "answer"), "the prediction field"),
    ("ref-field", option("--ref-field", "gold"), "the reference field"),
    ("chunk-size", option("--chunk-size", "11"), "the chunk size"),
    ("on-error", option("--on-error", "skip"), "on_error"),
    ("data", None, "is not the file the interrupted run read"),
]


@pytest.mark.parametrize(("name", "change", "words"), SCORE_VARIANTS, ids=[v[0] for v in SCORE_VARIANTS])
def test_score_resume_refuses_any_one_changed_input(tmp_path, name, change, words):
    write_score_inputs(tmp_path)
    # killed as the 2nd-4th part starts to be written, so 1-3 parts are on disk to resume into (a
    # kill at the nth score_chunk can come before any part exists: the writer runs up to two
    # chunks behind, and a resume with nothing to resume into rightly starts afresh)
    point = random.Random(f"{SEED}:score:{name}").randint(2, 4)
    code, output = kill.run(score_args(), cwd=tmp_path, kill_at=("respeval.bulk.parts.Parts.write", point))
    assert code == -9, output
    assert len(list((tmp_path / "scores.jsonl.parts").glob("part-*.meta.json"))) == point - 1
    args = score_args()
    if change is None:  # the predictions, in the rows the interrupted run read
        text = (tmp_path / "preds.jsonl").read_text()
        (tmp_path / "preds.jsonl").write_text(text.replace("The", "A", 1))
    else:
        args = change(args)
    code, output = kill.run([*args, "--resume"], cwd=tmp_path)
    assert code == 1, output
    assert "cannot resume into scores.jsonl" in output and words in output, output


def test_score_resume_with_nothing_changed_is_byte_identical(tmp_path):
    clean = tmp_path / "clean"
    write_score_inputs(clean)
    code, output = kill.run(score_args(), cwd=clean)
    assert code == 0, output
    for point in (2, 3, 4):
        root = tmp_path / f"at-{point}"
        write_score_inputs(root)
        code, output = kill.run(score_args(), cwd=root, kill_at=("respeval.bulk.run.score_chunk", point))
        assert code == -9, output
        code, output = kill.run([*score_args(), "--resume"], cwd=root)
        assert code == 0, output
        assert (root / "scores.jsonl").read_bytes() == (clean / "scores.jsonl").read_bytes()
    shutil.rmtree(clean)
