"""The LLM-as-judge layer: an async engine that asks a model only what lexical metrics
cannot decide, and reports honestly what it could not score.

Quick start::

    from respeval import judge

    result = judge.run(
        [{"id": 1, "prompt": "Capital of France?", "reference": "Paris", "response": "It is Paris."}],
        "openai:gpt-4o-mini",           # or a JudgeModel: judge.OpenAIChatModel(..., base_url=...)
        cache="judge-cache.sqlite",    # reruns pay for nothing twice
        concurrency=16, budget=judge.Budget(max_cost=2.0),
        prices=judge.Price(input_per_million=0.15, output_per_million=0.60),
    )
    print(result.summary.format())
    for row in result.rows:
        print(row.id, row.status, row.verdict, row.unscored_reason)

Inside a running event loop use ``await judge.arun(...)`` (``run`` works there too, on a
helper thread).  ``method=`` picks any registered method (``"pairwise"``, ``"rubric"``,
``"adaptive-rubric"``, ``"sampled"``, ``"multi-turn"``: :data:`respeval.judge.methods.METHODS`)
and the result is that method's report.  ``batch=True`` (or ``batch=judge.BatchOptions(...)``)
sends the requests as OpenAI or Anthropic batches instead, at half the price, for every
method (:mod:`respeval.judge.batch`).  See :mod:`respeval.judge.run` for how a run is
resolved, :mod:`respeval.judge.engine` for what the engine does, and
:mod:`respeval.judge.parsing` for how verdicts are read.
"""

from respeval.judge.batch import BatchOptions, BatchReport
from respeval.judge.cache import JudgeCache, cache_key
from respeval.judge.engine import EngineOptions, JudgeEngine, RunResult
from respeval.judge.errors import CacheMissError, FatalError, JudgeError, TransientError
from respeval.judge.limits import Budget, Price, RateLimiter
from respeval.judge.methods import JudgeMethod, get_method
from respeval.judge.methods.pointwise import Pointwise, PointwiseVerdict
from respeval.judge.models import (
    AnthropicModel,
    BaseJudgeModel,
    CallableModel,
    Capabilities,
    Completion,
    FakeModel,
    JsonSchema,
    JudgeModel,
    JudgeRequest,
    LoopbackTransport,
    Message,
    OpenAIChatModel,
    ReplayModel,
    ShardedTransport,
)
from respeval.judge.parsing import Parsed, ParseFailure
from respeval.judge.prices import ModelPrice
from respeval.judge.results import JudgeRunSummary, RowResult, RunSummary, wilson_interval
from respeval.judge.run import arun, run
from respeval.judge.specs import load_model

__all__ = [
    "AnthropicModel",
    "BaseJudgeModel",
    "BatchOptions",
    "BatchReport",
    "Budget",
    "CacheMissError",
    "CallableModel",
    "Capabilities",
    "Completion",
    "EngineOptions",
    "FakeModel",
    "FatalError",
    "JsonSchema",
    "JudgeCache",
    "JudgeEngine",
    "JudgeError",
    "JudgeMethod",
    "JudgeModel",
    "JudgeRequest",
    "JudgeRunSummary",
    "LoopbackTransport",
    "Message",
    "ModelPrice",
    "OpenAIChatModel",
    "ParseFailure",
    "Parsed",
    "Pointwise",
    "PointwiseVerdict",
    "Price",
    "RateLimiter",
    "ReplayModel",
    "RowResult",
    "RunResult",
    "RunSummary",  # the old name of JudgeRunSummary
    "ShardedTransport",
    "TransientError",
    "arun",
    "cache_key",
    "get_method",
    "load_model",
    "run",
    "wilson_interval",
]
