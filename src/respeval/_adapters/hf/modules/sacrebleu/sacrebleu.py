"""``evaluate.load(respeval.hf.path("sacrebleu"))``: HF's ``sacrebleu`` metric computed by respeval.

corpus BLEU (sacreBLEU 2.6's numbers): the Hub module's ``compute()`` arguments, defaults and output keys, computed by
``respeval.hf.sacrebleu.compute`` (which needs no ``evaluate``).  Shipped inside respeval so it
loads offline; ``evaluate`` copies this file into its module cache and imports it from there,
hence the absolute imports.
"""

import evaluate
from respeval._adapters.hf import hub
from respeval._adapters.hf import sacrebleu as implementation


class Sacrebleu(evaluate.Metric):
    def _info(self):
        return hub.metric_info(implementation, hub.text_features())

    def _compute(
        self,
        predictions,
        references,
        smooth_method="exp",
        smooth_value=None,
        force=False,
        lowercase=False,
        tokenize=None,
        use_effective_order=False,
    ):
        return implementation.compute(
            predictions,
            references,
            smooth_method=smooth_method,
            smooth_value=smooth_value,
            force=force,
            lowercase=lowercase,
            tokenize=tokenize,
            use_effective_order=use_effective_order,
        )
