"""``evaluate.load(respeval.hf.path("squad"))``: HF's ``squad`` metric computed by respeval.

SQuAD v1.1 exact match and F1 (the official script's numbers): the Hub module's ``compute()`` arguments, defaults and output keys, computed by
``respeval.hf.squad.compute`` (which needs no ``evaluate``).  Shipped inside respeval so it
loads offline; ``evaluate`` copies this file into its module cache and imports it from there,
hence the absolute imports.
"""

import evaluate
from respeval._adapters.hf import hub
from respeval._adapters.hf import squad as implementation


class Squad(evaluate.Metric):
    def _info(self):
        return hub.metric_info(implementation, hub.squad_features())

    def _compute(self, predictions, references):
        return implementation.compute(predictions, references)
