"""Custom function metrics: in process, in isolated workers (time, memory, no network), batch form.
The sandbox itself (what a hostile function cannot do) is tests/evaluate/test_sandbox.py."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import socket
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import respeval
from respeval.evaluate import CustomMetric
from respeval.evaluate.isolation import Limits, SandboxUnavailable, WorkerPool

ROWS = [{"id": i, "response": f"answer {i}", "reference": "answer"} for i in range(12)]


def flaky(row):
    i = row["id"]
    if i == 1:
        raise ValueError("no answer field")
    if i == 2:
        return float("nan")
    if i == 3:
        return "high"
    if i == 4:
        return None
    if i == 5:
        return True
    return i / 10


def test_inline_rows_unscored_with_their_reason():
    result = respeval.evaluate(ROWS, [CustomMetric("flaky", flaky)])
    rows = result.table.to_pylist()
    reasons = {r["row"]: r["flaky/unscored_reason"] for r in rows if r["flaky/status"] == "unscored"}
    assert reasons[1] == "raised ValueError: no answer field"
    assert reasons[2] == "returned NaN"
    assert reasons[3].startswith("returned str 'high', expected a number")
    assert reasons[4].startswith("returned None")
    assert set(reasons) == {1, 2, 3, 4}
    assert rows[5]["flaky/score"] == 1.0 and rows[6]["flaky/score"] == 0.6
    assert result.summary_metrics["flaky/scored"] == 8
    assert result.summary_metrics["flaky/coverage"] == pytest.approx(8 / 12)


def test_dict_results_need_declared_outputs():
    def two(row):
        return {
            "length": len(row["response"]),
            "has_digit": any(c.isdigit() for c in row["response"]),
            "explanation": "ok",
        }

    result = respeval.evaluate(ROWS, [CustomMetric("shape", two, outputs=["length", "has_digit"])])
    names = result.table.column_names
    assert "shape.length/score" in names and "shape.has_digit/score" in names
    assert result.summary_metrics["shape.has_digit/mean"] == 1.0
    with pytest.raises(ValueError, match="declare them"):
        respeval.evaluate(ROWS, [CustomMetric("shape", two)])


def test_batch_function_and_nan_rows():
    def lengths(batch: pa.RecordBatch):
        values = np.array([len(s) for s in batch.column("response").to_pylist()], dtype=float)
        values[0] = np.nan
        return values

    result = respeval.evaluate(ROWS, [CustomMetric("len", lengths, batch=True)], chunk_size=5)
    rows = result.table.to_pylist()
    assert [r["len/status"] for r in rows].count("unscored") == 3  # the first row of each chunk
    assert rows[1]["len/score"] == len("answer 1")
    assert rows[5]["len/unscored_reason"] == "score: returned NaN"


def test_batch_function_of_the_wrong_length():
    result = respeval.evaluate(ROWS, [CustomMetric("bad", lambda b: [1.0], batch=True)])
    assert set(result.table.column("bad/unscored_reason").to_pylist()) == {"returned 1 values for a batch of 12 rows"}


# --------------------------------------------------------------------------- isolation


def slow(row):
    if row["id"] == 2:
        time.sleep(30)
    return 1.0


def hog(row):
    if row["id"] == 3:
        block = bytearray(4 * 1024**3)  # 4 GB, past the 1.5 GB limit
        return float(len(block))
    return 1.0


def dial(row):
    if row["id"] == 4:
        with socket.create_connection(("127.0.0.1", row["port"]), timeout=2):
            return 1.0
    return 0.5


def _children() -> list[int]:
    """This process's live child processes (Linux's /proc; zombies, already dead, left out)."""
    pids = []
    for task in Path("/proc/self/task").iterdir():
        pids += [int(pid) for pid in (task / "children").read_text().split()]
    alive = []
    for pid in pids:
        with contextlib.suppress(FileNotFoundError):
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                alive.append(pid)
    return alive


def test_process_isolation_time_limit_memory_and_failures():
    metrics = [
        CustomMetric("slow", slow, isolation="process", timeout=1.0),
        CustomMetric("hog", hog, isolation="process"),
        CustomMetric("flaky", flaky, isolation="process"),
    ]
    before = set(_children())
    result = respeval.evaluate(ROWS, metrics)
    rows = result.table.to_pylist()
    # the sleeping worker was killed at its limit (not waited for, not left asleep behind the run)
    assert rows[2]["slow/unscored_reason"] == "timed out after 1 s (the time limit)"
    assert set(_children()) - before == set()
    assert all(r["slow/score"] == 1.0 for r in rows if r["row"] != 2)
    assert rows[3]["hog/unscored_reason"].startswith("out of memory")
    assert all(r["hog/score"] == 1.0 for r in rows if r["row"] != 3)
    assert rows[1]["flaky/unscored_reason"] == "raised ValueError: no answer field"
    assert rows[2]["flaky/unscored_reason"] == "returned NaN"
    assert rows[7]["flaky/score"] == pytest.approx(0.7)


def test_no_network_in_workers():
    """A connect from a worker fails, though a server listens on 127.0.0.1 and the parent reaches it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()  # the parent can
        rows = [{**r, "port": port} for r in ROWS[:6]]
        metric = CustomMetric("dial", dial, isolation="process", workers=1)
        result = respeval.evaluate(rows, [metric])
        reason = result.table.to_pylist()[4]["dial/unscored_reason"]
        assert reason.startswith(
            "raised PermissionError: [Errno 1] the sandbox has no network (network: false; socket."
        )
        assert result.table.to_pylist()[5]["dial/score"] == 0.5
        assert "|network:blocked|sandbox:seccomp" in result.run_summary["signatures"]["dial"]
        allowed = respeval.evaluate(rows, [CustomMetric("dial", dial, isolation="process", network=True, workers=1)])
        assert allowed.table.to_pylist()[4]["dial/score"] == 1.0  # the control: with network it connects
        assert "|network:allowed|" in allowed.run_summary["signatures"]["dial"]
    finally:
        server.close()


def die(x):
    if x == 2:
        os.kill(os.getpid(), signal.SIGSEGV)
    return x * 2


def test_the_pool_survives_a_worker_that_dies():
    with WorkerPool(die, Limits(timeout=5, memory_mb=None, network=True), workers=2, batch=4) as pool:
        out = pool.map(list(range(8)))
    assert out[2] == (False, "the worker died (SIGSEGV)")
    assert [v for ok, v in out if ok] == [0, 2, 6, 8, 10, 12, 14]


def test_no_network_is_refused_where_it_cannot_be_enforced(monkeypatch):
    """Without a seccomp filter (not Linux, another architecture, an old kernel) network: false
    is refused with the reason, never run under a guard the function could switch off."""
    import respeval.evaluate.isolation as iso

    monkeypatch.setattr(iso, "_probe", lambda: {"seccomp": False, "landlock": 0, "why": "darwin has no seccomp filter"})
    with pytest.raises(SandboxUnavailable, match=r"network: false cannot be enforced here: darwin has no seccomp"):
        CustomMetric("dial", dial, isolation="process")
    with pytest.raises(SandboxUnavailable, match="Set network: true"):
        WorkerPool(dial, Limits())
    allowed = CustomMetric("dial", dial, isolation="process", network=True)  # what it can do, it says
    assert "|network:allowed|sandbox:none" in allowed.signature()


def test_bad_arguments():
    with pytest.raises(ValueError, match="isolation"):
        CustomMetric("x", flaky, isolation="docker")
    with pytest.raises(TypeError, match="callable"):
        CustomMetric("x", 3)
    with pytest.raises(ValueError, match="without '/'"):
        CustomMetric("a/b", flaky)
    assert math.isnan(float("nan"))


# --------------------------------------------------------------------------- what an in-process function may do


class Boom(BaseException):
    """Not an Exception: ``except Exception`` lets it through."""


class Unreadable(Exception):
    def __str__(self):
        raise RuntimeError("no message for you")


def misbehaving(row):
    i = row["id"]
    if i == 0:
        sys.exit(0)
    if i == 1:
        raise Boom("not an Exception")
    if i == 2:
        raise Unreadable()
    if i == 3:
        return 10**400
    if i == 4:
        return {"score": 10**400}
    if i == 5:
        raise SystemExit("bye")
    if i == 6:
        return {"score": 1.0, "explanation": 10**5000}
    return 1.0


def test_in_process_failures_of_every_kind_are_bad_rows():
    """sys.exit, BaseException subclasses, an exception whose message raises and integers too
    large for a float: the row is unscored with its reason, the run goes on (issue 28: 17, 18)."""
    result = respeval.evaluate(ROWS, [CustomMetric("bad", misbehaving)])
    reasons = result.table.column("bad/unscored_reason").to_pylist()
    assert reasons[:6] == [
        "called sys.exit(0)",
        "raised Boom: not an Exception",
        "raised Unreadable (its message could not be read)",
        "returned a number too large for a float",
        "score: returned a number too large for a float",
        "called sys.exit('bye')",
    ]
    assert result.table.column("bad/explanation").to_pylist()[6] == "(an explanation of type int that cannot be shown)"
    assert result.table.column("bad/score").to_pylist()[6:] == [1.0] * 6


def test_a_huge_number_in_a_batch_result_is_a_bad_batch():
    result = respeval.evaluate(ROWS, [CustomMetric("hb", lambda b: [10**400] * b.num_rows, batch=True)])
    assert set(result.table.column("hb/unscored_reason").to_pylist()) == {
        "score: returned a number too large for a float"
    }


def test_ctrl_c_still_stops_an_in_process_metric():
    def interrupted(row):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        respeval.evaluate(ROWS, [CustomMetric("ctrl_c", interrupted)])


def test_what_an_in_process_function_prints_goes_to_stderr(capsys):
    def chatty(row):
        print("chatty was here")
        return 1.0

    respeval.evaluate(ROWS[:2], [CustomMetric("chatty", chatty)])
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("chatty was here") == 2
    print("after the run")  # the real stdout is back
    assert capsys.readouterr().out == "after the run\n"


CLI_METRICS = """
import sys

def shout(row):
    print("a metric printing to stdout", row["id"])
    return 1.0

def leave(row):
    if row["id"] == 1:
        sys.exit(0)
    return 0.5
"""


@pytest.mark.parametrize("isolation", ["none", "process"])
def test_evaluate_json_stays_json_whatever_a_metric_does(tmp_path, monkeypatch, capsys, isolation):
    """``evaluate --json``: a metric's print() lands on stderr, its sys.exit(0) is a bad row, and
    stdout is the summary, as JSON (issue 28: 17, 21)."""
    from respeval.cli import main

    (tmp_path / "cli_metrics.py").write_text(CLI_METRICS)
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": i, "response": "a", "reference": "a"}) + "\n" for i in range(3)))
    spec = tmp_path / "spec.json"
    entries = [{"custom": f"cli_metrics.py:{f}", "isolation": isolation} for f in ("shout", "leave")]
    spec.write_text(json.dumps({"metrics": entries}))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.jsonl"
    status = main(["evaluate", "--input", str(rows), "--spec", str(spec), "--out", str(out), "--json", "--quiet"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    summary = json.loads(captured.out)
    assert summary["shout/mean"] == 1.0 and summary["leave/scored"] == 2
    assert "a metric printing to stdout 2" in captured.err
    reasons = [json.loads(line)["leave/unscored_reason"] for line in out.read_text().splitlines()]
    assert reasons == [None, "called sys.exit(0)", None]
