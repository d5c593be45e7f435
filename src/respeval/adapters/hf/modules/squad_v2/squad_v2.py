"""``evaluate.load(respeval.hf.path("squad_v2"))``: HF's ``squad_v2`` metric computed by respeval.

SQuAD v2.0 scores with the no-answer threshold search (the official script's numbers): the Hub module's ``compute()`` arguments, defaults and output keys, computed by
``respeval.hf.squad_v2.compute`` (which needs no ``evaluate``).  Shipped inside respeval so it
loads offline; ``evaluate`` copies this file into its module cache and imports it from there,
hence the absolute imports.
"""

import datasets

import evaluate
from respeval.adapters.hf import squad_v2 as implementation

_CITATION = implementation.CITATION
_DESCRIPTION = implementation.__doc__
_KWARGS_DESCRIPTION = implementation.compute.__doc__


class SquadV2(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": {
                        "id": datasets.Value("string"),
                        "prediction_text": datasets.Value("string"),
                        "no_answer_probability": datasets.Value("float32"),
                    },
                    "references": {
                        "id": datasets.Value("string"),
                        "answers": datasets.Sequence(
                            {"text": datasets.Value("string"), "answer_start": datasets.Value("int32")}
                        ),
                    },
                }
            ),
        )

    def _compute(self, predictions, references, no_answer_threshold=1.0):
        return implementation.compute(predictions, references, no_answer_threshold=no_answer_threshold)
