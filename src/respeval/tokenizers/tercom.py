"""sacreBLEU's Tercom normaliser (``TercomTokenizer`` of sacrebleu 2.6.0), as TER applies it.

By default it only lowercases and collapses whitespace; ``normalized`` adds Tercom's
mteval-like punctuation splitting and the possessive ``'s``; ``no_punct`` deletes
``.,?:;!"()``; ``asian_support`` extends both to CJK.  TER normalises a reference twice
(see ``respeval._reference.ter``): callers do that, not this module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

__all__ = ["tercom_tokenize"]


_ASIAN_PUNCT = r"([\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb])"
_FULL_WIDTH_PUNCT = r"([\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09])"

# (pattern, replacement) pairs applied in order; from Tercom's Normalizer.java.
_GENERAL_AND_WESTERN = [
    (r"\n-", ""),  # end-of-line hyphenation
    (r"\n", " "),  # join lines
    (r"&quot;", '"'),
    (r"&amp;", "&"),
    (r"&lt;", "<"),
    (r"&gt;", ">"),
]
_WESTERN_PUNCTUATION = [
    # every ASCII symbol except ' , - . (same class as mteval-v13a)
    (r"([{-~[-` -&(-+:-@/])", r" \1 "),
    # possessives: "john's " -> "john 's "
    (r"'s ", r" 's "),
    (r"'s$", r" 's"),
    # period and comma unless preceded, then unless followed, by a digit
    (r"([^0-9])([\.,])", r"\1 \2 "),
    (r"([\.,])([^0-9])", r" \1 \2"),
    # dash after a digit
    (r"([0-9])(-)", r"\1 \2 "),
]
_ASIAN = [
    (r"([\u4e00-\u9fff\u3400-\u4dbf])", r" \1 "),  # CJK unified ideographs (+ ext. A)
    (r"([\u31c0-\u31ef\u2e80-\u2eff])", r" \1 "),  # strokes, radicals supplement
    (r"([\u3300-\u33ff\uf900-\ufaff\ufe30-\ufe4f])", r" \1 "),  # compatibility blocks
    (r"([\u3200-\u3f22])", r" \1 "),  # "enclosed CJK letters" (the range is wider)
    # Kana runs. As written these only match a line that is entirely kana from its very
    # first character, which never happens after the padding above; kept for fidelity.
    (r"(^|^[\u3040-\u309f])([\u3040-\u309f]+)(?=$|^[\u3040-\u309f])", r"\1 \2 "),
    (r"(^|^[\u30a0-\u30ff])([\u30a0-\u30ff]+)(?=$|^[\u30a0-\u30ff])", r"\1 \2 "),
    (r"(^|^[\u31f0-\u31ff])([\u31f0-\u31ff]+)(?=$|^[\u31f0-\u31ff])", r"\1 \2 "),
    (_ASIAN_PUNCT, r" \1 "),
    (_FULL_WIDTH_PUNCT, r" \1 "),
]
_REMOVE_PUNCT = [(r"[\.,\?:;!\"\(\)]", "")]
_REMOVE_ASIAN_PUNCT = [(_ASIAN_PUNCT, ""), (_FULL_WIDTH_PUNCT, "")]


def _apply(rules: Sequence[tuple[str, str]], text: str) -> str:
    """Apply regex substitutions in order (``re`` caches the compiled patterns)."""
    for pattern, replacement in rules:
        text = re.sub(pattern, replacement, text)
    return text


@lru_cache(maxsize=2**16)
def tercom_tokenize(
    sentence: str,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> str:
    """Normalise a segment like sacreBLEU's ``TercomTokenizer``.

    Parameters
    ----------
    sentence : str
        The segment (TER right-strips it before calling this).
    normalized : bool
        Tercom normalisation: join lines, unescape ``&quot; &amp; &lt; &gt;``, split ASCII
        punctuation and possessive ``'s`` (plus CJK characters with ``asian_support``).
    no_punct : bool
        Delete ``. , ? : ; ! " ( )`` (plus CJK punctuation with ``asian_support``).
    asian_support : bool
        Only has an effect together with ``normalized`` or ``no_punct``.
    case_sensitive : bool
        Do not lowercase.

    Returns
    -------
    str
        Space-separated words.
    """
    if not sentence:
        return ""
    if not case_sensitive:
        sentence = sentence.lower()
    if normalized:
        sentence = _apply(_GENERAL_AND_WESTERN, sentence)
        sentence = _apply(_WESTERN_PUNCTUATION, f" {sentence} ")
        if asian_support:
            sentence = _apply(_ASIAN, sentence)
    if no_punct:
        sentence = _apply(_REMOVE_PUNCT, sentence)
        if asian_support:
            sentence = _apply(_REMOVE_ASIAN_PUNCT, sentence)
    return " ".join(sentence.split())
