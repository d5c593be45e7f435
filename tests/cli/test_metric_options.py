"""Issue 28.29: ``respeval metrics`` lists the predefined judge metrics and every metric's
options; an unknown ``--metric-option`` is refused naming the valid ones (it leaked
"SquadFamily.__init__() got an unexpected keyword argument")."""

from __future__ import annotations

import inspect
import json

import pytest

from _helpers.cli import run_cli as run
from respeval.judge.methods.predefined import PREDEFINED_INFO
from respeval.metrics import REGISTRY
from respeval.metrics.registry import MetricOptions, UnknownOptionError


def test_metrics_lists_the_judge_metrics_and_the_options(capsys):
    code, out, _ = run(capsys, "metrics")
    assert code == 0
    for name in PREDEFINED_INFO:
        assert name in out
    assert "squad" in out and "version" in out and "tokenize" in out and "smooth_value" in out
    code, out, _ = run(capsys, "metrics", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["squad"]["options"].keys() == {"version"}
    assert rows["GROUNDING"]["kind"] == "judge" and rows["GROUNDING"]["columns"]
    assert rows["rouge1"]["options"] == {}


@pytest.mark.parametrize(
    "metric, option",
    [("squad", "bogus"), ("bleu", "nope"), ("rouge1", "stemmer"), ("ter", "x"), ("trajectory_f1", "nope")],
)
def test_an_unknown_option_is_refused_naming_the_valid_ones(tmp_path, capsys, metric, option):
    data = tmp_path / "rows.jsonl"
    data.write_text('{"response": "a", "reference": "a"}\n')
    code, _, err = run(capsys, "score", "--pred", str(data), "--metrics", metric, "--metric-option",
                       f"{metric}.{option}=1", "--quiet")  # fmt: skip
    assert code == 1, err
    assert f"{metric}.{option}" in err and "__init__" not in err and "unexpected keyword" not in err, err
    valid = REGISTRY[metric].options
    assert (", ".join(valid) in err) if valid else "takes no options" in err, err


def test_evaluate_refuses_an_unknown_option_too():
    from respeval.evaluate import Computed, evaluate

    with pytest.raises(UnknownOptionError, match=r"squad\.bogus.*version"):
        evaluate([{"response": "a", "reference": "a"}], [Computed("squad", bogus=1)])


def test_the_declared_options_are_what_each_family_takes():
    """The declaration cannot drift from the code: every declared option builds, and every
    keyword a family's constructor takes (but the shared ones) is declared."""
    shared = {"self", "threads", "implementation", "tokenizer", "stemmer", "types", "metrics", "name"}
    for spec in REGISTRY.specs():
        for option in spec.options:
            REGISTRY.check_options(spec.name, {option: None})
        if spec.family in ("json_valid", "regex", "includes", "word_count", "sentence_count", "length_ratio"):
            continue  # the checks declare theirs in one table, checked by check_options
        needs = {"trajectory_single_tool_use": {"tool_name": "search"}}.get(spec.name, {})
        family = REGISTRY.build_families([spec.name], MetricOptions(params={spec.name: needs}))[0]
        # a shared name a family declares as its own option (BLEU's tokenizer) is its own
        taken = set(inspect.signature(type(family).__init__).parameters) - (shared - set(spec.options))
        assert taken == set(spec.options), (spec.name, taken, set(spec.options))
