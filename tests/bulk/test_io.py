"""Tests for respeval.io: chunked readers with row-numbered validation, incremental writers."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from respeval.io import Chunk, InputError, ResultWriter, RowError, count_rows, read_columns


def read_all(path: Path, fields, **kwargs) -> tuple[dict[str, list], list[int], list[RowError]]:
    """Concatenate every chunk: (columns, row_numbers, errors)."""
    columns: dict[str, list] = {}
    numbers: list[int] = []
    errors: list[RowError] = []
    for chunk in read_columns(path, fields, **kwargs):
        for name, values in chunk.columns.items():
            columns.setdefault(name, []).extend(values)
        numbers.extend(chunk.row_numbers)
        errors.extend(chunk.errors)
    return columns, numbers, errors


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def write_parquet(path: Path, table: pa.Table, row_group_size: int | None = None) -> Path:
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


ROWS = [{"id": str(i), "response": f"answer {i}", "reference": f"ref {i}"} for i in range(10)]


@pytest.fixture(params=["text", "jsonl", "csv", "parquet"])
def corpus(request, tmp_path: Path) -> tuple[Path, list[str], list[int]]:
    """The same 10 responses in each format: (path, fields, expected row numbers)."""
    fmt = request.param
    if fmt == "text":
        path = tmp_path / "preds.txt"
        path.write_text("".join(r["response"] + "\n" for r in ROWS), encoding="utf-8")
        return path, ["text"], list(range(1, 11))
    if fmt == "jsonl":
        path = write_jsonl(tmp_path / "preds.jsonl", [json.dumps(r) for r in ROWS])
        return path, ["response"], list(range(1, 11))
    if fmt == "csv":
        path = tmp_path / "preds.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(ROWS[0]))
            writer.writeheader()
            writer.writerows(ROWS)
        return path, ["response"], list(range(2, 12))  # the header is line 1
    path = write_parquet(tmp_path / "preds.parquet", pa.Table.from_pylist(ROWS), row_group_size=4)
    return path, ["response"], list(range(10))


# --------------------------------------------------------------------------- round trips / chunking


def test_each_format_reads_all_rows(corpus) -> None:
    path, fields, numbers = corpus
    columns, got_numbers, errors = read_all(path, fields)
    assert columns == {fields[0]: [r["response"] for r in ROWS]}
    assert got_numbers == numbers
    assert errors == []
    assert count_rows(path) == 10


def test_chunk_size_three_keeps_row_numbers(corpus) -> None:
    path, fields, numbers = corpus
    chunks = list(read_columns(path, fields, chunk_size=3))
    assert [len(c) for c in chunks] == [3, 3, 3, 1]
    assert [(c.start_row, c.end_row) for c in chunks] == [(0, 3), (3, 6), (6, 9), (9, 10)]
    assert [n for c in chunks for n in c.row_numbers] == numbers
    assert chunks[1].columns[fields[0]] == ["answer 3", "answer 4", "answer 5"]


def test_start_row_resumes(corpus) -> None:
    path, fields, numbers = corpus
    chunks = list(read_columns(path, fields, chunk_size=3, start_row=5))
    assert [c.start_row for c in chunks] == [5, 8]
    assert [n for c in chunks for n in c.row_numbers] == numbers[5:]
    assert [v for c in chunks for v in c.columns[fields[0]]] == [f"answer {i}" for i in range(5, 10)]
    assert list(read_columns(path, fields, start_row=10)) == []
    assert list(read_columns(path, fields, start_row=99)) == []


def test_several_fields_and_all_columns(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", [json.dumps(r) for r in ROWS[:2]])
    columns, _, _ = read_all(path, ["reference", "response"])
    assert list(columns) == ["reference", "response"]
    assert columns["reference"] == ["ref 0", "ref 1"]
    pq_path = write_parquet(tmp_path / "p.parquet", pa.Table.from_pylist(ROWS[:2]))
    assert list(read_all(pq_path, None)[0]) == ["id", "response", "reference"]


def test_plain_text_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    # \r\n and \n are stripped; a lone \r stays (it is not a line ending here); empty lines
    # are valid empty texts; the last line needs no newline.
    path.write_bytes(b"a\r\nb\rc\n\nlast")
    columns, numbers, _ = read_all(path, None)
    assert columns["text"] == ["a", "b\rc", "", "last"]
    assert numbers == [1, 2, 3, 4]
    assert count_rows(path) == 4


def test_utf8_bom_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_bytes("\ufeffid,response\n1,héllo\n".encode())
    assert read_all(path, ["response"])[0] == {"response": ["héllo"]}


def test_csv_quoted_newline_spans_lines(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_bytes(b'id,response\n1,"two\r\nlines"\n2,x\n')
    columns, numbers, _ = read_all(path, ["response"], chunk_size=1)
    assert columns["response"] == ["two\r\nlines", "x"]
    assert numbers == [2, 4]  # the second record starts on line 4
    assert count_rows(path) == 2


def test_parquet_multiple_row_groups(tmp_path: Path) -> None:
    rows = [{"response": f"r{i}"} for i in range(25)]
    path = write_parquet(tmp_path / "p.parquet", pa.Table.from_pylist(rows), row_group_size=7)
    assert pq.ParquetFile(path).metadata.num_row_groups == 4
    # chunks cross row-group boundaries and keep their exact size
    chunks = list(read_columns(path, ["response"], chunk_size=5, start_row=9))
    assert [len(c) for c in chunks] == [5, 5, 5, 1]
    assert [n for c in chunks for n in c.row_numbers] == list(range(9, 25))
    assert [v for c in chunks for v in c.columns["response"]] == [f"r{i}" for i in range(9, 25)]
    assert count_rows(path) == 25


def test_parquet_large_and_dictionary_strings(tmp_path: Path) -> None:
    table = pa.table(
        {
            "big": pa.array(["a", "b"], type=pa.large_string()),
            "dict": pa.array(["x", "y"]).dictionary_encode(),
        }
    )
    path = write_parquet(tmp_path / "p.parquet", table)
    assert read_all(path, ["big", "dict"])[0] == {"big": ["a", "b"], "dict": ["x", "y"]}


def test_list_fields_for_references(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "refs.jsonl",
        ['{"refs": ["a", "b"]}', '{"refs": "c"}', '{"refs": []}', '{"refs": ["d", 3]}'],
    )
    columns, numbers, errors = read_all(path, ["refs"], allow_list_fields=["refs"], on_error="skip")
    assert columns["refs"] == [["a", "b"], "c"]
    assert numbers == [1, 2]
    assert [str(e) for e in errors] == [
        f"{path}:3: field 'refs': expected a non-empty list of strings, got an empty list",
        f"{path}:4: field 'refs': list item 1: expected a string, got int",
    ]
    # without allow_list_fields a list is an error
    with pytest.raises(InputError, match=r":1: field 'refs': expected a string, got list"):
        read_all(path, ["refs"])

    table = pa.table({"refs": pa.array([["a"], [], None], type=pa.list_(pa.string()))})
    pq_path = write_parquet(tmp_path / "refs.parquet", table)
    columns, numbers, errors = read_all(pq_path, ["refs"], allow_list_fields=["refs"], on_error="record")
    assert columns["refs"] == [["a"]]
    assert [(e.line, e.reason) for e in errors] == [
        (1, "expected a non-empty list of strings, got an empty list"),
        (2, "expected a string or a non-empty list of strings, got null"),
    ]


# --------------------------------------------------------------------------- bad input


def bad_jsonl(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "preds.jsonl",
        [
            '{"response": "ok 1"}',  # 1
            '{"response": 17}',  # 2 non-str
            '{"response": null}',  # 3 null
            '{"response": "ok 4"',  # 4 malformed
            "",  # 5 empty line
            '{"other": "x"}',  # 6 missing field
            '["response"]',  # 7 not an object
            '{"response": ["a"]}',  # 8 list
            '{"response": "ok 9"}',  # 9
        ],
    )


JSONL_ERRORS = [
    (2, "response", "expected a string, got int"),
    (3, "response", "expected a string, got null"),
    (4, None, "malformed JSON: Expecting ',' delimiter (column 20)"),
    (5, None, "empty line"),
    (6, "response", "missing; the record's fields: 'other'"),
    (7, None, "expected a JSON object, got list"),
    (8, "response", "expected a string, got list"),
]


def test_jsonl_errors_fail_with_location(tmp_path: Path) -> None:
    path = bad_jsonl(tmp_path)
    with pytest.raises(InputError) as info:
        read_all(path, ["response"])
    assert str(info.value) == f"{path}:2: field 'response': expected a string, got int"
    assert info.value.row_error == RowError(str(path), 2, "response", "expected a string, got int")
    # each later error is the first one once the rows before it are skipped
    for line, field, reason in JSONL_ERRORS[1:]:
        with pytest.raises(InputError) as info:
            read_all(path, ["response"], start_row=line - 1)
        where = f"field {field!r}: " if field else ""
        assert str(info.value) == f"{path}:{line}: {where}{reason}"


@pytest.mark.parametrize("mode", ["skip", "record"])
def test_jsonl_errors_skip_collects(tmp_path: Path, mode: str) -> None:
    path = bad_jsonl(tmp_path)
    chunks = list(read_columns(path, ["response"], on_error=mode, chunk_size=4))
    assert [(c.start_row, c.end_row) for c in chunks] == [(0, 4), (4, 8), (8, 9)]
    assert [c.row_numbers for c in chunks] == [[1], [], [9]]
    assert [v for c in chunks for v in c.columns["response"]] == ["ok 1", "ok 9"]
    errors = [e for c in chunks for e in c.errors]
    assert [(e.line, e.field, e.reason) for e in errors] == JSONL_ERRORS
    assert all(e.path == str(path) for e in errors)


def test_invalid_utf8_text_and_jsonl(tmp_path: Path) -> None:
    text = tmp_path / "p.txt"
    text.write_bytes(b"fine\nbad \xff byte\nfine\n")
    with pytest.raises(InputError, match=r"p\.txt:2: invalid UTF-8: byte 0xff at offset 4$"):
        read_all(text, None)
    columns, numbers, errors = read_all(text, None, on_error="skip")
    assert (columns["text"], numbers, [e.line for e in errors]) == (["fine", "fine"], [1, 3], [2])

    jsonl = tmp_path / "p.jsonl"
    jsonl.write_bytes(b'{"r": "a"}\n{"r": "\xc3("}\n')
    with pytest.raises(InputError, match=r"p\.jsonl:2: invalid UTF-8: byte 0xc3 at offset 7$"):
        read_all(jsonl, ["r"])


def test_csv_errors(tmp_path: Path) -> None:
    path = tmp_path / "preds.csv"
    path.write_bytes(
        b"id,response\n"  # 1
        b"1,ok\n"  # 2
        b"2,too,many\n"  # 3
        b"3\n"  # 4
        b"\n"  # 5
        b'4,"multi\nline \xff"\n'  # 6-7: bad byte on line 7
        b"5,ok5\n"  # 8
    )
    with pytest.raises(InputError) as info:
        read_all(path, ["response"])
    assert str(info.value) == f"{path}:3: expected 2 columns, got 3"
    columns, numbers, errors = read_all(path, ["response"], on_error="skip", chunk_size=2)
    assert (columns["response"], numbers) == (["ok", "ok5"], [2, 8])
    assert [str(e) for e in errors] == [
        f"{path}:3: expected 2 columns, got 3",
        f"{path}:4: expected 2 columns, got 1",
        f"{path}:5: empty line",
        f"{path}:7: invalid UTF-8: byte 0xff at offset 5",
    ]
    assert count_rows(path) == 6


def test_csv_missing_column_and_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("id,text\n1,a\n")
    with pytest.raises(InputError, match=r"p\.csv: missing column 'response'; available columns: 'id', 'text'"):
        read_columns(path, ["response"])  # raised by the call, before iterating
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(InputError, match="empty file"):
        read_columns(empty, ["response"])
    assert count_rows(empty) == 0


def test_parquet_schema_errors_before_reading(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "p.parquet", pa.table({"id": [1, 2], "text": ["a", "b"]}))
    with pytest.raises(InputError) as info:
        read_columns(path, ["response"])
    assert str(info.value) == f"{path}: missing column 'response'; available columns: 'id', 'text'"
    with pytest.raises(InputError, match=r"column 'id' has type int64, expected string"):
        read_columns(path, ["id"])


def test_parquet_null_values(tmp_path: Path) -> None:
    table = pa.table({"response": ["a", None, "c", None], "reference": ["x", "y", None, None]})
    path = write_parquet(tmp_path / "preds.parquet", table)
    with pytest.raises(InputError) as info:
        read_all(path, ["response", "reference"])
    assert str(info.value) == f"{path}:row 1: field 'response': expected a string, got null"
    columns, numbers, errors = read_all(path, ["response", "reference"], on_error="skip", chunk_size=3)
    assert columns == {"response": ["a"], "reference": ["x"]}
    assert numbers == [0]
    assert [(e.line, e.field, e.unit) for e in errors] == [
        (1, "response", "row"),
        (2, "reference", "row"),
        (3, "response", "row"),
    ]


def test_not_parquet(tmp_path: Path) -> None:
    path = tmp_path / "junk.parquet"
    path.write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match=r"junk\.parquet: not a readable Parquet file"):
        read_columns(path, ["response"])


@pytest.mark.parametrize("name", ["missing.jsonl", "missing.txt", "missing.csv", "missing.parquet"])
def test_missing_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    with pytest.raises(InputError) as info:
        read_columns(path, None if name.endswith((".txt", ".csv", ".parquet")) else ["r"])
    assert str(info.value) == f"cannot read {path}: No such file or directory"
    with pytest.raises(InputError, match="No such file or directory"):
        count_rows(path)


def test_argument_errors(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", ['{"r": "a"}'])
    with pytest.raises(TypeError, match="did you mean"):
        read_columns(path, "r")
    with pytest.raises(ValueError, match="on_error"):
        read_columns(path, ["r"], on_error="ignore")
    with pytest.raises(ValueError, match="chunk_size"):
        read_columns(path, ["r"], chunk_size=0)
    with pytest.raises(ValueError, match="pass fields"):
        read_columns(path, None)
    with pytest.raises(ValueError, match="infer the format"):
        read_columns(tmp_path / "p.xyz", ["r"])
    with pytest.raises(ValueError, match="not selected"):
        read_columns(path, ["r"], allow_list_fields=["refs"])
    assert [c.columns for c in read_columns(path, ["r"], fmt="jsonl")] == [{"r": ["a"]}]


def test_count_rows_text(tmp_path: Path) -> None:
    for content, expected in [(b"", 0), (b"\n", 1), (b"a", 1), (b"a\nb\n", 2), (b"a\n\nb", 3)]:
        path = tmp_path / "c.jsonl"
        path.write_bytes(content)
        assert count_rows(path) == expected, content


# --------------------------------------------------------------------------- writing


AWKWARD_FLOATS = [0.1, 1 / 3, 1e-300, 123456789.12345679, -0.0, 5e-324, 2.0]


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "parquet"])
def test_result_writer_round_trip(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"scores.{suffix}"
    first = {"row": np.arange(4), "score": np.array(AWKWARD_FLOATS[:4]), "text": ["a", "b,c", 'q"uote', "é\nx"]}
    second = {"row": [4, 5, 6], "score": AWKWARD_FLOATS[4:], "text": ["", "y", "z"]}
    with ResultWriter(path) as out:
        out.write(first)
        out.write(second)
    assert out.closed and out.rows_written == 7

    if suffix == "parquet":
        table = pq.read_table(path)
        assert pq.ParquetFile(path).metadata.num_row_groups == 2
        got = table.to_pydict()
    elif suffix == "jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        got = {name: [r[name] for r in rows] for name in ["row", "score", "text"]}
    else:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        got = {
            "row": [int(r["row"]) for r in rows],
            "score": [float(r["score"]) for r in rows],
            "text": [r["text"] for r in rows],
        }
    assert got["row"] == list(range(7))
    assert got["text"] == ["a", "b,c", 'q"uote', "é\nx", "", "y", "z"]
    # exact round trip, bit for bit (including the sign of -0.0)
    assert [v.hex() for v in got["score"]] == [v.hex() for v in AWKWARD_FLOATS]


def test_result_writer_flushes_each_chunk(tmp_path: Path) -> None:
    path = tmp_path / "scores.jsonl"
    out = ResultWriter(path)
    out.write({"row": [0, 1], "f": [0.5, math.nan]})
    # visible to another reader before close: a crash now would lose nothing written
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and math.isnan(json.loads(lines[1])["f"])
    out.write({"f": [1.0], "row": [2]})  # same columns, other order: fine
    out.close()
    out.close()
    assert [json.loads(line)["row"] for line in path.read_text().splitlines()] == [0, 1, 2]

    csv_path = tmp_path / "scores.csv"
    with ResultWriter(csv_path) as out:
        out.write({"row": [0], "f": [np.float32(0.1)]})
        assert csv_path.read_text() == "row,f\n0,0.10000000149011612\n"
        out.write({"row": [1], "f": [np.nan]})
    assert csv_path.read_text().count("row,f") == 1  # header once


def test_result_writer_jsonl_matches_json_dumps(tmp_path: Path) -> None:
    columns = {
        "f": [0.1, math.nan, -math.inf, 1e300],
        "mixed": [1, None, True, [0.5, "a"]],
        'k"%s': ["é", "\u2028", 'q"', "\n"],
        "n": np.array([1, -2, 3, 2**40], dtype=np.int64),
    }
    path = tmp_path / "s.jsonl"
    with ResultWriter(path) as out:
        out.write(columns)
    plain = {
        name: list(np.asarray(values).tolist()) if isinstance(values, np.ndarray) else values
        for name, values in columns.items()
    }
    expected = [
        json.dumps(dict(zip(plain, row)), ensure_ascii=False, separators=(",", ":")) for row in zip(*plain.values())
    ]
    # split on "\n" only: U+2028 is legal unescaped in JSON and str.splitlines would split it
    assert path.read_text(encoding="utf-8").split("\n") == expected + [""]
    assert read_all(path, ['k"%s'])[0] == {'k"%s': columns['k"%s']}


def test_result_writer_schema_is_fixed(tmp_path: Path) -> None:
    with ResultWriter(tmp_path / "s.parquet") as out:
        out.write({"row": [0], "f": [0.5]})
        with pytest.raises(ValueError, match="differ from the first chunk"):
            out.write({"row": [1]})
        with pytest.raises(ValueError, match="schema of the first chunk"):
            out.write({"row": ["x"], "f": [1.0]})
        with pytest.raises(ValueError, match="different lengths"):
            out.write({"row": [1, 2], "f": [1.0]})
    assert pq.read_table(tmp_path / "s.parquet").to_pydict() == {"row": [0], "f": [0.5]}


def test_result_writer_parquet_survives_exception(tmp_path: Path) -> None:
    path = tmp_path / "s.parquet"
    with pytest.raises(RuntimeError):
        with ResultWriter(path) as out:
            out.write({"row": [0, 1]})
            raise RuntimeError("crash mid-run")
    assert pq.read_table(path).to_pydict() == {"row": [0, 1]}


def test_result_writer_bad_format(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unsupported format"):
        ResultWriter(tmp_path / "s.txt")


def test_chunk_is_a_plain_dataclass() -> None:
    chunk = Chunk(0, [1], {"text": ["a"]}, [], 1)
    assert len(chunk) == 1


# --------------------------------------------------------------------------- digests, kinds, pipes


def test_the_digest_of_a_skipped_prefix_is_the_digest_of_reading_it(corpus) -> None:
    """What a resume checks (issue 12.7): skipping to row k hashes exactly what reading the
    first k rows hashed, for every format; and any change to those rows changes it."""
    path, fields, _ = corpus
    with read_columns(path, fields, chunk_size=3) as reader:
        read = {c.end_row: c.digest for c in reader}

    def skipped_to(start: int) -> str:
        with read_columns(path, fields, chunk_size=3, start_row=start) as reader:
            return reader.skip()

    for start in (3, 6, 9, 10):
        assert skipped_to(start) == read[start]
    assert len(set(read.values())) >= 3  # Parquet hashes whole row groups (of 4 rows here)
    if path.suffix == ".parquet":
        rows = [dict(r, response="answer 7") if i == 1 else r for i, r in enumerate(ROWS)]
        write_parquet(path, pa.Table.from_pylist(rows), row_group_size=4)
    else:
        original = path.read_bytes()
        changed = original.replace(b"answer 1", b"answer 7", 1)
        assert len(changed) == len(original)
        path.write_bytes(changed)
    assert skipped_to(3) != read[3]
    assert skipped_to(9) != read[9]


def test_key_fields_take_integers_as_strings(tmp_path: Path) -> None:
    """Issue 12.15: integer ids are accepted (JSONL ints, Parquet integer columns)."""
    jsonl = write_jsonl(
        tmp_path / "p.jsonl", ['{"id": 3, "t": "a"}', '{"id": "x", "t": "b"}', '{"id": true, "t": "c"}']
    )
    columns, _, errors = read_all(jsonl, ["id", "t"], key_fields=["id"], on_error="record")
    assert columns["id"] == ["3", "x"] and errors[0].reason == "expected a string or an integer, got bool"
    table = write_parquet(tmp_path / "p.parquet", pa.table({"id": pa.array([5, None], pa.int64()), "t": ["a", "b"]}))
    columns, _, errors = read_all(table, ["id", "t"], key_fields=["id"], on_error="record")
    assert columns["id"] == ["5"] and str(errors[0]).endswith(
        "row 1: field 'id': expected a string or an integer, got null"
    )
    with pytest.raises(InputError, match="column 'id' has type int64, expected string"):
        read_columns(table, ["id", "t"])


def test_raw_fields_and_whole_records(tmp_path: Path) -> None:
    """JSON values as read, which came from text, and every record whole (issue 12, task 3)."""
    jsonl = write_jsonl(tmp_path / "p.jsonl", ['{"p": [1, {"a": 2}], "x": 1}', '{"p": "[3]", "x": 2}'])
    (chunk,) = read_columns(jsonl, ["p"], raw_fields=["p"], whole_records=True)
    assert chunk.columns["p"] == [[1, {"a": 2}], "[3]"] and chunk.text_fields == frozenset()
    assert chunk.rows == [{"p": [1, {"a": 2}], "x": 1}, {"p": "[3]", "x": 2}]
    csv_path = tmp_path / "p.csv"
    csv_path.write_text('p,x\n"[1, 2]",1\n')
    (chunk,) = read_columns(csv_path, ["p"], raw_fields=["p"], whole_records=True)
    assert chunk.columns["p"] == ["[1, 2]"] and chunk.text_fields == {"p"} and chunk.rows == [{"p": "[1, 2]", "x": "1"}]
    nested = write_parquet(tmp_path / "p.parquet", pa.table({"p": [[1, 2], [3]], "s": ["[4]", "[5]"]}))
    (chunk,) = read_columns(nested, ["p", "s"], raw_fields=["p", "s"])
    assert chunk.columns == {"p": [[1, 2], [3]], "s": ["[4]", "[5]"]} and chunk.text_fields == {"s"}


def test_a_csv_field_has_no_length_limit(tmp_path: Path) -> None:
    """Issue 12.9: Python's csv module stops at 131,072 characters by default."""
    path = tmp_path / "p.csv"
    path.write_text("response\n" + "y" * 300_000 + "\nshort\n")
    assert [len(v) for v in read_all(path, ["response"])[0]["response"]] == [300_000, 5]
    assert count_rows(path) == 2


def test_a_fifo_is_read_once_and_never_counted(tmp_path: Path) -> None:
    """Issue 12.10: a pipe is opened once and read front to back."""
    import os
    import threading

    fifo = tmp_path / "p.csv"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w") as fh:
            fh.write("response\n" + "".join(f"r{i}\n" for i in range(25)))

    threading.Thread(target=feed, daemon=True).start()
    with pytest.raises(InputError, match="not a regular file"):
        count_rows(fifo)
    columns, _, _ = read_all(fifo, ["response"], chunk_size=10)
    assert columns["response"] == [f"r{i}" for i in range(25)]


def test_a_symlink_loop_is_named(tmp_path: Path) -> None:
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    with pytest.raises(InputError, match="symbolic link loop"):
        read_columns(loop, ["x"])


def test_raw_fields_as_json_text_mean_what_the_decoded_values_mean(tmp_path):
    """``raw_as_json_text``: a JSONL raw field holding an array or an object may come as its
    JSON text; decoded, it is the value the ordinary read gives.  Every other value, every
    error and every line number are the ordinary read's, lines the native checker is unsure
    of included (NaN, malformed, not an object, a missing field)."""
    calls = [{"tool_name": "f", "tool_input": {"k": [1, 2.5, None, True], "s": "x\n\u00e9"}}]
    lines = [
        json.dumps({"id": 1, "p": calls, "r": [], "other": {"deep": [[[]]]}}),
        json.dumps({"id": "2", "p": "[]", "r": {"a": 1}}),  # a JSON string stays a str
        json.dumps({"id": 3, "p": None, "r": 7}),  # scalars come decoded
        json.dumps({"p": calls, "r": calls, "id": 4}, ensure_ascii=False),  # UTF-8 inside strings
        '{"id": 5, "p": [NaN], "r": []}',
        '{"id": 6, "p": [1, "r": []}',  # malformed
        '[{"id": 7}]',  # not an object
        '{"id": 8, "p": []}',  # r missing
        '{"id": [9], "p": [], "r": []}',  # an id that is no key
        '{"id": 10, "p": [1], "p": {"last": "wins"}, "r": [ ] }',
        "",
        '{"id": "x\\"y\\u00e9", "p": [], "r": []}',  # ids: escapes, negative, zero, a float (no key)
        '{"id": -5, "p": [], "r": []}',
        '{"id": 0, "p": [], "r": []}',
        '{"id": 1.5e3, "p": [], "r": []}',
    ]
    path = write_jsonl(tmp_path / "rows.jsonl", lines)
    fields = ["p", "r", "id"]
    kinds = {"raw_fields": ["p", "r"], "key_fields": ["id"], "on_error": "record", "chunk_size": 4}
    want = read_all(path, fields, **kinds)
    got = read_all(path, fields, raw_as_json_text=True, **kinds)
    assert got[1:] == want[1:]  # line numbers and errors
    assert got[0]["id"] == want[0]["id"]
    as_text = 0
    for name in ("p", "r"):
        for g, w in zip(got[0][name], want[0][name]):
            if isinstance(g, str) and not isinstance(w, str):
                as_text += 1
                g = json.loads(g)
            assert g == w
    if _core_available():
        # p and r of rows 1, 4, 10, 12 (an id with escapes, decoded natively) and 14 (id 0),
        # and r of row 2; a line with any value the native reader does not take directly
        # (null, -5) is decoded whole
        assert as_text == 11


def _core_available() -> bool:
    from respeval import _backend

    return _backend.name() == "native"


def test_a_missing_field_error_lists_the_fields_the_record_has(tmp_path: Path) -> None:
    """The usual cause of a missing field is a field named differently (the hosted
    service's ``predicted_trajectory`` for ``response``): the error shows what is there."""
    many = {f"f{i}": "x" for i in range(10)}
    path = write_jsonl(tmp_path / "rows.jsonl", ["{}", json.dumps(many)])
    with read_columns(path, ["response"], on_error="record") as reader:
        chunk = next(iter(reader))
    shown = ", ".join(f"'f{i}'" for i in range(8))
    assert [(e.line, e.field, e.reason) for e in chunk.errors] == [
        (1, "response", "missing; the record is an empty object"),
        (2, "response", f"missing; the record's fields: {shown} and 2 more"),
    ]


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 4096])
def test_csv_lines_split_natively_read_as_the_csv_module_reads_them(
    tmp_path: Path, monkeypatch, chunk_size: int
) -> None:
    """The CSV reader splits a chunk's lines natively when each is certainly one record, and
    reads the chunk's records from the first line that is not with the csv module: values,
    line numbers, errors, chunk boundaries and each chunk's input digest are the csv
    module's alone, records spanning lines and chunks included, and so is a resumed read."""
    from respeval.io import readers

    path = tmp_path / "rows.csv"
    path.write_bytes(
        b"id,text,other\r\n"
        b'1,"plain ""quoted"", with comma",x\r\n'
        b'2,"spans\nthree\r\nlines",y\n'
        b"3,tail,\n"
        b"\n"  # an empty line
        b'4,"a"b,z\n'  # text after a closing quote: the csv module's lenient reading
        b'5,a"b,z\n'
        b"6,\xff,z\n"  # invalid UTF-8
        b"7,only two\n"
        b'8,"\xc3\xa9\xe2\x82\xac",z\n'
        b"9,plain,z\n"
        b"10,plain,z\n"
        b'11,"last\nrecord spans",end'
    )

    def chunks(split: bool, **kwargs) -> list[tuple]:
        if not split:
            monkeypatch.setattr(readers, "_csv_splitter", lambda: None)
        out = [
            (c.start_row, c.end_row, c.row_numbers, c.columns, c.errors, c.digest, c.text_fields)
            for c in read_columns(path, ["id", "text"], on_error="record", chunk_size=chunk_size, **kwargs)
        ]
        monkeypatch.undo()
        return out

    native = chunks(True)
    assert native == chunks(False)
    texts = [t for c in native for t in c[3]["text"]]
    assert texts[:3] == ['plain "quoted", with comma', "spans\nthree\r\nlines", "tail"]
    assert len(texts) == 9 and texts[-1] == "last\nrecord spans"
    assert [(e.line, e.reason) for c in native for e in c[4]] == [
        (7, "empty line"),
        (10, "invalid UTF-8: byte 0xff at offset 2"),
        (11, "expected 3 columns, got 2"),
    ]
    assert chunks(True, start_row=4) == chunks(False, start_row=4)
    if _core_available():
        assert readers._csv_splitter() is not None


def _struct_with_a_repeated_field() -> pa.Array:
    """list<struct<tool_name, tool_input: struct<a: int64, a: string>>>: two fields named 'a'."""
    args = pa.StructArray.from_arrays(
        [pa.array([1, 2]), pa.array(["x", "y"])], fields=[pa.field("a", pa.int64()), pa.field("a", pa.string())]
    )
    calls = pa.StructArray.from_arrays([pa.array(["f", "g"]), args], names=["tool_name", "tool_input"])
    return pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), calls)


def test_a_struct_naming_a_field_twice_is_refused_naming_the_file_column_and_field(tmp_path: Path) -> None:
    """pyarrow cannot turn such a struct into dicts (and JSON cannot hold a key twice): the
    reader refuses the column before reading any data, saying where the repeated name is
    and what to do, instead of pyarrow's bare "duplicate field names" from the first chunk."""
    table = pa.table({"id": ["r0", "r1"], "p": _struct_with_a_repeated_field(), "q": ["x", "y"]})
    path = write_parquet(tmp_path / "dup.parquet", table)
    want = (
        f"{path}: column 'p' cannot be read: its struct at [].tool_input has two fields named 'a', "
        "and a JSON object cannot hold a key twice; rename one of them where the file is written, "
        "then read it again"
    )
    for kw in ({"raw_fields": ["p"]}, {"raw_fields": ["p"], "raw_as_json_text": True}):
        with pytest.raises(InputError) as info:
            list(read_columns(path, ["p"], **kw))
        assert str(info.value) == want
    with pytest.raises(InputError, match="column 'p' cannot be read"):
        list(read_columns(path, ["q"], whole_records=True))  # a whole record holds every column
    (chunk,) = read_columns(path, ["q"])  # the other columns still read
    assert chunk.columns == {"q": ["x", "y"]}


def test_repeated_field_finds_the_name_at_any_depth() -> None:
    from respeval.io.nested import repeated_field

    twice = pa.struct([pa.field("k", pa.int8()), pa.field("k", pa.int8())])
    assert repeated_field(twice) == ("(top level)", "k")
    assert repeated_field(pa.list_(pa.struct([pa.field("o", twice)]))) == ("[].o", "k")
    assert repeated_field(pa.large_list(pa.list_(twice))) == ("[][]", "k")
    assert repeated_field(pa.map_(pa.string(), twice)) == ("{}", "k")
    assert repeated_field(pa.struct([pa.field("k", pa.int8()), pa.field("j", pa.list_(pa.int8()))])) is None
    assert repeated_field(pa.string()) is None


@pytest.mark.parametrize("split", [True, False])
def test_csv_an_unclosed_quote_is_named_as_the_cause(tmp_path: Path, monkeypatch, split: bool) -> None:
    """A quote that is never closed makes the rest of the file one field: the error says so,
    with the lines the record took in, rather than only that it has too few columns."""
    from respeval.io import readers

    if not split:
        monkeypatch.setattr(readers, "_csv_splitter", lambda: None)
    path = tmp_path / "p.csv"
    path.write_text('id,response,reference\n0,a,b\n1,"never closed,x\n2,c,d\n3,e,f\n')
    columns, numbers, errors = read_all(path, ["response", "reference"], on_error="record")
    assert (columns["response"], numbers) == (["a"], [2])
    assert [(e.line, e.reason) for e in errors] == [
        (
            3,
            "expected 3 columns, got 2 in a record that runs over lines 3-5: a quote opened in it and not closed"
            " makes the lines after it part of one field; close the quote (or double a quote that belongs to the"
            " text)",
        )
    ]
    with pytest.raises(InputError, match=r"p\.csv:3: expected 3 columns, got 2 in a record that runs over lines 3-5"):
        read_all(path, ["response", "reference"])


def test_skip_blank_lines_are_no_records_and_lines_keep_their_numbers(tmp_path):
    """evaluate's rule, through the one reader: a blank line is neither a record nor an error."""
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\nnot json\n\n{"a": 3}\n', encoding="utf-8")
    with read_columns(path, None, whole_records=True, skip_blank=True, on_error="record", chunk_size=2) as reader:
        chunks = list(reader)
    assert [(c.start_row, c.end_row, c.records, c.row_numbers) for c in chunks] == [
        (0, 2, [0, 1], [1, 3]),
        (2, 4, [3], [6]),
    ]
    assert [c.dicts() for c in chunks] == [[{"a": 1}, {"a": 2}], [{"a": 3}]]
    assert [str(e) for e in chunks[1].errors] == [f"{path}:4: malformed JSON: Expecting value (column 1)"]
    csv_path = tmp_path / "rows.csv"
    csv_path.write_text("a,b\n1,2\n\n3,4\n", encoding="utf-8")
    with read_columns(csv_path, None, whole_records=True, skip_blank=True, start_row=1) as reader:
        assert [(c.records, c.row_numbers, c.dicts()) for c in reader] == [([1], [4], [{"a": "3", "b": "4"}])]
    # the count that goes with it (evaluate's progress total): blank lines counted out, bad ones in
    assert (count_rows(path, skip_blank=True), count_rows(path)) == (4, 6)
    assert (count_rows(csv_path, skip_blank=True), count_rows(csv_path)) == (2, 3)


def test_arrow_table_chunks_hold_the_table_of_any_column_type(tmp_path):
    table = pa.table({"n": list(range(7)), "s": [{"x": i} for i in range(7)]})
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=3)
    with read_columns(tmp_path / "t.parquet", None, arrow_table=True, chunk_size=4, start_row=1) as reader:
        chunks = list(reader)
    assert [(c.start_row, c.end_row, c.records) for c in chunks] == [(1, 5, [1, 2, 3, 4]), (5, 7, [5, 6])]
    assert pa.concat_tables([c.table for c in chunks]).equals(table.slice(1))
    assert chunks[0].column("n") == [1, 2, 3, 4] and chunks[0].column("missing") == [None] * 4
    assert chunks[1].dicts() == [{"n": 5, "s": {"x": 5}}, {"n": 6, "s": {"x": 6}}]
