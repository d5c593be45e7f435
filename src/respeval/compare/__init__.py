"""Baseline against candidate on the same cases, with the right statistics and a decision.

``respeval.compare`` is this package and the function::

    result = respeval.compare(
        "responses.jsonl", baseline="baseline", candidate="candidate",
        metrics=["exact_match", "rouge1"], ref_field="expected",
        judge="openai:gpt-4o-mini", cache="judge.sqlite",
    )
    result.decision            # "improved", "no_change" or "regressed"
    print(result.format())     # the table, the decision, the flipped cases
    result.to_json()           # what `respeval compare --json` prints

Modules: :mod:`~respeval.compare.inputs` (reading and pairing the cases),
:mod:`~respeval.compare.computed` (computed metrics and their paired statistics),
:mod:`~respeval.compare.judged` (the pairwise judge in both orders, sequential mode),
:mod:`~respeval.compare.result` (decisions, the result).  The statistics themselves live in
:mod:`respeval.stats`.
"""

from __future__ import annotations

import sys as _sys
import types as _types
from typing import Any as _Any

from respeval.compare.inputs import Cases, load_cases
from respeval.compare.judged import JudgedCase, SequentialPlan
from respeval.compare.result import DECISIONS, Comparison, FlippedCase, MetricComparison
from respeval.compare.run import acompare, compare

__all__ = [
    "DECISIONS",
    "Cases",
    "Comparison",
    "FlippedCase",
    "JudgedCase",
    "MetricComparison",
    "SequentialPlan",
    "acompare",
    "compare",
    "load_cases",
]


class _CallableModule(_types.ModuleType):
    """``respeval.compare`` is this package and the function: ``respeval.compare(data, ...)``."""

    def __call__(self, *args: _Any, **kwargs: _Any) -> Comparison:
        return compare(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
# help() and inspect.signature(respeval.compare) show the function's own parameters, not (*args, **kwargs)
__signature__ = __import__("inspect").signature(compare)
