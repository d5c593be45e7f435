"""A judge cache with a damaged page past those read at open (issue 28, point 19): a real
SQLite file, populated by a real run, one leaf page in the middle overwritten.  The run
that meets it stops with one clean message naming the cache and what to do (no "internal
error", no traceback), keeps every row judged so far (``OUT.partial`` for ``judge``, the
finished chunks for ``evaluate``), and, with the cache moved aside, a rerun (``--resume``
for evaluate) finishes with the uninterrupted run's output."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from _helpers.judge_server import JudgeServer
from respeval.cli import main
from respeval.judge import JudgeCache

ROWS = 600
_ROW = re.compile(r"\(row (\d+)\)")


def responder(body) -> str:
    """Answers that say which row they judge (so the test can tell which rows a damaged
    page holds): a 1-5 score for a template metric, else an equivalence verdict."""
    text = " ".join(str(m.get("content") or "") for m in body.get("messages") or [])
    row = int(_ROW.findall(text)[-1])
    if "from 1 to 5" in text:
        return json.dumps({"reasoning": f"row {row}", "score": 1 + row % 5})
    return json.dumps({"reasoning": f"row {row}", "score": (row % 5) / 4, "pass": row % 5 >= 2})


def write_items(path: Path) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(ROWS):
            response = f"candidate answer number {i} (row {i}) " + "padding " * (i % 7)
            fh.write(json.dumps({"id": i, "prompt": f"question {i}", "reference": f"answer {i}", "response": response}))
            fh.write("\n")
    return path


def damage_a_page_of_late_rows(cache: Path) -> int:
    """Overwrite the leaf page of the completions table whose answers belong to the latest
    rows (so the rows before them are judged before the damage is met); returns the first
    row whose answer it held."""
    db = sqlite3.connect(cache)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    leaves = [p for (p,) in db.execute("SELECT pageno FROM dbstat WHERE name = 'completions' AND pagetype = 'leaf'")]
    row_of = {
        key: int(json.loads(json.loads(text)["text"])["reasoning"].split()[1])
        for key, text in db.execute("SELECT key, completion FROM completions")
    }
    db.close()
    raw = cache.read_bytes()
    first_rows = {}
    for page in leaves:
        data = raw[(page - 1) * page_size : page * page_size]
        rows = [row for key, row in row_of.items() if key.encode() in data]
        if page > 2 and rows:  # past the header and the schema, which are read at open
            first_rows[page] = min(rows)
    page = max(first_rows, key=lambda p: (first_rows[p], p))
    with cache.open("r+b") as fh:
        fh.seek((page - 1) * page_size + 8)  # keep the page header's first bytes; garble its cells
        fh.write(b"\xde\xad\xbe\xef" * ((page_size - 8) // 4))
    return first_rows[page]


@pytest.fixture
def server():
    with JudgeServer(responder=responder) as s:
        yield s


def judge_args(tmp_path: Path, server: JudgeServer, out: str, cache: str) -> list[str]:
    return [
        "judge",
        "--input",
        str(tmp_path / "items.jsonl"),
        "--model",
        "openai:judge",
        "--base-url",
        server.url,
        "--cache",
        str(tmp_path / cache),
        "--out",
        str(tmp_path / out),
        "--quiet",
    ]


def test_judge_stops_cleanly_on_a_damaged_page_and_keeps_its_rows(tmp_path, server, capsys):
    write_items(tmp_path / "items.jsonl")
    assert main(judge_args(tmp_path, server, "first.jsonl", "cache.sqlite")) == 0
    want = {r["row"]: r["score"] for r in map(json.loads, (tmp_path / "first.jsonl").read_text().splitlines())}
    first_damaged = damage_a_page_of_late_rows(tmp_path / "cache.sqlite")
    JudgeCache(tmp_path / "cache.sqlite").close()  # the damage is past the pages read at open
    capsys.readouterr()
    # one call at a time: the rows before the damaged page are then all judged before it is met
    code = main([*judge_args(tmp_path, server, "second.jsonl", "cache.sqlite"), "--concurrency", "1"])
    err = capsys.readouterr().err
    assert code == 1, err
    cache = str(tmp_path / "cache.sqlite")
    assert f"the judge cache {cache} is damaged" in err and "move it aside" in err and ".recover" in err
    assert "Traceback" not in err and "internal error" not in err
    assert not (tmp_path / "second.jsonl").exists()
    kept = [json.loads(line) for line in (tmp_path / "second.jsonl.partial").read_text().splitlines()]
    assert first_damaged >= 100 and len(kept) < ROWS and all(r["score"] == want[r["row"]] for r in kept)
    # every row judged before the damage was met is kept: one call at a time, that is a
    # prefix (where in it the damage is met depends on which page reads touch, not only on
    # the row whose answer the page holds)
    assert kept and sorted(r["row"] for r in kept) == list(range(len(kept)))
    assert server.stats()["requests"] == ROWS  # nothing was asked again: the answers came from the cache
    (tmp_path / "cache.sqlite").rename(tmp_path / "damaged.sqlite")
    assert main(judge_args(tmp_path, server, "second.jsonl", "cache.sqlite")) == 0

    def rows(name: str) -> list[dict]:
        return sorted(map(json.loads, (tmp_path / name).read_text().splitlines()), key=lambda r: r["row"])

    assert rows("second.jsonl") == rows("first.jsonl")


def evaluate_args(tmp_path: Path, server: JudgeServer, out: str, cache: str) -> list[str]:
    (tmp_path / "judge.txt").write_text("Question: {prompt}\nAnswer: {response}\nRate it.")
    return [
        "evaluate",
        "--input",
        str(tmp_path / "items.jsonl"),
        "--metric",
        "exact_match",
        "--template",
        str(tmp_path / "judge.txt"),
        "--model",
        "openai:judge",
        "--base-url",
        server.url,
        "--cache",
        str(tmp_path / cache),
        "--chunk-size",
        "50",
        "--bootstrap",
        "0",
        "--quiet",
        "--out",
        str(tmp_path / out),
    ]


def test_evaluate_stops_cleanly_on_a_damaged_page_and_resumes(tmp_path, server, capsys):
    write_items(tmp_path / "items.jsonl")
    assert main(evaluate_args(tmp_path, server, "first.jsonl", "cache.sqlite")) == 0
    first = (tmp_path / "first.jsonl").read_text()
    assert '"judge/status": "scored"' in first
    first_damaged = damage_a_page_of_late_rows(tmp_path / "cache.sqlite")
    capsys.readouterr()
    # one call at a time, so the chunks finish in order
    code = main([*evaluate_args(tmp_path, server, "second.jsonl", "cache.sqlite"), "--concurrency", "1"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"the judge cache {tmp_path / 'cache.sqlite'} is damaged" in err and "rerun with --resume" in err
    assert "Traceback" not in err and "internal error" not in err
    parts = tmp_path / "second.jsonl.parts"
    # the chunks finished before the damage was met are kept, a gap-free prefix
    kept = sorted(int(p.name[5:11]) for p in parts.glob("part-*.parquet"))
    assert kept == list(range(len(kept))) and len(kept) <= first_damaged // 50
    (tmp_path / "cache.sqlite").rename(tmp_path / "damaged.sqlite")
    assert main([*evaluate_args(tmp_path, server, "second.jsonl", "cache.sqlite"), "--resume"]) == 0
    assert (tmp_path / "second.jsonl").read_text() == first
