"""What respeval's ``evaluate`` module files (``modules/<name>/<name>.py``) share.

Each module file stays a standalone file (``evaluate.load`` copies it into its cache and
imports it from there), but its ``MetricInfo`` is built here from the implementation module
(``respeval.hf.<name>``): description, citation and ``compute()`` docs, and the features.
Imports ``evaluate`` and ``datasets``, so only the module files import it.

The module files import this module (``from respeval._adapters.hf import hub``), never a class
from it: ``evaluate`` takes the first ``Metric`` subclass in the module file's namespace as
the metric.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import datasets

import evaluate


def text_features() -> list[Any]:
    """The features of HF's text metrics: one prediction string a row, and either a list of
    reference strings or one reference string a row."""
    return [
        datasets.Features(
            {
                "predictions": datasets.Value("string", id="sequence"),
                "references": datasets.Sequence(datasets.Value("string", id="sequence"), id="references"),
            }
        ),
        datasets.Features(
            {
                "predictions": datasets.Value("string", id="sequence"),
                "references": datasets.Value("string", id="sequence"),
            }
        ),
    ]


def squad_features(**prediction: Any) -> Any:
    """The features of HF's SQuAD metrics: a prediction is an id, its text and the
    ``prediction`` fields given here; a reference is an id and its answers."""
    return datasets.Features(
        {
            "predictions": {"id": datasets.Value("string"), "prediction_text": datasets.Value("string"), **prediction},
            "references": {
                "id": datasets.Value("string"),
                "answers": datasets.Sequence(
                    {"text": datasets.Value("string"), "answer_start": datasets.Value("int32")}
                ),
            },
        }
    )


def metric_info(implementation: ModuleType, features: Any) -> Any:
    """The ``evaluate.MetricInfo`` of a module file computed by ``implementation``
    (``respeval.hf.<name>``): its docstring, ``CITATION`` and ``compute()`` docs."""
    return evaluate.MetricInfo(
        description=implementation.__doc__,
        citation=implementation.CITATION,
        inputs_description=implementation.compute.__doc__,
        features=features,
    )
