"""Acceptance 4 (checkpoint): SIGKILL at random moments (a real SIGKILL, no cleanup) while the
monitor reads and scores, then rerun until it finishes: the store equals an uninterrupted
run's, every trace is scored once and none is skipped."""

from __future__ import annotations

import random
import sqlite3

import pytest

pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is in the test extra")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common", reason="the OTLP encoder is in the test extra")

from _helpers import kill  # noqa: E402
from _helpers import monitor_traffic as traffic  # noqa: E402
from respeval.cli import main  # noqa: E402

SPEC = traffic.SPEC.replace("min_rows: 20", "min_rows: 10")
# moments: inside an ingest transaction, inside a window's transaction, between the gate and
# the metrics of a window, while the judge is called
TARGETS = (
    "respeval.monitor.store.Store.add_records",
    "respeval.monitor.store.Store.finish_window",
    "respeval.monitor.store.Store.write_file",
    "respeval.monitor.score.run_gate",
    "respeval.evaluate.evaluate",
)


def _decided(store):
    """Every table a run decides (not ``runs``, what each invocation spent)."""
    db = sqlite3.connect(store)
    try:
        out = {}
        for table, order in (
            ("files", "path"),
            ("counters", "key"),
            ("traces", "trace_id"),
            ("windows", "window"),
            ("bad", "id"),
            ("pending", "trace_id"),
        ):
            out[table] = db.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()  # noqa: S608
        out["records"] = db.execute("SELECT trace_id, data FROM records ORDER BY id").fetchall()
        return out
    finally:
        db.close()


def test_sigkill_at_random_moments_then_rerun_equals_an_uninterrupted_run(tmp_path):
    src = tmp_path / "src"
    made = traffic.write(src, windows=12, per_window=40, drop_at=7, seed=11, requests_per_file=4)
    spec = traffic.spec(tmp_path, SPEC)
    sent = {t for ids in made.traces.values() for t in ids}

    def argv(store):
        return [
            "monitor", "--source", str(src), "--spec", str(spec), "--store", str(store), "--drain", "--quiet",
            "--fail-on", "never",
        ]  # fmt: skip

    whole = tmp_path / "whole.sqlite"
    assert main(argv(whole)) == 0
    expected = _decided(whole)
    assert len(expected["windows"]) == 12 and not expected["pending"] and not expected["records"]
    assert {row[0] for row in expected["traces"]} == sent  # none skipped

    counts = kill.count_calls(argv(tmp_path / "count.sqlite"), TARGETS, cwd=tmp_path)
    assert all(counts[t] > 0 for t in TARGETS), counts
    rng = random.Random(20260531)
    store = tmp_path / "killed.sqlite"
    kills = 0
    moments = []
    for attempt in range(12):
        if attempt % 3 == 2:  # a moment nobody chose: a timer
            moment: dict = {"kill_after": rng.uniform(0.05, 1.5)}
        else:
            target = rng.choice(TARGETS)
            moment = {"kill_at": (target, rng.randint(1, counts[target]))}
        moments.append(moment)
        code, output = kill.run(argv(store), cwd=tmp_path, **moment)
        if code == -9:
            kills += 1
            continue
        assert code == 0, output
        break
    else:
        code, output = kill.run(argv(store), cwd=tmp_path)
        assert code == 0, output
    assert kills >= 3, moments
    got = _decided(store)
    for table in expected:
        assert got[table] == expected[table], (table, moments)
    # every trace in exactly one window, once (the primary key), and none of the sent left out
    ids = [row[0] for row in got["traces"]]
    assert len(ids) == len(set(ids)) == len(sent)
    # a rerun over the finished store scores nothing again
    code, _ = kill.run(argv(store), cwd=tmp_path)
    assert code == 0 and _decided(store) == expected
