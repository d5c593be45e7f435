"""sacreBLEU's metric classes: ``BLEU``, ``CHRF``, ``TER`` and their score types."""

from respeval.compat.sacrebleu.metrics.bleu import BLEU, BLEUScore
from respeval.compat.sacrebleu.metrics.chrf import CHRF, CHRFScore
from respeval.compat.sacrebleu.metrics.ter import TER, TERScore

METRICS = {"BLEU": BLEU, "CHRF": CHRF, "TER": TER}

__all__ = ["BLEU", "BLEUScore", "CHRF", "CHRFScore", "METRICS", "TER", "TERScore"]
