"""sacreBLEU 2.6's word tokenizers, reproduced output for output.

Each tokenizer maps one segment to a string of space-separated tokens; BLEU then calls
``str.split()`` on the result. The outputs equal sacreBLEU 2.6.0's byte for byte, including
its known quirks, because scores computed on top of them must match published numbers:

``13a``
    mteval-v13a.pl: XML entity unescape, ASCII punctuation split, periods and commas split
    unless next to a digit, dash split after a digit. The line is padded with spaces first,
    so a final period is always split.
``intl``
    mteval-v14.pl "international": Unicode punctuation (``\\p{P}``) split unless between
    digits, symbols (``\\p{S}``) always split. There is **no padding**, so a period that
    ends the line right after a number stays attached (``"in 1990."`` -> ``"in 1990."``).
    Needs the third-party ``regex`` module (imported on first use).
``zh``
    Every character in the CJK ranges below gets spaces around it, then the 13a regexes
    run (without entity unescaping and without padding). Two range literals in the
    original code are malformed (``'\\u20000'`` is the two characters U+2000 and ``'0'``),
    and Python compares strings lexicographically, so the "Extension B" range really is
    U+2001..U+2A6D and the "Compatibility Supplement" range is U+2F81..U+2FA1. Curly
    quotes, dashes, arrows and maths operators are therefore split like CJK characters,
    while real astral ideographs (U+20000 and up) are not.
``char``
    Every code point separated by a space (spaces themselves vanish on ``split()``).
``none``
    Identity.

Results are memoised with :func:`functools.lru_cache` (the same 2**16 entries sacreBLEU
uses), because references are tokenized once per system in multi-system runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

__all__ = [
    "TOKENIZERS",
    "get_tokenizer",
    "is_zh_char",
    "tokenize_13a",
    "tokenize_char",
    "tokenize_intl",
    "tokenize_none",
    "tokenize_zh",
]

_CACHE_SIZE = 2**16

# --- 13a / zh shared regexes (mteval-v13a.pl's "language-dependent part") -------------

# ASCII symbols split off everywhere. The class is, in order, the ranges `{`..`~`,
# `[`..`` ` ``, space..`&`, `(`..`+`, `:`..`@` and `/`: every printable ASCII symbol
# except `'`, `,`, `-` and `.`, which get context-dependent rules below.
_MTEVAL_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    # period and comma split unless preceded by a digit ...
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    # ... and unless followed by a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    # a dash is split only after a digit (1990-2000 -> 1990 - 2000)
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]


def _mteval_split(line: str) -> str:
    """Apply the mteval punctuation rules, then collapse whitespace to single spaces."""
    for pattern, replacement in _MTEVAL_RULES:
        line = pattern.sub(replacement, line)
    return " ".join(line.split())


@lru_cache(maxsize=_CACHE_SIZE)
def tokenize_13a(line: str) -> str:
    """Tokenize like mteval-v13a.pl (sacreBLEU's default ``13a`` tokenizer).

    Parameters
    ----------
    line : str
        One segment. sacreBLEU's BLEU right-strips it before calling the tokenizer.

    Returns
    -------
    str
        Space-separated tokens.

    Examples
    --------
    >>> tokenize_13a("Hello, world! It's 1990-2000.")
    "Hello , world ! It's 1990 - 2000 ."
    """
    line = line.replace("<skipped>", "")
    line = line.replace("-\n", "")
    line = line.replace("\n", " ")
    # The membership test is only a shortcut; the replacements are no-ops without '&'.
    if "&" in line:
        line = line.replace("&quot;", '"')
        line = line.replace("&amp;", "&")
        line = line.replace("&lt;", "<")
        line = line.replace("&gt;", ">")
    # Padding makes a sentence-final period match "([\.,])([^0-9])".
    return _mteval_split(f" {line} ")


# --- intl ------------------------------------------------------------------------------

_INTL_RULES: list[tuple[object, str]] = []


def _intl_rules() -> list[tuple[object, str]]:
    """Compile the mteval-v14 rules on first use (``regex`` supports ``\\p{..}`` classes)."""
    if not _INTL_RULES:
        import regex  # third-party; the stdlib `re` has no Unicode property classes

        _INTL_RULES.extend(
            [
                # punctuation preceded by a non-digit
                (regex.compile(r"(\P{N})(\p{P})"), r"\1 \2 "),
                # punctuation followed by a non-digit
                (regex.compile(r"(\p{P})(\P{N})"), r" \1 \2"),
                # symbols everywhere
                (regex.compile(r"(\p{S})"), r" \1 "),
            ]
        )
    return _INTL_RULES


@lru_cache(maxsize=_CACHE_SIZE)
def tokenize_intl(line: str) -> str:
    """Tokenize like mteval-v14.pl ``--international-tokenization`` (sacreBLEU ``intl``).

    Parameters
    ----------
    line : str
        One segment.

    Returns
    -------
    str
        Space-separated tokens. A final period directly after a digit stays attached,
        as in mteval-v14 (no padding is added).

    Examples
    --------
    >>> tokenize_intl("don't e-mail me in 1990.")
    "don ' t e - mail me in 1990."
    """
    for pattern, replacement in _intl_rules():
        line = pattern.sub(replacement, line)  # type: ignore[attr-defined]
    return " ".join(line.split())


# --- zh --------------------------------------------------------------------------------

# Inclusive code point ranges that the zh tokenizer isolates, *as sacreBLEU effectively
# applies them* (see the module docstring for the two malformed entries).
_ZH_RANGES: tuple[tuple[int, int], ...] = (
    (0x3400, 0x4DB5),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FA5),  # CJK Unified Ideographs
    (0x9FA6, 0x9FBB),  # CJK Unified Ideographs, Unicode 4.1 additions
    (0xF900, 0xFA2D),  # CJK Compatibility Ideographs
    (0xFA30, 0xFA6A),  # CJK Compatibility Ideographs, Unicode 3.2
    (0xFA70, 0xFAD9),  # CJK Compatibility Ideographs, Unicode 4.1
    (0x2001, 0x2A6D),  # meant U+20000..U+2A6D6 ('\u20000' <= c <= '\u2a6d6' as strings)
    (0x2F81, 0x2FA1),  # meant U+2F800..U+2FA1D (same literal bug)
    (0xFF00, 0xFFEF),  # full-width ASCII and punctuation, half-width kana, Hangul
    (0x2E80, 0x2EFF),  # CJK Radicals Supplement
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x31C0, 0x31EF),  # CJK strokes
    (0x2F00, 0x2FDF),  # Kangxi radicals
    (0x2FF0, 0x2FFF),  # ideographic description characters
    (0x3100, 0x312F),  # Bopomofo
    (0x31A0, 0x31BF),  # Bopomofo extended
    (0xFE10, 0xFE1F),  # vertical forms
    (0xFE30, 0xFE4F),  # CJK compatibility forms
    (0x2600, 0x26FF),  # miscellaneous symbols
    (0x2700, 0x27BF),  # dingbats
    (0x3200, 0x32FF),  # enclosed CJK letters and months
    (0x3300, 0x33FF),  # CJK compatibility
)


@lru_cache(maxsize=_CACHE_SIZE)
def is_zh_char(char: str) -> bool:
    """Return whether sacreBLEU's ``zh`` tokenizer isolates this character.

    Parameters
    ----------
    char : str
        A single code point.

    Returns
    -------
    bool
        True if the code point falls in one of the (effective) ranges.
    """
    code = ord(char)
    return any(start <= code <= end for start, end in _ZH_RANGES)


@lru_cache(maxsize=_CACHE_SIZE)
def tokenize_zh(line: str) -> str:
    """Tokenize Chinese like sacreBLEU's ``zh`` tokenizer.

    Parameters
    ----------
    line : str
        One segment.

    Returns
    -------
    str
        Space-separated tokens: each character of the ranges in :func:`is_zh_char` is its
        own token, the rest is split by the 13a rules (no entity unescaping, no padding).

    Examples
    --------
    >>> tokenize_zh("北京欢迎你, OK.")
    '北 京 欢 迎 你 , OK .'
    """
    spaced = "".join(f" {char} " if is_zh_char(char) else char for char in line.strip())
    return _mteval_split(spaced)


# --- char / none -----------------------------------------------------------------------


@lru_cache(maxsize=_CACHE_SIZE)
def tokenize_char(line: str) -> str:
    """Separate every code point by a space (sacreBLEU ``char``).

    Whitespace characters are joined too, so they become empty tokens that ``split()``
    drops: ``"a b"`` gives ``"a   b"`` and the tokens ``["a", "b"]``.
    """
    return " ".join(line)


def tokenize_none(line: str) -> str:
    """Return the line unchanged (sacreBLEU ``none``)."""
    return line


TOKENIZERS: dict[str, Callable[[str], str]] = {
    "13a": tokenize_13a,
    "intl": tokenize_intl,
    "zh": tokenize_zh,
    "char": tokenize_char,
    "none": tokenize_none,
}


def get_tokenizer(name: str) -> Callable[[str], str]:
    """Return the tokenizer function registered under ``name``.

    Parameters
    ----------
    name : str
        One of ``"13a"``, ``"intl"``, ``"zh"``, ``"char"``, ``"none"``.

    Returns
    -------
    Callable[[str], str]
        The tokenizer.

    Raises
    ------
    ValueError
        For an unknown name (sacreBLEU's mecab/SentencePiece tokenizers are not provided).
    """
    try:
        return TOKENIZERS[name]
    except KeyError:
        known = ", ".join(sorted(TOKENIZERS))
        raise ValueError(f"unknown tokenizer {name!r}; expected one of: {known}") from None
