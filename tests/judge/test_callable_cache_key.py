"""A ``python:`` judge's cached answers are keyed by its code's fingerprint (issue 28,
point 10): edit the function, or a constant of a module it imports, and a rerun asks it
again instead of serving the old verdicts; ``python:module:function@VERSION`` keys by the
version instead (the same version reuses, a bumped one re-asks)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from _helpers import kill
from respeval import judge
from respeval.judge import CallableModel, JudgeCache

JUDGE = """
from scale import SCORE


def grade(request):
    return {"reasoning": "module judge", "score": SCORE, "pass": SCORE >= 0.5}
"""


def items(path: Path, n: int = 4) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": i, "prompt": f"q{i}", "reference": f"r{i}", "response": f"c{i}"}) + "\n")
    return path


def judged(root: Path, model: str, out: str) -> tuple[list[float], int]:
    """The scores of a run in a fresh process, and how many came from the cache."""
    args = ["judge", "--input", "items.jsonl", "--model", model, "--cache", "cache.sqlite", "--out", out, "--quiet"]
    code, output = kill.run(args, cwd=root)
    assert code == 0, output
    rows = [json.loads(line) for line in (root / out).read_text().splitlines()]
    return [r["score"] for r in rows], sum(r["cache_hit"] for r in rows)


def test_an_edited_python_judge_is_asked_again(tmp_path):
    items(tmp_path / "items.jsonl")
    (tmp_path / "judge_fn.py").write_text(JUDGE)
    (tmp_path / "scale.py").write_text("SCORE = 0.25\n")
    assert judged(tmp_path, "python:judge_fn:grade", "a.jsonl") == ([0.25] * 4, 0)
    assert judged(tmp_path, "python:judge_fn:grade", "b.jsonl") == ([0.25] * 4, 4)  # unchanged: all cached
    # a constant of a module the judge imports (another size: a same-second, same-size edit
    # would have Python run the stale bytecode of __pycache__, whatever respeval checks)
    (tmp_path / "scale.py").write_text("SCORE = 0.750\n")
    assert judged(tmp_path, "python:judge_fn:grade", "c.jsonl") == ([0.75] * 4, 0)
    (tmp_path / "judge_fn.py").write_text(JUDGE.replace('"module judge"', '"edited judge"'))
    assert judged(tmp_path, "python:judge_fn:grade", "d.jsonl") == ([0.75] * 4, 0)


def test_a_version_keys_the_cache_instead(tmp_path):
    items(tmp_path / "items.jsonl")
    (tmp_path / "judge_fn.py").write_text(JUDGE)
    (tmp_path / "scale.py").write_text("SCORE = 0.25\n")
    assert judged(tmp_path, "python:judge_fn:grade@1", "a.jsonl") == ([0.25] * 4, 0)
    (tmp_path / "scale.py").write_text("SCORE = 0.750\n")
    # the user's promise: version 1 is version 1 (a reformatting keeps a paid-for cache)
    assert judged(tmp_path, "python:judge_fn:grade@1", "b.jsonl") == ([0.25] * 4, 4)
    assert judged(tmp_path, "python:judge_fn:grade@2", "c.jsonl") == ([0.75] * 4, 0)


def _grader(score):
    def grade(request):
        return {"reasoning": "closure", "score": score, "pass": score >= 0.5}

    return grade


def test_the_key_covers_what_a_closure_captured_and_unreadable_code_stays_in_its_process(tmp_path):
    records = [{"prompt": "q", "reference": "r", "response": "c"}]
    with JudgeCache(tmp_path / "c.sqlite") as cache:
        first = judge.run(records, CallableModel(_grader(0.25)), cache=cache)
        again = judge.run(records, CallableModel(_grader(0.25)), cache=cache)
        other = judge.run(records, CallableModel(_grader(0.75)), cache=cache)
    assert [first.rows[0].verdict["score"], again.rows[0].verdict["score"], other.rows[0].verdict["score"]] == [
        0.25,
        0.25,
        0.75,
    ]
    assert (first.summary.cache_hits, again.summary.cache_hits, other.summary.cache_hits) == (0, 1, 0)
    namespace: dict = {}
    exec(textwrap.dedent(_SOURCE_IN_NO_FILE), namespace)
    model = CallableModel(namespace["grade"])
    assert not model.code.proven and "not in a file" in model.code.reason
    assert model.identity()["code"].startswith("this-process-only:")
    assert CallableModel(namespace["grade"]).identity() == model.identity()  # same function, same process
    assert CallableModel(namespace["grade"], version="1").code.proven


_SOURCE_IN_NO_FILE = """
def grade(request):
    return {"reasoning": "exec", "score": 1.0, "pass": True}
"""
