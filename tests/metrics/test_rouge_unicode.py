"""respeval's own ``rouge-unicode`` tokenizer: non-Latin scripts stop scoring 0."""

from __future__ import annotations

import pytest

from respeval.metrics.rouge import rouge
from respeval.tokenizers.rouge import unicode_tokens


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("北京欢迎你", ["北", "京", "欢", "迎", "你"]),
        ("Привет, мир!", ["привет", "мир"]),
        ("東京タワーへ行く", ["東", "京", "タ", "ワ", "ー", "へ", "行", "く"]),
        ("안녕하세요 세계", ["안", "녕", "하", "세", "요", "세", "계"]),
        ("नमस्ते दुनिया", ["नमस्ते", "दुनिया"]),
        ("Hello, World! It's 3.14", ["hello", "world", "it", "s", "3", "14"]),
        ("café crème x_y", ["café", "crème", "x", "y"]),
    ],
)
def test_unicode_tokens(text, tokens):
    assert unicode_tokens(text) == tokens


def test_non_english_text_scores_where_rouge_score_gives_zero(impl):
    preds, refs = ["北京欢迎你", "Привет мир"], ["北京欢迎您", "привет всем"]
    assert rouge(preds, refs, ["rouge1"], implementation=impl)["rouge1_f"].tolist() == [0.0, 0.0]
    got = rouge(preds, refs, ["rouge1", "rouge2", "rougeL"], tokenizer="rouge-unicode", implementation=impl)
    assert got["rouge1_f"].tolist() == pytest.approx([0.8, 0.5], abs=1e-15)
    assert got["rouge2_f"][0] == 0.75


def test_ascii_text_scores_like_the_rouge_tokenizer(impl):
    preds = ["The quick brown fox jumps over the lazy dog", "running runs ran"]
    refs = ["A quick brown dog jumps over the fox", "run running"]
    for stem in (False, True):
        a = rouge(preds, refs, ["rouge1", "rougeL"], stemmer=stem, implementation=impl)
        b = rouge(preds, refs, ["rouge1", "rougeL"], tokenizer="rouge-unicode", stemmer=stem, implementation=impl)
        for col in a.keys():
            assert a[col].tolist() == b[col].tolist()


def test_signature_names_the_tokenizer():
    res = rouge(["a"], ["a"], ["rouge1"], tokenizer="rouge-unicode")
    assert "|tok:rouge-unicode|" in res.signature
