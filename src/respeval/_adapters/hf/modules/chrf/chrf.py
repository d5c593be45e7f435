"""``evaluate.load(respeval.hf.path("chrf"))``: HF's ``chrf`` metric computed by respeval.

corpus chrF and chrF++ (sacreBLEU 2.6's numbers): the Hub module's ``compute()`` arguments, defaults and output keys, computed by
``respeval.hf.chrf.compute`` (which needs no ``evaluate``).  Shipped inside respeval so it
loads offline; ``evaluate`` copies this file into its module cache and imports it from there,
hence the absolute imports.
"""

import evaluate
from respeval._adapters.hf import chrf as implementation
from respeval._adapters.hf import hub


class ChrF(evaluate.Metric):
    def _info(self):
        return hub.metric_info(implementation, hub.text_features())

    def _compute(
        self,
        predictions,
        references,
        char_order=6,
        word_order=0,
        beta=2,
        lowercase=False,
        whitespace=False,
        eps_smoothing=False,
    ):
        return implementation.compute(
            predictions,
            references,
            char_order=char_order,
            word_order=word_order,
            beta=beta,
            lowercase=lowercase,
            whitespace=whitespace,
            eps_smoothing=eps_smoothing,
        )
