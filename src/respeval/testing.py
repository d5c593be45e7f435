"""Test assertions on metric thresholds and judge verdicts (the pytest plugin's public face;
implementation: ``respeval/_adapters/pytest_plugin.py``, enabled by the ``pytest11`` entry point).

::

    from respeval.testing import assert_judged, assert_metric

    def test_summaries():
        assert_metric("rougeL", summaries, references, at_least=0.40)

    def test_answer(respeval_judge_model):
        assert_judged("It is Paris.", "Paris", prompt="Capital of France?")

Run with ``--respeval-judge MODEL`` (or override the ``respeval_judge_model`` fixture),
``--respeval-cache PATH`` and, in CI, ``--respeval-replay-only``.
"""

from respeval._adapters.pytest_plugin import assert_judged, assert_metric

__all__ = ["assert_judged", "assert_metric"]
