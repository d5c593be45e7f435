"""The dataset build: filters, near-duplicate removal, the outputs, the command line, and
memory that does not grow with the input."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from _helpers import trace_corpus
from respeval import traces
from respeval.cli import main
from respeval.traces.dedupe import NearDuplicates
from respeval.traces.sampling import Sampling


def _chat(
    trace_id, user, answer="ok", model="gpt-4o-mini", service="svc", created=1_746_000_000, error=None, route=None
):
    line = {
        "trace_id": trace_id,
        "service": service,
        "request": {"model": model, "messages": [{"role": "user", "content": user}]},
        "response": {
            "created": created,
            "model": model,
            "choices": [{"message": {"role": "assistant", "content": answer}}],
        },
    }
    if error:
        line["error"] = error
    if route:
        line["route"] = route
    return line


def _write(path, lines):
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_near_duplicates(impl):
    index = NearDuplicates(implementation=impl)
    base = "please book me a quiet hotel room near the central station in lisbon for three nights in may"
    texts = [
        base,
        base + " please",  # one word more: Jaccard of 3-shingles 17/18
        base.replace("lisbon", "porto"),  # three shingles of 18 differ
        "what is the weather tomorrow in oslo and should i take an umbrella with me",
        "",
        "",
        base.upper(),  # case does not matter
    ]
    assert index.keep(texts) == [True, False, True, True, True, True, False]
    assert (index.dropped, index.without_text) == (2, 2)
    assert index.keep([base + " please"]) == [False]  # across batches


def test_near_duplicates_in_a_build_keep_the_first_in_output_order(tmp_path):
    lines = [_chat(f"t{i}", f"refund order number {i % 3} please, it arrived broken and late") for i in range(30)]
    path = _write(tmp_path / "chat.jsonl", lines)
    out = tmp_path / "out.jsonl"
    report = traces.from_traces(
        [str(path)], out=str(out), options=traces.Options(dedupe=True, sampling=Sampling(seed=2))
    )
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert report.near_duplicates == 27 and len(rows) == 3
    everything = [c.trace_id for c in traces.read_cases([str(path)], seed=2)]
    firsts = {}
    for t in everything:
        firsts.setdefault(int(t[1:]) % 3, t)
    assert [r["trace_id"] for r in rows] == [t for t in everything if t in set(firsts.values())]
    assert report.dedupe["threshold"] == 0.8 and report.dedupe["num_perm"] == 128


def test_filters(tmp_path):
    lines = [
        _chat("a", "x", service="checkout", created=1_746_000_000, route="/buy"),
        _chat("b", "y", service="search", created=1_746_000_100, model="gpt-4o"),
        _chat("c", "z", service="checkout", created=1_746_000_200, error={"type": "timeout", "message": "slow"}),
    ]
    path = _write(tmp_path / "chat.jsonl", lines)

    def kept(**f):
        out = tmp_path / "f.jsonl"
        traces.from_traces([str(path)], out=str(out), options=traces.Options(filters=traces.Filters(**f)))
        return sorted(json.loads(x)["trace_id"] for x in out.read_text().splitlines())

    assert kept() == ["a", "b", "c"]
    assert kept(services=frozenset({"checkout"})) == ["a", "c"]
    assert kept(models=frozenset({"gpt-4o"})) == ["b"]
    assert kept(routes=frozenset({"/buy"})) == ["a"]
    assert kept(errors="only") == ["c"] and kept(errors="exclude") == ["a", "b"]
    assert kept(since_ns=1_746_000_100 * 10**9) == ["b", "c"]
    assert kept(since_ns=1_746_000_100 * 10**9, until_ns=1_746_000_200 * 10**9) == ["b"]


def test_outputs_parquet_csv_sheet(tmp_path):
    import pyarrow.parquet as pq

    lines = [_chat(f"t{i}", f"question {i}", answer=f"answer {i}") for i in range(5)]
    lines[0]["response"]["choices"][0]["message"] = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": '{"a": 1}'}}],
    }
    path = _write(tmp_path / "chat.jsonl", lines)
    pq_out, csv_out, sheet = tmp_path / "o.parquet", tmp_path / "o.csv", tmp_path / "sheet.csv"
    traces.from_traces([str(path)], out=str(pq_out), label_sheet=str(sheet))
    traces.from_traces([str(path)], out=str(csv_out))
    table = pq.read_table(pq_out)
    assert table.column_names == list(traces.CASE_FIELDS)
    assert (
        str(table.schema.field("input_tokens").type) == "int64"
        and str(table.schema.field("latency_s").type) == "double"
    )
    rows = {r["trace_id"]: r for r in table.to_pylist()}
    assert json.loads(rows["t0"]["tool_calls"]) == [{"name": "f", "arguments": {"a": 1}}]
    with open(csv_out, newline="") as fh:
        assert [r["trace_id"] for r in csv.DictReader(fh)] == [r["trace_id"] for r in table.to_pylist()]
    text = sheet.read_text(encoding="utf-8-sig")
    with open(sheet, newline="", encoding="utf-8-sig") as fh:
        sheet_rows = list(csv.DictReader(fh))
    assert list(sheet_rows[0]) == [
        "trace_id",
        "start_time",
        "service",
        "model",
        "prompt",
        "response",
        "tool_calls",
        "error",
        "latency_s",
        "feedback",
        "label",
        "notes",
    ]
    assert {r["trace_id"]: r["tool_calls"] for r in sheet_rows}["t0"] == 'f {"a":1}'
    assert all(r["label"] == "" for r in sheet_rows) and "question 3" in text
    empty = tmp_path / "none.parquet"
    report = traces.from_traces([str(path)], out=str(empty), options=traces.Options(sampling=Sampling(rate=0.0)))
    assert report.written == 0 and pq.read_table(empty).num_rows == 0


def test_cli_end_to_end(tmp_path, capsys):
    spans = tmp_path / "spans.jsonl"
    trace_corpus.write(spans, 600, seed=3)
    out = tmp_path / "out"
    args = ["dataset", "from-traces", "--input", str(spans), "--sample-rate", "0.5", "--seed", "7", "--all-failures",
            "--dedupe", "--scrub-pii", "--out", str(out / "cases.jsonl"), "--adk-evalset", str(out / "r.evalset.json"),
            "--label-sheet", str(out / "sheet.csv"), "--report", str(out / "report.json"), "--quiet"]  # fmt: skip
    assert main(args) == 0
    err = capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    assert f"{report['written']:,} cases written" in err and "respeval dataset from-traces:" in err
    assert report["inputs"]["spans"] >= 600 and report["written"] == len((out / "cases.jsonl").read_text().splitlines())
    assert report["adk_cases"] == report["written"] and report["sheet_rows"] == report["written"]
    assert report["sampling"]["seed"] == 7 and report["pii_key"].startswith("random")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--input", "IN"], "say where the cases go"),
        (["--input", "IN", "--out", "o.jsonl", "--errors", "e.jsonl"], "add --on-error record"),
        (["--input", "IN", "--out", "o.jsonl", "--per-stratum", "3"], "--per-stratum needs --stratify"),
        (["--input", "IN", "--out", "o.jsonl", "--stratify", "colour"], "not a case field"),
        (["--input", "IN", "--out", "o.txt"], "cannot infer the format"),
        (["--input", "IN", "--adk-evalset", "IN"], "same file"),
        (["--input", "missing.jsonl", "--out", "o.jsonl"], "no such file"),
        (["--input", "IN", "--out", "o.jsonl", "--since", "yesterday"], "ISO 8601"),
        (["--input", "IN", "--out", "o.jsonl", "--sample-rate", "1.5"], "[0, 1]"),
    ],
)
def test_cli_refuses_with_a_message(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "IN", [_chat("a", "x")])
    try:
        code = main(["dataset", "from-traces", *argv])
    except SystemExit as exc:  # a usage error (argparse)
        code = exc.code
    assert code == 1
    assert message in capsys.readouterr().err


def test_cli_refuses_an_output_inside_an_input_directory(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    _write(tmp_path / "in" / "a.jsonl", [_chat("a", "x")])
    assert (
        main(["dataset", "from-traces", "--input", str(tmp_path / "in"), "--out", str(tmp_path / "in" / "cases.jsonl")])
        == 1
    )
    assert "inside the input directory" in capsys.readouterr().err


def test_cli_records_bad_records_and_replaces_outputs_only_when_complete(tmp_path, capsys):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(_chat("a", "x")) + "\n{broken\n")
    out = tmp_path / "cases.jsonl"
    out.write_text("previous run\n")
    assert main(["dataset", "from-traces", "--input", str(path), "--out", str(out)]) == 1
    assert f"{path}:2: malformed JSON" in capsys.readouterr().err
    assert out.read_text() == "previous run\n"  # a failed run leaves the old output as it was
    assert main(["dataset", "from-traces", "--input", str(path), "--out", str(out), "--on-error", "record"]) == 0
    bad = [json.loads(x) for x in (tmp_path / "cases.jsonl.errors.jsonl").read_text().splitlines()]
    assert [(b["line"], b["field"]) for b in bad] == [(2, None)]
    assert [json.loads(x)["trace_id"] for x in out.read_text().splitlines()] == ["a"]


def test_help_lists_the_command(capsys):
    with pytest.raises(SystemExit):
        main(["dataset", "from-traces", "--help"])
    text = capsys.readouterr().out
    assert "--sample-rate" in text and "examples:" in text and "--adk-evalset" in text


_PEAK = r"""
import sys, tracemalloc, json
sys.path.insert(0, {tests!r})
from respeval.traces import spill
spill.BUCKET_BYTES = 1 << 16  # small buckets: the flat-memory path at a small scale
from respeval import traces
from _helpers import trace_corpus
path = {path!r}
trace_corpus.write(path, {n}, seed=1)
tracemalloc.start()
report = traces.from_traces([path], out={out!r}, options=traces.Options(scrub_pii=True, pii_key=b"k" * 16))
print(json.dumps([tracemalloc.get_traced_memory()[1], report.written, spill.bucket_bits({n} * 900)]))
"""


def test_memory_does_not_grow_with_the_input(tmp_path):
    """Peak traced memory of a build over 3,000 and 12,000 spans (buckets of 64 KB, so both
    use many): the larger input may not need much more.  Counts, not times."""
    from pathlib import Path

    tests = str(Path(__file__).resolve().parents[1])
    peaks = []
    for n in (3000, 12000):
        code = _PEAK.format(tests=tests, path=str(tmp_path / f"s{n}.jsonl"), out=str(tmp_path / f"o{n}.jsonl"), n=n)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        peak, written, bits = json.loads(done.stdout)
        assert written > n // 6 and bits > 3
        peaks.append(peak)
    small, large = peaks
    assert large < 1.5 * small, peaks  # four times the input, far less than four times the memory
