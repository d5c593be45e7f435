"""metrics.checks: the built-in checks, through the registry as every caller uses them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from respeval.metrics import REGISTRY, MetricOptions
from respeval.metrics.checks import count_sentences, count_words


def run(metric: str, preds: list[str], refs: list | None = None, **options) -> tuple[dict, dict]:
    (family,) = REGISTRY.build_families([metric], MetricOptions(params={metric: options}))
    refs = refs if refs is not None else [""] * len(preds)
    out = family.score(family.prepare(refs), preds)
    return {k: np.asarray(v).tolist() for k, v in out.columns.items()}, out.errors


def test_every_check_is_registered_with_its_inputs():
    for name in ("json_valid", "regex", "includes", "word_count", "sentence_count", "length_ratio"):
        spec = REGISTRY[name]
        assert spec.inputs == "text"
        assert spec.reference == (name == "length_ratio")


def test_json_valid_with_and_without_schema():
    cols, _ = run("json_valid", ['{"a": 1}', "[1, 2]", "{a: 1}", '```json\n{"a": 1}\n```'])
    assert cols["json_valid"] == [1.0, 1.0, 0.0, 0.0]
    assert cols["json_valid_error"][0] is None and "not JSON" in cols["json_valid_error"][2]
    cols, _ = run("json_valid", ['```json\n{"a": 1}\n```'], strip_fences=True)
    assert cols["json_valid"] == [1.0]
    schema = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string"}}}
    cols, _ = run("json_valid", ['{"answer": "x"}', '{"answer": 3}', '{"other": 1}'], schema=schema)
    assert cols["json_valid"] == [1.0, 0.0, 0.0]
    assert (
        "at answer" in cols["json_valid_error"][1] and "'answer' is a required property" in cols["json_valid_error"][2]
    )


def test_json_schema_from_a_file_and_a_bad_schema(tmp_path):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"type": "array", "minItems": 2}))
    cols, _ = run("json_valid", ["[1]", "[1, 2]"], schema=str(path))
    assert cols["json_valid"] == [0.0, 1.0]
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        run("json_valid", ["{}"], schema={"type": 12})


def test_regex_modes_flags_and_negation():
    preds = ["Order 2024-01-05 shipped", "2024-01-05", "no date"]
    date = r"\d{4}-\d\d-\d\d"
    assert run("regex", preds, pattern=date)[0]["regex"] == [1.0, 1.0, 0.0]
    assert run("regex", preds, pattern=date, mode="full")[0]["regex"] == [0.0, 1.0, 0.0]
    assert run("regex", preds, pattern="order", mode="match", ignore_case=True)[0]["regex"] == [1.0, 0.0, 0.0]
    assert run("regex", preds, pattern=date, negate=True)[0]["regex"] == [0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="bad regular expression"):
        run("regex", preds, pattern="(")
    with pytest.raises(ValueError, match="pattern"):
        run("regex", preds)


def test_includes_any_all_case_and_words():
    preds = ["Paris is the capital", "paris and Lyon", "Parisian food"]
    assert run("includes", preds, values=["Paris"])[0]["includes"] == [1.0, 1.0, 1.0]
    assert run("includes", preds, values=["Paris"], case_sensitive=True)[0]["includes"] == [1.0, 0.0, 1.0]
    assert run("includes", preds, values=["paris"], whole_word=True)[0]["includes"] == [1.0, 1.0, 0.0]
    cols, _ = run("includes", preds, values=["paris", "lyon"], mode="all")
    assert cols["includes"] == [0.0, 1.0, 0.0] and cols["includes_found"] == [1, 2, 1]


def test_counts_within_bounds():
    assert count_words("  one two\nthree ") == 3
    assert count_sentences("One. Two! Three? Four") == 4
    assert count_sentences("Pi is 3.14 exactly.") == 1
    assert count_sentences("") == 0
    assert count_sentences('He said "stop." Then left.') == 2
    preds = ["A. B. C. D.", "A. B.", "One sentence only"]
    cols, _ = run("sentence_count", preds, exactly=4)
    assert cols["sentence_count"] == [1.0, 0.0, 0.0] and cols["sentence_count_n"] == [4, 2, 1]
    cols, _ = run("word_count", preds, min=3, max=4)
    assert cols["word_count"] == [1.0, 0.0, 1.0] and cols["word_count_n"] == [4, 2, 3]
    with pytest.raises(ValueError, match="bounds"):
        run("word_count", preds)
    with pytest.raises(ValueError, match="not both"):
        run("word_count", preds, exactly=2, max=3)


def test_length_ratio_and_an_empty_reference():
    cols, errors = run("length_ratio", ["a b", "a b c d", "x"], ["a b c d", ["a", "a b c d e"], "  "], max=1.0)
    assert cols["length_ratio"][:2] == [0.5, 0.8]  # the closest reference (5 words, not 1) counts
    assert np.isnan(cols["length_ratio"][2]) and "empty" in errors[2]
    assert cols["length_ratio_pass"][:2] == [1.0, 1.0]


def test_unknown_options_are_named():
    with pytest.raises(TypeError, match=r"unknown metric option regex\.flavour; regex takes: name, pattern"):
        run("regex", ["x"], pattern="x", flavour="pcre")


def test_a_check_renamed_keeps_its_own_columns():
    (family,) = (
        REGISTRY["regex"].build(["regex"], MetricOptions(params={"regex": {"pattern": "x", "name": "has_x"}})),
    )
    assert family.name == "has_x" and family.headline == ("has_x",)
    assert "has_x" in family.signature() and "pattern:'x'" in family.signature()
