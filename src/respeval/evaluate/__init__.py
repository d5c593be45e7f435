"""Bring your own metric: one evaluation over any mix of computed, custom and judged metrics.

::

    import respeval
    from respeval.evaluate import CustomMetric, PointwiseMetric

    result = respeval.evaluate(
        "rows.jsonl",
        metrics=[
            "exact_match", "bleu", "rougeLsum",                       # the registry
            Computed("json_valid", schema={"type": "object", "required": ["answer"]}),
            CustomMetric("has_citation", lambda row: "[1]" in row["response"]),
            PointwiseMetric("claims", "Policy: {context}\\nAnswer: {response}",
                            system_instruction="You are an expert claims auditor."),
            "GROUNDING",                                              # predefined judge metrics
        ],
        model="openai:gpt-4o-mini",
        out="rows.parquet",
    )
    result.table               # one row per input row: {metric}/score, /explanation, /status, ...
    result.summary_metrics     # row_count, {metric}/mean, {metric}/std, intervals, pass rates
    result.run_summary         # for respeval.report.write_report(...)

See ``docs/custom_metrics.md``.
"""

import sys as _sys
import types as _types
from typing import Any as _Any

from respeval.evaluate.custom import CustomMetric, load_function
from respeval.evaluate.isolation import Limits, SandboxError, SandboxUnavailable, SandboxWarning
from respeval.evaluate.plan import Computed
from respeval.evaluate.run import EvalResult, JudgeStopped, evaluate, records_of
from respeval.evaluate.spec import load_spec
from respeval.judge.methods.predefined import PREDEFINED, describe_predefined, predefined
from respeval.judge.methods.templates import LabelSet, PairwiseMetric, PointwiseMetric, PromptTemplate, ScoreRange

__all__ = [
    "PREDEFINED",
    "Computed",
    "CustomMetric",
    "EvalResult",
    "JudgeStopped",
    "LabelSet",
    "Limits",
    "PairwiseMetric",
    "PointwiseMetric",
    "PromptTemplate",
    "SandboxError",
    "SandboxUnavailable",
    "SandboxWarning",
    "ScoreRange",
    "describe_predefined",
    "evaluate",
    "load_function",
    "load_spec",
    "predefined",
    "records_of",
]


class _CallableModule(_types.ModuleType):
    """``respeval.evaluate`` is this package and the function: ``respeval.evaluate(data, metrics)``."""

    def __call__(self, *args: _Any, **kwargs: _Any) -> EvalResult:
        return evaluate(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
# help() and inspect.signature(respeval.evaluate) show the function's own parameters, not (*args, **kwargs)
__signature__ = __import__("inspect").signature(evaluate)
