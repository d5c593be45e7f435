"""Reading and pairing the cases of a comparison: one run table or two response files, every
format, and every bad input named by file, row and field."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import respeval
from respeval.compare import load_cases
from respeval.io.errors import InputError


def run_rows(n: int = 4) -> list[dict]:
    rows = []
    for i in range(n):
        for system, text in (("baseline", f"answer {i}"), ("candidate", f"answer {i}" if i % 2 else f"other {i}")):
            rows.append({"id": i, "system": system, "prompt": f"q{i}", "expected": f"answer {i}", "response": text})
    return rows


def write(path: Path, rows: list[dict]) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif path.suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_one_run_table_in_every_format(tmp_path, suffix):
    path = write(tmp_path / f"responses{suffix}", run_rows())
    cases = load_cases(path, reference_field="expected")
    assert cases.ids == ["0", "1", "2", "3"]
    assert cases.baseline == ["answer 0", "answer 1", "answer 2", "answer 3"]
    assert cases.candidate == ["other 0", "answer 1", "other 2", "answer 3"]
    assert cases.references == cases.baseline and cases.prompts == ["q0", "q1", "q2", "q3"]
    assert cases.where[1] in (f"{path}:3", f"{path}:4", f"{path}:row 2")


def test_two_files_of_different_formats_join_on_the_id_as_text(tmp_path):
    rows = run_rows()
    base = write(tmp_path / "base.jsonl", [r for r in rows if r["system"] == "baseline"])
    cand_rows = [r for r in rows if r["system"] == "candidate"][::-1]  # another order
    cand = write(tmp_path / "cand.csv", cand_rows)  # ids become the text "3", "2", ...
    cases = load_cases(baseline_file=base, candidate_file=cand, reference_field="expected")
    assert cases.ids == ["0", "1", "2", "3"] and cases.candidate[0] == "other 0"
    assert cases.sources == [str(base), str(cand)]


def test_records_and_templates_pair_on_id_and_template():
    rows = []
    for template in ("t1", "t2"):
        for r in run_rows(2):
            rows.append({**r, "template": template, "response": f"{r['response']} {template}"})
    cases = load_cases(rows)
    assert cases.ids == ["0/t1", "1/t1", "0/t2", "1/t2"] and cases.paired_on == ("id", "template")
    assert cases.candidate[2] == "other 0 t2"


def test_two_templates_of_one_system_are_compared_by_the_template_column():
    rows = []
    for template, text in (("short", "a"), ("long", "b")):
        for i in range(3):
            rows.append({"id": i, "system": "gpt", "template": template, "response": f"{text}{i}"})
    cases = load_cases(rows, baseline="short", candidate="long", system_field="template")
    assert cases.paired_on == ("id", "system") and cases.baseline == ["a0", "a1", "a2"]
    assert cases.candidate == ["b0", "b1", "b2"]


def test_a_null_response_is_an_empty_response_and_is_reported():
    rows = run_rows(3)
    rows[3]["response"] = None  # the candidate produced nothing for case 1
    cases = load_cases(rows)
    assert cases.candidate[1] == "" and cases.missing == {"candidate": ["1"]}


def test_unknown_system_names_the_values_in_the_file(tmp_path):
    path = write(tmp_path / "r.jsonl", run_rows())
    with pytest.raises(InputError, match=r"no row has system 'new' \(the candidate\); the values in the file: base"):
        load_cases(path, candidate="new")


def test_a_case_one_system_lacks_is_an_error_naming_it():
    rows = run_rows(3)[:-1]
    with pytest.raises(
        InputError, match=r"1 case\(s\) have a 'baseline' response but no 'candidate' response \(first: '2'\)"
    ):
        load_cases(rows)


def test_an_id_seen_twice_names_both_rows(tmp_path):
    rows = run_rows(2)
    rows.append(dict(rows[0]))
    path = write(tmp_path / "r.jsonl", rows)
    with pytest.raises(InputError, match=rf"{path}:5: case '0' appears twice for 'baseline' \(first at {path}:1\)"):
        load_cases(path)


def test_a_run_table_given_as_one_of_two_files_says_how_to_compare_it(tmp_path):
    path = write(tmp_path / "r.jsonl", run_rows(2))
    with pytest.raises(InputError, match="--input FILE --baseline A --candidate B"):
        load_cases(baseline_file=path, candidate_file=path)


def test_missing_fields_name_file_row_and_field(tmp_path):
    rows = run_rows(2)
    del rows[2]["id"]
    path = write(tmp_path / "r.jsonl", rows)
    with pytest.raises(InputError, match=rf"{path}:3: field 'id': missing"):
        load_cases(path)
    rows = run_rows(2)
    rows[1]["expected"] = None
    rows[0]["expected"] = None
    with pytest.raises(InputError, match=r"records\[0\]: field 'expected': missing"):
        load_cases(rows, reference_field="expected")
    rows = run_rows(2)
    rows[0]["response"] = 7
    with pytest.raises(InputError, match=r"records\[0\]: field 'response': expected a string, got int"):
        load_cases(rows)


def test_references_must_agree_between_the_two_systems():
    rows = run_rows(2)
    rows[3]["expected"] = "something else"
    with pytest.raises(InputError, match=r"records\[3\]: field 'expected': differs from the other system's row"):
        load_cases(rows, reference_field="expected")


def test_argument_mistakes():
    with pytest.raises(ValueError, match="both 'a'"):
        load_cases(run_rows(), baseline="a", candidate="a")
    with pytest.raises(ValueError, match="one table"):
        load_cases(run_rows(), baseline_file=run_rows())
    with pytest.raises(ValueError, match="nothing to compare"):
        load_cases()
    with pytest.raises(TypeError, match="sequence of dicts"):
        load_cases({"id": 1})


def test_the_front_door_reads_the_same_cases(tmp_path):
    path = write(tmp_path / "r.parquet", run_rows())
    result = respeval.compare(path, metrics=["exact_match"], ref_field="expected", bootstrap=0)
    assert result.cases == 4 and result.metric("exact_match").baseline == 1.0
    assert result.metric("exact_match").candidate == 0.5
