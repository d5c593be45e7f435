"""A growing source: files that appear and files appended to, read step by step, give the
windows one read of the finished source gives; the command follows the source until
SIGINT; with --scrub-pii the judge never sees the PII the traces carried."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is in the test extra")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common", reason="the OTLP encoder is in the test extra")

from _helpers import monitor_traffic as traffic  # noqa: E402
from respeval.evaluate.spec import load_spec  # noqa: E402
from respeval.judge.specs import load_model  # noqa: E402
from respeval.monitor import Judge, Monitor, config_from_spec  # noqa: E402

TESTS = Path(__file__).resolve().parents[1]


def _monitor(root: Path, source: Path, store: str) -> Monitor:
    spec = load_spec(root / "spec.yaml", sections=("monitor",))
    config = config_from_spec(spec["monitor"], base=root)
    return Monitor([str(source)], str(root / store), config, spec["metrics"], judge=Judge(load_model(spec["model"])))


def _results(m: Monitor) -> list[dict]:
    return [w for _, _, w in m.store.windows()]


def test_a_source_that_grows_gives_the_windows_of_the_finished_source(tmp_path):
    made = traffic.write(tmp_path / "all", windows=6, per_window=60, drop_at=4, seed=5)
    traffic.spec(tmp_path, traffic.SPEC.replace("min_rows: 20", "min_rows: 10"))
    with _monitor(tmp_path, tmp_path / "all", "whole.sqlite") as m:
        m.step(drain=True)
        whole = _results(m)
    assert [w["status"] for w in whole] == ["reference", "ok", "ok", "ok", "regressed", "regressed"]
    live = tmp_path / "live"
    live.mkdir()
    with _monitor(tmp_path, live, "live.sqlite") as m:
        m.step()  # nothing there yet
        for path in made.files:
            target = live / path.name
            lines = path.read_text().splitlines(keepends=True)
            # the collector writes a line at a time, half a line at some moments
            with open(target, "w") as fh:
                fh.write(lines[0][: len(lines[0]) // 2])
            m.step()
            with open(target, "a") as fh:
                fh.write(lines[0][len(lines[0]) // 2 :])
                fh.writelines(lines[1:])
            m.step()
        scored_before_drain = len(_results(m))
        m.step(drain=True)
        live_results = _results(m)
    assert scored_before_drain == 5  # the last window stays open until the source is drained
    assert live_results == whole


def test_the_command_follows_the_source_until_interrupted(tmp_path):
    made = traffic.write(tmp_path / "all", windows=4, per_window=40, seed=2)
    spec = traffic.spec(tmp_path, traffic.SPEC.replace("min_rows: 20", "min_rows: 10"))
    live = tmp_path / "live"
    live.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    store = tmp_path / "m.sqlite"
    cmd = [
        sys.executable, "-m", "respeval", "monitor", "--source", str(live), "--spec", str(spec), "--store", str(store),
        "--poll", "0.2s", "--quiet",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for path in made.files:
            shutil.copy(path, live / path.name)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the first three windows are scored
            if store.exists() and _count(store) >= 3:
                break
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert _count(store) == 3 and "3 windows scored" in err


def _count(store: Path) -> int:
    import sqlite3

    db = sqlite3.connect(store)
    try:
        return db.execute("SELECT COUNT(*) FROM windows").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        db.close()


SEEN: list[str] = []


def test_with_pii_scrubbed_the_judge_sees_placeholders(tmp_path, monkeypatch):
    made = traffic.write(tmp_path / "src", windows=2, per_window=30, seed=4)
    # plant an email in every answer the judge will see (the long answers reach the judge)
    for path in made.files:
        text = path.read_text().replace("I am quite sure about", "write to jane.doe@example.com about")
        path.write_text(text)
    traffic.spec(tmp_path, traffic.SPEC.replace("min_rows: 20", "min_rows: 5"))
    spec = load_spec(tmp_path / "spec.yaml", sections=("monitor",))
    config = config_from_spec(spec["monitor"], base=tmp_path, overrides={"scrub_pii": True, "pii_key": b"k" * 32})
    from respeval.judge.models.callables import CallableModel

    def judge(request):
        SEEN.append(request.messages[-1].content)
        return traffic.judge(request)

    with Monitor(
        [str(tmp_path / "src")], str(tmp_path / "m.sqlite"), config, spec["metrics"], judge=Judge(CallableModel(judge))
    ) as m:
        m.step(drain=True)
        windows = _results(m)
    assert SEEN and not any("jane.doe@example.com" in s for s in SEEN)
    assert any("[EMAIL_" in s for s in SEEN)
    # the references were found by the traces' own prompts (looked up before scrubbing)
    assert all(w["gate"]["rows"] == w["sampled"] for w in windows)
    assert "jane.doe" not in json.dumps(windows)
