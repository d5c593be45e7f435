"""Judging methods, and the registry of the ones the engine can build by name.

One module per method: :mod:`~respeval.judge.methods.pointwise` (equivalence against a
reference), :mod:`~respeval.judge.methods.pairwise` (preference in both orders),
:mod:`~respeval.judge.methods.rubrics` (static and adaptive rubrics),
:mod:`~respeval.judge.methods.sampling` (K samples per item, aggregated) and
:mod:`~respeval.judge.methods.llmbar` (recorded judgments replayed).  What the engine needs
of a method is :class:`~respeval.judge.methods.base.JudgeMethod`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from respeval.judge.methods.base import JudgeMethod
from respeval.judge.methods.pointwise import Pointwise

__all__ = ["METHODS", "JudgeMethod", "get_method"]

METHODS: dict[str, Callable[..., Any]] = {"pointwise": Pointwise}


def get_method(name: str, **options: Any) -> JudgeMethod:
    """A method by name (``pointwise``), constructed with ``options``."""
    try:
        cls = METHODS[name]
    except KeyError:
        raise ValueError(f"unknown judge method {name!r}; available: {', '.join(sorted(METHODS))}") from None
    method: JudgeMethod = cls(**options)
    return method
