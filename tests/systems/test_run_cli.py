"""``respeval run`` as a user runs it: help, the example, bad input named with exit 1, the
spec file, run -> compare on the command line, and SIGKILL at random moments then
``--resume``: the output an uninterrupted run writes, no answered request sent again, and a
rerun that sends none at all."""

from __future__ import annotations

import json
import random
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from _helpers import kill
from _helpers.judge_server import FaultPlan, JudgeServer, system_responder
from respeval.cli import main as MAIN

FAST = ["--backoff-base", "0.001", "--backoff-max", "0.01", "--quiet"]


@pytest.fixture
def cli(capsys):
    """``respeval ARGS`` in this process -> CompletedProcess(returncode, stdout, stderr)."""

    def call(*args: str) -> subprocess.CompletedProcess:
        capsys.readouterr()
        try:
            code = MAIN(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, captured.out, captured.err)

    return call


def questions(path: Path, n: int) -> Path:
    rows = [{"id": f"q{i}", "question": f"what is {i}? [[answer={i}]]", "expected": str(i)} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def test_help_lists_the_kinds_the_output_and_examples(cli):
    proc = cli("run", "--help")
    assert proc.returncode == 0
    for needle in ("--system NAME=SPEC", "--template", "--system-instruction", "--base-url", "--cache", "--resume",
                   "--batch", "--example", "http://HOST/PATH", "python:MOD:FUNC", "examples:", "exit status",
                   "respeval compare --input responses.jsonl"):  # fmt: skip
        assert needle in proc.stdout, needle


def test_the_example_runs_offline_compares_and_prints_the_decision(cli, tmp_path):
    proc = cli("run", "--example", "--out", str(tmp_path / "r.jsonl"))
    assert proc.returncode == 0, proc.stderr
    assert "60 questions" in proc.stdout and "McNemar exact" in proc.stdout
    assert proc.stdout.rstrip().endswith("decision: improved")
    rows = read(tmp_path / "r.jsonl")
    assert len(rows) == 120 and {r["system"] for r in rows} == {"baseline", "candidate"}
    data = json.loads(cli("run", "--example", "--json").stdout)
    assert data["compare"]["decision"] == "improved" and data["run"]["complete"]


def test_a_template_field_missing_in_a_row_is_named_and_nothing_is_sent(cli, tmp_path):
    data = tmp_path / "v.jsonl"
    data.write_text('{"id": 1, "question": "a"}\n{"id": 2, "q": "b"}\n', encoding="utf-8")
    with JudgeServer() as server:
        proc = cli("run", "--input", str(data), "--template", "Q: {question}", "--system", "a=openai:m",
                   "--base-url", server.url, "--out", str(tmp_path / "o.jsonl"))  # fmt: skip
        assert not server.records
    assert proc.returncode == 1
    assert f"{data}:2 (row 1): field 'question': missing (template 't1' names it)" in proc.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["--system", "a=nonsense:x"], "unknown kind 'nonsense'"),
        (["--system", "justaspec"], "expected NAME=SPEC"),
        (["--system", "a=fake:", "--system", "a=fake:"], "'a' is given twice"),
        (["--system", "a=fake:", "--isolate", "b"], "--isolate b: no such system"),
        (["--system", "a=fake:", "--tools", "missing.json"], "cannot read missing.json"),
        ([], "give at least one --system"),
    ],
)
def test_bad_options_are_named_with_exit_1(cli, tmp_path, args, message):
    data = questions(tmp_path / "v.jsonl", 2)
    proc = cli("run", "--input", str(data), "--template", "{question}", "--out", str(tmp_path / "o.jsonl"), *args)
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr


def test_run_then_compare_on_the_command_line(cli, tmp_path):
    data, out = questions(tmp_path / "vars.jsonl", 30), tmp_path / "responses.jsonl"
    with JudgeServer(FaultPlan(rate=0.2, seed=2, kinds=("429", "503")), responder=system_responder) as server:
        proc = cli("run", "--input", str(data), "--template", "Q: {question}", "--system", "baseline=openai:bad",
                   "--system", "candidate=openai:good", "--system-instruction", "baseline=Be terse.",
                   "--base-url", server.url, "--out", str(out), *FAST)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert f"responses: {out}" in proc.stdout and "next: respeval compare" in proc.stdout
        systems = {r.body["model"]: r.body["messages"][0] for r in server.records if r.body}
    assert systems["bad"] == {"role": "system", "content": "Be terse."} and systems["good"]["role"] == "user"
    compared = cli("compare", "--input", str(out), "--baseline", "baseline", "--candidate", "candidate",
                   "--metrics", "exact_match", "--ref-field", "expected", "--json", "--fail-on", "regression")  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    assert json.loads(compared.stdout)["decision"] == "improved"


def test_a_refused_key_exits_3_and_a_budget_stop_exits_4(cli, tmp_path):
    data = questions(tmp_path / "v.jsonl", 6)
    with JudgeServer(responder=system_responder, api_key="k") as server:
        proc = cli("run", "--input", str(data), "--template", "{question}", "--system", "a=openai:m",
                   "--base-url", server.url, "--out", str(tmp_path / "o.jsonl"), *FAST)  # fmt: skip
    assert proc.returncode == 3 and "HTTP 401" in proc.stderr and "--resume" in proc.stderr
    with JudgeServer(responder=system_responder) as server:
        proc = cli("run", "--input", str(data), "--template", "{question}", "--system", "a=openai:m",
                   "--base-url", server.url, "--out", str(tmp_path / "b.jsonl"), "--budget-calls", "2",
                   "--concurrency", "1", *FAST)  # fmt: skip
        assert proc.returncode == 4 and not (tmp_path / "b.jsonl").exists()
        proc = cli("run", "--input", str(data), "--template", "{question}", "--system", "a=openai:m",
                   "--base-url", server.url, "--out", str(tmp_path / "b.jsonl"), "--resume", *FAST)  # fmt: skip
        assert proc.returncode == 0 and len(read(tmp_path / "b.jsonl")) == 6
        assert len([r for r in server.records if r.status == 200]) == 6


def test_a_spec_file_holds_templates_systems_and_their_settings(cli, tmp_path):
    data = questions(tmp_path / "vars.jsonl", 3)
    (tmp_path / "tools.json").write_text(json.dumps([{"name": "lookup", "parameters": {"type": "object"}}]))
    spec = {
        "input": "vars.jsonl",
        "out": "out.jsonl",
        "templates": {"short": "Q: {question}", "long": "Please answer: {question}"},
        "systems": {
            "echo": {"spec": "python:_helpers.systems:echo", "system_instruction": "Echo.", "tools": "tools.json"},
            "loud": "python:_helpers.systems:shout",
        },
    }
    (tmp_path / "run.json").write_text(json.dumps(spec))
    proc = cli("run", "--spec", str(tmp_path / "run.json"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    rows = read(tmp_path / "out.jsonl")
    assert [(r["template"], r["system"]) for r in rows[:4]] == [
        ("short", "echo"), ("short", "loud"), ("long", "echo"), ("long", "loud")
    ]  # fmt: skip
    assert data.exists() and rows[1]["response"] == "WHAT IS 0? [[ANSWER=0]]"
    (tmp_path / "bad.json").write_text(json.dumps({**spec, "sytems": {}}))
    proc = cli("run", "--spec", str(tmp_path / "bad.json"))
    assert proc.returncode == 1 and "unknown key(s) sytems" in proc.stderr


def _key(record) -> tuple[str, str]:
    return record.body["model"], json.dumps(record.body["messages"])


def _kill_and_resume(tmp_path: Path, n: int, plan: FaultPlan, latency: float, seed: int, kills: int) -> None:
    data = questions(tmp_path / "vars.jsonl", n)
    concurrency = 4
    args = ["run", "--input", str(data), "--template", "short=Q: {question}", "--template", "long=Answer: {question}",
            "--system", "baseline=openai:bad", "--system", "candidate=openai:good", "--concurrency", str(concurrency),
            "--timeout", "0.5", "--max-retries", "8", *FAST]  # fmt: skip
    rng = random.Random(seed)
    with JudgeServer(plan, responder=system_responder, latency=latency) as server:
        base = server.url
        reference = tmp_path / "reference.jsonl"
        code, output = kill.run([*args, "--base-url", base, "--out", str(reference)], cwd=tmp_path, timeout=600)
        assert code == 0, output
        clean_run = len(server.records)
        out = tmp_path / "responses.jsonl"
        killed = 0
        for _ in range(kills + 20):
            how = {}
            if killed < kills:
                # killed once the server has seen a random number of this run's requests: a
                # moment inside the run on any machine (a timer from the start raced the run)
                seen, more = len(server.records), rng.randint(3, n // 2)
                how = {"kill_when": lambda seen=seen, more=more: len(server.records) >= seen + more}
            code, output = kill.run(
                [*args, "--base-url", base, "--out", str(out), "--resume"], cwd=tmp_path, timeout=600, **how
            )
            if code == -9:
                killed += 1
                continue
            assert code == 0, output
            break
        assert killed >= min(kills, 2), "the runs finished before they could be killed: slow the server down"
        resumed = server.records[clean_run:]
        before_rerun = len(server.records)
        code, output = kill.run([*args, "--base-url", base, "--out", str(out)], cwd=tmp_path, timeout=600)
        assert code == 0, output
        assert len(server.records) == before_rerun  # a rerun sends nothing: every answer is in the cache
    rows, expected = read(out), read(reference)
    assert len(rows) == 4 * n
    strip = lambda rs: [{k: v for k, v in r.items() if k != "latency_s"} for r in rs]  # noqa: E731
    assert strip(rows) == strip(expected)  # the uninterrupted run's rows, in its order
    answered = Counter(_key(r) for r in resumed if r.status == 200 and r.fault is None)
    repeated = sum(c - 1 for c in answered.values())
    # only a request in flight at a kill (answered, but not yet cached) can be sent again
    assert repeated <= killed * concurrency * 2


def test_a_kill_while_out_is_written_resumes_without_a_call(tmp_path):
    data, out = questions(tmp_path / "vars.jsonl", 10), tmp_path / "responses.jsonl"
    with JudgeServer(responder=system_responder) as server:
        args = ["run", "--input", str(data), "--template", "{question}", "--system", "a=openai:m",
                "--base-url", server.url, "--out", str(out), *FAST]  # fmt: skip
        # the 1st commit is the parts' manifest (written atomically too), the 2nd OUT
        code, _ = kill.run(args, cwd=tmp_path, kill_at=("respeval.io.files.commit", 2))
        assert code == -9 and not out.exists() and Path(f"{out}.parts").is_dir()
        sent = len(server.records)
        code, output = kill.run([*args, "--resume"], cwd=tmp_path)
        assert code == 0, output
        assert len(server.records) == sent == 10 and len(read(out)) == 10
        assert not Path(f"{out}.parts").exists()


def test_sigkill_at_random_moments_then_resume(tmp_path):
    plan = FaultPlan(rate=0.05, seed=4, kinds=("429", "500", "slow"), slow_seconds=0.8)
    _kill_and_resume(tmp_path, 80, plan, latency=0.01, seed=7, kills=3)


def test_acceptance_2000_cases_2_systems_2_templates_killed_and_resumed(tmp_path):
    """Issue 30, acceptance 1, in CI (~30 s): the kills fall inside the run on any machine."""
    plan = FaultPlan(rate=0.05, seed=11, kinds=("429", "429-retry-after", "500", "503", "slow"), retry_after=0.01,
                     slow_seconds=0.8)  # fmt: skip
    _kill_and_resume(tmp_path, 2000, plan, latency=0.001, seed=3, kills=5)


def test_the_output_feeds_score_judge_evaluate_and_gate_unchanged(cli, tmp_path):
    data = tmp_path / "v.jsonl"
    data.write_text("".join(json.dumps({"id": i, "question": f"q{i}", "reference": f"echo: q{i}"}) + "\n"
                            for i in range(8)), encoding="utf-8")  # fmt: skip
    out = tmp_path / "responses.jsonl"
    proc = cli("run", "--input", str(data), "--template", "{question}", "--system", "s=python:_helpers.systems:echo",
               "--out", str(out), "--quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    score = cli("score", "--pred", str(out), "--metrics", "rouge1", "--json", "--quiet")
    assert score.returncode == 0, score.stderr
    assert json.loads(score.stdout)["systems"][0]["values"]["rouge1_f"] == 1.0
    judged = cli("judge", "--input", str(out), "--model", "fake:score=1", "--out", str(tmp_path / "j.jsonl"), "--quiet")
    assert judged.returncode == 0, judged.stderr
    assert len(read(tmp_path / "j.jsonl")) == 8
    evaluated = cli("evaluate", "--input", str(out), "--metric", "exact_match", "--out", str(tmp_path / "e.jsonl"))
    assert evaluated.returncode == 0, evaluated.stderr
    gated = cli("gate", "--input", str(out), "--model", "fake:score=1", "--out", str(tmp_path / "g.jsonl"))
    assert gated.returncode == 0, gated.stderr


def test_progress_shows_on_a_terminal_only(tmp_path):
    import fcntl
    import os
    import pty
    import struct
    import sys
    import termios

    data = questions(tmp_path / "v.jsonl", 30)
    with JudgeServer(responder=system_responder, latency=0.06) as server:
        args = [sys.executable, "-m", "respeval", "run", "--input", str(data), "--template", "{question}",
                "--system", "a=openai:good", "--base-url", server.url, "--concurrency", "1"]  # fmt: skip
        piped = subprocess.run([*args, "--out", str(tmp_path / "p.jsonl")], capture_output=True, text=True, timeout=120)
        assert piped.returncode == 0 and piped.stderr == ""  # not a terminal: no progress bar
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a terminal 120 wide
        proc = subprocess.Popen([*args, "--out", str(tmp_path / "t.jsonl")], stdout=subprocess.DEVNULL,
                                stderr=follower)  # fmt: skip
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        proc.wait(60)
        os.close(leader)
    assert proc.returncode == 0
    text = seen.decode("utf-8", "replace")
    assert "rows" in text and "rows/s" in text and "$0.0000" in text
