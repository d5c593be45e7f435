"""The native JSON reader skips the values of a call's other keys (neither the name nor the
arguments) with the one JSON scanner's checker (cext/json_scan.h) instead of
canonicalising them: values the canonical writer cannot spell but json.loads reads (a
30-digit integer, a lone surrogate escape, a huge exponent) no longer send the row to the
Python path, and values json.loads does not certainly read still do.  Either way every
id, name, call and error equals the twin's, on the first read and through the memo."""

from __future__ import annotations

import pytest

from respeval._core_py import trajectory as twin

core = pytest.importorskip("respeval._core", reason="the native core is not built")
pa = pytest.importorskip("pyarrow")

OTHER_VALUES = [
    "123456789012345678901234567890",  # past 18 digits: not canonical, still JSON
    '"\\ud800 alone"',  # a lone surrogate: json.loads gives a str
    "1e400",  # inf to Python's float
    "-0.0",
    '{"deep": ' * 62 + "1" + "}" * 62,  # nesting the checker takes
    '{"deeper": ' * 70 + "1" + "}" * 70,  # too deep for the checker: the Python path
    "NaN",  # json.loads reads it, the checker does not: the Python path
    "9" * 5000,  # int() refuses it: an error row either way
    '"tab\tinside"',  # a control character: json.loads refuses it
    '[1, 2, {"a": [true, false, null]}]',
    '"caf\\u00e9 \\ud83d\\ude00"',
]


def _rows() -> list[str]:
    rows = []
    for i, value in enumerate(OTHER_VALUES):
        call = f'{{"tool_name": "f{i % 3}", "note": {value}, "tool_input": {{"x": {i}, "y": "v"}}}}'
        rows.append(f"[{call}, {call}]")
        rows.append(f'[{{"id": {value}, "tool_name": "g", "tool_input": null}}]')
    return rows


def _state(table) -> tuple:
    return len(table), table.names(), [table.call(i) for i in range(len(table))]


@pytest.mark.parametrize("form", ["str", "arrow"])
def test_other_keys_values_are_skipped_as_json_loads_reads_them(form):
    rows = _rows()
    given = pa.array(rows, pa.string()) if form == "arrow" else rows
    native, python = core.CallTable(), twin.CallTable()
    for _ in range(2):  # the second read takes the memo's answers
        assert native.intern(given) == python.intern(rows)
        assert _state(native) == _state(python)
    assert python.intern(rows)[3], "some rows must be unreadable (the 5000-digit integer, the tab)"


@pytest.mark.parametrize(
    ("value", "read_in_c"),
    [("123456789012345678901234567890", True), ('"\\ud800"', True), ("1e400", True), ("NaN", False)],
)
def test_which_other_values_the_native_reader_takes_itself(value, read_in_c):
    """A call read in C is remembered by its text (the memo); a row the Python path reads is not."""
    table = core.CallTable()
    row = f'[{{"tool_name": "f", "note": {value}, "tool_input": {{"x": 1}}}}]'
    assert table.intern([row]) == twin.CallTable().intern([row])
    assert table._memo_entries == (1 if read_in_c else 0)
