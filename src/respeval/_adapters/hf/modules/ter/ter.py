"""``evaluate.load(respeval.hf.path("ter"))``: HF's ``ter`` metric computed by respeval.

corpus TER (sacreBLEU 2.6's numbers): the Hub module's ``compute()`` arguments, defaults and output keys, computed by
``respeval.hf.ter.compute`` (which needs no ``evaluate``).  Shipped inside respeval so it
loads offline; ``evaluate`` copies this file into its module cache and imports it from there,
hence the absolute imports.
"""

import evaluate
from respeval._adapters.hf import hub
from respeval._adapters.hf import ter as implementation


class Ter(evaluate.Metric):
    def _info(self):
        return hub.metric_info(implementation, hub.text_features())

    def _compute(
        self,
        predictions,
        references,
        normalized=False,
        ignore_punct=False,
        support_zh_ja_chars=False,
        case_sensitive=False,
    ):
        return implementation.compute(
            predictions,
            references,
            normalized=normalized,
            ignore_punct=ignore_punct,
            support_zh_ja_chars=support_zh_ja_chars,
            case_sensitive=case_sensitive,
        )
