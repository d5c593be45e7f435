"""``evaluate.load(respeval.hf.path("ter"))``: HF's ``ter`` metric computed by respeval.

corpus TER (sacreBLEU 2.6's numbers): the Hub module's ``compute()`` arguments, defaults and output keys, computed by
``respeval.hf.ter.compute`` (which needs no ``evaluate``).  Shipped inside respeval so it
loads offline; ``evaluate`` copies this file into its module cache and imports it from there,
hence the absolute imports.
"""

import datasets

import evaluate
from respeval.adapters.hf import ter as implementation

_CITATION = implementation.CITATION
_DESCRIPTION = implementation.__doc__
_KWARGS_DESCRIPTION = implementation.compute.__doc__


class Ter(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
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
            ],
        )

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
