"""The Tercom normaliser (respeval.tokenizers.tercom, compat's TercomTokenizer) equals sacreBLEU's
TercomTokenizer and the pure-Python TER oracle, for every option combination."""

from __future__ import annotations

import itertools

import pytest

from _helpers.corpora import load_wmt17
from _helpers.paths import shared_data
from respeval._reference.ter import tercom_tokenize as oracle
from respeval.compat.sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer
from respeval.tokenizers.tercom import tercom_normalize

OPTIONS = list(itertools.product([False, True], repeat=4))  # normalized, no_punct, asian_support, case_sensitive

EDGE = [
    "",
    " ",
    "Jim's car.",
    "Jim's",
    "nima's , x",
    "a b (c) d.",
    "4.2 and 1,000.50 - 1990-2000",
    "line one\n-continued\nline two",
    "&quot;quoted&quot; &amp; &lt;tag&gt;",
    "美众院公布对特",
    "りの拳銃を持",
    "ひらがな",
    "カタカナ。、「」",
    "ＡＢＣ（全角）？！",
    "㈱㍻ 丂 ⺀ ㇀",
    "Ünïcödé — “quotes” …",
    "tab\there\r\nwindows",
]


@pytest.fixture(scope="module")
def lines():
    reference, systems = load_wmt17(shared_data())
    return reference[::7] + systems[sorted(systems)[2]][::11] + EDGE


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "".join("NPAC"[i] if v else "-" for i, v in enumerate(o)))
def test_equals_sacrebleu_and_the_oracle(lines, options):
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer as Theirs

    normalized, no_punct, asian, case = options
    theirs = Theirs(normalized=normalized, no_punct=no_punct, asian_support=asian, case_sensitive=case)
    ours = TercomTokenizer(normalized=normalized, no_punct=no_punct, asian_support=asian, case_sensitive=case)
    for line in lines:
        want = theirs(line)
        assert ours(line) == want, line
        assert tercom_normalize(line, *options) == want == oracle(line, *options), line


def test_signature_and_defaults():
    assert TercomTokenizer().signature() == "tercom"
    assert TercomTokenizer()("A B C D.") == "a b c d."
    assert TercomTokenizer(normalized=True)("Jim's car.") == "jim 's car ."
    assert TercomTokenizer(no_punct=True, asian_support=True)("美众院。公布") == "美众院公布"
