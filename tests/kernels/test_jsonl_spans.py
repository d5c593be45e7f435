"""``jsonl_field_spans``: the native line checker against its twin, and both against
``json.loads`` (a line they call ok must be an object json.loads reads, each span the
JSON text of the value json.loads keeps for that key)."""

from __future__ import annotations

import json
import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from respeval import _core_py

core = pytest.importorskip("respeval._core", reason="respeval._core is not built")

KEYS = ["a", "b", "id", ""]

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6)
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12,
)
_objects = st.dictionaries(st.sampled_from(KEYS + ["c", "a\\b", "é"]), _values, max_size=5)


@st.composite
def _lines(draw, objects=_objects) -> bytes:
    obj = draw(objects)
    text = json.dumps(
        obj,
        ensure_ascii=draw(st.booleans()),
        separators=draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,\t", " :\r\n")])),
    )
    if draw(st.booleans()):  # the same key twice: json.loads keeps the last
        text = text[:-1] + (", " if len(text) > 2 else "") + '"a": [1, {"x": null}]}'
    line = (draw(st.sampled_from(["", " ", "\t"])) + text + draw(st.sampled_from(["", "\n", "\r\n", "  \n"]))).encode(
        "utf-8", "surrogatepass"
    )
    cut = draw(st.integers(0, 3))
    if cut == 1 and len(line) > 1:  # truncated, or a byte changed: mostly not JSON any more
        line = line[: draw(st.integers(0, len(line) - 1))]
    elif cut == 2 and line:
        at = draw(st.integers(0, len(line) - 1))
        line = line[:at] + bytes([draw(st.sampled_from(b'"\\{}[],:0-.eE \x01\x7fxtn'))]) + line[at + 1 :]
    return line


def _same(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return type(x) is type(y) and x == y


def _check(lines: list[bytes]) -> int:
    got = core.jsonl_field_spans(lines, KEYS)
    assert got == _core_py.jsonl_field_spans(lines, KEYS)
    ok, spans = got
    spans_v = np.frombuffer(spans, np.int64).reshape(len(lines), len(KEYS), 2)
    for line, fine, where in zip(lines, ok, spans_v):
        if not fine:
            assert (where == -1).all()
            continue
        obj = json.loads(line)
        assert isinstance(obj, dict)
        for key, (start, end) in zip(KEYS, where.tolist()):
            if key not in obj:
                assert start == end == -1
            else:
                assert _same(json.loads(line[start:end]), obj[key])
    return sum(ok)


@settings(max_examples=400, deadline=None)
@given(st.lists(_lines(), max_size=6))
def test_lines_called_ok_are_what_json_loads_reads(lines):
    _check(lines)


def test_plain_objects_are_ok_and_everything_unusual_is_left_to_json_loads():
    ok_lines = [
        b'{"a": [1, 2.5e-3, -0, "x\\n\\u00e9"], "id": "7"}\n',
        b"{}",
        b' {"b" : {"a": true, "c": [false, null, {}]}, "a": 1, "a": 2}\r\n',
        b'{"a": "\x7f"}',  # DEL is no control character to json.loads
        '{"a": "é€😀", "id": ["ü"]}'.encode(),  # UTF-8 inside strings
    ]
    unsure = [
        b"",
        b"   \n",
        b"[1, 2]",
        b'"a"',
        b'{"a": NaN}',
        b'{"a": -Infinity}',
        b'{"a": 01}',
        b'{"a": 1.}',
        b'{"a": .5}',
        b'{"a": 1e}',
        b'{"a": "\x01"}',
        b'{"a": "\xc3"}',  # UTF-8 cut short
        b'{"a": "\xc0\xaf"}',  # an overlong form
        b'{"a": "\xed\xa0\x80"}',  # a surrogate
        b'{"a": "\xf4\x90\x80\x80"}',  # past U+10FFFF
        b'{"a": "\xff"}',
        b'{"a":\xc2\xa01}',  # a no-break space is no JSON whitespace
        b'\xef\xbb\xbf{"a": 1}',  # a byte order mark
        b'{"\\u0061": 1}',  # an escaped top-level key
        b'{"a": "\\x"}',
        b'{"a": "\\u12"}',
        b'{"a": 1,}',
        b'{"a": [1,]}',
        b'{"a" 1}',
        b'{"a": 1} x',
        b'{"a": 1}{"b": 2}',
        b'{"a": tru}',
        b'{"a": ' + b"[" * 70 + b"]" * 70 + b"}",  # deeper than the checker goes
        b'{"a": ' + b"9" * 5000 + b"}",  # more digits than int() takes
    ]
    ok, _ = core.jsonl_field_spans(ok_lines + unsure, KEYS)
    assert list(ok) == [1] * len(ok_lines) + [0] * len(unsure)
    assert _check(ok_lines + unsure) == len(ok_lines)


def test_lines_must_be_bytes():
    for mod in (core, _core_py):
        with pytest.raises(TypeError, match="line 1 is a str"):
            mod.jsonl_field_spans([b"{}", "{}"], ["a"])


# ``jsonl_columns``: each key's kind (raw, key, text) and the value json.loads would give
_KINDS = b"rkrt"
# every key present, mostly with values a reader takes directly (a kind's own values,
# escapes and surrogates included, three times in four)
_texts = st.text("abc xyz/é€😀", max_size=6) | st.text(max_size=6)
_ints = st.integers(-3, 10**19 + 3)
_containers = st.lists(_values, max_size=3) | st.dictionaries(st.text(max_size=3), _values, max_size=3)
_own = {ord("r"): _texts | _ints | _containers, ord("k"): _texts | _ints, ord("t"): _texts}
_full_objects = st.fixed_dictionaries(
    {key: st.one_of(_own[kind], _own[kind], _own[kind], _values) for key, kind in zip(KEYS, _KINDS)},
    optional={"c": _values, "a\\b": _values},
)


def _expected(value, kind: int):
    """What a reader hands on for ``value`` (json.loads') under ``kind``, or None when the
    line must be decoded: an array or object may come as its JSON text."""
    if type(value) is str:
        return value
    if kind == ord("k") and type(value) is int and value >= 0:
        return str(value)
    if kind == ord("r") and type(value) is int and 0 <= value < 10**18:
        return value
    return None


def _check_columns(lines: list[bytes]) -> int:
    got = core.jsonl_columns(lines, KEYS, _KINDS)
    assert got == _core_py.jsonl_columns(lines, KEYS, _KINDS)
    fallback, columns = got
    assert fallback == sorted(set(fallback))
    taken = [i for i in range(len(lines)) if i not in set(fallback)]
    assert all(len(column) == len(taken) for column in columns)
    for j, i in enumerate(taken):
        obj = json.loads(lines[i])
        for key, kind, column in zip(KEYS, _KINDS, columns):
            value = column[j]
            if kind == ord("r") and type(obj[key]) in (list, dict):
                assert type(value) is str and _same_tree(json.loads(value), obj[key])
            else:
                assert _same(value, _expected(obj[key], kind))
    return len(taken)


def _same_tree(x, y) -> bool:
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(_same_tree(a, b) for a, b in zip(x, y))
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same_tree(x[k], y[k]) for k in x)
    return _same(x, y)


@settings(max_examples=400, deadline=None)
@given(st.lists(_lines(_full_objects) | _lines(), max_size=6))
def test_columns_taken_are_what_json_loads_reads(lines):
    _check_columns(lines)


def test_columns_take_plain_values_and_leave_every_other_line():
    taken = [
        b'{"a": [1, {"x": "\\u00e9"}], "b": 12, "id": {}, "": "plain"}\n',
        b'{"": "", "id": "s", "b": "0", "a": 0}',
        '{"a": "é", "b": 999999999999999999, "id": [], "": "ü€"}'.encode(),
        b'{"a": "\\u00e9\\n", "b": "k\\"", "id": [], "": "esc\\"aped\\t\\\\\\/"}',  # escapes, decoded
    ]
    left = [
        b'{"a": [], "b": 1, "id": [], "": "\\ud83d\\ude00"}',  # a surrogate escape, even in a pair
        b'{"a": [], "b": 1, "id": [], "": "", "c": "\\uDC00"}',  # ... or in a field not selected
        b'{"a": [], "b": -1, "id": [], "": ""}',  # a negative key
        b'{"a": [], "b": 1.5, "id": [], "": ""}',  # a float key
        b'{"a": [], "b": 1, "id": [], "": 7}',  # a number for a text field
        b'{"a": [], "b": 1, "id": [], "": ["x"]}',  # a list for a text field
        b'{"a": null, "b": 1, "id": [], "": ""}',
        b'{"a": true, "b": 1, "id": [], "": ""}',
        b'{"a": 1000000000000000000, "b": 1, "id": [], "": ""}',  # 19 digits: int() reads it
        b'{"a": [], "b": 1, "id": []}',  # a key missing
        b'{"a": NaN, "b": 1, "id": [], "": ""}',  # the checker is unsure
    ]
    fallback, columns = core.jsonl_columns(taken + left, KEYS, _KINDS)
    assert fallback == list(range(len(taken), len(taken) + len(left)))
    assert columns == [
        ['[1, {"x": "\\u00e9"}]', 0, '"é"'[1:-1], "é\n"],
        ["12", "0", "999999999999999999", 'k"'],
        ["{}", "s", "[]", "[]"],
        ["plain", "", "ü€", 'esc"aped\t\\/'],
    ]
    assert _check_columns(taken + left) == len(taken)


def test_columns_need_a_kind_per_key_and_bytes_lines():
    for mod in (core, _core_py):
        with pytest.raises(ValueError, match="4 keys but 3 kinds"):
            mod.jsonl_columns([b"{}"], KEYS, b"rkr")
        with pytest.raises(TypeError, match="line 1 is a str"):
            mod.jsonl_columns([b"{}", "{}"], KEYS, _KINDS)


@settings(max_examples=200, deadline=None)
@given(st.lists(_lines(_full_objects) | _lines(), max_size=6))
def test_an_arrow_text_column_holds_the_text_columns_utf8(lines):
    """Kind ``a``: the lines ``t`` takes, the same fallback, and the column as Arrow
    large_string buffers (int64 offsets, UTF-8 back to back) of the values ``t`` gives."""
    kinds = _KINDS[:-1] + b"a"
    got = core.jsonl_columns(lines, KEYS, kinds)
    assert got == _core_py.jsonl_columns(lines, KEYS, kinds)
    fallback, columns = got
    want_fallback, want = core.jsonl_columns(lines, KEYS, _KINDS)
    assert fallback == want_fallback and columns[:-1] == want[:-1]
    offsets, data = columns[-1]
    ends = struct.unpack(f"={len(offsets) // 8}q", offsets)
    assert ends[0] == 0 and len(ends) == len(want[-1]) + 1
    assert [data[a:b].decode("utf-8") for a, b in zip(ends, ends[1:])] == want[-1]


def _split(block: bytes) -> list[bytes]:
    """A binary file's lines: split at b"\\n" only, each with its end (the last perhaps not)."""
    lines = [line + b"\n" for line in block.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


@settings(max_examples=300, deadline=None)
@given(st.lists(_lines(_full_objects) | _lines(), max_size=6), st.booleans(), st.integers(0, 7))
def test_a_block_reads_as_its_lines(lines, ends_with_newline, n):
    """``jsonl_block_columns`` reads a block's lines in place as ``jsonl_columns`` reads them
    as bytes objects (the same columns and fallback), naming where each line left for
    ``json.loads`` is; ``line_block`` finds where the first ``n`` lines end."""
    block = b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines)
    if not ends_with_newline:
        block = block[:-1]
    split = _split(block)
    fallback, columns = core.jsonl_columns(split, KEYS, b"rkat")
    for mod in (core, _core_py):
        got = mod.jsonl_block_columns(memoryview(block), KEYS, b"rkat")
        assert got[1] == columns
        assert got[0] == [(i, len(b"".join(split[:i])), len(b"".join(split[: i + 1]))) for i in fallback]
        whole = sum(1 for line in split if line.endswith(b"\n"))
        for final in (False, True):
            taken = min(n, len(split) if final else whole)
            assert mod.line_block(block, 0, n, final) == (taken, len(b"".join(split[:taken])))
        if split:
            at = len(split[0])
            assert mod.line_block(block, at, n, True) == (min(n, len(split) - 1), len(b"".join(split[: 1 + n])))


def test_line_block_refuses_a_start_outside_the_data():
    for mod in (core, _core_py):
        with pytest.raises(ValueError, match="do not fit"):
            mod.line_block(b"ab\n", 4, 1, True)
        assert mod.line_block(b"", 0, 5, True) == (0, 0)
