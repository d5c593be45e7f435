"""``evaluate.load(respeval.hf.path("sacrebleu"))``: HF's ``sacrebleu`` metric computed by respeval.

corpus BLEU (sacreBLEU 2.6's numbers): the Hub module's ``compute()`` arguments, defaults and output keys, computed by
``respeval.hf.sacrebleu.compute`` (which needs no ``evaluate``).  Shipped inside respeval so it
loads offline; ``evaluate`` copies this file into its module cache and imports it from there,
hence the absolute imports.
"""

import datasets

import evaluate
from respeval.adapters.hf import sacrebleu as implementation

_CITATION = implementation.CITATION
_DESCRIPTION = implementation.__doc__
_KWARGS_DESCRIPTION = implementation.compute.__doc__


class Sacrebleu(evaluate.Metric):
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
