"""``io.nested.raw_values``: a nested Parquet column handed on as JSON text reads the same
whichever kernel implementation runs (the readers ask the kernels, they do not ask which
kernels they have), and means what ``json_values`` gives."""

from __future__ import annotations

import json

import pytest

from respeval.io.nested import json_values, raw_values

pa = pytest.importorskip("pyarrow")

ROWS = [
    [{"tool_name": "f", "tool_input": {"a": 1, "b": None, "o": [{"x": None, "y": "é"}]}}],
    None,
    [],
    [{"tool_name": "g", "tool_input": {"a": 2.5, "b": 'a "quote" and \\ a backslash', "o": []}}],
]


def test_json_text_of_a_nested_column_is_the_same_on_both_implementations(impl, monkeypatch):
    monkeypatch.setenv("RESPEVAL_IMPLEMENTATION", impl)
    column = pa.array(ROWS)
    texts = raw_values(column, as_json_text=True)
    assert [None if t is None else json.loads(t) for t in texts] == json_values(column)
    assert all(t is None or isinstance(t, str) for t in texts)  # text on the twin too
    assert raw_values(column) == json_values(column)


def test_a_column_the_kernels_do_not_write_reads_as_values(impl, monkeypatch):
    monkeypatch.setenv("RESPEVAL_IMPLEMENTATION", impl)
    column = pa.array([[{"k": 1}]], pa.list_(pa.map_(pa.string(), pa.int64())))  # maps: through Python values
    assert raw_values(column, as_json_text=True) == json_values(column) == [[{"k": 1}]]
