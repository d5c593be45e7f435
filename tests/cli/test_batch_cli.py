"""``--batch`` on the command line, end to end against the fake batch APIs (the test server
in its own process, so it outlives the clients we kill): judge and gate, the exit codes,
``respeval batches list|cancel|fetch``, SIGKILL at every step of a batch run, and the
large runs (5,000 rows here; 100,000 with ``-m slow``)."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from _helpers.batch_api import BatchAPI
from _helpers.judge_server import JudgeServer, default_responder, spawn_server
from respeval.cli import main as MAIN
from respeval.judge.batch import BatchStore
from respeval.judge.prices import PRICE_TABLE

RESPEVAL = [sys.executable, "-m", "respeval"]
SCORES = (0.0, 0.5, 1.0)
POLL = ["--batch-poll", "0.02"]


def write_items(path: Path, n: int, *, baseline: bool = False) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            record = {"id": f"q{i}", "prompt": f"Question {i}?", "reference": f"Answer {i}.",
                      "response": f"candidate {i} [[score={SCORES[i % 3]}]]"}  # fmt: skip
            if baseline:
                record["baseline_model_response"] = f"baseline {i}"
            fh.write(json.dumps(record) + "\n")
    return path


def model_args(provider: str, url: str) -> list[str]:
    if provider == "openai":
        return ["--model", "openai:gpt-4o-mini", "--base-url", url]
    return ["--model", "anthropic:claude-3-5-haiku", "--base-url", url.removesuffix("/v1")]


def read_rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def submitted_ids(stats: dict) -> Counter:
    return Counter(request for s in stats["batch_api"]["submissions"] for request in s["requests"])


# --------------------------------------------------------------------------- judge --batch


def test_judge_batch_end_to_end_and_a_rerun_sends_nothing(tmp_path, capsys):
    src = write_items(tmp_path / "rows.jsonl", 90)
    out = tmp_path / "out.jsonl"
    api = BatchAPI(responder=default_responder, error_rate=0.05, seed=4)
    with JudgeServer(batch_api=api) as server:
        args = ["judge", "--input", str(src), *model_args("openai", server.url), "--out", str(out), "--batch",
                *POLL, "--batch-max-requests", "40", "--json", "--quiet"]  # fmt: skip
        assert MAIN(args) == 0
        summary = json.loads(capsys.readouterr().out)
        batches = len(api.submissions)
        assert MAIN(args) == 0
        again = json.loads(capsys.readouterr().out)
        assert len(api.submissions) == batches and len(server.records) == 0  # the rerun sent nothing
    rows = read_rows(out)
    assert sorted(r["row"] for r in rows) == list(range(90))
    assert all(r["status"] == "scored" and r["score"] == SCORES[r["row"] % 3] for r in rows)
    report = summary["batch"]
    assert summary["scored"] == 90 and report["succeeded"] == 90 and report["failed"] == report["resubmitted"]
    price = PRICE_TABLE["gpt-4o-mini"]
    assert report["cost"] == pytest.approx(price.batch.cost(report["tokens_in"], report["tokens_out"]))
    assert report["cost_interactive_equivalent"] == pytest.approx(2 * report["cost"])
    assert summary["cost_usd"] == pytest.approx(report["cost"])
    assert again["batch"]["requests_submitted"] == 0 and again["cost_usd"] == 0 and again["cache_hits"] == 90
    assert not (tmp_path / "out.jsonl.batch-pass").exists()


def test_judge_batch_text_summary_and_other_methods(tmp_path, capsys):
    src = write_items(tmp_path / "rows.jsonl", 12, baseline=True)
    api = BatchAPI(responder=default_responder)
    with JudgeServer(batch_api=api) as server:
        base = ["judge", "--input", str(src), *model_args("anthropic", server.url), "--batch", *POLL, "--quiet"]
        assert MAIN([*base, "--out", str(tmp_path / "p.jsonl")]) == 0
        text = capsys.readouterr().out
        assert "at batch prices (interactively $" in text and "new batches (anthropic" in text
        assert MAIN([*base, "--samples", "3", "--out", str(tmp_path / "s.jsonl")]) == 0
        text = capsys.readouterr().out
        assert "12 rows, 12 scored (pointwise, multi-sampled)" in text and "at batch prices" in text
    assert len(read_rows(tmp_path / "s.jsonl")) == 12


def test_batch_options_are_checked(tmp_path, capsys):
    src = write_items(tmp_path / "rows.jsonl", 2)
    assert MAIN(["judge", "--input", str(src), "--model", "fake:", "--batch", "--out", str(tmp_path / "o.jsonl")]) == 1
    assert "has no batch API" in capsys.readouterr().err
    assert MAIN(["judge", "--input", str(src), "--model", "openai:m", "--batch-wait", "5", "--no-cache"]) == 1
    assert "--batch-wait applies with --batch" in capsys.readouterr().err
    assert MAIN(["judge", "--input", str(src), "--model", "openai:m", "--batch", "--no-cache"]) == 1
    assert "--batch needs a cache" in capsys.readouterr().err
    assert MAIN(["gate", "--input", str(src), "--model", "openai:m", "--batch"]) == 1
    assert "--batch needs --cache FILE" in capsys.readouterr().err


def test_waiting_fetching_listing_and_resuming(tmp_path, capsys):
    src = write_items(tmp_path / "rows.jsonl", 30)
    out = tmp_path / "out.jsonl"
    cache = f"{out}.cache.sqlite"
    api = BatchAPI(responder=default_responder, seconds=30.0)
    with JudgeServer(batch_api=api) as server:
        args = ["judge", "--input", str(src), *model_args("openai", server.url), "--out", str(out), "--batch",
                *POLL, "--quiet"]  # fmt: skip
        assert MAIN([*args, "--batch-wait", "0.1"]) == 5  # batches still running
        captured = capsys.readouterr()
        assert "still running" in captured.err and "STOPPED" in captured.out
        assert MAIN(["batches", "list", "--cache", cache, "--json"]) == 0
        listing = json.loads(capsys.readouterr().out)
        (job,) = listing["batches"]
        assert job["state"] == "submitted" and job["requests"] == 30 and listing["requests"] == {"queued": 30}
        assert MAIN(["batches", "fetch", "--cache", cache]) == 5  # one look: still running
        capsys.readouterr()
        api.plan.seconds = 0.0
        assert MAIN(["batches", "fetch", "--cache", cache, "--json"]) == 0
        (outcome,) = json.loads(capsys.readouterr().out)["outcomes"]
        assert outcome["outcome"] == "downloaded (completed)" and outcome["answered"] == 30
        assert MAIN([*args, "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
    assert summary["batch"]["requests_submitted"] == 0 and summary["scored"] == 30
    assert len(api.submissions) == 1 and len(read_rows(out)) == 30
    assert MAIN(["batches", "list", "--cache", cache]) == 0
    text = capsys.readouterr().out
    assert "downloaded" in text and "1 batches (downloaded: 1); requests: done: 30" in text


def test_gate_batch(tmp_path, capsys):
    rows = tmp_path / "gate.jsonl"
    with open(rows, "w") as fh:
        for i in range(20):  # half match exactly, the rest go to the judge
            response = f"answer {i}" if i % 2 else f"something else [[score={SCORES[i % 3]}]]"
            fh.write(json.dumps({"id": i, "response": response, "reference": f"answer {i}"}) + "\n")
    api = BatchAPI(responder=default_responder)
    with JudgeServer(batch_api=api) as server:
        args = ["gate", "--input", str(rows), *model_args("openai", server.url), "--lexical-accept", "0.9",
                "--lexical-reject", "0.0", "--cache", str(tmp_path / "g.sqlite"), "--batch", *POLL, "--json"]  # fmt: skip
        assert MAIN(args) == 0
        report = json.loads(capsys.readouterr().out)
    assert report["judged"] == 10 and sum(len(s["custom_ids"]) for s in api.submissions) == 10
    assert (
        report["judge"]["batch"]["succeeded"] == 10
        and report["decisions"]["accept"] + report["decisions"]["reject"] == 20
    )


# --------------------------------------------------------------------------- SIGKILL

# The steps to kill at, in the order a run reaches them (three batches: the first two are
# killed while being uploaded and submitted, then one while polling, one while downloading).
STEPS = {
    "openai": (
        "POST /v1/files",
        "POST /v1/batches",
        "POST /v1/files",
        "POST /v1/batches",
        "GET /v1/batches/{id}",
        "GET /v1/files/{id}/content",
    ),
    "anthropic": (
        "POST /v1/messages/batches",
        "POST /v1/messages/batches",
        "GET /v1/messages/batches/{id}",
        "GET /v1/messages/batches/{id}/results",
    ),
}


def batch_cmd(provider: str, url: str, src: Path, out: Path) -> list[str]:
    return [*RESPEVAL, "judge", "--input", str(src), *model_args(provider, url), "--out", str(out), "--batch",
            "--batch-poll", "0.05", "--batch-max-requests", "100", "--quiet"]  # fmt: skip


def kill_at(cmd: list[str], server, step: str | None, jitter: float) -> bool:
    """Start the command, SIGKILL it ``jitter`` seconds after the server saw ``step`` (or
    after starting, without a step); False when it finished first."""
    before = server.stats()["batch_api"]["calls"].get(step, 0)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if step is None or server.stats()["batch_api"]["calls"].get(step, 0) > before:
                time.sleep(jitter)
                break
            time.sleep(0.01)
        if proc.poll() is not None:
            return False
        proc.send_signal(signal.SIGKILL)
        return True
    finally:
        proc.wait(30)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_sigkill_at_every_step_then_rerun_gives_the_uninterrupted_table(provider, tmp_path):
    n = 250
    src = write_items(tmp_path / "rows.jsonl", n)
    rng = random.Random(17)
    dials = {"seconds": 0.5, "upload_delay": 0.3, "submit_delay": 0.3, "download_delay": 0.3}
    with spawn_server(batch_api=dials) as server:
        reference = tmp_path / "reference.jsonl"
        done = subprocess.run(batch_cmd(provider, server.url, src, reference), capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        first = submitted_ids(server.stats())
        assert sum(first.values()) == n and len(server.stats()["batch_api"]["submissions"]) == 3

        out = tmp_path / "killed.jsonl"
        cmd = batch_cmd(provider, server.url, src, out)
        states = []
        kills = 0
        plan = [(step, rng.uniform(0.0, 0.35)) for step in STEPS[provider]]  # a random moment within each
        plan.append((None, rng.uniform(1.0, 2.5)))  # and anywhere
        for step, jitter in plan:
            if kill_at(cmd, server, step, jitter):
                kills += 1
                store = BatchStore(f"{out}.cache.sqlite")
                states.append(sorted({j.state for j in store.jobs()}))
                store.close()
        final = subprocess.run(cmd, capture_output=True, text=True)
        assert final.returncode == 0, final.stderr
        stats = server.stats()

    assert kills >= len(STEPS[provider]), states
    seen = {state for s in states for state in s}
    assert {"submitting", "submitted"} <= seen, states
    if provider == "openai":
        assert {"preparing", "uploaded"} & seen, states
    # no request (so no batch) submitted twice, none lost: the killed runs' requests, once each
    again = submitted_ids(stats) - first
    assert set(again.values()) == {1} and sum(again.values()) == n
    killed_rows = read_rows(out)
    assert len(killed_rows) == n and len({r["row"] for r in killed_rows}) == n  # none lost or duplicated
    assert sorted(killed_rows, key=lambda r: r["row"]) == sorted(read_rows(reference), key=lambda r: r["row"])
    assert not Path(f"{out}.batch-pass").exists()


# --------------------------------------------------------------------------- large runs


def large_run(n: int, tmp_path: Path) -> None:
    src = write_items(tmp_path / "rows.jsonl", n)
    out = tmp_path / "out.jsonl"
    with spawn_server(batch_api={"seconds": 1.0, "error_rate": 0.01, "expire": [1], "seed": 9}) as server:
        cmd = [*RESPEVAL, "judge", "--input", str(src), "--model", "openai:gpt-4o-mini", "--base-url", server.url,
               "--out", str(out), "--batch", "--batch-poll", "0.2", "--json", "--quiet"]  # fmt: skip
        first = subprocess.run(cmd, capture_output=True, text=True)
        assert first.returncode == 0, first.stderr
        stats = server.stats()
        second = subprocess.run(cmd, capture_output=True, text=True)
        assert second.returncode == 0, second.stderr
        assert server.stats()["batch_api"]["calls"] == stats["batch_api"]["calls"]  # the rerun sent 0 requests
        assert server.stats()["requests"] == 0  # and nothing interactive, ever
    summary = json.loads(first.stdout)
    report = summary["batch"]
    rows = read_rows(out)
    assert len(rows) == n and {r["row"] for r in rows} == set(range(n))
    for row in rows:  # every row scored, or unscored with a reason
        assert row["status"] == "scored" or (row["status"] == "unscored" and row["unscored_reason"])
    assert summary["scored"] + summary["unscored"] == n and summary["not_run"] == 0
    assert report["expired"] > 0 and report["errored"] > 0
    assert report["succeeded"] + report["failed"] == report["requests_submitted"]
    assert report["failed"] == report["resubmitted"] + report["gave_up"] and summary["unscored"] == report["gave_up"]
    price = PRICE_TABLE["gpt-4o-mini"]
    assert report["cost"] == pytest.approx(price.batch.cost(report["tokens_in"], report["tokens_out"]))
    assert json.loads(second.stdout)["batch"]["requests_submitted"] == 0


def test_5000_rows_with_batch(tmp_path):
    large_run(5_000, tmp_path)


@pytest.mark.slow
def test_100000_rows_with_batch(tmp_path):
    large_run(100_000, tmp_path)


def test_a_provider_that_refuses_stops_with_status_3_and_a_clear_message(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-0123456789")
    src = write_items(tmp_path / "rows.jsonl", 3)
    api = BatchAPI(responder=default_responder, api_key="sk-right-key-0123456789")
    with JudgeServer(batch_api=api) as server:
        args = ["judge", "--input", str(src), *model_args("openai", server.url), "--out", str(tmp_path / "o.jsonl"),
                "--batch", *POLL, "--quiet"]  # fmt: skip
        assert MAIN(args) == 3
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "check the key in $OPENAI_API_KEY" in err
    assert "sk-wrong-key" not in err and "Traceback" not in err
    assert not api.submissions
