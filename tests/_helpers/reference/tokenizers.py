"""The peers' own tokenizers, for the oracles: sacreBLEU's BLEU tokenizers and Tercom
normaliser, and the Porter stemmer rouge-score calls (NLTK's).  The oracles take their
text rules from the anchors themselves, never from respeval's ``tokenizers/``, which the
tests compare with them."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, lru_cache

_BLEU_TOKENIZERS = {
    "none": ("tokenizer_none", "NoneTokenizer"),
    "13a": ("tokenizer_13a", "Tokenizer13a"),
    "intl": ("tokenizer_intl", "TokenizerV14International"),
    "zh": ("tokenizer_zh", "TokenizerZh"),
    "char": ("tokenizer_char", "TokenizerChar"),
}


@cache
def get_tokenizer(name: str) -> Callable[[str], str]:
    """sacreBLEU's tokenizer ``name`` (``13a``, ``intl``, ``zh``, ``char``, ``none``)."""
    import importlib

    if name not in _BLEU_TOKENIZERS:
        raise ValueError(f"unknown tokenizer {name!r}; expected one of: {', '.join(sorted(_BLEU_TOKENIZERS))}")
    module, cls = _BLEU_TOKENIZERS[name]
    return getattr(importlib.import_module(f"sacrebleu.tokenizers.{module}"), cls)()


@cache
def _tercom(normalized: bool, no_punct: bool, asian_support: bool, case_sensitive: bool) -> Callable[[str], str]:
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

    return TercomTokenizer(
        normalized=normalized, no_punct=no_punct, asian_support=asian_support, case_sensitive=case_sensitive
    )


def tercom_normalize(
    text: str,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> str:
    """sacreBLEU's ``TercomTokenizer(...)(text)``."""
    return _tercom(normalized, no_punct, asian_support, case_sensitive)(text)


@cache
def _nltk_porter() -> Callable[[str], str]:
    from nltk.stem import porter

    return porter.PorterStemmer().stem  # what rouge-score's DefaultTokenizer(use_stemmer=True) builds


@lru_cache(maxsize=1 << 16)
def porter_stem(word: str) -> str:
    return _nltk_porter()(word)
