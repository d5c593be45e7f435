"""The bulk run feeds each metric family by its declared ``inputs``: ``text``, ``json``
(JSON values as Python objects; JSON text in text columns decoded) and ``row`` (the whole
record as a dict), and turns a family's ``ChunkScores.errors`` and ``RowValueError`` into
bad rows under ``--on-error`` (recorded with the reason; never dropped silently, never a
traceback).  The families here are test-only, registered for the duration of a test."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import respeval
from respeval.cli import main
from respeval.metrics import REGISTRY, ChunkScores, MetricSpec, RowValueError


class Seen:
    """What the families were handed, by kind (checked by the tests)."""

    preds: dict[str, list] = {}
    refs: dict[str, list] = {}


class JsonOverlap:
    """``json``: the share of reference list items the prediction list contains.  A
    prediction that is not a list is a row error (ChunkScores.errors); the prediction
    ``"boom"`` makes the family raise RowValueError."""

    name = "json_overlap"
    inputs = "json"
    stat_names = ("overlap",)
    headline = ("json_overlap",)

    def prepare(self, references):
        Seen.refs["json"] = list(references)
        return references

    def score(self, prepared, predictions):
        Seen.preds.setdefault("json", []).extend(predictions)
        errors, values = {}, np.zeros(len(predictions))
        for i, (pred, ref) in enumerate(zip(predictions, prepared)):
            if pred == "boom":
                raise RowValueError(i, "the prediction says boom")
            if not isinstance(pred, list) or not isinstance(ref, list):
                errors[i] = f"expected two lists, got {type(pred).__name__} and {type(ref).__name__}"
                continue
            values[i] = sum(x in pred for x in ref) / max(len(ref), 1)
        return ChunkScores({"json_overlap": values}, values[:, None].copy(), errors)

    def corpus(self, sums, rows):
        return {"json_overlap": np.asarray(sums)[..., 0] / np.maximum(rows, 1)}

    def signature(self):
        return "json_overlap|test"


class FieldCount:
    """``row``: the number of fields of the whole record (and the ``bonus`` field, if any)."""

    name = "field_count"
    inputs = "row"
    stat_names = ("fields",)
    headline = ("field_count",)

    def prepare(self, rows):
        return None

    def score(self, prepared, rows):
        Seen.preds.setdefault("row", []).extend(rows)
        values = np.array([len(r) + float(r.get("bonus", 0)) for r in rows], dtype=np.float64)
        return ChunkScores({"field_count": values}, values[:, None].copy())

    def corpus(self, sums, rows):
        return {"field_count": np.asarray(sums)[..., 0] / np.maximum(rows, 1)}

    def signature(self):
        return "field_count|test"


@pytest.fixture(autouse=True)
def test_families(monkeypatch):
    specs = REGISTRY._load()  # test-only metrics, gone after the test
    monkeypatch.setitem(
        specs,
        "json_overlap",
        MetricSpec("json_overlap", "json_overlap", "test", lambda n, o: JsonOverlap(), inputs="json"),
    )
    monkeypatch.setitem(
        specs, "field_count", MetricSpec("field_count", "field_count", "test", lambda n, o: FieldCount(), inputs="row")
    )
    Seen.preds, Seen.refs = {}, {}


PREDS = [["a", "b"], ["c"], ["a", "x", "y"]]
REFS = [["a", "b", "c"], ["c"], ["z"]]
WANT = [2 / 3, 1.0, 0.0]


def run(capsys, *args: str) -> tuple[int, dict | None, str]:
    capsys.readouterr()
    code = main(["score", *args, "--json", "--quiet", "--bootstrap", "0"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


def _files(tmp_path: Path, fmt: str) -> list[str]:
    """The same predictions and references as the format holds JSON: nested values or JSON text."""
    if fmt == "jsonl":
        path = tmp_path / "p.jsonl"
        path.write_text(
            "".join(
                json.dumps({"response": p, "reference": r, "id": i}) + "\n" for i, (p, r) in enumerate(zip(PREDS, REFS))
            )
        )
        return ["--pred", str(path)]
    if fmt == "csv":
        path = tmp_path / "p.csv"
        lines = ["response,reference"] + [
            f'"{json.dumps(p).replace(chr(34), 2 * chr(34))}","{json.dumps(r).replace(chr(34), 2 * chr(34))}"'
            for p, r in zip(PREDS, REFS)
        ]
        path.write_text("\n".join(lines) + "\n")
        return ["--pred", str(path)]
    if fmt == "text":
        pred, ref = tmp_path / "p.txt", tmp_path / "r.txt"
        pred.write_text("".join(json.dumps(p) + "\n" for p in PREDS))
        ref.write_text("".join(json.dumps(r) + "\n" for r in REFS))
        return ["--pred", str(pred), "--ref", str(ref)]
    if fmt == "parquet-nested":
        path = tmp_path / "p.parquet"
        pq.write_table(pa.table({"response": PREDS, "reference": REFS}), path)
        return ["--pred", str(path)]
    path = tmp_path / "p.parquet"  # JSON text in string columns
    pq.write_table(
        pa.table({"response": [json.dumps(p) for p in PREDS], "reference": [json.dumps(r) for r in REFS]}), path
    )
    return ["--pred", str(path)]


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "text", "parquet-nested", "parquet-text"])
def test_json_families_get_python_objects_from_every_format(tmp_path, capsys, fmt):
    out = tmp_path / "rows.jsonl"
    code, summary, err = run(capsys, *_files(tmp_path, fmt), "--metrics", "json_overlap", "--out", str(out))
    assert code == 0, err
    assert Seen.preds["json"] == PREDS and Seen.refs["json"] == REFS
    assert [r["json_overlap"] for r in map(json.loads, out.read_text().splitlines())] == WANT
    assert summary["systems"][0]["values"]["json_overlap"] == pytest.approx(sum(WANT) / 3, abs=1e-15)


def test_json_and_text_families_in_one_run(tmp_path, capsys):
    """A text family checks its own inputs when the fields are read raw for a json family."""
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps({"response": '["a"]', "reference": '["a"]'})
        + "\n"
        + json.dumps({"response": ["a"], "reference": ["a"]})
        + "\n"
    )
    code, summary, err = run(
        capsys,
        "--pred",
        str(path),
        "--metrics",
        "rouge1,json_overlap",
        "--on-error",
        "record",
        "--errors",
        str(tmp_path / "e.jsonl"),
    )
    assert code == 0, err
    assert summary["rows_scored"] == 0 and summary["rows_failed"] == 2
    reasons = [json.loads(x)["reason"] for x in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert reasons[0].endswith("json_overlap: expected two lists, got str and str")  # JSONL strings stay strings
    assert reasons[1].endswith(":2: field 'response': expected a string, got list")  # rouge needs text


@pytest.mark.parametrize("on_error", ["fail", "skip", "record"])
def test_bad_json_text_and_family_errors_become_bad_rows(tmp_path, capsys, on_error):
    path = tmp_path / "p.csv"
    path.write_text(
        'response,reference\n"[""a""]","[""a""]"\nnot json,"[1]"\n"""boom""","[1]"\n"{""k"": 1}","[1]"\n"[""q""]","[""q"", ""r""]"\n'
    )
    errors = tmp_path / "e.jsonl"
    out = tmp_path / "rows.jsonl"
    args = ["--pred", str(path), "--metrics", "json_overlap", "--on-error", on_error, "--out", str(out)]
    code, summary, err = run(capsys, *args, *(["--errors", str(errors)] if on_error == "record" else []))
    if on_error == "fail":
        assert code == 1 and f"{path}:3: field 'response': not JSON text: Expecting value (column 1)" in err
        assert "Traceback" not in err
        return
    assert code == 0, err
    assert (summary["rows_scored"], summary["rows_failed"], summary["rows_total"]) == (2, 3, 5)
    assert [r["row"] for r in map(json.loads, out.read_text().splitlines())] == [0, 4]
    assert summary["systems"][0]["values"]["json_overlap"] == 0.75  # (1 + 1/2) / 2: bad rows are out of the sums
    if on_error == "record":
        got = [json.loads(x) for x in errors.read_text().splitlines()]
        assert [(e["record"], e["line"]) for e in got] == [(1, 3), (2, 4), (3, 5)]
        assert got[0]["field"] == "response" and "not JSON text" in got[0]["reason"]
        assert got[1]["reason"] == f"{path}:4: json_overlap: the prediction says boom"
        assert got[2]["reason"] == f"{path}:5: json_overlap: expected two lists, got dict and list"
    else:
        assert not errors.exists()


def test_row_families_get_the_whole_record(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    rows = [{"response": "a", "reference": "b", "bonus": 2, "meta": {"k": [1]}}, {"response": "c", "reference": "d"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, summary, err = run(capsys, "--pred", str(path), "--metrics", "field_count,rouge1")
    assert code == 0, err
    assert Seen.preds["row"] == rows
    assert summary["systems"][0]["values"]["field_count"] == ((4 + 2) + 2) / 2
    table = tmp_path / "p.parquet"
    pq.write_table(pa.Table.from_pylist([{"response": "a", "reference": "b", "n": 1}]), table)
    Seen.preds = {}
    code, summary, err = run(capsys, "--pred", str(table), "--metrics", "field_count")
    assert code == 0, err
    assert Seen.preds["row"] == [{"response": "a", "reference": "b", "n": 1}]


def test_score_table_stops_at_a_row_a_family_refuses(tmp_path):
    """In memory there is no errors file: the bad row is named, not dropped."""
    from respeval.io import InputError

    table = pa.table({"response": ['["a"]', '"boom"'], "reference": ['["a"]', '["a"]']})  # JSON text
    with pytest.raises(InputError, match=r"table:row 1: json_overlap: the prediction says boom"):
        respeval.score_table(table, metrics=["json_overlap"], bootstrap=0)
    rows, summary = respeval.score_table(table.slice(0, 1), metrics=["json_overlap"], bootstrap=0)
    assert rows.column("json_overlap").to_pylist() == [1.0] and summary.rows_scored == 1


def test_score_table_refuses_a_struct_naming_a_field_twice(tmp_path):
    """The in-memory path names the table, the column and the repeated field, as the
    Parquet reader does (pyarrow alone says only "duplicate field names")."""
    from respeval.io import InputError

    args = pa.StructArray.from_arrays(
        [pa.array([1]), pa.array(["x"])], fields=[pa.field("a", pa.int64()), pa.field("a", pa.string())]
    )
    calls = pa.StructArray.from_arrays([pa.array(["f"]), args], names=["tool_name", "tool_input"])
    column = pa.ListArray.from_arrays(pa.array([0, 1], pa.int32()), calls)
    table = pa.table({"response": column, "reference": column})
    with pytest.raises(InputError, match=r"table: column 'response' cannot be read: its struct at \[\]\.tool_input"):
        respeval.score_table(table, metrics=["trajectory_exact_match"], bootstrap=0)
