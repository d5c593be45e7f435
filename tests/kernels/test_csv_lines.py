"""``csv_plain_rows``: the native CSV line splitter against its twin, and both against the
csv module (a line they split must be exactly the one record ``csv.reader`` reads from it)."""

from __future__ import annotations

import csv
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from respeval import _core_py

core = pytest.importorskip("respeval._core", reason="respeval._core is not built")

_cells = st.text(alphabet=st.sampled_from(list('ab ,"\r\n\x00é€😀\t')), max_size=12) | st.just("x" * 20)


@st.composite
def _lines(draw, ncols: int = 0) -> bytes:
    size = ncols if ncols and draw(st.integers(0, 3)) else draw(st.integers(1, 4))
    cells = draw(st.lists(_cells, min_size=size, max_size=size))
    quoting = draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]))
    out = []
    writer = csv.writer(_Sink(out), quoting=quoting, lineterminator=draw(st.sampled_from(["\n", "\r\n", ""])))
    writer.writerow(cells)
    line = out[0].encode("utf-8")
    edit = draw(st.integers(0, 3))
    if edit == 1 and line:  # a byte changed or cut: quirks, open quotes, invalid UTF-8
        at = draw(st.integers(0, len(line) - 1))
        line = line[:at] + bytes([draw(st.sampled_from(b'",a\r\n\x00\xff\xc3 '))]) + line[at + 1 :]
    elif edit == 2:
        line = line[: draw(st.integers(0, len(line)))]
    return line


class _Sink:
    def __init__(self, out: list) -> None:
        self.out = out

    def write(self, text: str) -> None:
        self.out.append(text)


def _check(lines: list[bytes], ncols: int) -> int:
    got = core.csv_plain_rows(lines, ncols)
    assert got == _core_py.csv_plain_rows(lines, ncols)
    for line, fields in zip(lines, got):
        if fields is None:
            continue
        records = list(csv.reader([line.decode("utf-8")]))
        assert records == [fields]
        assert len(fields) == ncols
    return sum(fields is not None for fields in got)


@settings(max_examples=500, deadline=None)
@given(st.data(), st.integers(1, 4))
def test_lines_split_are_what_the_csv_module_reads(data, ncols):
    """Mostly ``ncols`` cells a line, written by the csv module, some then changed."""
    _check(data.draw(st.lists(_lines(ncols), max_size=6)), ncols)


def test_plain_lines_split_and_everything_else_left_to_the_csv_module():
    plain = [
        b"a,b,c\n",
        b'"x,y","q""r",\r\n',  # a quoted comma, a doubled quote, an empty last field
        b",,",  # the last line of a file: no newline
        '"é€😀","""",z\n'.encode(),
        b'"[{""tool_name"": ""f"", ""tool_input"": {}}]",1,2\n',
    ]
    left = [
        b"\n",  # an empty record
        b"a,b\n",  # two fields, not three
        b"a,b,c,d\n",
        b'a,"b"c,d\n',  # text after a closing quote
        b'a,b"c,d\n',  # a quote inside an unquoted field
        b'"a\n',  # a quoted field going on to the next line
        b"a,b\rc,d\n",  # a carriage return inside
        b"a,\x00,c\n",  # NUL: the csv module's error
        b"a,\xff,c\n",  # invalid UTF-8
        b"a,\xed\xa0\x80,c\n",  # a surrogate
    ]
    got = core.csv_plain_rows(plain + left, 3)
    assert got[: len(plain)] == [
        ["a", "b", "c"],
        ["x,y", 'q"r', ""],
        ["", "", ""],
        ["é€😀", '"', "z"],
        ['[{"tool_name": "f", "tool_input": {}}]', "1", "2"],
    ]
    assert got[len(plain) :] == [None] * len(left)
    assert _check(plain + left, 3) == len(plain)


def test_arguments_are_checked():
    for mod in (core, _core_py):
        with pytest.raises(ValueError, match="ncols must be positive"):
            mod.csv_plain_rows([b"a"], 0)
        with pytest.raises(TypeError, match="line 1 is a str"):
            mod.csv_plain_rows([b"a", "a"], 1)


@settings(max_examples=300, deadline=None)
@given(st.data(), st.integers(1, 4))
def test_columns_are_the_split_lines_fields(data, ncols):
    """``csv_columns``: the selected fields of the lines ``csv_plain_rows`` splits, column by
    column, and the indices of the others."""
    lines = data.draw(st.lists(_lines(ncols), max_size=8))
    indices = data.draw(st.lists(st.integers(0, ncols - 1), max_size=4))
    got = core.csv_columns(lines, ncols, indices)
    assert got == _core_py.csv_columns(lines, ncols, indices)
    rows = core.csv_plain_rows(lines, ncols)
    assert got[0] == [i for i, fields in enumerate(rows) if fields is None]
    assert got[1] == [[fields[k] for fields in rows if fields is not None] for k in indices]
    # kind "a": the same values as Arrow large_string buffers (int64 offsets, UTF-8 data)
    kinds = bytes(data.draw(st.sampled_from(b"ta")) for _ in indices)
    arrow = core.csv_columns(lines, ncols, indices, kinds)
    assert arrow == _core_py.csv_columns(lines, ncols, indices, kinds)
    assert arrow[0] == got[0]
    for kind, column, want in zip(kinds, arrow[1], got[1]):
        if kind == ord("t"):
            assert column == want
            continue
        offsets, text = column
        ends = struct.unpack(f"={len(offsets) // 8}q", offsets)
        assert [text[a:b].decode("utf-8") for a, b in zip(ends, ends[1:])] == want


def test_columns_arguments_are_checked():
    for mod in (core, _core_py):
        with pytest.raises(ValueError, match="field index 3 is outside 0..2"):
            mod.csv_columns([b"a,b,c"], 3, [0, 3])
        with pytest.raises(TypeError, match="line 0 is a bytearray"):
            mod.csv_columns([bytearray(b"a")], 1, [0])
        with pytest.raises(ValueError, match="1 indices but 2 kinds"):
            mod.csv_columns([b"a"], 1, [0], b"aa")
