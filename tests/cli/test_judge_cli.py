"""``respeval judge`` as a user runs it, against the fault-injecting server.

Run as ``python -m respeval judge ...`` (JUDGE, a real subprocess: end to end, kill -9,
Ctrl-C) and as ``respeval.cli.main(["judge", ...])`` in this process (MAIN, for the quick
checks, so the suite stays fast: a subprocess costs ~1.5 s of imports here).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _helpers.judge_server import FaultPlan, JudgeServer
from respeval.cli import main as MAIN

JUDGE = [sys.executable, "-m", "respeval", "judge"]
ROW_FIELDS = {
    "id",
    "row",
    "score",
    "pass",
    "judge_pass",
    "reasoning",
    "status",
    "unscored_reason",
    "parsed_from",
    "tokens_in",
    "tokens_out",
    "cost",
    "cache_hit",
    "attempts",
    "reasked",
}
FAST = ["--backoff-base", "0.001", "--backoff-max", "0.005", "--quiet"]
_ITEM = re.compile(r"candidate number (\d+)\b")


def write_items(path: Path, n: int, **rename: str) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            record = {
                "id": f"q{i}",
                "prompt": f"Question {i}?",
                "reference": f"Answer {i}.",
                "response": f"candidate number {i} [[score={(0.0, 1.0)[i % 2]}]]",
            }
            fh.write(json.dumps({rename.get(k, k): v for k, v in record.items()}) + "\n")
    return path


def judge_cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The command in a subprocess."""
    return subprocess.run(
        [*JUDGE, *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


@pytest.fixture
def judge_main(capsys, monkeypatch):
    """The command in this process: ``judge_main(*args, env={})`` -> (returncode, stdout, stderr)."""

    def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        capsys.readouterr()
        try:
            code = MAIN(["judge", *args])
        except SystemExit as exc:  # argparse: --help, usage errors
            code = exc.code if isinstance(exc.code, int) else 1
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, captured.out, captured.err)

    return run


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def read_killed_rows(path: Path) -> list[dict]:
    """The rows of a killed run's OUT.partial: every line whole but perhaps the last.  The
    writer writes whole lines, a batch per system call, but Linux may end a write that a
    SIGKILL interrupts after copying some of its pages, so the batch in flight can be cut
    short; its rows are in the cache, and the rerun writes them again."""
    *whole, cut = path.read_text(encoding="utf-8", errors="replace").split("\n")
    return [json.loads(line) for line in whole]


def item_of(record) -> int:
    """Which input item a server request was about (its candidate text names it)."""
    return int(_ITEM.search(json.dumps(record.body)).group(1))


def test_help_explains_usage(judge_main):
    proc = judge_main("--help")
    assert proc.returncode == 0
    for needle in (
        "--input",
        "--model",
        "--base-url",
        "--budget-usd",
        "--replay-only",
        "--field NAME=COLUMN",
        "openai:MODEL",
        "exit status",
        "examples:",
        "OPENAI_API_KEY",
    ):
        assert needle in proc.stdout


def test_end_to_end_with_faults_prices_and_a_readable_summary(tmp_path):
    items = write_items(tmp_path / "items.jsonl", 40)
    out = tmp_path / "results.jsonl"
    with JudgeServer(FaultPlan(rate=0.15, seed=3, kinds=("429", "503", "drop", "malformed-body"))) as server:
        proc = judge_cli(
            "--input",
            str(items),
            "--model",
            "openai:judge-1",
            "--base-url",
            server.url,
            "--out",
            str(out),
            "--concurrency",
            "4",
            "--price-in",
            "2",
            "--price-out",
            "8",
            *FAST,
        )
        stats = server.stats()
    assert proc.returncode == 0, proc.stderr
    rows = read_rows(out)
    assert len(rows) == 40 and sorted(r["id"] for r in rows) == sorted(f"q{i}" for i in range(40))
    for row in rows:
        assert set(row) == ROW_FIELDS
        assert row["status"] == "scored" and row["score"] == (0.0, 1.0)[row["row"] % 2]
        assert row["cost"] == pytest.approx((row["tokens_in"] * 2 + row["tokens_out"] * 8) / 1e6)
    assert sum(r["attempts"] for r in rows) == stats["requests"] > 40
    for needle in (
        "40 of 40 rows judged",
        "pass rate   0.5000  [",
        "95% CI (Wilson)",
        "coverage    40/40",
        "calls       ",
        "tokens      ",
        "cost $",
        f"per-row results: {out}",
        "errors      ",
    ):
        assert needle in proc.stdout
    assert (tmp_path / "results.jsonl.cache.sqlite").exists()  # the default cache, beside --out


def test_json_summary_and_field_renames(tmp_path, judge_main):
    items = write_items(tmp_path / "items.jsonl", 6, id="uid", prompt="question", reference="gold", response="answer")
    out = tmp_path / "r.jsonl"
    proc = judge_main(
        "--input",
        str(items),
        "--model",
        "fake:score=1",
        "--out",
        str(out),
        "--json",
        "--field",
        "id=uid",
        "--field",
        "prompt=question",
        "--field",
        "reference=gold",
        "--field",
        "response=answer",
        "--no-cache",
    )  # with the progress bar (it shows after 2 s)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["scored"] == summary["rows"] == 6 and summary["coverage"] == 1.0
    assert summary["pass_rate_ci"]["method"] == "wilson" and summary["cache"] is None
    assert [r["id"] for r in sorted(read_rows(out), key=lambda r: r["row"])] == [f"q{i}" for i in range(6)]
    assert not (tmp_path / "r.jsonl.cache.sqlite").exists()


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"id": 1, "response": "a"}', "items.jsonl:3: field 'reference': missing"),
        ('{"id": 1, "response": 5, "reference": "b"}', "items.jsonl:3: field 'response': expected a string, got int"),
        ("{not json", "items.jsonl:3: malformed JSON"),
        ('["a list"]', "items.jsonl:3: expected a JSON object, got list"),
    ],
)
def test_bad_input_stops_before_any_call(tmp_path, line, message, judge_main):
    items = write_items(tmp_path / "items.jsonl", 2)
    with open(items, "a") as fh:
        fh.write(line + "\n")
    with JudgeServer() as server:
        proc = judge_main(
            "--input",
            str(items),
            "--model",
            "openai:m",
            "--base-url",
            server.url,
            "--out",
            str(tmp_path / "r.jsonl"),
            "--quiet",
        )
        assert server.stats()["requests"] == 0
    assert proc.returncode == 1 and message in proc.stderr
    assert not (tmp_path / "r.jsonl").exists()


def test_renamed_field_errors_name_the_column(tmp_path, judge_main):
    items = tmp_path / "items.jsonl"
    items.write_text('{"answer": "a"}\n')
    proc = judge_main(
        "--input", str(items), "--model", "fake:", "--field", "response=answer", "--field", "reference=gold", "--quiet"
    )
    assert proc.returncode == 1
    assert "items.jsonl:1: field 'gold' (--field reference=gold): missing" in proc.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--budget-usd", "1"], "--budget-usd needs --price-in and --price-out"),
        (["--price-in", "1"], "give both --price-in and --price-out"),
        (["--field", "colour=c"], "unknown field(s) colour"),
        (["--replay-only", "--cache", "/nonexistent/c.sqlite"], "no cache at /nonexistent/c.sqlite"),
        (["--model", "gpt-4o"], "expected PROVIDER:NAME"),
    ],
)
def test_option_errors_are_one_clear_line(tmp_path, args, message, judge_main):
    items = write_items(tmp_path / "items.jsonl", 1)
    base = ["--input", str(items), "--quiet"]
    if "--model" not in args:
        base += ["--model", "fake:"]
    proc = judge_main(*base, *args)
    assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr


def test_the_api_key_is_used_and_never_written(tmp_path, judge_main):
    secret = "sk-cli-SECRET-93b1"
    items = write_items(tmp_path / "items.jsonl", 5)
    out = tmp_path / "r.jsonl"
    with JudgeServer(api_key=secret) as server:
        proc = judge_main(
            "--input",
            str(items),
            "--model",
            "openai:m",
            "--base-url",
            server.url,
            "--out",
            str(out),
            "--api-key-env",
            "MY_KEY",
            "--json",
            "--quiet",
            env={"MY_KEY": secret},
        )
        wrong = judge_main(
            "--input",
            str(items),
            "--model",
            "openai:m",
            "--base-url",
            server.url,
            "--out",
            str(tmp_path / "w.jsonl"),
            "--quiet",
            env={"OPENAI_API_KEY": "sk-wrong-77"},
        )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["scored"] == 5
    written = b"".join(p.read_bytes() for p in tmp_path.iterdir()) + (proc.stdout + proc.stderr).encode()
    assert secret.encode() not in written and b"SECRET" not in written
    assert wrong.returncode == 3
    assert "HTTP 401" in wrong.stderr and "$OPENAI_API_KEY" in wrong.stderr and "sk-wrong-77" not in wrong.stderr


def test_budget_stop_then_resume_pays_nothing_twice(tmp_path, judge_main):
    items = write_items(tmp_path / "items.jsonl", 30)
    out = tmp_path / "r.jsonl"
    with JudgeServer() as server:
        first = judge_main(
            "--input",
            str(items),
            "--model",
            "openai:m",
            "--base-url",
            server.url,
            "--out",
            str(out),
            "--budget-calls",
            "8",
            "--concurrency",
            "2",
            *FAST,
        )
        first_items = {item_of(r) for r in server.records}
        assert not out.exists()  # a stopped run does not replace --out: its rows are in OUT.partial
        done = read_rows(Path(f"{out}.partial"))
        second = judge_main(
            "--input",
            str(items),
            "--model",
            "openai:m",
            "--base-url",
            server.url,
            "--out",
            str(out),
            "--concurrency",
            "2",
            *FAST,
        )
        second_items = [item_of(r) for r in server.records[8:]]
    assert first.returncode == 4 and "budget reached: 8 of max 8 calls" in first.stderr
    assert "22 rows left" in first.stderr and "STOPPED" in first.stdout
    assert len(done) == 8 and len(first_items) == 8
    assert second.returncode == 0 and len(read_rows(out)) == 30
    assert sorted(second_items) == sorted(set(range(30)) - first_items)  # each unpaid row once, no paid one


def test_replay_only_for_ci(tmp_path, judge_main):
    items = write_items(tmp_path / "items.jsonl", 10)
    cache = tmp_path / "judge.sqlite"
    with JudgeServer() as server:
        filled = judge_main(
            "--input", str(items), "--model", "openai:m", "--base-url", server.url, "--cache", str(cache), "--quiet"
        )
        requests = server.stats()["requests"]
        replayed = judge_main(
            "--input",
            str(items),
            "--model",
            "openai:m",
            "--base-url",
            server.url,
            "--cache",
            str(cache),
            "--replay-only",
            "--json",
            "--quiet",
        )
        assert server.stats()["requests"] == requests == 10
        write_items(tmp_path / "more.jsonl", 11)
        missed = judge_main(
            "--input",
            str(tmp_path / "more.jsonl"),
            "--model",
            "openai:m",
            "--base-url",
            server.url,
            "--cache",
            str(cache),
            "--replay-only",
            "--concurrency",
            "1",
            "--quiet",
        )
        assert server.stats()["requests"] == 10
    assert filled.returncode == 0 and replayed.returncode == 0
    assert json.loads(replayed.stdout)["cache_hits"] == 10 and json.loads(replayed.stdout)["calls"] == 0
    assert missed.returncode == 3 and "replay-only: cache miss for input row 10" in missed.stderr


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if path.exists() and path.read_text(encoding="utf-8").count("\n") >= n:
            return
        if proc.poll() is not None:
            raise AssertionError(f"the run ended early: {proc.communicate()}")
        time.sleep(0.01)
    raise AssertionError(f"fewer than {n} rows after {limit}s")


def test_kill_9_then_rerun_sends_no_answered_request_again(tmp_path):
    n, concurrency = 300, 8
    items = write_items(tmp_path / "items.jsonl", n)
    out, cache = tmp_path / "r.jsonl", tmp_path / "c.sqlite"
    args = [
        "--input",
        str(items),
        "--model",
        "openai:m",
        "--out",
        str(out),
        "--cache",
        str(cache),
        "--concurrency",
        str(concurrency),
        "--quiet",
    ]
    with JudgeServer(latency=0.02) as server:
        proc = subprocess.Popen(
            [*JUDGE, *args, "--base-url", server.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        partial = Path(f"{out}.partial")  # rows as they finish; --out only when the run completes
        _wait_for_lines(partial, 60, proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        server.wait_idle()  # the exchanges in flight at the kill have finished
        killed_at = len(server.records)
        answered_first = {item_of(r) for r in server.records if r.status == 200}
        assert not out.exists()
        written = read_killed_rows(partial)
        with sqlite3.connect(cache) as db:
            cached = db.execute("SELECT COUNT(*) FROM completions").fetchone()[0]
        rerun = judge_cli(*args, "--base-url", server.url)
        resent = [item_of(r) for r in server.records[killed_at:]]
    assert proc.returncode == -signal.SIGKILL and 60 <= len(written) < n
    assert rerun.returncode == 0, rerun.stderr
    assert sorted(r["row"] for r in read_rows(out)) == list(range(n))
    # exactly the requests without a cached answer were sent again...
    assert len(resent) == len(set(resent)) == n - cached
    # ...none of them for a row the killed run had reported...
    assert not set(resent) & {r["row"] for r in written}
    # ...and of those the server had answered, only ones still in flight at the kill (not yet cached)
    assert len(set(resent) & answered_first) <= concurrency


def _pairwise_winner(body) -> str:
    return json.dumps({"reasoning": "server judge", "winner": "B"})


@pytest.mark.parametrize(
    "method,responder",
    [(["--samples", "3"], None), (["--method", "pairwise"], _pairwise_winner)],
    ids=["sampled", "pairwise"],
)
def test_kill_9_of_a_sampled_or_pairwise_run_leaves_the_rows_it_finished(tmp_path, method, responder):
    """Multi-sample and pairwise judging write each row to OUT.partial once it is final (its
    vote decided, both orders in), not at the end of the run: a killed run leaves those
    rows, whole, and the rerun completes from the cache with the same rows."""
    n = 120
    items = write_items(tmp_path / "items.jsonl", n)
    records = [{**r, "baseline_model_response": f"baseline {i}"} for i, r in enumerate(read_rows(items))]
    items.write_text("".join(json.dumps(r) + "\n" for r in records))
    out, cache = tmp_path / "r.jsonl", tmp_path / "c.sqlite"
    args = ["--input", str(items), "--model", "openai:m", *method, "--out", str(out)]
    args += ["--cache", str(cache), "--concurrency", "4", "--quiet"]
    server_options = {"responder": responder} if responder else {}
    with JudgeServer(latency=0.02, **server_options) as server:
        proc = subprocess.Popen(
            [*JUDGE, *args, "--base-url", server.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        partial = Path(f"{out}.partial")
        _wait_for_lines(partial, 20, proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        written = read_killed_rows(partial)
        assert not out.exists()
        rerun = judge_cli(*args, "--base-url", server.url)
    assert proc.returncode == -signal.SIGKILL
    assert 20 <= len(written) < n
    assert len({r["row"] for r in written}) == len(written)
    assert all(r["status"] == "scored" for r in written)
    assert rerun.returncode == 0, rerun.stderr
    final = {r["row"]: r for r in read_rows(out)}
    assert sorted(final) == list(range(n)) and not partial.exists()
    assert all(final[r["row"]] == r for r in written)  # what the killed run wrote is what the rerun reports


def test_ctrl_c_leaves_a_valid_output_and_a_resumable_cache(tmp_path):
    n = 200
    items = write_items(tmp_path / "items.jsonl", n)
    out = tmp_path / "r.jsonl"
    args = ["--input", str(items), "--model", "openai:m", "--out", str(out), "--concurrency", "4", "--quiet"]
    with JudgeServer(latency=0.02) as server:
        proc = subprocess.Popen(
            [*JUDGE, *args, "--base-url", server.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        _wait_for_lines(Path(f"{out}.partial"), 20, proc)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
        assert not out.exists()  # an interrupted run leaves its rows in OUT.partial
        first = read_rows(Path(f"{out}.partial"))
        sent_first = len(server.records)
        rerun = judge_cli(*args, "--base-url", server.url)
        resent = {item_of(r) for r in server.records[sent_first:]}
    assert proc.returncode == 130, stderr
    assert "stopping: letting" in stderr and "stopped: interrupted" in stderr and "STOPPED     interrupted" in stdout
    assert 20 <= len(first) < n and len(first) == sent_first  # every call that was made got its row
    assert rerun.returncode == 0 and len(read_rows(out)) == n
    assert not resent & {r["row"] for r in first} and len(resent) == n - len(first)
