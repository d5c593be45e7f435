"""The native trajectory kernels against the pure-Python twin (every output, every error),
and fuzzed entry points: malformed buffers are rejected, never read out of bounds."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from respeval._core_py import trajectory as twin

core = pytest.importorskip("respeval._core", reason="the native core is not built")

_scalar = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True) | st.text(max_size=4)
_value = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)
_call = st.fixed_dictionaries(
    {
        "tool_name": st.sampled_from(["a", "b", "c", "ünï", "a\x00b"]),
        "tool_input": st.none() | st.dictionaries(st.sampled_from("xyz"), _value, max_size=3),
    }
)
_bad = st.sampled_from(
    [
        None,
        "",
        "not json",
        "{}",
        [1],
        [{"tool_name": 3, "tool_input": {}}],
        [{"tool_input": {}}],
        [{"tool_name": "a"}],
        [{"tool_name": "a", "tool_input": [1, 2]}],
        [{"tool_name": "a", "tool_input": "x"}],
        [{"tool_name": "a", "tool_input": {"k": {1, 2}}}],
        [{"tool_name": "a", "tool_input": {"k": {1: 2}}}],
        [{"tool_name": "a", "tool_input": {"k": object()}}],
        json.dumps([{"tool_name": "a", "tool_input": {"k": 1}}]),
    ]
)
_row = st.one_of(st.lists(_call, max_size=6), _bad)


def _run(mod, preds, refs, **kw):
    table = mod.CallTable()
    rc, rn, ro, re_ = table.intern(refs, **kw)
    pc, pn, po, pe = table.intern(preds, **kw)
    arrays = [np.frombuffer(b, t) for b, t in zip((pc, pn, po, rc, rn, ro), ("i4", "i4", "i8") * 2)]
    out = np.zeros((len(preds), len(mod.TRAJECTORY_STATS)), np.int64)
    pm = np.zeros(len(arrays[0]), np.uint8)
    rm = np.zeros(len(arrays[3]), np.uint8)
    mod.trajectory_pair_stats(*arrays, out, pm, rm)
    subs = mod.name_substitutions(arrays[1], arrays[2], arrays[4], arrays[5])
    calls = [table.call(i) for i in range(len(table))]
    return [pc, pn, po, rc, rn, ro, re_, pe, out.tolist(), pm.tolist(), rm.tolist(), subs, table.names(), calls]


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.tuples(_row, _row), max_size=8), mode=st.sampled_from(["json", "string"]))
def test_native_equals_twin(rows, mode):
    preds = [p for p, _ in rows]
    refs = [r for _, r in rows]
    try:
        want = _run(twin, preds, refs, args_mode=mode)
    except TypeError:
        # string mode: json.dumps itself refuses some values (sets, objects) in both implementations
        with pytest.raises(TypeError):
            _run(core, preds, refs, args_mode=mode)
        return
    got = _run(core, preds, refs, args_mode=mode)
    assert got == want


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(st.lists(_call, max_size=5), st.lists(_call, max_size=5)), max_size=6))
def test_name_normaliser_equal(rows):
    def fn(name):
        return None if name == "b" else name.upper()

    preds = [p for p, _ in rows]
    refs = [r for _, r in rows]
    assert _run(core, preds, refs, name_fn=fn) == _run(twin, preds, refs, name_fn=fn)


def test_python_equality_semantics():
    t = core.CallTable()
    calls, *_ = t.intern(
        [
            [
                {"tool_name": "f", "tool_input": {"a": 1, "b": [1, 2]}},
                {"tool_name": "f", "tool_input": {"b": [1.0, 2], "a": True}},  # equal under Python ==
                {"tool_name": "f", "tool_input": {"a": 1, "b": [2, 1]}},  # list order matters
                {"tool_name": "f", "tool_input": {"a": "1", "b": [1, 2]}},  # "1" != 1
                {"tool_name": "f", "tool_input": {"a": 2**53 + 1, "b": [1, 2]}},
                {"tool_name": "f", "tool_input": {"a": float(2**53), "b": [1, 2]}},  # exact int/float comparison
                {"tool_name": "f", "tool_input": None},
                {"tool_name": "f", "tool_input": {}},  # args missing != args {}
                {"tool_name": "f", "tool_input": {"x": math.nan}},
                {"tool_name": "f", "tool_input": {"x": math.nan}},  # NaN never equals NaN
            ]
        ]
    )
    ids = np.frombuffer(calls, np.int32).tolist()
    assert ids[0] == ids[1]
    assert len(set(ids)) == 9


def test_string_mode_is_key_order_sensitive():
    for mod in (core, twin):
        t = mod.CallTable()
        a = [{"tool_name": "f", "tool_input": {"a": 1, "b": 2}}, {"tool_name": "f", "tool_input": {"b": 2, "a": 1}}]
        json_ids = np.frombuffer(t.intern([a])[0], np.int32).tolist()
        str_ids = np.frombuffer(mod.CallTable().intern([a], args_mode="string")[0], np.int32).tolist()
        assert json_ids[0] == json_ids[1] and str_ids[0] != str_ids[1]


@st.composite
def _buffers(draw):
    n_calls = draw(st.integers(0, 6))
    ids = np.array(draw(st.lists(st.integers(-5, 5), min_size=n_calls, max_size=n_calls)), np.int32)
    off = np.array(draw(st.lists(st.integers(-3, 9), min_size=1, max_size=5)), np.int64)
    names = np.array(draw(st.lists(st.integers(-5, 5), min_size=0, max_size=7)), np.int32)
    return ids, names, off


@settings(max_examples=400, deadline=None)
@given(p=_buffers(), r=_buffers(), shape=st.integers(0, 5), flags=st.booleans())
def test_fuzzed_buffers_are_checked(p, r, shape, flags):
    """Random CSR arrays: either both implementations compute the same thing or both refuse."""
    results = []
    for mod in (core, twin):
        out = np.zeros((shape, len(mod.TRAJECTORY_STATS)), np.int64)
        pm = np.zeros(len(p[0]), np.uint8) if flags else None
        rm = np.zeros(len(r[0]), np.uint8) if flags else None
        try:
            mod.trajectory_pair_stats(p[0], p[1], p[2], r[0], r[1], r[2], out, pm, rm)
            results.append(("ok", out.tolist()))
        except ValueError:
            results.append(("refused", None))
        try:
            results.append(("subs", mod.name_substitutions(p[1], p[2], r[1], r[2])))
        except ValueError:
            results.append(("subs refused", None))
    assert results[:2] == results[2:]


def test_long_rows_and_threads_agree():
    rng = np.random.default_rng(7)
    rows = 3000
    lens_p = rng.integers(0, 40, rows)
    lens_r = rng.integers(0, 40, rows)
    pc = rng.integers(0, 12, lens_p.sum()).astype(np.int32)
    rc = rng.integers(0, 12, lens_r.sum()).astype(np.int32)
    po = np.r_[0, np.cumsum(lens_p)].astype(np.int64)
    ro = np.r_[0, np.cumsum(lens_r)].astype(np.int64)
    outs = []
    for mod, threads in ((core, 1), (core, 2), (twin, None)):
        out = np.zeros((rows, len(core.TRAJECTORY_STATS)), np.int64)
        mod.trajectory_pair_stats(pc, pc % 5, po, rc, rc % 5, ro, out, None, None, threads)
        outs.append(out)
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2])


def test_a_row_failing_midway_leaves_the_table_as_the_twin_does():
    """A row whose later call cannot be canonicalised is an error row, but the calls read
    before it stay interned, in both implementations (the twin interns as it goes): the
    table's contents, not only the ids, must agree.  Pins what a batched reader must keep."""
    rows = [
        [{"tool_name": "a", "tool_input": {"k": 1}}, {"tool_name": "b", "tool_input": {"k": {1, 2}}}],
        [{"tool_name": "c", "tool_input": {"k": 2}}, {"tool_name": "d", "tool_input": [1]}],
        [{"tool_name": "e", "tool_input": {"k": 3}}, {"tool_name": 5, "tool_input": {}}],
        [
            {"tool_name": "f", "tool_input": {"k": 4}},
            {"tool_name": "g", "tool_input": {"k": math.nan}},
            {"tool_name": "h", "tool_input": {"x": object()}},
        ],
        json.dumps([{"tool_name": "i", "tool_input": {"k": 1}}, {"tool_name": "j", "tool_input": "x"}]),
        json.dumps([{"tool_name": "k", "tool_input": {"q": 1e400}}, {"tool_name": "l", "tool_input": {}}]),
    ]
    got = []
    for mod in (core, twin):
        table = mod.CallTable()
        calls, names, offsets, errors = table.intern(rows)
        got.append((calls, names, offsets, [row for row, _ in errors], table.names(), table.call(0)))
    assert got[0] == got[1]
    assert got[0][3] == [0, 1, 2, 3, 4]  # only the last row reads
    assert got[0][4][:3] == ["a", "f", "g"]  # read before the failing call, and kept


class _Str(str):
    pass


class _Float(float):
    def __repr__(self) -> str:
        return "a float subclass"


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = {"n": value}
    return value


def test_the_dict_reader_leaves_unusual_rows_to_the_python_path():
    """Lists of dicts are read in C (trajectory_py.h) for exact built-in types only; every
    other row goes to the Python path from the same state.  Each row below takes that
    detour at some call (some after a NaN, whose counter must be put back) or exercises
    the C reader's own edges (escapes at every offset of the word scan, many keys, depth)."""
    import collections
    import enum

    class Level(enum.IntEnum):
        HIGH = 3

    # a " or \ at every offset of every length the word scan and its tail handle
    escapes = ["x" * k + e + "x" * (n - k - 1) for n in range(1, 26) for k in range(n) for e in '"\\']
    rows = [
        [{"tool_name": "a", "tool_input": {"x": math.nan}}, {"tool_name": "a", "tool_input": {"x": 2**80}}],
        [{"tool_name": "a", "tool_input": {"x": math.nan}}, collections.OrderedDict(tool_name="b", tool_input={})],
        [{"tool_name": _Str("s"), "tool_input": {"x": 1}}],
        [{"tool_name": "a", "tool_input": {_Str("k"): 1, "j": _Str("v")}}],
        [{"tool_name": "a", "tool_input": {"x": Level.HIGH, "y": True, "z": False, "w": None}}],
        [{"tool_name": "a", "tool_input": {"x": math.nan}}, {"tool_name": "a", "tool_input": {"x": _Float(0.5)}}],
        [{"tool_name": "a", "tool_input": {"x": 1e300, "y": -0.0, "z": math.inf, "w": -math.inf, "v": 0.1}}],
        [{"tool_name": "a", "tool_input": {"x": 2.0**63, "y": -(2.0**63), "z": 9.1e18, "w": 123456789.0}}],
        [{"tool_name": "a", "tool_input": {"x": (1, [2, (3,)], {"t": ()})}}],
        [{"tool_name": "a\ud800", "tool_input": {"x": 1}}],
        [{"tool_name": "a", "tool_input": {"k\udfff": 1}}],
        [{"tool_name": "a", "tool_input": {"k": "v\ud800"}}],
        [{"tool_name": "ü", "tool_input": {"ключ": "значение", "k": "ü\x00"}}],
        [{"tool_name": "a", "tool_input": {f"k{i:02d}": i for i in reversed(range(40))}}],
        [{"tool_name": "a", "tool_input": {"d": {f"k{i}": {f"j{i}": i} for i in range(20)}}}],
        [{"tool_name": "a", "tool_input": {"e": e, e: 1}} for e in escapes],
        [{"tool_name": e, "tool_input": {e[::-1]: e}} for e in escapes],
        [{"tool_name": "a", "tool_input": _nested(depth)} for depth in (98, 99, 100)],
        [{"tool_name": "a", "tool_input": {"x": 1}}, {"tool_name": "a", "tool_input": _nested(101)}],
        ({"tool_name": "a", "tool_input": {"x": 1}},),
        [{"tool_name": "a", "tool_input": {"x": math.nan}}, {"tool_name": "a", "tool_input": {"x": math.nan}}],
        [{"tool_name": "a"}],
        [{"tool_name": "a", "tool_input": collections.OrderedDict(x=1)}],
    ]
    for kw in ({}, {"args_required": False}):
        got = _run(core, rows, list(reversed(rows)), **kw)
        want = _run(twin, rows, list(reversed(rows)), **kw)
        assert got == want, kw
    assert any("NaN#" in args for _, args in got[-1])  # the NaN counters were compared


def test_a_failing_name_normaliser_leaves_the_table_as_the_twin_does():
    def fn(name):
        if name == "bad":
            return 3  # not a str: the row is an error row
        return None if name == "drop" else name.upper()

    rows = [
        [
            {"tool_name": "a", "tool_input": {"k": 1}},
            {"tool_name": "b", "tool_input": {"k": 2}},
            {"tool_name": "bad", "tool_input": {"k": 3}},
        ],
        [{"tool_name": "c", "tool_input": {"k": 1}}],
        # a dropped call's arguments are never read: no NaN counted, no error for a set
        [{"tool_name": "drop", "tool_input": {"k": math.nan}}, {"tool_name": "c", "tool_input": {"k": math.nan}}],
        [{"tool_name": "drop", "tool_input": {"k": {1, 2}}}, {"tool_name": "c", "tool_input": {"k": 2}}],
    ]
    got = []
    for mod in (core, twin):
        table = mod.CallTable()
        calls, names, offsets, errors = table.intern(rows, name_fn=fn)
        got.append(
            (
                calls,
                names,
                offsets,
                [row for row, _ in errors],
                table.names(),
                [table.call(i) for i in range(len(table))],
            )
        )
    assert got[0] == got[1]
    assert got[0][3] == [0]
    assert got[0][4] == ["A", "B", "C"]  # the calls before the failing name stay interned
    assert ("C", '{"k":NaN#1}') in got[0][5]
    # the same through the Arrow struct reader (a column of structs)
    pa = pytest.importorskip("pyarrow")
    column = pa.array(rows[:3])
    got = []
    for mod in (core, twin):
        table = mod.CallTable()
        calls, names, offsets, errors = table.intern(column, name_fn=fn)
        got.append((calls, names, offsets, [row for row, _ in errors], table.names(), len(table)))
    assert got[0] == got[1]
    assert got[0][4] == ["A", "B", "C"]


# The dict memo (cext/trajectory_py.h): a call read from Python objects is remembered under
# its fingerprint, so calls that come again, as new objects, take the remembered ids.  The
# pool holds calls that are equal as objects but written differently (key order, 1 / 1.0 /
# True, -0.0 / 0.0, list / tuple), strings of every storage kind and of lengths past a
# one-byte count, the cases the memo must never answer (NaN, lone surrogates, subclasses,
# big integers, nesting too deep), and call dicts of unusual shape (extra keys, keys in
# another order, a non-str key).
_LONG = "x" * 300
_MEMO_POOL = [
    {"tool_name": "f", "tool_input": {"a": 1}},
    {"tool_name": "f", "tool_input": {"a": 1.0}},
    {"tool_name": "f", "tool_input": {"a": True}},
    {"tool_name": "f", "tool_input": {"a": 1, "b": [2, "c"]}},
    {"tool_name": "f", "tool_input": {"b": [2, "c"], "a": 1}},
    {"tool_name": "f", "tool_input": {"b": (2, "c"), "a": 1}},
    {"tool_name": "f", "tool_input": {"a": -0.0}},
    {"tool_name": "f", "tool_input": {"a": 0.0}},
    {"tool_name": "f", "tool_input": {"a": 0}},
    {"tool_name": "f", "tool_input": {"a": 0.5}},
    {"tool_name": "f", "tool_input": {"a": -1}},
    {"tool_name": "f", "tool_input": {"a": math.nan}},
    {"tool_name": "f", "tool_input": {"a": 2**70}},
    {"tool_name": "f", "tool_input": {"a": "é"}},
    {"tool_name": "f", "tool_input": {"a": "€"}},
    {"tool_name": "f", "tool_input": {"a": "😀"}},
    {"tool_name": "f", "tool_input": {"a": "\ud800"}},
    {"tool_name": "f", "tool_input": {"é": "a"}},
    {"tool_name": "f", "tool_input": {"a": "ĩ"}},
    {"tool_name": "f", "tool_input": {"a": ")\x01"}},
    {"tool_name": "f", "tool_input": {"a": "1"}},
    {"tool_name": "f", "tool_input": {"a": ["1"]}},
    {"tool_name": "f", "tool_input": {"a": [[]]}},
    {"tool_name": "f", "tool_input": {"a": [{}]}},
    {"tool_name": "f", "tool_input": {"a": _LONG}},
    {"tool_name": "f", "tool_input": {_LONG: "a"}},
    {"tool_name": "f", "tool_input": {f"k{i}": i for i in range(300)}},
    {"tool_name": "f", "tool_input": {"a": list(range(300))}},
    {"tool_name": "f", "tool_input": {"a": [1, [2, {"c": None, "d": [False]}]]}},
    {"tool_name": "f", "tool_input": {"a": _Str("s")}},
    {"tool_name": "f", "tool_input": {"a": _Float(0.5)}},
    {"tool_name": "f", "tool_input": _nested(99)},
    {"tool_name": "f", "tool_input": _nested(101)},
    {"tool_name": "f", "tool_input": {}},
    {"tool_name": "f", "tool_input": None},
    {"tool_name": "f"},
    {"tool_name": "g", "tool_input": {"a": 1}},
    {"tool_name": "fa", "tool_input": {"a": 1}},
    {"tool_name": "fb", "tool_input": {"a": 1}},
    {"tool_name": "ünï", "tool_input": {"a": 1}},
    {"tool_name": _LONG, "tool_input": {"a": 1}},
    {"tool_name": "drop", "tool_input": {"a": math.nan}},
    {"tool_input": {"a": 1}, "tool_name": "f"},
    {"tool_name": "f", "tool_input": {"a": 1}, "extra": [1, 2]},
    {1: "x", "tool_name": "f", "tool_input": {"a": 1}},
]


def _memo_rows(draw_rows, fresh):
    """Rows of pool calls; `fresh` rows rebuild their calls as new objects, as json.loads would."""
    import copy

    return [[copy.deepcopy(_MEMO_POOL[i]) if f else _MEMO_POOL[i] for i in row] for row, f in zip(draw_rows, fresh)]


_pool_row = st.lists(st.integers(0, len(_MEMO_POOL) - 1), max_size=6)


@settings(max_examples=300, deadline=None)
@given(
    pairs=st.lists(st.tuples(_pool_row, _pool_row), max_size=10),
    fresh=st.lists(st.booleans(), min_size=10, max_size=10),
    required=st.booleans(),
    normalise=st.booleans(),
)
def test_calls_the_memo_remembers_take_the_ids_a_full_read_gives(pairs, fresh, required, normalise):
    """Every row, every id, every error and the table's contents (NaN counters included)
    equal the twin's, whatever mix of remembered, new and unrememberable calls a row has."""

    def fn(name):
        return None if name == "drop" else name.upper()

    kw = {"args_required": required, "name_fn": fn if normalise else None}
    p, r = _memo_rows([a for a, _ in pairs], fresh), _memo_rows([b for _, b in pairs], fresh[::-1])
    assert _run(core, p, r, **kw) == _run(twin, p, r, **kw)


def test_the_memo_answers_calls_that_come_again_as_new_objects():
    """Calls met again (new objects, equal content) take the memo's ids without adding to
    it; calls it must not answer (NaN, lone surrogates, subclasses, big integers) are never
    remembered."""
    import copy

    table = core.CallTable()
    rows = [[_MEMO_POOL[i] for i in (0, 1, 2, 3, 4, 13, 14, 15, 24, 26, 28)]]
    first = table.intern(rows)[0]
    remembered = table._memo_entries
    assert remembered == 11  # one fingerprint per call object: equal calls, distinct forms
    assert len(table) == 8  # 1, 1.0 and True are one call; so are both key orders
    again = table.intern(copy.deepcopy(rows))[0]
    assert again == first and table._memo_entries == remembered
    unrememberable = [[_MEMO_POOL[i] for i in (11, 12, 16, 29, 30)]]
    table.intern(unrememberable)
    table.intern(copy.deepcopy(unrememberable))
    assert table._memo_entries == remembered


def test_dicts_are_read_from_their_tables_as_pydict_next_reads_them():
    """cext/pydict.h reads an exact dict's entries from its table on CPython 3.11 to 3.13
    with the GIL (and checks itself on dicts of every kind when the module loads);
    elsewhere PyDict_Next.  Either way its items are exactly ``dict.items()``, in order,
    object for object."""
    import random
    import sys
    import sysconfig

    known_layout = (3, 11) <= sys.version_info[:2] <= (3, 13) and not sysconfig.get_config_var("Py_GIL_DISABLED")
    if sys.implementation.name == "cpython" and known_layout:
        assert core._dict_direct_reading()

    class Instance:
        pass

    rng = random.Random(5)
    dicts = []
    for size in (0, 1, 2, 5, 6, 11, 50, 300):
        for keys in ("str", "mixed"):
            d = {}
            for i in range(size):
                d[f"k{i}" if keys == "str" or i % 3 else (i, "t") if i % 2 else i] = [i] if i % 4 else i
            for k in rng.sample(list(d), size // 3):
                del d[k]
            d.update({"late": 1} if size else {})
            dicts.append(d)
    obj = Instance()
    obj.a, obj.b = 1, 2
    dicts.append(obj.__dict__)  # a split table: PyDict_Next
    direct = core._dict_direct_reading()
    try:
        for reading in (direct, False):  # as the module reads them, and through PyDict_Next
            assert core._dict_direct_reading(reading) == reading
            for d in dicts:
                got = core._dict_items(d)
                assert len(got) == len(d)
                assert all(k is k2 and v is v2 for (k, v), (k2, v2) in zip(got, d.items()))
    finally:
        core._dict_direct_reading(direct)
    assert core._dict_direct_reading() == direct


def test_a_struct_naming_a_field_twice_is_refused_whole_by_both():
    """A column whose arguments' struct has two fields named 'a' has no JSON reading: both
    implementations refuse it whole with the same error, naming where the name repeats."""
    pa = pytest.importorskip("pyarrow")
    args = pa.StructArray.from_arrays(
        [pa.array([1, 2]), pa.array(["x", "y"])], fields=[pa.field("a", pa.int64()), pa.field("a", pa.string())]
    )
    calls = pa.StructArray.from_arrays([pa.array(["f", "g"]), args], names=["tool_name", "tool_input"])
    column = pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), calls)
    messages = []
    for mod in (core, twin):
        with pytest.raises(ValueError) as info:
            mod.CallTable().intern(column)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "struct at [].tool_input has two fields named 'a'" in messages[0]


def test_a_normaliser_that_changes_the_rows_it_is_asked_about():
    """The normaliser runs between a row's shape and its keys.  One that replaces the
    arguments of the calls it is asked about, and empties the row, frees nothing the
    native reader still reads (it holds the row's names and arguments), reads as the twin
    reads, and leaves no memo entry for a call it changed."""

    def rows():
        return [
            [{"tool_name": n, "tool_input": {"k": [n] * 3}} for n in ("a", "b", "c")],
            [{"tool_name": n, "tool_input": {"k": [n] * 3}} for n in ("a", "b", "d")],
        ]

    got = []
    for mod in (core, twin):
        data = rows()

        def fn(name, data=data):
            for row in data:
                for call in row:
                    call["tool_input"] = {"replaced": name}
                row.clear()
            return name.upper()

        table = mod.CallTable()
        calls, names, offsets, errors = table.intern(data, name_fn=fn)
        fresh = table.intern(rows(), name_fn=fn)
        got.append((calls, names, offsets, errors, table.names(), [table.call(i) for i in range(len(table))], fresh))
    assert got[0] == got[1]
    assert ("A", '{"k":["a","a","a"]}') in got[0][5]
