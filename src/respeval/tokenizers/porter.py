"""Porter stemmer, equal to NLTK's ``PorterStemmer()`` in its default
``NLTK_EXTENSIONS`` mode.

rouge-score stems with that exact stemmer, so respeval needs its behaviour
bit for bit, NLTK's own deviations from Porter's paper included. This module
is the readable reference; ``cext/porter.h`` is the fast C twin for ASCII
tokens and must agree with it.

Notation follows Porter (1980): ``m`` is the measure of a stem (the number of
vowel-consonant boundaries), ``*v*`` "contains a vowel", ``*d`` "ends in a
double consonant", ``*o`` "ends consonant-vowel-consonant".
"""

from __future__ import annotations

__all__ = ["stem"]

_VOWELS = frozenset("aeiou")

# NLTK_EXTENSIONS answers these forms from a fixed table before any rule runs.
_IRREGULAR: dict[str, str] = {
    "sky": "sky",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "news": "news",
    "innings": "inning",
    "inning": "inning",
    "outings": "outing",
    "outing": "outing",
    "cannings": "canning",
    "canning": "canning",
    "howe": "howe",
    "proceed": "proceed",
    "exceed": "exceed",
    "succeed": "succeed",
}

# Each table is scanned in order and only the first suffix that matches is
# considered: if its condition fails the word is left alone, later rules are
# not tried. Within one table no suffix is a suffix of a later one, so this
# is also "the longest match decides".
_STEP2: tuple[tuple[str, str], ...] = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("bli", "ble"),  # Porter's later fix; the paper had abli -> able
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
    ("fulli", "ful"),  # NLTK extension
)

_STEP3: tuple[tuple[str, str], ...] = (
    ("icate", "ic"),
    ("ative", ""),
    ("alize", "al"),
    ("iciti", "ic"),
    ("ical", "ic"),
    ("ful", ""),
    ("ness", ""),
)

_STEP4: tuple[str, ...] = (
    "al",
    "ance",
    "ence",
    "er",
    "ic",
    "able",
    "ible",
    "ant",
    "ement",
    "ment",
    "ent",
    "ion",
    "ou",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
)


def _consonant_flags(word: str) -> list[bool]:
    # A 'y' is a consonant at the start of a word or after a vowel, and a
    # vowel after a consonant. Every character other than a, e, i, o, u and
    # such a 'y' counts as a consonant, digits and non-ASCII letters too.
    flags: list[bool] = []
    prev = False  # makes a leading 'y' a consonant
    for ch in word:
        if ch in _VOWELS:
            cons = False
        elif ch == "y":
            cons = not prev
        else:
            cons = True
        flags.append(cons)
        prev = cons
    return flags


def _is_consonant(word: str, i: int) -> bool:
    # Same answer as _consonant_flags(word)[i] without classifying the whole
    # word: each 'y' of the run ending at i flips the class of the letter
    # before the run, and a 'y' that starts the word is a consonant.
    flip = False
    while i > 0 and word[i] == "y":
        flip = not flip
        i -= 1
    return (word[i] not in _VOWELS) != flip


def _measure(stem: str) -> int:
    flags = _consonant_flags(stem)
    return sum(1 for a, b in zip(flags, flags[1:]) if not a and b)


def _has_vowel(stem: str) -> bool:
    return not all(_consonant_flags(stem))


def _ends_double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _ends_cvc(word: str) -> bool:
    if len(word) >= 3:
        return (
            _is_consonant(word, len(word) - 3)
            and not _is_consonant(word, len(word) - 2)
            and _is_consonant(word, len(word) - 1)
            and word[-1] not in "wxy"
        )
    # NLTK extension: a two-letter vowel-consonant stem also counts, and for
    # it w, x and y are not excluded.
    return len(word) == 2 and not _is_consonant(word, 0) and _is_consonant(word, 1)


# Most words match no rule; a single endswith() over all suffixes settles
# that before the ordered scan.
_STEP2_SUFFIXES = tuple(suffix for suffix, _ in _STEP2)
_STEP3_SUFFIXES = tuple(suffix for suffix, _ in _STEP3)


def _replace_first(word: str, rules: tuple[tuple[str, str], ...], suffixes: tuple[str, ...], min_m: int) -> str:
    if not word.endswith(suffixes):
        return word
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if _measure(stem) > min_m else word
    return word


def _step1a(word: str) -> str:
    if word.endswith("ies") and len(word) == 4:  # NLTK: ties -> tie, not ti
        return word[0] + "ie"
    if word.endswith("sses") or word.endswith("ies"):
        return word[:-2]
    if word.endswith("ss"):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


def _step1b(word: str) -> str:
    if word.endswith("ied"):  # NLTK: unconditional, unlike -ed below
        return word[:-3] + ("ie" if len(word) == 4 else "i")

    if word.endswith("eed"):
        stem = word[:-3]
        return stem + "ee" if _measure(stem) > 0 else word

    if word.endswith("ed") and _has_vowel(word[:-2]):
        stem = word[:-2]
    elif word.endswith("ing") and _has_vowel(word[:-3]):
        stem = word[:-3]
    else:
        return word

    # Put back the 'e' that -ed/-ing removed so that steps 2-4 see the
    # suffixes -ate, -ble and -ize.
    if stem.endswith("at") or stem.endswith("bl") or stem.endswith("iz"):
        return stem + "e"
    if _ends_double_consonant(stem):
        return stem if stem[-1] in "lsz" else stem[:-1]
    if stem.endswith("*d"):
        # NLTK encodes the *d rule as the pseudo-suffix "*d", which then also
        # matches a literal "*d" and drops the '*' (a*ding -> ad).
        return stem[:-2] + "d"
    if _measure(stem) == 1 and _ends_cvc(stem):
        return stem + "e"
    return stem


def _step1c(word: str) -> str:
    # NLTK: y -> i only after a consonant that is not the first letter, so
    # enjoy and sky keep their 'y' but happy, spy and fly lose it.
    if word.endswith("y") and len(word) > 2 and _is_consonant(word, len(word) - 2):
        return word[:-1] + "i"
    return word


def _step2(word: str) -> str:
    if word.endswith("alli") and _measure(word[:-4]) > 0:
        # NLTK: -alli becomes -al and step 2 runs again on the result, so
        # e.g. -tionalli can go on to -tion.
        word = word[:-2]
    elif word.endswith("logi") and _measure(word[:-3]) > 0:
        # NLTK extension -logi -> -log. Its measure is taken on the stem with
        # the 'l' still attached. No rule in _STEP2 ends in -logi, so
        # checking it first does not change which rule wins.
        return word[:-1]
    return _replace_first(word, _STEP2, _STEP2_SUFFIXES, 0)


def _step3(word: str) -> str:
    return _replace_first(word, _STEP3, _STEP3_SUFFIXES, 0)


def _step4(word: str) -> str:
    if not word.endswith(_STEP4):
        return word
    for suffix in _STEP4:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            if _measure(stem) > 1 and (suffix != "ion" or stem[-1] in "st"):
                return stem
            return word
    return word


def _step5a(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _ends_cvc(stem)):
            return stem
    return word


def _step5b(word: str) -> str:
    # (m > 1 and *d and *L) -> single letter, with m taken on the word minus
    # only its last 'l': the first 'l' can add a vowel-consonant boundary.
    if word.endswith("ll") and _measure(word[:-1]) > 1:
        return word[:-1]
    return word


def stem(word: str) -> str:
    """Stem ``word`` exactly as NLTK's ``PorterStemmer().stem(word)`` does
    in its default ``NLTK_EXTENSIONS`` mode.

    The result is lowercased. Words of at most two characters (counted before
    lowercasing, as NLTK does) are only lowercased. Any ``str`` is accepted:
    every character other than a, e, i, o, u and a 'y' that follows a
    consonant counts as a consonant.
    """
    lowered = word.lower()
    irregular = _IRREGULAR.get(lowered)
    if irregular is not None:
        return irregular
    if len(word) <= 2:
        return lowered
    w = _step1a(lowered)
    w = _step1b(w)
    w = _step1c(w)
    w = _step2(w)
    w = _step3(w)
    w = _step4(w)
    w = _step5a(w)
    return _step5b(w)
