"""Drop-in for sacreBLEU 2.6's Python API: change the import, keep the numbers.

    # import sacrebleu
    import respeval.compat.sacrebleu as sacrebleu
    # from sacrebleu.metrics import BLEU, CHRF, TER
    from respeval.compat.sacrebleu.metrics import BLEU, CHRF, TER
    # from sacrebleu.significance import PairedTest
    from respeval.compat.sacrebleu.significance import PairedTest

Modules as in sacreBLEU: ``compat`` (``corpus_bleu``, ``raw_corpus_bleu``, ``sentence_bleu``,
``corpus_chrf``, ``sentence_chrf``, ``corpus_ter``, ``sentence_ter``, also exported here),
``metrics`` (``BLEU``, ``CHRF``, ``TER`` with ``corpus_score``, ``sentence_score``,
``get_signature`` and ``BLEU.compute_bleu``), ``significance`` (``PairedTest``: paired
bootstrap and approximate randomization) and ``tokenizers.tokenizer_ter``
(``TercomTokenizer``).

References are sacreBLEU's reference *streams* (``[refs]`` for one reference per segment;
``None`` items for a variable number). Differences on purpose: a stream of the wrong length
raises instead of being silently truncated by ``zip``; signatures say
``version:respeval-<version>``; the mecab/SentencePiece tokenizers, test-set downloads and
the command line are not provided.
"""

from respeval.compat.sacrebleu import compat, metrics, significance
from respeval.compat.sacrebleu.compat import (
    corpus_bleu,
    corpus_chrf,
    corpus_ter,
    raw_corpus_bleu,
    sentence_bleu,
    sentence_chrf,
    sentence_ter,
)
from respeval.compat.sacrebleu.metrics import BLEU, CHRF, TER, BLEUScore, CHRFScore, TERScore
from respeval.compat.sacrebleu.metrics.base import Score

__all__ = [
    "BLEU",
    "BLEUScore",
    "CHRF",
    "CHRFScore",
    "Score",
    "TER",
    "TERScore",
    "compat",
    "corpus_bleu",
    "corpus_chrf",
    "corpus_ter",
    "metrics",
    "raw_corpus_bleu",
    "sentence_bleu",
    "sentence_chrf",
    "sentence_ter",
    "significance",
]
