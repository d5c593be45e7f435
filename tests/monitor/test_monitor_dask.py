"""Issue 31, point 4: the monitor's scale-out.  The decoding of the source partitioned over a
real Dask cluster (2 worker processes on 127.0.0.1, so the decoded lines cross by pickle) and
applied in order gives the store one process gives: the same records, windows, watermark,
late and bad records."""

from __future__ import annotations

import json

import pytest

distributed = pytest.importorskip("distributed", reason="dask[distributed] is in the test extra")
pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is in the test extra")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common", reason="the OTLP encoder is in the test extra")

from _helpers import monitor_traffic as traffic  # noqa: E402
from respeval.cli import main  # noqa: E402
from respeval.monitor import Monitor, config_from_spec  # noqa: E402
from respeval.monitor.ingest import decode_lines, line_slices  # noqa: E402
from respeval.traces.sources import read_appended  # noqa: E402

SPEC = traffic.SPEC.replace("min_rows: 20", "min_rows: 10")


@pytest.fixture(scope="module")
def client():
    from respeval.distributed.dask import local_cluster

    cluster = local_cluster(n_workers=2)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _decided(store):
    from test_monitor_kill import _decided as decided

    return decided(store)


def test_slices_cut_at_line_ends_and_decode_to_the_sequential_lines(tmp_path):
    path = tmp_path / "a.jsonl"
    lines = [json.dumps({"resourceSpans": []}) + "\n", "not json\n", "\n", json.dumps({"resourceSpans": []}) + "\n"]
    path.write_text("".join(lines * 50) + '{"partial": ', encoding="utf-8")
    size = path.stat().st_size
    slices = line_slices(str(path), 0, 0, size, slice_bytes=100)
    assert len(slices) > 5
    assert slices[0][0] == 0 and all(a[1] == b[0] for a, b in zip(slices, slices[1:]))  # contiguous
    assert slices[-1][1] == size - len('{"partial": ')  # the line still being written is left
    sequential_bad: list = []
    want = [(o, n, r) for o, n, r in read_appended(str(path), 0, 0, sequential_bad.append)]
    got = [line for piece in slices for line in decode_lines(str(path), *piece)]
    assert [(o, n, r) for o, n, r, _ in got] == want
    assert [b for *_, bad in got for b in bad] == sequential_bad and len(sequential_bad) == 50  # line numbers kept


def test_the_store_of_a_monitor_on_a_cluster_is_the_single_process_one(tmp_path, client):
    src = tmp_path / "src"
    traffic.write(src, windows=8, per_window=30, drop_at=5, seed=5, requests_per_file=40)
    (src / "zz-bad.jsonl").write_text('{"resourceSpans": []}\n{"resourceSpans": [}\nnot json\n', encoding="utf-8")
    spec = traffic.spec(tmp_path, SPEC)
    from respeval.evaluate.spec import load_spec

    loaded = load_spec(str(spec), sections=("monitor",))
    config = config_from_spec(loaded.get("monitor"), base=str(tmp_path), overrides={"on_error": "record"})
    stores = {}
    for name, engine in (("one", None), ("cluster", client)):
        store = tmp_path / f"{name}.sqlite"
        with Monitor([str(src)], str(store), config, loaded.get("metrics") or (), engine=engine) as m:
            m.reader.slice_bytes = 4096  # several tasks per file
            m.step(drain=True)
            assert m.report.ingest.bad == 2
        stores[name] = _decided(store)
    assert stores["cluster"] == stores["one"]
    assert len(stores["one"]["windows"]) == 8 and len(stores["one"]["bad"]) == 2


def test_the_cli_takes_the_engine_and_names_a_scheduler_without_it(tmp_path, capsys):
    src = tmp_path / "src"
    traffic.write(src, windows=3, per_window=10, drop_at=None, seed=1, requests_per_file=10)
    spec = traffic.spec(tmp_path, SPEC)
    argv = ["monitor", "--input", str(src), "--spec", str(spec), "--drain", "--quiet", "--fail-on", "never"]
    assert main([*argv, "--store", str(tmp_path / "a.sqlite"), "--scheduler", "tcp://127.0.0.1:1"]) == 1
    assert "--scheduler is the Dask scheduler of --engine dask" in capsys.readouterr().err
    assert main([*argv, "--store", str(tmp_path / "one.sqlite")]) == 0
    assert main([*argv, "--store", str(tmp_path / "dask.sqlite"), "--engine", "dask"]) == 0
    assert _decided(tmp_path / "dask.sqlite") == _decided(tmp_path / "one.sqlite")
