"""Align a judge with human labels: a seeded stratified split, a prompt optimiser scored on
the train split only, held-out numbers before and after, and the chosen judge frozen.

``respeval.align`` is this package and the function::

    result = respeval.align(
        "labelled.jsonl", "judge.json", "openai:gpt-4o-mini",
        label_field="label", seed=0, candidates=8, shots=4, out="judge.aligned.json",
    )
    print(result.format())            # candidates, held-out numbers with intervals, probes
    result.held_out()["after"]        # balanced accuracy, balanced F1, kappa with intervals

Modules: :mod:`~respeval.align.split` (the split; held-out labels kept apart),
:mod:`~respeval.align.optimiser` (few-shot selection and guideline rewriting, on the train
rows alone), :mod:`~respeval.align.run` (reading, scoring, freezing) and
:mod:`~respeval.align.example` (a deterministic toy judge that learns from its examples, for
``respeval align --example``).  The statistics are :mod:`respeval.validate`'s.
"""

from __future__ import annotations

import sys as _sys
import types as _types
from typing import Any as _Any

from respeval.align.optimiser import AlignmentStopped, Candidate, OptimiserOptions, TrainScore, optimise
from respeval.align.run import HEADLINE, Alignment, aalign, align, load_judge_spec, spec_entry
from respeval.align.split import HeldOutRow, LabelledRow, Split, stratified_split

__all__ = [
    "HEADLINE",
    "Alignment",
    "AlignmentStopped",
    "Candidate",
    "HeldOutRow",
    "LabelledRow",
    "OptimiserOptions",
    "Split",
    "TrainScore",
    "aalign",
    "align",
    "load_judge_spec",
    "optimise",
    "spec_entry",
    "stratified_split",
]


class _CallableModule(_types.ModuleType):
    """``respeval.align`` is this package and the function: ``respeval.align(data, judge, model)``."""

    def __call__(self, *args: _Any, **kwargs: _Any) -> Alignment:
        return align(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
__signature__ = __import__("inspect").signature(align)
