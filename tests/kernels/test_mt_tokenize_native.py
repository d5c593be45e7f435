"""Native 13a and SQuAD tokenizers (cext/mt_tokenize.h) against their oracles.

- ``respeval._core.tokenize_13a_tokens(texts)`` must equal sacrebleu 2.6.0's
  ``Tokenizer13a()(t.rstrip()).split()`` (what BLEU counts).
- ``respeval._core.squad_normalize_tokens([t.lower() ...])`` must equal the
  official SQuAD v1.1 ``normalize_answer(t).split()``.

Compared on every line of the real corpora in ../shared/data and on seeded
random strings over an adversarial alphabet (entities, ``<skipped>``,
``-\\n``, every Unicode whitespace, articles next to ``_``/non-ASCII letters,
astral and surrogate code points), so all three PEP 393 kinds are exercised.
"""

from __future__ import annotations

import json
import re
import string
import sys
from pathlib import Path

import pytest

from _helpers.corpora import read_jsonl
from _helpers.paths import SHARED_DATA

core = pytest.importorskip("respeval._core")
if not (hasattr(core, "tokenize_13a_tokens") and hasattr(core, "squad_normalize_tokens")):
    pytest.skip("respeval._core has no tokenize_13a_tokens/squad_normalize_tokens yet", allow_module_level=True)
sacrebleu_13a = pytest.importorskip("sacrebleu.tokenizers.tokenizer_13a")

DATA = SHARED_DATA

_TOK13A = sacrebleu_13a.Tokenizer13a()


def ref_13a(line: str) -> list[str]:
    """sacrebleu BLEU._preprocess_segment without lowercasing, then split()."""
    return _TOK13A(line.rstrip()).split()


def normalize_answer(s: str) -> str:
    """The official SQuAD v1.1 evaluate-v1.1.py normalisation, verbatim."""

    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def check_13a(texts: list[str]) -> None:
    got = core.tokenize_13a_tokens(texts)
    assert len(got) == len(texts)
    for text, tokens in zip(texts, got):
        expected = ref_13a(text)
        assert tokens == expected, f"13a mismatch on {text!r}"


def check_squad(texts: list[str]) -> None:
    got = core.squad_normalize_tokens([t.lower() for t in texts])
    assert len(got) == len(texts)
    for text, tokens in zip(texts, got):
        expected = normalize_answer(text).split()
        assert tokens == expected, f"SQuAD mismatch on {text!r}"


def _data(*parts: str) -> Path:
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real corpus not available: {path}")
    return path


# --------------------------------------------------------------------------
# Hand-picked cases (each one a trap for a plausible but wrong implementation)
# --------------------------------------------------------------------------

EDGE_13A = [
    "",
    " ",
    "\n",
    "  \t\u3000",
    "a",
    "Hello, world!",
    "don't e-mail",
    "1990-2000",
    "1,000.5 dollars.",
    "end.",
    "x.y",
    ".5",
    "a..b",
    "a,,b",
    "!..",
    "1.-2",
    "3-.",
    "-\n",
    "a-\nb",
    "--\n\n",
    "a\n-\nb",
    "-<skipped>\nb",
    "<skip<skipped>ped>",
    "<skipped><skipped>x",
    "<SKIPPED>",
    "<skipped",
    "&amp;",
    "&amp;lt;",
    "&amp;quot;",
    "&amp;amp;",
    "&amp;gt;x",
    "&quot;&lt;&gt;",
    "&&lt;",
    "&lt",
    "a&b;c",
    "Tom&amp;Jerry",
    "\u201cquoted\u201d \u2014 dash\u2026",
    "北京欢迎你。",
    "e\u0301t\u00e9",
    "x\u00a0y\u2028z\u0085w\u001cv",
    "trail \u3000\u2029",
    "\t lead",
    "\U0001d518\U00020000.",
    "\ud800-\udfff",
    "a\x00b",
    "1-2-3",
    "1--2",
    "A-1",
    "[x]{y}(z)<w>",
    "a'b`c",
    "1.2.3,4,5",
    "\u0661\u0662.\u0663",
    "\u00b2.",
    "U.S.A.",
    "...",
    ",,,",
    "a.\n",
    "a.\r\nb",
]

EDGE_SQUAD = [
    "",
    " ",
    "a",
    "an",
    "the",
    "A",
    "The cat",
    "a\xa0b",
    "theater",
    "the ater",
    "anthem",
    "an_",
    "a_b",
    "_a",
    "the_",
    "é the é",
    "éa",
    "aé",
    "theé",
    "the1",
    "1the",
    "a an the",
    "an an",
    "the.cat",
    "a-b",
    "the's",
    "don't",
    "1,000",
    "3.5",
    "\u201cParis\u201d",
    "Paris\u2014France",
    "café",
    "ÉCOLE",
    "北京 欢迎",
    "北京the欢迎",
    "the北京",
    "a\u0301",
    "\u0301a",
    "the\u00b2",
    "an\u0661",
    "a\u2028the\u3000an",
    "a!b",
    "the!",
    "!the!",
    "a\U0001d518",
    "\U0001d518the",
    "a\ud800",
    "İstanbul the",
    "ǅa",
    "the ·",
    "a·b",
    "\u00aaa",
    "a\u00ba",
]


def test_13a_edge_cases():
    check_13a(EDGE_13A)


def test_squad_edge_cases():
    check_squad(EDGE_SQUAD)
    check_squad(EDGE_13A)


def test_empty_and_types():
    assert core.tokenize_13a_tokens([]) == []
    assert core.squad_normalize_tokens([]) == []
    assert core.tokenize_13a_tokens(("a b",)) == [["a", "b"]]
    with pytest.raises(TypeError):
        core.tokenize_13a_tokens(["ok", None])
    with pytest.raises(TypeError):
        core.squad_normalize_tokens([b"bytes"])


def test_token_objects_are_canonical_str():
    # tokens are built from UCS4 but must be ordinary (narrowest-kind) str objects
    toks = core.tokenize_13a_tokens(["abc \u00e9t\u00e9 \u4eac \U0001f600"])[0]
    assert toks == ["abc", "\u00e9t\u00e9", "\u4eac", "\U0001f600"]
    for tok in toks:  # same storage size as a freshly decoded (canonical) str
        assert sys.getsizeof(tok) == sys.getsizeof(tok.encode("utf-8").decode("utf-8"))


# --------------------------------------------------------------------------
# Real corpora: every line
# --------------------------------------------------------------------------


def _wmt17_lines() -> list[str]:
    folder = _data("wmt17_en_de")
    files = [folder / "newstest2017-ende-ref.de", *sorted((folder / "systems").iterdir())]
    lines = []
    for p in files:
        lines += p.read_text(encoding="utf-8").rstrip("\n").split("\n")
    return lines


def test_13a_wmt17_all_lines():
    lines = _wmt17_lines()
    assert len(lines) == 17 * 3004
    check_13a(lines)


def _mqm_texts() -> list[str]:
    texts = []
    for p in sorted(_data("mt_mqm").rglob("*.tsv")):
        rows = p.read_text(encoding="utf-8").split("\n")
        header = rows[0].split("\t")
        cols = [i for i, name in enumerate(header) if name in ("source", "target", "comment")]
        for row in rows[1:]:
            fields = row.split("\t")
            texts += [fields[i] for i in cols if i < len(fields)]
    if not texts:
        pytest.skip("no MQM text columns found")
    return list(dict.fromkeys(texts))  # one row per annotated error: many repeats


def test_13a_mqm_texts():
    check_13a(_mqm_texts())


def _squad_texts() -> list[str]:
    folder = _data("squad")
    texts = []
    for p in sorted(folder.glob("predictions-*/*.json")):
        texts += list(json.loads(p.read_text(encoding="utf-8")).values())
    for p in sorted(folder.glob("*-gold.jsonl")):
        for gold in read_jsonl(p):
            texts += gold["answers"]
    return list(dict.fromkeys(texts))  # golds repeat a lot; keep first-seen order


def test_squad_predictions_and_golds():
    texts = _squad_texts()
    assert len(texts) > 20_000
    check_squad(texts)


def test_squad_on_mt_text_and_13a_on_squad_text():
    # each tokenizer on the other's corpus: long sentences for SQuAD, short answers for 13a
    check_squad(_wmt17_lines()[::6])
    check_13a(_squad_texts()[::2])


# --------------------------------------------------------------------------
# Seeded random strings over an adversarial alphabet
# --------------------------------------------------------------------------

_WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
_PIECES = (
    list(string.punctuation)
    + list(string.digits)
    + list(".,-&;<>")
    + [
        "<skipped>",
        "<skip",
        "ped>",
        "&amp;",
        "&quot;",
        "&lt;",
        "&gt;",
        "&amp;quot;",
        "&amp;lt;",
        "&amp;amp;",
        "amp;",
        "\n",
        "-\n",
        "\r\n",
        "1-",
        "1.5",
        "1,000",
        ".5",
    ]
    + _WHITESPACE
    + [
        "北京",
        "欢迎",
        "\u0301",
        "a",
        "an",
        "the",
        "A",
        "The",
        "ann",
        "thea",
        "_",
        "é",
        "ß",
        "ÿ",
        "İ",
        "Σ",
        "\u0661",
        "\u00b2",
        "\u216b",
        "\U0001d518",
        "\U00020000",
        "\ud800",
        "\x00",
        "\x85",
        "\xa0",
        "\u2019",
        "\u201c",
        "\u2014",
        "x",
        "y",
        "don't",
        " ",
        "  ",
    ]
)
_LATIN1 = [p for p in _PIECES if max(map(ord, p)) < 0x100]
_BMP = [p for p in _PIECES if max(map(ord, p)) < 0x10000]


def _random_texts(rng, n: int) -> list[str]:
    texts = []
    for _ in range(n):
        r = rng.random()
        pool = _LATIN1 if r < 0.35 else _BMP if r < 0.65 else _PIECES  # PEP 393 kinds 1, 2, 4
        k = rng.choice((0, 1, 2, 3, 5, 8, 13, 21, 40))
        if rng.random() < 0.1:
            top = rng.choice((0x80, 0x100, 0x3000, sys.maxunicode + 1))
            texts.append("".join(chr(rng.randrange(top)) for _ in range(k)))
        else:
            texts.append("".join(rng.choice(pool) for _ in range(k)))
    return texts


def test_random_strings(rng):
    texts = _random_texts(rng, 20_000)
    check_13a(texts)
    check_squad(texts)
