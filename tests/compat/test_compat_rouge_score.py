"""respeval.compat.rouge_score against rouge-score 0.1.2 itself (installed, run live): tokenize,
tokenizers, custom tokenizers in RougeScorer, sentence splitting, type checks and io."""

from __future__ import annotations

import re

import numpy as np
import pytest

from _helpers.corpora import load_realsumm
from _helpers.paths import shared_data
from respeval.compat import rouge_scorer as legacy_import
from respeval.compat.rouge_score import io, rouge_scorer, scoring, tokenize, tokenizers

peer_scorer = pytest.importorskip("rouge_score.rouge_scorer")
from nltk.stem import porter  # noqa: E402
from rouge_score import io as peer_io  # noqa: E402
from rouge_score import scoring as peer_scoring  # noqa: E402
from rouge_score import tokenize as peer_tokenize  # noqa: E402
from rouge_score import tokenizers as peer_tokenizers  # noqa: E402

TYPES = ["rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum"]


@pytest.fixture(scope="module")
def pairs():
    rows = load_realsumm(shared_data())[::100]
    extra = [("", "a b"), ("a b", ""), ("", ""), ("!!!", "a"), ("one\n\ntwo", "two\none"), ("The Cat sat.", "the cat")]
    return [(r["reference"], r["prediction"]) for r in rows] + extra


# --- tokenize / tokenizers ----------------------------------------------------------------------


def test_tokenize_equals_rouge_score(pairs):
    stemmer = porter.PorterStemmer()
    texts = [t for pair in pairs for t in pair] + ["Ünïcödé café 1990s naïve", "ALL-CAPS_and_under_scores", "a\tb\nc"]
    for text in texts:
        assert tokenize.tokenize(text, None) == peer_tokenize.tokenize(text, None)
        assert tokenize.tokenize(text, stemmer) == peer_tokenize.tokenize(text, stemmer)
        for use_stemmer in (False, True):
            ours = tokenizers.DefaultTokenizer(use_stemmer=use_stemmer).tokenize(text)
            assert ours == peer_tokenizers.DefaultTokenizer(use_stemmer=use_stemmer).tokenize(text)


def test_tokenizer_is_an_abstract_base_to_subclass():
    with pytest.raises(TypeError):
        tokenizers.Tokenizer()  # type: ignore[abstract]
    assert isinstance(tokenizers.DefaultTokenizer(), tokenizers.Tokenizer)


# --- custom tokenizers --------------------------------------------------------------------------


class Whitespace(tokenizers.Tokenizer):
    """Case kept, split on spaces only: a newline stays inside a token on the whole text."""

    def tokenize(self, text):
        return [t for t in text.split(" ") if t]


class CharacterBigrams(tokenizers.Tokenizer):
    def tokenize(self, text):
        text = re.sub(r"\s+", "", text.lower())
        return [text[i : i + 2] for i in range(len(text) - 1)]


class Recording:
    """Not a Tokenizer subclass (rouge-score only needs ``tokenize``); records every call."""

    def __init__(self):
        self.calls = []

    def tokenize(self, text):
        self.calls.append(text)
        return text.lower().split()


class WordIds:
    """Tokens that are not str: ids of lowercased words (1 == 1.0 == True, as dict keys)."""

    def tokenize(self, text):
        return [[1, 1.0, True, 2, "x", (3,)][len(w) % 6] for w in text.lower().split()]


def _same(ours, theirs):
    # repr shows int zeros (empty ROUGE-L) apart from float zeros, as rouge-score returns them
    assert {k: repr(v) for k, v in ours.items()} == {k: repr(v) for k, v in theirs.items()}


@pytest.mark.parametrize(
    "make", [Whitespace, CharacterBigrams, Recording, lambda: peer_tokenizers.DefaultTokenizer(True)]
)
def test_custom_tokenizer_scores_equal_rouge_score(pairs, make):
    if make is CharacterBigrams:  # hundreds of tokens a text: rouge-score's Python LCS is slow
        pairs = pairs[::3]
    ours_tok, theirs_tok = make(), make()
    ours = rouge_scorer.RougeScorer(TYPES, use_stemmer=True, tokenizer=ours_tok)
    theirs = peer_scorer.RougeScorer(TYPES, use_stemmer=True, tokenizer=theirs_tok)
    for target, prediction in pairs:
        _same(ours.score(target, prediction), theirs.score(target, prediction))
    if isinstance(ours_tok, Recording):  # score() makes rouge-score's calls, in its order
        assert ours_tok.calls == theirs_tok.calls
    targets = [t for t, _ in pairs[:5]]
    _same(ours.score_multi(targets, pairs[0][1]), theirs.score_multi(targets, pairs[0][1]))
    batch = ours.score_batch([t for t, _ in pairs], [p for _, p in pairs])
    for got, (target, prediction) in zip(batch, pairs):
        _same(got, theirs.score(target, prediction))


def test_default_tokenizer_object_takes_the_native_path(pairs):
    """A plain DefaultTokenizer is recognised (native tokenizing); a subclass is called as custom."""

    class Shouting(tokenizers.DefaultTokenizer):
        def tokenize(self, text):
            return [t.upper() for t in super().tokenize(text)]

    for use_stemmer in (False, True):
        ours = rouge_scorer.RougeScorer(TYPES, tokenizer=tokenizers.DefaultTokenizer(use_stemmer))
        sub = rouge_scorer.RougeScorer(TYPES, tokenizer=Shouting(use_stemmer))
        theirs = peer_scorer.RougeScorer(TYPES, use_stemmer=use_stemmer)
        for target, prediction in pairs:
            _same(ours.score(target, prediction), theirs.score(target, prediction))
            _same(sub.score(target, prediction), theirs.score(target, prediction))


@pytest.mark.parametrize("tokenizer", [None, Whitespace])
def test_split_summaries_equal_rouge_score(pairs, monkeypatch, tokenizer):
    """With split_summaries, sentences come from nltk.sent_tokenize (replaced here: punkt is a download)."""
    nltk = pytest.importorskip("nltk")
    monkeypatch.setattr(nltk, "sent_tokenize", lambda text: re.split(r"(?<=[.!?]) +", text))
    make = (lambda: None) if tokenizer is None else tokenizer
    ours = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True, split_summaries=True, tokenizer=make())
    theirs = peer_scorer.RougeScorer(["rougeLsum"], use_stemmer=True, split_summaries=True, tokenizer=make())
    texts = [(t.replace("\n", " "), p) for t, p in pairs] + [("One. Two\nthree. Four!", "two three. one four.")]
    for target, prediction in texts:
        _same(ours.score(target, prediction), theirs.score(target, prediction))


# --- types, checked when scoring ---------------------------------------------------------------


@pytest.mark.parametrize("bad", ["rougex", "rouge10", "rouge0", "rougen", "ROUGE1"])
def test_rouge_types_are_checked_when_scoring(bad):
    ours = rouge_scorer.RougeScorer(["rouge1", bad])  # constructing does not check, as in rouge-score
    theirs = peer_scorer.RougeScorer(["rouge1", bad])
    with pytest.raises(ValueError) as got:
        ours.score("a b", "a")
    with pytest.raises(ValueError) as want:
        theirs.score("a b", "a")
    assert str(got.value) == str(want.value)


def test_repeated_types_and_the_old_import_path():
    ours = legacy_import.RougeScorer(["rouge1", "rougeL", "rouge1"]).score("a b c", "a c")
    _same(ours, peer_scorer.RougeScorer(["rouge1", "rougeL", "rouge1"]).score("a b c", "a c"))
    assert legacy_import is rouge_scorer and isinstance(rouge_scorer.RougeScorer(["rouge1"]), scoring.BaseScorer)


# --- io -----------------------------------------------------------------------------------------


@pytest.fixture()
def files(tmp_path, pairs):
    targets, predictions = tmp_path / "t.txt", tmp_path / "p.txt"
    targets.write_text("".join(t.replace("\n", " ") + "\n" for t, _ in pairs))
    predictions.write_text("".join(p.replace("\n", " ") + "\n" for _, p in pairs))
    return str(targets), str(predictions)


def test_io_writes_the_same_csv(files, tmp_path):
    targets, predictions = files
    ours, theirs = tmp_path / "ours.csv", tmp_path / "theirs.csv"
    io.compute_scores_and_write_to_csv(
        targets, predictions, str(ours), rouge_scorer.RougeScorer(["rouge1", "rougeL"]), None
    )
    peer_io.compute_scores_and_write_to_csv(
        targets, predictions, str(theirs), peer_scorer.RougeScorer(["rouge1", "rougeL"]), None
    )
    assert ours.read_text() == theirs.read_text()
    for out, (module, scorer, aggregator) in (
        (ours, (io, rouge_scorer.RougeScorer(["rouge2"]), scoring.BootstrapAggregator(n_samples=200))),
        (theirs, (peer_io, peer_scorer.RougeScorer(["rouge2"]), peer_scoring.BootstrapAggregator(n_samples=200))),
    ):
        np.random.seed(3)  # both aggregators draw from numpy's global RNG the same way
        module.compute_scores_and_write_to_csv(targets, predictions, str(out), scorer, aggregator)
    assert ours.read_text() == theirs.read_text()
    assert ours.read_text().startswith("score_type,low,mid,high\nrouge2-R,")


def test_io_errors(files, tmp_path):
    targets, predictions = files
    scorer = rouge_scorer.RougeScorer(["rouge1"])
    with pytest.raises(ValueError, match="equal and positive number"):
        io.compute_scores_and_write_to_csv(str(tmp_path / "none*"), predictions, str(tmp_path / "o"), scorer, None)
    short = tmp_path / "short.txt"
    short.write_text("one\n")
    with pytest.raises(ValueError, match="equal number of lines"):
        io.compute_scores_and_write_to_csv(targets, str(short), str(tmp_path / "o"), scorer, None)
