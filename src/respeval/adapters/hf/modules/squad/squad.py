"""``evaluate.load(respeval.hf.path("squad"))``: HF's ``squad`` metric computed by respeval.

SQuAD v1.1 exact match and F1 (the official script's numbers): the Hub module's ``compute()`` arguments, defaults and output keys, computed by
``respeval.hf.squad.compute`` (which needs no ``evaluate``).  Shipped inside respeval so it
loads offline; ``evaluate`` copies this file into its module cache and imports it from there,
hence the absolute imports.
"""

import datasets

import evaluate
from respeval.adapters.hf import squad as implementation

_CITATION = implementation.CITATION
_DESCRIPTION = implementation.__doc__
_KWARGS_DESCRIPTION = implementation.compute.__doc__


class Squad(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": {"id": datasets.Value("string"), "prediction_text": datasets.Value("string")},
                    "references": {
                        "id": datasets.Value("string"),
                        "answers": datasets.Sequence(
                            {"text": datasets.Value("string"), "answer_start": datasets.Value("int32")}
                        ),
                    },
                }
            ),
        )

    def _compute(self, predictions, references):
        return implementation.compute(predictions, references)
