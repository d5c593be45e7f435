"""Judging methods, and the registry of the ones :func:`respeval.judge.run` and the command
line build by name.

One module per method: :mod:`~respeval.judge.methods.pointwise` (equivalence against a
reference), :mod:`~respeval.judge.methods.pairwise` (preference in both orders),
:mod:`~respeval.judge.methods.rubrics` (static and adaptive rubrics),
:mod:`~respeval.judge.methods.sampling` (K samples per item, aggregated),
:mod:`~respeval.judge.methods.multiturn` (agent conversations, ADK's rules),
:mod:`~respeval.judge.methods.rag` (faithfulness, context precision and recall, answer
relevance, citations: multi-step, claim by claim),
:mod:`~respeval.judge.methods.trajectory` (hallucination and tool-use quality over a
trajectory, per record) and
:mod:`~respeval.judge.methods.llmbar` (recorded judgments replayed).  What the engine needs
of a per-request method is :class:`~respeval.judge.methods.base.JudgeMethod`; a whole-run
method is a :class:`~respeval.judge.run.JudgePlan`.

:data:`METHODS` maps each name to its class (loaded on first use: the whole-run methods sit
above the engine, which itself reads :mod:`~respeval.judge.methods.base`); every class
takes its options as keywords, and ``from_options(MethodOptions)`` builds it from the
command line's one set of settings.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from respeval.judge.methods.base import JudgeMethod, MethodOptions

__all__ = ["METHODS", "JudgeMethod", "MethodOptions", "MethodRegistry", "build_method", "get_method"]


class MethodRegistry(Mapping[str, Callable[..., Any]]):
    """Method name -> class, each imported when first looked up."""

    def __init__(self, where: Mapping[str, str]) -> None:
        self._where = dict(where)  # name -> "module:attribute"
        self._loaded: dict[str, Callable[..., Any]] = {}

    def __getitem__(self, name: str) -> Callable[..., Any]:
        loaded = self._loaded.get(name)
        if loaded is None:
            module, _, attribute = self._where[name].partition(":")
            loaded = self._loaded[name] = getattr(importlib.import_module(module), attribute)
        return loaded

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


METHODS = MethodRegistry(
    {
        "pointwise": "respeval.judge.methods.pointwise:Pointwise",
        "pairwise": "respeval.judge.methods.pairwise:PairwiseRun",
        "rubric": "respeval.judge.methods.rubrics:RubricRun",
        "adaptive-rubric": "respeval.judge.methods.rubrics:AdaptiveRubricRun",
        "sampled": "respeval.judge.methods.sampling:SampledRun",
        "multi-turn": "respeval.judge.methods.multiturn:MultiTurnRun",
        "faithfulness": "respeval.judge.methods.rag:Faithfulness",
        "context_precision": "respeval.judge.methods.rag:ContextPrecision",
        "context_recall": "respeval.judge.methods.rag:ContextRecall",
        "answer_relevance": "respeval.judge.methods.rag:AnswerRelevance",
        "citation_check": "respeval.judge.methods.rag:CitationCheck",
        "trajectory_hallucination": "respeval.judge.methods.trajectory:TrajectoryHallucination",
        "trajectory_tool_use_quality": "respeval.judge.methods.trajectory:TrajectoryToolUseQuality",
    }
)


def _class(name: str) -> Callable[..., Any]:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown judge method {name!r}; available: {', '.join(sorted(METHODS))}") from None


def get_method(name: str, **options: Any) -> Any:
    """A method by name (``pointwise``, ``pairwise``, ...), constructed with ``options``."""
    return _class(name)(**options)


def build_method(name: str, options: MethodOptions) -> Any:
    """A method by name, built from the flat :class:`MethodOptions` (the command line's)."""
    cls: Any = _class(name)
    return cls.from_options(options)
