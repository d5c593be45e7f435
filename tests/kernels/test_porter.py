"""The Porter stemmer must equal NLTK's PorterStemmer() (NLTK_EXTENSIONS).

rouge-score stems with NLTK, so any difference changes ROUGE scores. Both
respeval implementations are checked against NLTK itself: the pure-Python
spec (respeval.tokenizers.porter) and the C one (cext/porter.h, reached
through respeval._core.porter_stem once the extension exposes it).

Word sources: every distinct word in the shared evaluation data, and a
seeded list of generated English-like words. Set RESPEVAL_PORTER_SEED to
replay a failing seed and RESPEVAL_PORTER_N to change how many are drawn.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable, Iterable, Iterator

import pytest

from _helpers.paths import SHARED_DATA
from respeval.tokenizers.porter import stem

DATA = SHARED_DATA
SEED = int(os.environ.get("RESPEVAL_PORTER_SEED", "1980"))
# Sized to keep this file under ~15 s; raise RESPEVAL_PORTER_N for a deeper run.
N_GENERATED = int(os.environ.get("RESPEVAL_PORTER_N", "100000"))
N_GENERATED_UNICODE = N_GENERATED // 10

_ALNUM = re.compile(r"[a-z0-9]+")
_EDGE_PUNCT = ".,;:!?()[]{}\"'`"

# Hand-checked against NLTK; these run even without nltk or the data.
EXAMPLES = [
    # from the rouge-score section of semantics.md
    ("running", "run"),
    ("runs", "run"),
    ("flies", "fli"),
    ("dies", "die"),
    ("ponies", "poni"),
    ("caresses", "caress"),
    ("agreed", "agre"),
    ("generously", "gener"),
    ("this", "thi"),
    ("was", "wa"),
    # irregular forms
    ("skies", "sky"),
    ("dying", "die"),
    ("innings", "inning"),
    ("Proceed", "proceed"),
    ("news", "news"),
    # short words are only lowercased
    ("", ""),
    ("a", "a"),
    ("IS", "is"),
    ("as", "as"),
    # NLTK extensions
    ("ties", "tie"),
    ("tied", "tie"),
    ("cried", "cri"),
    ("enjoy", "enjoy"),
    ("happy", "happi"),
    ("spy", "spi"),
    ("owed", "owe"),
    ("radically", "radic"),
    ("hopefulli", "hope"),
    ("biology", "biolog"),
    ("analogous", "analog"),
    ("enjoyment", "enjoy"),
    # Porter's rules
    ("relational", "relat"),
    ("conditional", "condit"),
    ("sensibility", "sensibl"),
    ("controlling", "control"),
    ("hopping", "hop"),
    ("filing", "file"),
    ("adoption", "adopt"),
    ("yyyy", "yyyi"),
    ("123", "123"),
    ("1990s", "1990"),
    # non-ASCII input behaves as in NLTK
    ("Über", "über"),
    ("Straßen", "straßen"),
    ("cafés", "café"),
    ("\u0130s", "i\u0307s"),  # lowercases to 3 characters but is 2 long, so kept
    ("a*ding", "ad"),  # NLTK's "*d" pseudo-suffix also matches a literal "*d"
]


@pytest.mark.parametrize(("word", "expected"), EXAMPLES)
def test_examples(word: str, expected: str) -> None:
    assert stem(word) == expected


# --------------------------------------------------------------------------
# word sources


def _strings(obj: object) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from _strings(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _strings(value)


def _data_texts() -> Iterator[str]:
    for path in sorted((DATA / "wmt17_en_de").rglob("*")):
        if path.is_file() and not path.name.startswith("LICENSE") and path.suffix != ".json":
            yield path.read_text(encoding="utf-8")
    for path in sorted((DATA / "realsumm").glob("*.jsonl")):
        with path.open(encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                yield row["ref_summ"]
                yield row["system_summary"]
    for path in sorted((DATA / "squad").rglob("*.json*")):
        if path.suffix == ".jsonl":
            with path.open(encoding="utf-8") as f:
                for line in f:
                    yield from _strings(json.loads(line))
        else:
            yield from _strings(json.loads(path.read_text(encoding="utf-8")))
    for path in sorted((DATA / "rouge_testdata").glob("*.txt")):
        yield path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def data_words() -> tuple[list[str], list[str]]:
    """(rouge-score tokens, other whitespace tokens) of the shared data."""
    if not DATA.is_dir():
        pytest.skip(f"shared evaluation data not found at {DATA}")
    # Splitting on whitespace first is exact ([a-z0-9]+ never spans
    # whitespace) and much faster than running the regex over all the text.
    raw = set("\n".join(set(_data_texts())).lower().split())
    alnum = set(_ALNUM.findall(" ".join(raw)))
    # "word," adds nothing over "word" but costs NLTK time; keep whitespace
    # tokens that are non-ASCII or have punctuation inside.
    other = {w for w in raw - alnum if not w.isascii() or w.strip(_EDGE_PUNCT) not in alnum}
    assert len(alnum) > 50_000, f"only {len(alnum)} word types found under {DATA}"
    return sorted(alnum), sorted(other)


_SUFFIXES = (
    "s ss sses ies ied eed ed ing y ly ily ies e es ee ees "
    "at ate ated ating bl ble bled bling iz ize ized izing izer "
    "ational tional enci anci abli bli alli entli eli ousli ization ation "
    "ator alism iveness fulness ousness aliti iviti biliti fulli logi logy "
    "icate ative alize iciti ical ful ness al ance ence er ic able ible ant "
    "ement ment ent ion sion tion ou ism iti ous ive ll lled lling "
    "ally ically ality ousli fully ingly edly ness ing"
).split()
_PREFIXES = (
    "re un in dis over under pre con com de ex pro sub inter trans "
    "bio geo psycho analog hope sens relat condit electr digit form troubl "
    "sky die lie tie news inning outing canning howe proceed exceed succeed "
    "y yy by sy ay oy ey toy joy happ spr tr fl cr fr"
).split()
_EXOTIC = "äöüßéèñçøłœæıİ*'-.,&/0123456789ÄÖÜÉẞΣ"
# Weighted towards vowels and 'y' so that measures and the y rules vary.
_LETTERS = "bcdfghjklmnpqrstvwxz" * 3 + "aeiou" * 6 + "y" * 8 + "0123456789"


def _generated_word(rng: random.Random) -> str:
    parts = []
    if rng.random() < 0.5:
        parts.append(rng.choice(_PREFIXES))
    for _ in range(rng.randint(1, 3)):
        letters = "".join(rng.choices(_LETTERS, k=rng.randint(1, 6)))
        if rng.random() < 0.3:
            letters += letters[-1]  # double letters for *d
        parts.append(letters)
    parts.extend(rng.choices(_SUFFIXES, k=rng.choice((0, 1, 1, 1, 2, 2, 3))))
    word = "".join(parts)
    length = rng.randint(1, 30)
    # Keep the end: that is where the suffix rules look.
    return word[-length:] if len(word) > length else word


def _unicode_variant(rng: random.Random, word: str) -> str:
    chars = list(word)
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.5:
            chars.insert(rng.randint(0, len(chars)), rng.choice(_EXOTIC))
        elif chars:
            i = rng.randrange(len(chars))
            chars[i] = chars[i].upper()
    return "".join(chars)


def generate_words(seed: int, n: int, n_unicode: int) -> tuple[list[str], list[str]]:
    """(ASCII [a-z0-9] words, words with other characters), deduplicated."""
    rng = random.Random(seed)
    ascii_words = {_generated_word(rng) for _ in range(n)}
    unicode_words = {_unicode_variant(rng, _generated_word(rng)) for _ in range(n_unicode)}
    return sorted(ascii_words), sorted(unicode_words - ascii_words)


@pytest.fixture(scope="module")
def generated_words() -> tuple[list[str], list[str]]:
    return generate_words(SEED, N_GENERATED, N_GENERATED_UNICODE)


# The irregular forms and their neighbours, and long words (both
# implementations must stay linear and in bounds).
SPECIAL_WORDS = (
    "sky skies dying lying tying news inning innings outing outings canning "
    "cannings howe proceed exceed succeed skys skied dyings newsy howes "
    "proceeds proceeded exceeding succeeded outinged canninged"
).split() + [
    "y" * 10_000,
    "a" * 10_000 + "ing",
    "b" * 10_000 + "ed",
    "ay" * 5_000 + "ational",
    "ational" * 1_500,
    "ya" * 5_000 + "lli",
    "x" * 9_997 + "ies",
    "ll" * 5_000,
    "z9" * 5_000 + "ousness",
]


# --------------------------------------------------------------------------
# reference


@pytest.fixture(scope="module")
def nltk_stem() -> Callable[[str], str]:
    porter = pytest.importorskip("nltk.stem.porter", reason="nltk is not installed")
    stemmer = porter.PorterStemmer()
    cache: dict[str, str] = {}

    def reference(word: str) -> str:
        # The Python and C checks share words; NLTK is the slow part.
        result = cache.get(word)
        if result is None:
            result = cache[word] = stemmer.stem(word)
        return result

    return reference


def _assert_same(
    words: Iterable[str],
    ours: Callable[[str], str],
    reference: Callable[[str], str],
    what: str,
) -> int:
    count = 0
    bad = []
    for word in words:
        count += 1
        got = ours(word)
        want = reference(word)
        if got != want:
            bad.append((word, got, want))
    shown = "\n".join(f"  {w!r}: ours {g!r}, nltk {e!r}" for w, g, e in bad[:20])
    assert not bad, (
        f"{len(bad)} of {count} {what} differ from NLTK "
        f"(RESPEVAL_PORTER_SEED={SEED}, RESPEVAL_PORTER_N={N_GENERATED}):\n{shown}"
    )
    return count


# --------------------------------------------------------------------------
# pure Python


def test_python_matches_nltk_on_data(nltk_stem, data_words) -> None:
    alnum, other = data_words
    _assert_same(alnum, stem, nltk_stem, "rouge-score tokens of the shared data")
    _assert_same(other, stem, nltk_stem, "whitespace tokens of the shared data")


def test_python_matches_nltk_on_generated(nltk_stem, generated_words) -> None:
    ascii_words, unicode_words = generated_words
    _assert_same(ascii_words, stem, nltk_stem, "generated ASCII words")
    _assert_same(unicode_words, stem, nltk_stem, "generated non-ASCII words")


def test_python_matches_nltk_on_special_words(nltk_stem) -> None:
    _assert_same(SPECIAL_WORDS, stem, nltk_stem, "special words")


# --------------------------------------------------------------------------
# C implementation, through the compiled module


@pytest.fixture(scope="module")
def c_stem() -> Callable[[str], str]:
    try:
        from respeval import _core
    except ImportError as exc:
        pytest.skip(f"respeval._core is not built: {exc}")
    if not hasattr(_core, "porter_stem"):
        pytest.skip("respeval._core has no porter_stem")
    return _core.porter_stem


# The C stemmer is defined for ASCII words only.
@pytest.mark.parametrize(("word", "expected"), [e for e in EXAMPLES if e[0].isascii()])
def test_c_examples(c_stem, word: str, expected: str) -> None:
    assert c_stem(word) == expected


def test_c_matches_nltk_on_data(c_stem, nltk_stem, data_words) -> None:
    alnum, other = data_words
    _assert_same(alnum, c_stem, nltk_stem, "rouge-score tokens of the shared data (C)")
    # rouge-score never passes these, but the header claims all of ASCII.
    ascii_other = [w for w in other if w.isascii()]
    _assert_same(ascii_other, c_stem, nltk_stem, "ASCII whitespace tokens (C)")


def test_c_matches_nltk_on_generated(c_stem, nltk_stem, generated_words) -> None:
    ascii_words, _ = generated_words
    _assert_same(ascii_words, c_stem, nltk_stem, "generated ASCII words (C)")


def test_c_matches_nltk_on_special_words(c_stem, nltk_stem) -> None:
    _assert_same(SPECIAL_WORDS, c_stem, nltk_stem, "special words (C)")
