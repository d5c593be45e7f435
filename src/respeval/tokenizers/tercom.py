"""The Tercom normaliser that TER runs before its edit distance, as sacreBLEU 2.6 applies it.

``tercom_normalize(text, ...)`` equals sacreBLEU's ``TercomTokenizer(...)(text)`` output for
output (Tercom's ``Normalizer.java`` rules, in sacreBLEU's order):

* always: lowercase (unless ``case_sensitive``), collapse whitespace;
* ``normalized``: drop end-of-line hyphenation, join lines, unescape ``&quot; &amp; &lt;
  &gt;``, pad with spaces, split ASCII symbols, possessive ``'s``, periods and commas not
  next to a digit, and a dash after a digit; with ``asian_support`` also put CJK
  ideographs, strokes, radicals, compatibility forms and CJK/full-width punctuation apart;
* ``no_punct``: delete ``. , ? : ; ! " ( )`` (and CJK/full-width punctuation with
  ``asian_support``).

Quirks kept on purpose: the "enclosed CJK" range is really U+3200..U+3F22 (wider than the
block), and the kana rules, written with ``^`` inside alternations, only fire on a text that
is kana from its first character, which the padding of ``normalized`` rules out.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["tercom_normalize"]

_CJK_PUNCT = "\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb"
_FULL_WIDTH_PUNCT = "\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09"


def _rules(*pairs: tuple[str, str]) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern), replacement) for pattern, replacement in pairs)


# Joining lines and unescaping, before the text is padded with a space on each side.
_LINES_AND_ENTITIES = _rules(
    (r"\n-", ""),
    (r"\n", " "),
    (r"&quot;", '"'),
    (r"&amp;", "&"),
    (r"&lt;", "<"),
    (r"&gt;", ">"),
)
_WESTERN = _rules(
    # every printable ASCII symbol but ' , - . (the mteval class)
    (r"([{-~[-` -&(-+:-@/])", r" \1 "),
    (r"'s ", r" 's "),
    (r"'s$", r" 's"),
    (r"([^0-9])([\.,])", r"\1 \2 "),
    (r"([\.,])([^0-9])", r" \1 \2"),
    (r"([0-9])(-)", r"\1 \2 "),
)
_ASIAN = _rules(
    (r"([\u4e00-\u9fff\u3400-\u4dbf])", r" \1 "),
    (r"([\u31c0-\u31ef\u2e80-\u2eff])", r" \1 "),
    (r"([\u3300-\u33ff\uf900-\ufaff\ufe30-\ufe4f])", r" \1 "),
    (r"([\u3200-\u3f22])", r" \1 "),
    (r"(^|^[\u3040-\u309f])([\u3040-\u309f]+)(?=$|^[\u3040-\u309f])", r"\1 \2 "),
    (r"(^|^[\u30a0-\u30ff])([\u30a0-\u30ff]+)(?=$|^[\u30a0-\u30ff])", r"\1 \2 "),
    (r"(^|^[\u31f0-\u31ff])([\u31f0-\u31ff]+)(?=$|^[\u31f0-\u31ff])", r"\1 \2 "),
    (f"([{_CJK_PUNCT}])", r" \1 "),
    (f"([{_FULL_WIDTH_PUNCT}])", r" \1 "),
)
_PUNCT = re.compile(r"[\.,\?:;!\"\(\)]")
_ASIAN_PUNCT = re.compile(f"[{_CJK_PUNCT}{_FULL_WIDTH_PUNCT}]")


def _substitute(rules: tuple[tuple[re.Pattern[str], str], ...], text: str) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


@lru_cache(maxsize=2**16)
def tercom_normalize(
    text: str,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> str:
    """``text`` as space-separated TER words (see the module docstring for the options).

    >>> tercom_normalize("Jim's car (red).", normalized=True)
    "jim 's car ( red ) ."
    """
    if not text:
        return ""
    if not case_sensitive:
        text = text.lower()
    if normalized:
        text = _substitute(_WESTERN, f" {_substitute(_LINES_AND_ENTITIES, text)} ")
        if asian_support:
            text = _substitute(_ASIAN, text)
    if no_punct:
        text = _PUNCT.sub("", text)
        if asian_support:
            text = _ASIAN_PUNCT.sub("", text)
    return " ".join(text.split())
