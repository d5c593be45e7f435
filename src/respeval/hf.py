"""HF ``evaluate`` metrics computed by respeval (implementation: ``respeval/_adapters/hf/``).

::

    import evaluate, respeval.hf
    rouge = evaluate.load(respeval.hf.path("rouge"))        # offline, from files in respeval
    rouge.compute(predictions=preds, references=refs)       # HF's arguments, keys and aggregation

    respeval.hf.rouge.compute(predictions=preds, references=refs)   # the same, without evaluate

Metrics: rouge, sacrebleu, chrf, ter, squad, squad_v2.
"""

from respeval._adapters.hf import NAMES, chrf, path, rouge, sacrebleu, squad, squad_v2, ter

__all__ = ["NAMES", "chrf", "path", "rouge", "sacrebleu", "squad", "squad_v2", "ter"]
