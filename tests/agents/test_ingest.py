"""The native core reads JSON text and Arrow columns from their bytes, without building
Python objects; the twin decodes them (json.loads, to_pylist).  Every id, offset, error and
statistic must be the same, for valid input, malformed input and everything in between."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from respeval._core_py import trajectory as twin

core = pytest.importorskip("respeval._core", reason="the native core is not built")
pa = pytest.importorskip("pyarrow")

from test_kernels import _call, _run  # noqa: E402  (same folder: the shared strategies)

from _helpers import implementations  # noqa: E402
from _helpers.paths import shared_data  # noqa: E402
from respeval.metrics.trajectory import TrajectoryFamily  # noqa: E402

# --- JSON text: what json.dumps writes, with every option, and what it never writes ---------------

_dumps_options = st.fixed_dictionaries(
    {
        "ensure_ascii": st.booleans(),
        "sort_keys": st.booleans(),
        "indent": st.none() | st.integers(0, 2),
        "separators": st.sampled_from([None, (",", ":"), (", ", ": "), (" ,", " : ")]),
    }
)

# hand-written JSON fragments that json.dumps never produces: duplicate keys, escapes of every
# kind (pairs, lone surrogates, \/), numbers in every spelling, odd whitespace
_frag_value = st.sampled_from(
    [
        "1",
        "-0",
        "0.0",
        "-0.0",
        "1e2",
        "1E+2",
        "1.5e-7",
        "12345678901234567890",
        "1e400",
        "-1e400",
        "NaN",
        "Infinity",
        "-Infinity",
        "01",
        "1.",
        ".5",
        "+1",
        "true",
        "false",
        "null",
        "[]",
        "{}",
        '"x"',
        '"\\u00e9"',
        '"\\ud83d\\ude00"',
        '"\\ud83d"',
        '"\\ude00"',
        '"a\\/b"',
        '"\\"q\\\\"',
        '"tab\\t"',
        '"bad\\x"',
        '"\x01"',
        "[1,[2,[3]]]",
        '{"b":1,"a":2}',
        '{"a":1,"a":2}',
        '{"a":{"b":null}}',
        "[1,]",
        '{"a":1,}',
        "tru",
        "nul",
        '"\\u0000"',
        '"é"',
        '"\U0001f600"',
        "2.5",
        "-3.75",
        "9007199254740993",
        "1e-400",
        "123456789012345678",
        "-123456789012345678",
        "1234567890123456789",
    ]
)
_frag_key = st.sampled_from(['"a"', '"b"', '"\\u0061"', '"a\\"b"', '"é"', '""', '"\\\\"', '"tool_input"'])
_ws = st.sampled_from(["", " ", "\n", "\t", "\r\n ", "\u00a0"])


@st.composite
def _frag_object(draw):
    members = draw(st.lists(st.tuples(_frag_key, _frag_value), max_size=4))
    w = draw(_ws)
    return "{" + ",".join(f"{w}{k}{w}:{w}{v}" for k, v in members) + "}"


@st.composite
def _frag_call(draw):
    parts = []
    name = draw(st.sampled_from(['"a"', '"b"', '"\\u0061"', '"a\\u0000b"', "1", "null", '"\\ud800"']))
    args = draw(st.one_of(_frag_object(), st.sampled_from(["null", "[]", '"{}"', "1"])))
    layout = draw(st.sampled_from(["name-args", "args-name", "name", "args", "dup-name", "dup-args", "extra"]))
    if layout in ("name-args", "name", "dup-name", "dup-args", "extra"):
        parts.append(f'"tool_name":{name}')
    if layout in ("name-args", "args-name", "args", "dup-args", "extra"):
        parts.append(f'"tool_input":{args}')
    if layout == "args-name":
        parts.append(f'"tool_name":{name}')
    if layout == "dup-name":
        parts.append('"tool_name":"b"')
    if layout == "dup-args":
        parts.append('"tool_input":{"z":1}')
    if layout == "extra":
        parts.append(f'"tool_output":{draw(_frag_value)}')
    return "{" + ",".join(parts) + "}"


@st.composite
def _frag_row(draw):
    calls = draw(st.lists(_frag_call(), max_size=4))
    w = draw(_ws)
    return f"{w}[{w}" + f"{w},{w}".join(calls) + f"{w}]{w}"


@st.composite
def _text_row(draw):
    kind = draw(st.sampled_from(["dumps", "dumps", "fragments", "mutated"]))
    if kind == "fragments":
        return draw(_frag_row())
    calls = draw(st.lists(_call, max_size=5))
    text = json.dumps(calls, **draw(_dumps_options))
    if kind == "mutated" and text:
        at = draw(st.integers(0, len(text) - 1))
        op = draw(st.sampled_from(["cut", "drop", "insert"]))
        if op == "cut":
            text = text[:at]
        elif op == "drop":
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at] + draw(st.sampled_from(list('{}[]",:\\ 0-e.'))) + text[at:]
    return text


@settings(max_examples=400, deadline=None)
@given(rows=st.lists(st.tuples(_text_row(), _text_row()), max_size=6))
def test_json_text_equals_twin(rows):
    preds = [p for p, _ in rows]
    refs = [r for _, r in rows]
    assert _run(core, preds, refs) == _run(twin, preds, refs)
    # the same text through an Arrow string column (bytes checked as UTF-8, nulls allowed)
    arrow_p, arrow_r = pa.array(preds + [None], pa.string()), pa.array(refs + [None], pa.large_string())
    assert _run(core, arrow_p, arrow_r) == _run(twin, arrow_p, arrow_r)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(_text_row(), _text_row()), max_size=5))
def test_json_text_options_equal(rows):
    """Other key names, optional arguments, a name normaliser: the fast path and the twin agree."""
    preds = [p.replace("tool_input", "args") for p, _ in rows]
    refs = [r.replace("tool_input", "args") for _, r in rows]
    kw = {"args_key": "args", "args_required": False, "name_fn": lambda n: None if n == "b" else n.upper()}
    assert _run(core, preds, refs, **kw) == _run(twin, preds, refs, **kw)


def _run_twice(mod, preds, refs, **kw):
    """Both sides interned, then both again into the same table: the second pass answers
    from the call memo (texts already read), and must give what the first pass gave."""
    table = mod.CallTable()
    out = []
    for _ in range(2):
        for rows in (refs, preds):
            calls, names, offsets, errors = table.intern(rows, **kw)
            out.append((calls, names, offsets, errors))
    return out, table.names(), [table.call(i) for i in range(len(table))]


# strings long enough to cross the 16-byte blocks the call scanner reads, with quotes,
# backslashes and braces inside them at every offset
_long_text = st.text(alphabet=st.sampled_from(list('ab"\\{}[]:, é\x01')), min_size=10, max_size=40)
_long_call = st.fixed_dictionaries(
    {
        "tool_name": st.sampled_from(["a", "b\\", 'q"']),
        "tool_input": st.dictionaries(st.sampled_from(["x", "y{", 'z"\\']), _long_text | st.integers(), max_size=3),
    }
)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.tuples(_text_row(), _text_row()), max_size=6),
    long_rows=st.lists(st.lists(_long_call, max_size=4), max_size=4),
    options=_dumps_options,
)
def test_call_memo_gives_what_a_full_read_gives(rows, long_rows, options):
    """Calls written byte for byte as before are answered by the memo: ids, names, errors
    and the table's contents are the twin's, on the first pass and on the repeat."""
    extra = [json.dumps(r, **options) for r in long_rows]
    preds = [p for p, _ in rows] + extra
    refs = [r for _, r in rows] + extra[::-1]
    assert _run_twice(core, preds, refs) == _run_twice(twin, preds, refs)
    arrow_p, arrow_r = pa.array(preds, pa.string()), pa.array(refs, pa.large_string())
    assert _run_twice(core, arrow_p, arrow_r) == _run_twice(twin, arrow_p, arrow_r)


def test_call_memo_forgets_when_the_options_change():
    """The memo's answers hold for one set of reading options: other keys, optional
    arguments or a normaliser read the same text again, as the twin does."""
    text = json.dumps([{"tool_name": "a", "args": {"k": 1}, "tool_input": {"j": 2}}, {"tool_name": "b", "args": {}}])
    runs = [
        {},
        {"args_key": "args"},
        {"args_key": "args", "args_required": False},
        {"args_key": "args", "name_fn": str.upper},
        {},
    ]
    for mod in (core, twin):
        table = mod.CallTable()
        got = [table.intern([text, text], **kw) for kw in runs]
        if mod is core:
            native = (got, table.names(), [table.call(i) for i in range(len(table))])
        else:
            assert native == (got, table.names(), [table.call(i) for i in range(len(table))])
    first, keyed = native[0][0], native[0][1]
    assert first[3] and not keyed[3]  # tool_input missing from the second call: an error only for the default key


def test_json_text_by_hand():
    """The canonical forms the fast path must write, checked on the ids they give."""
    same = [
        '[{"tool_name": "f", "tool_input": {"a": 1, "b": [1, 2]}}]',
        '[{"tool_input":{"b":[1.0,2],"a":true},"tool_name":"f"}]',  # key order, 1.0, true
        '[{"tool_name":"\\u0066","tool_input":{"\\u0061":1e0,"b":[1,2E0]}}]',  # escapes, exponents
        '[{"tool_name":"f","tool_input":{"a":0,"a":1,"b":[1,2]}}]',  # the last duplicate wins
    ]
    different = [
        '[{"tool_name":"f","tool_input":{"a":1,"b":[2,1]}}]',
        '[{"tool_name":"f","tool_input":{"a":"1","b":[1,2]}}]',
        '[{"tool_name":"f","tool_input":null}]',
        '[{"tool_name":"f","tool_input":{}}]',
    ]
    for mod in (core, twin):
        calls, _, _, errors = mod.CallTable().intern(same + different)
        ids = np.frombuffer(calls, np.int32).tolist()
        assert not errors
        assert len(set(ids[:4])) == 1 and len(set(ids)) == 5


# --- Arrow list<struct>: arguments as structs, read field by field ----------------------------------

_field_values = {
    "i": st.none() | st.integers(-(2**63), 2**63 - 1),
    "f": st.none() | st.floats(allow_nan=True, allow_infinity=True),
    "s": st.none() | st.text(max_size=4),
    "b": st.none() | st.booleans(),
    "l": st.none() | st.lists(st.none() | st.integers(-5, 5), max_size=3),
    "o": st.none()
    | st.fixed_dictionaries({"y": st.none() | st.text(max_size=2), "x": st.none() | st.integers(-(2**63), 2**63 - 1)}),
    "lo": st.none() | st.lists(st.fixed_dictionaries({"k": st.none() | st.floats(-2, 2)}), max_size=2),
}


@st.composite
def _struct_call(draw):
    keys = draw(st.lists(st.sampled_from(sorted(_field_values)), unique=True, max_size=4))
    args = None if draw(st.integers(0, 9)) == 0 else {k: draw(_field_values[k]) for k in keys}
    name = draw(st.sampled_from(["a", "b", "ünï", "a\x00b"]))
    return {"tool_name": name, "tool_input": args}


_struct_row = st.none() | st.lists(st.none() | _struct_call(), max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.tuples(_struct_row, _struct_row), max_size=6),
    start=st.integers(0, 2),
    large=st.booleans(),
)
def test_arrow_structs_equal_twin(rows, start, large):
    preds = pa.array([p for p, _ in rows] + [[{"tool_name": "a", "tool_input": {"i": 1}}]])
    refs = pa.array([r for _, r in rows] + [[{"tool_name": "a", "tool_input": {"f": 1.0}}]])
    if large:
        preds = preds.cast(pa.large_list(preds.type.value_type))
    # a slice (offsets that do not start at 0) and a chunked column
    n = len(preds)
    start = min(start, n - 1)
    p, r = preds.slice(start), refs.slice(start)
    try:
        preds.validate(full=True)
    except pa.ArrowInvalid:
        # pyarrow 26 casts list<null> inside structs to a broken large_list: both refuse it whole
        for mod in (core, twin):
            with pytest.raises(ValueError, match="malformed Arrow column"):
                _run(mod, p, r)
        return
    assert _run(core, p, r) == _run(twin, p, r)
    chunked_p = pa.chunked_array([preds.slice(0, start), preds.slice(start)], type=preds.type)
    chunked_r = pa.chunked_array([refs.slice(0, start), refs.slice(start)], type=refs.type)
    assert _run(core, chunked_p, chunked_r) == _run(twin, chunked_p, chunked_r)


def _deep(levels: int) -> tuple[pa.DataType, dict]:
    typ, value = pa.int64(), 7
    for _ in range(levels):
        typ, value = pa.struct([("d", typ)]), {"d": value}
    return typ, value


_DEEP_TYPE, _DEEP_VALUE = _deep(62)  # past the depth the buffers are read to: its Python value

# every type the native reader writes from buffers, and some it leaves to Python values
_EXPLICIT_FIELDS = [
    ("u64", pa.uint64(), st.integers(0, 2**64 - 1)),
    ("i8", pa.int8(), st.integers(-128, 127)),
    ("f32", pa.float32(), st.floats(width=32, allow_nan=True)),
    ("big", pa.float64(), st.sampled_from([1e19, -3e300, 2.5, float("nan"), float("-inf")])),
    ("ls", pa.large_string(), st.text(max_size=3)),
    ("ll", pa.large_list(pa.int32()), st.lists(st.none() | st.integers(-9, 9), max_size=3)),
    ("m", pa.map_(pa.string(), pa.int64()), st.lists(st.tuples(st.text(max_size=2), st.integers(0, 3)), max_size=2)),
    ("ts", pa.timestamp("s"), st.sampled_from([0, 86400])),  # datetimes are not JSON: Python path
    ("bin", pa.binary(), st.binary(max_size=2)),  # bytes are not JSON either
    ("fsl", pa.list_(pa.int64(), 2), st.lists(st.integers(0, 3), min_size=2, max_size=2)),
    ("deep", _DEEP_TYPE, st.just(_DEEP_VALUE)),
    ("nul", pa.null(), st.none()),
]
_EXPLICIT_TYPE = pa.list_(
    pa.struct(
        [
            ("tool_name", pa.string()),
            ("tool_input", pa.struct([(name, typ) for name, typ, _ in _EXPLICIT_FIELDS])),
        ]
    )
)


@st.composite
def _explicit_call(draw):
    chosen = draw(st.lists(st.sampled_from(range(len(_EXPLICIT_FIELDS))), unique=True, max_size=4))
    args = {}
    for k in chosen:
        name, _, values = _EXPLICIT_FIELDS[k]
        args[name] = draw(st.none() | values)
    return {
        "tool_name": draw(st.sampled_from(["a", "b"])),
        "tool_input": None if draw(st.integers(0, 9)) == 0 else args,
    }


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(*[st.lists(_explicit_call(), max_size=3)] * 2), min_size=1, max_size=6),
    start=st.integers(0, 3),
)
def test_arrow_struct_arguments_of_every_type_equal_twin(rows, start):
    """Unsigned, narrow and float32 numbers, large strings and lists, huge and NaN floats
    (numbered in the twin's order), and types read through their Python values (maps,
    timestamps and bytes, which are not JSON, fixed-size lists,
    nesting past the buffer reader's depth): ids, errors and canonical texts are the
    twin's, on a slice and on a chunked column."""
    preds = pa.array([p for p, _ in rows], _EXPLICIT_TYPE)
    refs = pa.array([r for _, r in rows], _EXPLICIT_TYPE)
    start = min(start, len(rows) - 1)
    assert _run(core, preds.slice(start), refs.slice(start)) == _run(twin, preds.slice(start), refs.slice(start))
    chunked_p = pa.chunked_array([preds.slice(0, start), preds.slice(start)], type=preds.type)
    chunked_r = pa.chunked_array([refs.slice(0, start), refs.slice(start)], type=refs.type)
    assert _run(core, chunked_p, chunked_r) == _run(twin, chunked_p, chunked_r)


def test_arrow_null_fields_are_dropped_at_every_depth():
    rows = pa.array(
        [
            [{"tool_name": "f", "tool_input": {"a": 1, "b": None, "o": {"x": None}, "l": [{"y": None}, None]}}],
            [{"tool_name": "f", "tool_input": {"a": 1, "b": 2, "o": {"x": 3}, "l": []}}],
        ]
    )
    # row 0 reads as {"a": 1, "o": {}, "l": [{}, None]}: null fields dropped, a null element kept
    same = [[{"tool_name": "f", "tool_input": {"a": 1, "o": {}, "l": [{}, None]}}]]
    for mod in (core, twin):
        calls, _, _, errors = mod.CallTable().intern(rows)
        assert not errors
        assert len(set(np.frombuffer(calls, np.int32).tolist())) == 2
        table = mod.CallTable()
        assert table.intern(rows.slice(0, 1))[0] == table.intern(same)[0]


def test_arrow_structs_read_as_their_json_text_on_tau_bench():
    """Predicted and reference columns built from the same JSON get different struct types
    (each the union of its own rows' keys, nested ones included): the values must still be
    those of the JSON text."""
    tau = shared_data("agents", "tau_bench", "airline_trajectories.jsonl")
    pairs = [json.loads(line) for line in tau.read_text(encoding="utf-8").splitlines() if line.strip()]
    preds = [p["predicted_trajectory"] for p in pairs]
    refs = [p["reference_trajectory"] for p in pairs]
    arrow_p, arrow_r = pa.array(preds), pa.array(refs)
    assert arrow_p.type != arrow_r.type  # the point of the test: unions differ, nested ones too
    fam = TrajectoryFamily(["trajectory_exact_match", "trajectory_precision", "tool_trajectory_avg_score"])
    want = fam.score(fam.prepare([json.dumps(r) for r in refs]), [json.dumps(p) for p in preds]).columns
    for implementation in implementations.available():
        fam = TrajectoryFamily(list(want), implementation=implementation)
        got = fam.score(fam.prepare(arrow_r), arrow_p).columns
        for name, column in want.items():
            assert got[name].tolist() == column.tolist(), (implementation, name)


def test_arrow_map_arguments_read_as_the_json_objects_they_stand_for():
    """A map of arguments (Spark writes Parquet so) is the object of its keys and values,
    nulls kept, the last of a repeated key winning as in json.loads; a non-string key is a
    clear error, as in a dict."""
    call = pa.struct([("tool_name", pa.string()), ("tool_input", pa.map_(pa.string(), pa.int64()))])
    maps = pa.array(
        [
            [{"tool_name": "f", "tool_input": [("b", 2), ("a", None)]}],
            [{"tool_name": "f", "tool_input": [("a", 1), ("a", 3)]}],
            [{"tool_name": "f", "tool_input": []}],
        ],
        pa.list_(call),
    )
    objects = [
        [{"tool_name": "f", "tool_input": {"a": None, "b": 2}}],
        [{"tool_name": "f", "tool_input": {"a": 3}}],
        [{"tool_name": "f", "tool_input": {}}],
    ]
    nested = pa.array(
        [[{"tool_name": "g", "tool_input": {"m": [("k", [1, 2]), ("z", None)]}}]],
        pa.list_(
            pa.struct(
                [
                    ("tool_name", pa.string()),
                    ("tool_input", pa.struct([("m", pa.map_(pa.string(), pa.list_(pa.int64())))])),
                ]
            )
        ),
    )
    for mod in (core, twin):
        table = mod.CallTable()
        assert table.intern(maps)[:3] == table.intern(objects)[:3]
        got = table.intern(nested)  # a map inside struct-typed arguments, its null kept
        assert got[0] == table.intern([[{"tool_name": "g", "tool_input": {"m": {"k": [1, 2], "z": None}}}]])[0]
        assert table.call(int(np.frombuffer(got[0], np.int32)[0])) == ("g", '{"m":{"k":[1,2],"z":null}}')
        int_keys = pa.array(
            [[{"tool_name": "f", "tool_input": [(1, 1)]}]],
            pa.list_(pa.struct([("tool_name", pa.string()), ("tool_input", pa.map_(pa.int64(), pa.int64()))])),
        )
        ((row, reason),) = mod.CallTable().intern(int_keys)[3]
        assert row == 0 and "tool_input has a key of type int (1); JSON keys are strings" in reason


def test_arrow_other_shapes_take_the_python_path():
    """Map arguments, string arguments, a missing name field: both read them through Python."""
    cases = [
        pa.array(
            [[{"tool_name": "f", "tool_input": [("a", 1)]}]],
            pa.list_(pa.struct([("tool_name", pa.string()), ("tool_input", pa.map_(pa.string(), pa.int64()))])),
        ),
        pa.array([[{"tool_name": "f", "tool_input": '{"a": 1}'}]]),
        pa.array([[{"name": "f", "tool_input": {"a": 1}}]]),
        pa.array([[{"tool_name": "f"}]]),
        pa.array([[{"tool_name": "f", "tool_input": None}]]),
        pa.array([["not a call"]]),
        pa.array([1, 2]),
    ]
    for arr in cases:
        assert _run(core, arr, arr) == _run(twin, arr, arr), arr.type


def test_broken_arrow_buffers_are_refused():
    """Offsets past the end of the values: refused whole, before any buffer is read."""
    good = pa.array([json.dumps([{"tool_name": "a", "tool_input": {}}])] * 3)
    validity, offsets, data = good.buffers()
    bad_offsets = np.frombuffer(offsets, np.int32).copy()
    bad_offsets[2] = 10_000
    broken = pa.Array.from_buffers(pa.string(), 3, [validity, pa.py_buffer(bad_offsets.tobytes()), data])
    for mod in (core, twin):
        with pytest.raises(ValueError, match="malformed Arrow column"):
            mod.CallTable().intern(broken)


def _string_column(values: list[bytes | None], large: bool = False) -> pa.Array:
    """A string column holding exactly these bytes (Arrow's constructors would refuse them)."""
    width = np.int64 if large else np.int32
    offsets = np.cumsum([0] + [len(v or b"") for v in values]).astype(width)
    validity = np.packbits(np.array([v is not None for v in values], np.uint8), bitorder="little")
    return pa.Array.from_buffers(
        pa.large_string() if large else pa.string(),
        len(values),
        [
            pa.py_buffer(validity.tobytes()),
            pa.py_buffer(offsets.tobytes()),
            pa.py_buffer(b"".join(v or b"" for v in values)),
        ],
    )


@pytest.mark.parametrize("large", [False, True])
def test_json_text_columns_that_are_not_utf8_are_refused_as_the_twin_refuses_them(large):
    """The native reader checks a JSON-text column as it reads it instead of running Arrow's
    full validation first; the verdict and the message must still be the twin's."""
    good = json.dumps([{"tool_name": "a", "tool_input": {"k": "v"}}]).encode()
    cases = {
        "inside a string": good.replace(b'"v"', b'"v\xff"'),
        "inside a name": good.replace(b'"a"', b'"a\xc3"'),
        "outside strings": good + b" \xe2\x82",
    }
    for where, bad in cases.items():
        assert bad != good, where
        for rows in ([good, bad, good], [bad], [good] * 3 + [bad]):
            column = _string_column(rows, large)
            messages = []
            for mod in (core, twin):
                with pytest.raises(ValueError, match="malformed Arrow column") as info:
                    mod.CallTable().intern(column)
                messages.append(str(info.value))
            assert messages[0] == messages[1], where
            chunked = pa.chunked_array([_string_column([good], large), column])
            for mod in (core, twin):
                with pytest.raises(ValueError, match="malformed Arrow column"):
                    mod.CallTable().intern(chunked)
        # behind a null slot the bytes are not a value: Arrow accepts them, so do both
        column = _string_column([good, None, good], large)
        column = pa.Array.from_buffers(
            column.type, 3, [column.buffers()[0], column.buffers()[1], pa.py_buffer(good + good)]
        )
        assert _run(core, column, column) == _run(twin, column, column)
    # the same bytes as a memo hit: a call seen before, then seen again in a bad row
    rows = [good, good[:-1] + b', {"tool_name": "b", "tool_input": {}}\xff]']
    for mod in (core, twin):
        with pytest.raises(ValueError, match="malformed Arrow column"):
            mod.CallTable().intern(_string_column(rows, large))


def test_timestamps_and_decimals_are_not_json():
    import datetime
    import decimal

    arr = pa.array(
        [
            [{"tool_name": "f", "tool_input": {"t": datetime.datetime(2024, 1, 1), "i": 1}}],
            [{"tool_name": "f", "tool_input": {"t": None, "i": 2}}],
        ]
    )
    dec = pa.array([[{"tool_name": "f", "tool_input": {"d": decimal.Decimal("1.5")}}]])
    for a in (arr, dec):
        got, want = _run(core, a, a), _run(twin, a, a)
        assert got == want
        assert want[6]  # the rows with a non-JSON value are errors, with the twin's reason
    assert math.isfinite(1.0)


def _same_json(a, b) -> bool:
    """Equal JSON values, NaN equal to NaN, and bool, int and float told apart."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    return a == b


_text_strings = st.text(alphabet=st.sampled_from(list('ab"\\\n\t\x00\x1f é€😀/')), max_size=5)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.tuples(_struct_row, st.lists(_explicit_call(), max_size=2), st.none() | _text_strings), max_size=6
    ),
    start=st.integers(0, 3),
)
def test_arrow_json_texts_read_as_json_values(rows, start):
    """``arrow_json_texts`` (nested Parquet columns handed on as JSON text): each text
    decodes to the value ``json_values`` gives (record fields keep their nulls, the objects
    inside them do not), or both implementations decline the column's type."""
    from respeval.io.nested import json_values

    names = pa.array(
        [[{"tool_name": s, "tool_input": {"s": s, "deep": [{"s": s}]}}] if s is not None else None for *_, s in rows]
        + [None]
    )
    columns = [
        pa.array([r for r, _, _ in rows] + [[]]),
        pa.array([e for _, e, _ in rows] + [None], _EXPLICIT_TYPE),
        names,
        pa.array([{"a": s, "b": None, "c": [s, None]} for *_, s in rows] + [None]),  # no records: nulls kept
    ]
    for column in columns:
        start_at = min(start, len(column) - 1)
        for col in (column.slice(start_at), pa.chunked_array([column.slice(0, start_at), column.slice(start_at)])):
            native, python = core.arrow_json_texts(col), twin.arrow_json_texts(col)
            assert (native is None) == (python is None), col.type
            if native is None:
                continue
            want = json_values(col)
            assert len(native) == len(python) == len(want)
            for n, p, w in zip(native, python, want):
                assert (n is None) == (p is None) == (w is None)
                if n is not None:
                    assert _same_json(json.loads(n), w) and _same_json(json.loads(p), w), (n, w)


def test_arrow_json_texts_decline_columns_they_do_not_write():
    assert core.arrow_json_texts(pa.array(["[1]"])) is None  # text is already text
    assert twin.arrow_json_texts(pa.array(["[1]"])) is None
    mapped = pa.array([[{"m": [("k", 1)]}]], pa.list_(pa.struct([("m", pa.map_(pa.string(), pa.int64()))])))
    assert core.arrow_json_texts(mapped) is None and twin.arrow_json_texts(mapped) is None
    # invalid UTF-8 inside a list: only Arrow's full validation sees it
    broken = pa.ListArray.from_arrays(pa.array([0, 1], pa.int32()), _string_column([b"ok\xff"]))
    for mod in (core, twin):
        with pytest.raises(ValueError, match="malformed Arrow column"):
            mod.arrow_json_texts(broken)
