"""``jsonl_field_spans``: the native line checker against its twin, and both against
``json.loads`` (a line they call ok must be an object json.loads reads, each span the
JSON text of the value json.loads keeps for that key)."""

from __future__ import annotations

import json
import math

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
def _lines(draw) -> bytes:
    obj = draw(_objects)
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
