"""``evaluate.load(respeval.hf.path("squad_v2"))``: HF's ``squad_v2`` metric computed by respeval.

SQuAD v2.0 scores with the no-answer threshold search (the official script's numbers): the Hub module's ``compute()`` arguments, defaults and output keys, computed by
``respeval.hf.squad_v2.compute`` (which needs no ``evaluate``).  Shipped inside respeval so it
loads offline; ``evaluate`` copies this file into its module cache and imports it from there,
hence the absolute imports.
"""

import datasets

import evaluate
from respeval._adapters.hf import hub
from respeval._adapters.hf import squad_v2 as implementation


class SquadV2(evaluate.Metric):
    def _info(self):
        return hub.metric_info(implementation, hub.squad_features(no_answer_probability=datasets.Value("float32")))

    def _compute(self, predictions, references, no_answer_threshold=1.0):
        return implementation.compute(predictions, references, no_answer_threshold=no_answer_threshold)
