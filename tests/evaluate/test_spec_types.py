"""Every field of a spec file holds a value of its type (issue 28: 4).

``network: "false"`` is what a quoted YAML value, a JSON string or a TOML string gives; read as
truthy it switched the guard off while the signature said the network was blocked.  Each wrong
type is an error naming the file, the entry and the field; the same holds for the options of
the built-in checks and trajectory metrics, and for ``CustomMetric`` called from Python.
"""

from __future__ import annotations

import json

import pytest

from respeval.evaluate import CustomMetric, load_spec
from respeval.evaluate.plan import Computed, resolve_metrics

CHECKS = "def ok(row):\n    return 1.0\n"


def _spec(tmp_path, text, suffix=".json"):
    (tmp_path / "checks.py").write_text(CHECKS)
    path = tmp_path / f"spec{suffix}"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("suffix", "text"),
    [
        (".json", json.dumps({"metrics": [{"custom": "checks.py:ok", "isolation": "process", "network": "false"}]})),
        (".toml", '[[metrics]]\ncustom = "checks.py:ok"\nisolation = "process"\nnetwork = "false"\n'),
        (".yaml", 'metrics:\n  - {custom: "checks.py:ok", isolation: process, network: "false"}\n'),
    ],
)
def test_a_string_false_for_network_is_an_error_naming_the_field(tmp_path, suffix, text):
    if suffix == ".yaml":
        pytest.importorskip("yaml")
    with pytest.raises(
        ValueError,
        match=r"metrics\[0\]: metric entry 'checks.py:ok': network must be true or false, got the string 'false'",
    ):
        load_spec(_spec(tmp_path, text, suffix))


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"custom": "checks.py:ok", "batch": "yes"}, "batch must be true or false, got the string 'yes'"),
        ({"custom": "checks.py:ok", "higher_is_better": 0}, "higher_is_better must be true or false, got int 0"),
        ({"custom": "checks.py:ok", "timeout": "5"}, "timeout must be a positive number of seconds, or null"),
        ({"custom": "checks.py:ok", "memory_mb": 1.5}, "memory_mb must be a positive whole number of MB, or null"),
        ({"custom": "checks.py:ok", "workers": True}, "workers must be a positive whole number, got bool True"),
        ({"custom": "checks.py:ok", "outputs": "a,b"}, "outputs must be a list of strings, got the string 'a,b'"),
        ({"custom": "checks.py:ok", "env": "OPENAI_API_KEY"}, "env must be a list of strings"),
        ({"custom": 5}, "custom must be a string, got int 5"),
        ({"pairwise": "pref", "allow_tie": "false"}, "allow_tie must be true or false, got the string 'false'"),
        ({"pointwise": "p", "threshold": "3"}, "threshold must be a number, got the string '3'"),
        ({"pointwise": "p", "max_tokens": "512"}, "max_tokens must be a positive whole number"),
        ({"pointwise": "p", "score_range": [1, "5"]}, "score_range must be a list of two numbers"),
        ({"predefined": "SAFETY", "threshold": True}, "threshold must be a number, got bool True"),
    ],
)
def test_every_entry_field_is_type_checked(tmp_path, entry, message):
    with pytest.raises(ValueError, match=r"metrics\[0\]: metric entry .*: " + message.replace("(", r"\(")):
        load_spec(_spec(tmp_path, json.dumps({"metrics": [entry]})))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"judge": {"concurrency": "16"}}, "judge: concurrency must be a positive whole number, got the string '16'"),
        ({"judge": {"budget_usd": "5"}}, "judge: budget_usd must be a number, 0 or more, got the string '5'"),
        ({"judge": {"samples": 1.5}}, "judge: samples must be a positive whole number, got float 1.5"),
        ({"model": ["fake:score=1"]}, "model must be a string"),
        ({"columns": {"response": 3}}, "columns: response must be a column name"),
    ],
)
def test_the_rest_of_the_spec_is_type_checked(tmp_path, spec, message):
    with pytest.raises(ValueError, match=message):
        load_spec(_spec(tmp_path, json.dumps({"metrics": ["exact_match"], **spec})))


def test_a_well_typed_spec_loads(tmp_path):
    text = json.dumps(
        {
            "metrics": [{"custom": "checks.py:ok", "isolation": "process", "network": False, "timeout": 5, "env": []}],
            "judge": {"concurrency": 4, "budget_usd": 0.5},
        }
    )
    (metric,) = load_spec(_spec(tmp_path, text))["metrics"]
    assert metric.limits.network is False and metric.limits.timeout == 5.0


def test_custom_metric_checks_its_arguments_from_python():
    with pytest.raises(TypeError, match="x: network must be true or false, got the string 'false'"):
        CustomMetric("x", len, network="false")
    with pytest.raises(TypeError, match="x: batch must be true or false"):
        CustomMetric("x", len, batch="false")


@pytest.mark.parametrize(
    ("metric", "options", "message"),
    [
        ("regex", {"pattern": "a", "negate": "false"}, "regex: negate must be true or false, got the string 'false'"),
        ("regex", {"pattern": "a", "ignore_case": "False"}, "ignore_case must be true or false"),
        ("includes", {"values": ["a"], "whole_word": "no"}, "whole_word must be true or false"),
        ("json_valid", {"strip_fences": 1}, "strip_fences must be true or false, got int 1"),
        ("trajectory_exact_match", {"multiplicity": "false"}, "trajectory: multiplicity must be true or false"),
        ("deepeval_tool_correctness", {"consider_ordering": "true"}, "consider_ordering must be true or false"),
    ],
)
def test_the_bool_options_of_the_registry_metrics_are_type_checked(metric, options, message):
    """The same mistake in the checks' and trajectory metrics' options (a spec's ``{metric:
    regex, negate: "false"}`` or ``--metric-option regex.negate=False`` negated the check)."""
    with pytest.raises(TypeError, match=message):
        resolve_metrics([Computed(metric, **options)])
