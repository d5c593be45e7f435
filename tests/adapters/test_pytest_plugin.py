"""The respeval pytest plugin (pytest11 entry point), run inside pytest with pytester."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

import respeval
import respeval.testing
from _helpers.judge_server import JudgeServer

pytest_plugins = ["pytester"]

FAKE_JUDGE_CONFTEST = """
import json
import pytest
from respeval import judge

CALLS = []


def verdict(request):
    CALLS.append(1)
    text = request.messages[-1].content
    wrong = "Lyon" in text
    return json.dumps({"reasoning": "wrong city" if wrong else "same city", "score": 0.0 if wrong else 1.0,
                       "pass": not wrong})


@pytest.fixture
def respeval_judge_model():
    return judge.FakeModel(verdict, name="city-judge")
"""

JUDGED_TESTS = """
from respeval.testing import assert_judged


def test_paris(respeval_judge_model):
    verdict = assert_judged("It is Paris.", "Paris", prompt="Capital of France?")
    assert verdict["pass"] is True


def test_lyon(respeval_judge_model):
    assert_judged("It is Lyon.", "Paris", prompt="Capital of France?")
"""


def test_plugin_is_registered_through_the_entry_point(pytester):
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--respeval-judge=MODEL*", "*--respeval-replay-only*"])
    from importlib.metadata import entry_points

    names = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert names.get("respeval") == "respeval._adapters.pytest_plugin"


def test_metric_thresholds_pass_fail_summary_and_junit_properties(pytester):
    pytester.makepyfile(
        """
        from respeval.testing import assert_metric

        PREDS = ["the cat sat on the mat", "a dog barked loudly"]
        REFS = ["the cat sat on a mat", "the dog barked"]

        def test_rouge_good():
            value = assert_metric("rougeL", PREDS, REFS, at_least=0.5)
            assert value > 0.5

        def test_bleu_too_low():
            assert_metric("bleu", PREDS, REFS, at_least=90)

        def test_each_row():
            assert_metric("rouge1", PREDS, REFS, at_least=0.2, of="each")
        """
    )
    result = pytester.runpytest("--junitxml=junit.xml", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*respeval bleu (corpus) = *, expected >= 90 (2 rows)*",
            "*= respeval =*",
            "metric checks: 2/3 passed (66.7%)",
            "  bleu: 0/1",
            "  rouge1: 1/1",
            "  rougeL: 1/1",
        ]
    )
    preds = ["the cat sat on the mat", "a dog barked loudly"]
    refs = ["the cat sat on a mat", "the dog barked"]
    properties = _properties(pytester.path / "junit.xml")
    want_rouge = respeval.rouge(preds, refs, ("rougeL",)).corpus_scores()["rougeL_f"]
    assert properties["test_rouge_good"] == {"respeval.metric.rougeL": repr(want_rouge)}
    assert properties["test_bleu_too_low"] == {"respeval.metric.bleu": repr(respeval.bleu(preds, refs).score)}


def _properties(path) -> dict[str, dict[str, str]]:
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        out[case.get("name")] = {p.get("name"): p.get("value") for p in case.iter("property")}
    return out


def test_judged_assertions_use_the_cache_and_replay_only_fails_on_a_miss(pytester):
    pytester.makeconftest(FAKE_JUDGE_CONFTEST)
    pytester.makepyfile(test_judged=JUDGED_TESTS)
    cache = pytester.path / "judge.sqlite"

    first = pytester.runpytest("--respeval-cache", str(cache), "--junitxml=first.xml", "-p", "no:cacheprovider")
    first.assert_outcomes(passed=1, failed=1)
    first.stdout.fnmatch_lines(
        [
            "*respeval judge (fake:city-judge): score 0.0, not passed: wrong city*",
            "judged: 1/2 passed (50.0%)",
            "judge: 2 calls, 0 cache hits, * tokens in, * out, cost $0.0000",
        ]
    )
    props = _properties(pytester.path / "first.xml")
    assert props["test_paris"]["respeval.judge.pass"] == "True" and props["test_paris"]["respeval.judge.score"] == "1.0"
    assert props["test_lyon"]["respeval.judge.pass"] == "False"
    assert props["test_paris"]["respeval.judge.model"] == "fake:city-judge"

    # CI: the same tests replayed from the cache, no judge call
    replay = pytester.runpytest("--respeval-cache", str(cache), "--respeval-replay-only", "-p", "no:cacheprovider")
    replay.assert_outcomes(passed=1, failed=1)
    replay.stdout.fnmatch_lines(["judge: 0 calls, 2 cache hits (replay only), *"])

    # a changed test has no cached answer: replay-only fails it, naming the fix
    pytester.makepyfile(
        test_judged=JUDGED_TESTS + "\n\ndef test_new(respeval_judge_model):\n"
        "    assert_judged('Paris, France', 'Paris', prompt='Capital of France?')\n"
    )
    miss = pytester.runpytest("--respeval-cache", str(cache), "--respeval-replay-only", "-p", "no:cacheprovider")
    miss.assert_outcomes(passed=1, failed=2)
    miss.stdout.fnmatch_lines(["*replay-only: cache miss*(run once without --respeval-replay-only to record it)*"])


def test_replay_only_without_a_cache_file_fails_clearly(pytester):
    pytester.makeconftest(FAKE_JUDGE_CONFTEST)
    pytester.makepyfile(test_judged=JUDGED_TESTS)
    result = pytester.runpytest(
        "--respeval-cache", "missing.sqlite", "--respeval-replay-only", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*--respeval-replay-only, but there is no judge cache at *missing.sqlite*"])


def test_judge_over_http_on_loopback_with_cost_in_the_summary(pytester, monkeypatch):
    """A real OpenAI-compatible HTTP judge (the test server on 127.0.0.1), priced."""
    monkeypatch.setenv("RESPEVAL_PLUGIN_TEST_KEY", "sk-test")
    with JudgeServer() as server:
        pytester.makeconftest(
            f"""
            import pytest
            from respeval import judge

            @pytest.fixture
            def respeval_judge_model():
                return judge.OpenAIChatModel(
                    "judge-m", base_url={server.url!r}, api_key_env="RESPEVAL_PLUGIN_TEST_KEY"
                )
            """
        )
        pytester.makepyfile(
            """
            from respeval import judge
            from respeval.testing import assert_judged

            PRICE = judge.Price(input_per_million=1000.0, output_per_million=2000.0)

            def test_good(respeval_judge_model):
                assert_judged("Paris", "Paris", prompt="Capital?", prices=PRICE)

            def test_half(respeval_judge_model):
                assert_judged("Paris-ish [[score=0.5]]", "Paris", prompt="Capital?", prices=PRICE, min_score=0.75)
            """
        )
        # a process of its own: the price objects must be the classes the engine checks
        result = pytester.runpytest_subprocess("--respeval-cache", "http.sqlite", "-p", "no:cacheprovider")
        requests = len(server.records)
    result.assert_outcomes(passed=1, failed=1)
    assert requests == 2
    result.stdout.fnmatch_lines(
        ["*score 0.5, not passed (min_score 0.75)*", "judged: 1/2 passed (50.0%)", "judge: 2 calls, 0 cache hits, *"]
    )
    cost_line = next(line for line in result.outlines if line.startswith("judge: 2 calls"))
    assert float(cost_line.rsplit("$", 1)[1]) > 0


def test_assert_judged_without_a_model_is_a_usage_error(pytester):
    pytester.makepyfile(
        """
        from respeval.testing import assert_judged

        def test_no_model():
            assert_judged("a", "b")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*assert_judged needs a judge model*--respeval-judge MODEL*"])


def test_assertions_work_outside_pytest_sessions_too():
    verdict = respeval.testing.assert_judged(
        "Paris", "Paris", prompt="Capital?", model=respeval.judge.FakeModel(), cache=None, replay_only=False
    )
    assert verdict["pass"] is True and json.dumps(verdict)
    assert respeval.testing.assert_metric("rougeL", "the cat", "the cat", at_most=1.0, at_least=1.0) == 1.0
    with pytest.raises(ValueError, match="needs a bound"):
        respeval.testing.assert_metric("rougeL", "a", "b")
