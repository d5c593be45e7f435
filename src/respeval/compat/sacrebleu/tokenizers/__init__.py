"""sacreBLEU's tokenizer classes that TER users import: ``tokenizer_ter.TercomTokenizer``.

BLEU's tokenizers are chosen by name (``BLEU(tokenize="13a")``) and live in
``respeval.tokenizers.sacrebleu_tokenizers``.
"""

from respeval.compat.sacrebleu.tokenizers.tokenizer_base import BaseTokenizer

__all__ = ["BaseTokenizer"]
