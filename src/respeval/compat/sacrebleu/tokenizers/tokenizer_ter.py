"""sacreBLEU's ``TercomTokenizer``: the normaliser TER applies to every segment."""

from __future__ import annotations

from respeval.compat.sacrebleu.tokenizers.tokenizer_base import BaseTokenizer
from respeval.tokenizers.tercom import tercom_normalize

__all__ = ["TercomTokenizer"]


class TercomTokenizer(BaseTokenizer):
    """Tercom's normaliser (``respeval.tokenizers.tercom``); lowercases unless ``case_sensitive``.

    ``normalized`` splits punctuation and possessives (and CJK characters with
    ``asian_support``); ``no_punct`` deletes punctuation (and CJK punctuation with
    ``asian_support``).
    """

    ASIAN_PUNCT = r"([\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb])"
    FULL_WIDTH_PUNCT = r"([\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09])"

    def __init__(
        self,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
    ) -> None:
        self._normalized, self._no_punct = normalized, no_punct
        self._asian_support, self._case_sensitive = asian_support, case_sensitive

    def __call__(self, sent: str) -> str:
        return tercom_normalize(sent, self._normalized, self._no_punct, self._asian_support, self._case_sensitive)

    def signature(self) -> str:
        return "tercom"
