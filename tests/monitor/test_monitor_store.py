"""The monitor's checkpoint and windows: a growing file is read once, whole lines only; a
rotated or truncated file from the start; late records are counted, never scored twice; a
JSON document once it parses; bad records named with file and line; sampling as
``dataset from-traces`` samples; a store of other settings is refused."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from respeval import traces
from respeval.monitor import Monitor, MonitorConfig, StoreError, config_from_spec, parse_duration
from respeval.traces.errors import TraceInputError
from respeval.traces.sampling import Sampling

S = 10**9
T0 = 1_746_100_800 * S  # an hour boundary


def _any(value):
    return {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}


def span(trace: int, index: int, start_s: float, end_s: float, *, text: str = "Paris.", root: bool = True) -> dict:
    trace_id = f"{trace:032x}"
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    if root:
        attrs["gen_ai.input.messages"] = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Q?"}]}])
        attrs["gen_ai.output.messages"] = json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
        )
    return {
        "traceId": trace_id,
        "spanId": f"{trace * 100 + index:016x}",
        "parentSpanId": "" if root else f"{trace * 100:016x}",
        "name": "chat m",
        "kind": 3,
        "startTimeUnixNano": str(T0 + int(start_s * S)),
        "endTimeUnixNano": str(T0 + int(end_s * S)),
        "attributes": [{"key": k, "value": _any(v)} for k, v in attrs.items()],
    }


def line(*spans: dict) -> str:
    request = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
                "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}],
            }
        ]
    }
    return json.dumps(request) + "\n"


def _config(**kw) -> MonitorConfig:
    kw.setdefault("window", 60.0)
    kw.setdefault("lateness", 0.0)
    kw.setdefault("min_rows", 2)
    return MonitorConfig(**kw)


def _monitor(tmp_path, config=None, metrics=("json_valid",), source="src"):
    return Monitor([str(tmp_path / source)], str(tmp_path / "m.sqlite"), config or _config(), list(metrics))


def _table(tmp_path, sql):
    db = sqlite3.connect(tmp_path / "m.sqlite")
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def test_a_growing_file_is_read_once_whole_lines_only(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    path = src / "spans.jsonl"
    first, second, third = line(span(1, 0, 1, 2)), line(span(2, 0, 3, 4)), line(span(3, 0, 70, 71))
    path.write_text(first + second + third[:40])  # the third line is still being written
    with _monitor(tmp_path) as m:
        got = m.reader.poll()
        assert got.lines == 2 and got.records == 2
        (offset,) = _table(tmp_path, "SELECT offset FROM files")[0]
        assert offset == len((first + second).encode())
        assert m.reader.poll().lines == 0  # nothing new: nothing read twice
        with open(path, "a") as fh:
            fh.write(third[40:])
        assert m.reader.poll().records == 1
        m.step()
        # window 0 closed when trace 3 (window 1) ended past its end
        windows = [w for _, _, w in m.store.windows()]
        assert [w["traces"] for w in windows] == [2]
    assert _table(tmp_path, "SELECT COUNT(*) FROM records") == [(1,)]  # trace 3's, still open


def test_late_records_are_counted_and_a_trace_is_scored_once(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    path = src / "spans.jsonl"
    path.write_text(line(span(1, 0, 1, 2)) + line(span(2, 0, 61, 62)))
    with _monitor(tmp_path) as m:
        m.step()
        assert [w["traces"] for _, _, w in m.store.windows()] == [1]
        with open(path, "a") as fh:
            fh.write(line(span(1, 1, 1.5, 1.8, root=False)))  # a late span of a scored trace
            fh.write(line(span(3, 0, 5, 6)))  # a new trace of the closed window
            fh.write(line(span(2, 1, 61.5, 61.6, root=False)))  # the open window's trace: fine
        got = m.reader.poll()
        assert (got.late, got.records) == (2, 1)
        assert m.store.counter("late_records") == 2
    traced = {t for (t,) in _table(tmp_path, "SELECT trace_id FROM traces")}
    assert traced == {f"{1:032x}"}


def test_a_rotated_or_truncated_file_is_read_from_the_start(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    path = src / "spans.jsonl"
    path.write_text(line(span(1, 0, 1, 2)) + line(span(2, 0, 3, 4)))
    with _monitor(tmp_path) as m:
        m.reader.poll()
        os.replace(src / "spans.jsonl", tmp_path / "rotated.jsonl")  # rotated away
        path.write_text(line(span(4, 0, 5, 6)))  # a new file under the same name, shorter
        got = m.reader.poll()
        assert got.restarted == [str(path)] and got.records == 1
    assert _table(tmp_path, "SELECT COUNT(DISTINCT trace_id) FROM pending") == [(3,)]


def test_a_json_document_is_read_once_it_parses(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    doc = json.dumps(json.loads(line(span(1, 0, 1, 2), span(2, 0, 3, 4))), indent=2)
    (src / "payload.json").write_text(doc[: len(doc) // 2])  # still being written
    with _monitor(tmp_path) as m:
        got = m.reader.poll()
        assert got.incomplete == [str(src / "payload.json")] and got.records == 0 and got.bad == 0
        (src / "payload.json").write_text(doc)
        assert m.reader.poll().records == 2
        assert m.reader.poll().records == 0  # unchanged: not read again
        (src / "broken.json").write_text("{ not json")
        m.step(drain=True)  # the source is complete: a document that does not parse is bad
        assert m.store.counter("bad_records") == 1
        assert [w["traces"] for _, _, w in m.store.windows()] == [2]


def test_bad_records_are_named_with_file_and_line(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "spans.jsonl").write_text(line(span(1, 0, 1, 2)) + "{not json\n" + line(span(2, 0, 3, 4)))
    with _monitor(tmp_path, _config(on_error="record")) as m:
        assert m.reader.poll().bad == 1
        (bad,) = m.store.bad_records()
        assert bad["path"] == str(src / "spans.jsonl") and bad["line"] == 2 and "malformed JSON" in bad["reason"]
    (tmp_path / "m.sqlite").unlink()
    with _monitor(tmp_path, _config(on_error="fail")) as m:
        with pytest.raises(TraceInputError, match=r"spans.jsonl:2: malformed JSON"):
            m.reader.poll()


def test_sampling_is_the_one_of_dataset_from_traces(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    lines = [line(span(t, 0, t, t + 0.5)) for t in range(1, 59)]
    (src / "spans.jsonl").write_text("".join(lines))
    sampling = Sampling(rate=0.3, seed=9)
    with _monitor(tmp_path, _config(sampling=sampling)) as m:
        m.step(drain=True)
        (window,) = [w for _, _, w in m.store.windows()]
    kept = {t for (t,) in _table(tmp_path, "SELECT trace_id FROM traces WHERE sampled = 1")}
    out = tmp_path / "cases.jsonl"
    traces.from_traces([str(src)], out=str(out), options=traces.Options(sampling=sampling))
    want = {json.loads(r)["trace_id"] for r in out.read_text().splitlines()}
    assert kept == want and 0 < len(kept) < 58 and window["sampled"] == len(kept)
    assert m.store.counter("outside_sample") == 58 - len(kept)  # dropped as they were read


def test_a_store_of_other_settings_or_another_file_is_refused(tmp_path):
    (tmp_path / "src").mkdir()
    with _monitor(tmp_path):
        pass
    with pytest.raises(StoreError, match="changed since the store was started: the window"):
        _monitor(tmp_path, _config(window=120.0))
    with pytest.raises(StoreError, match="metric 'rougeL'"):
        _monitor(tmp_path, metrics=("json_valid", "rougeL"))
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="not a respeval monitor store"):
        Monitor([str(tmp_path / "src")], str(other), _config())


def test_durations_and_spec_errors_name_the_key():
    assert [parse_duration(x) for x in ("90", "90s", "5m", "1h", "1.5h", "1d", 30)] == [
        90,
        90,
        300,
        3600,
        5400,
        86400,
        30,
    ]
    with pytest.raises(ValueError, match="window: expected a duration"):
        config_from_spec({"window": "soon"})
    with pytest.raises(ValueError, match=r"unknown key\(s\) windows"):
        config_from_spec({"windows": "1h"})
    with pytest.raises(ValueError, match="monitor.alpha must be a number in"):
        config_from_spec({"alpha": "0.05"})
    with pytest.raises(ValueError, match="monitor.gate.lexical: unknown key"):
        config_from_spec({"gate": {"lexical": {"accept": 0.9}}})
    with pytest.raises(ValueError, match="not a case field"):
        config_from_spec({"stratify": "colour"})
    config = config_from_spec({"window": "10m", "sample_rate": 0.2, "all_failures": True}, overrides={"seed": 3})
    assert config.window == 600 and config.sampling == Sampling(rate=0.2, seed=3, keep_errors=True)
