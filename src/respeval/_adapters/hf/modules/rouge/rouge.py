"""``evaluate.load(respeval.hf.path("rouge"))``: HF's ``rouge`` metric computed by respeval.

ROUGE F-measures (rouge-score 0.1.2's numbers): the Hub module's ``compute()`` arguments, defaults and output keys, computed by
``respeval.hf.rouge.compute`` (which needs no ``evaluate``).  Shipped inside respeval so it
loads offline; ``evaluate`` copies this file into its module cache and imports it from there,
hence the absolute imports.
"""

import evaluate
from respeval._adapters.hf import hub
from respeval._adapters.hf import rouge as implementation


class Rouge(evaluate.Metric):
    def _info(self):
        return hub.metric_info(implementation, hub.text_features())

    def _compute(
        self, predictions, references, rouge_types=None, use_aggregator=True, use_stemmer=False, tokenizer=None
    ):
        return implementation.compute(
            predictions,
            references,
            rouge_types=rouge_types,
            use_aggregator=use_aggregator,
            use_stemmer=use_stemmer,
            tokenizer=tokenizer,
        )
