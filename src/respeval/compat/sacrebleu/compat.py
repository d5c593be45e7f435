"""sacreBLEU's function API (``sacrebleu.compat``): one call, one score."""

from __future__ import annotations

from collections.abc import Sequence

from respeval.compat.sacrebleu.metrics import BLEU, CHRF, TER, BLEUScore, CHRFScore, TERScore

__all__ = [
    "corpus_bleu",
    "corpus_chrf",
    "corpus_ter",
    "raw_corpus_bleu",
    "sentence_bleu",
    "sentence_chrf",
    "sentence_ter",
]


def corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    force: bool = False,
    lowercase: bool = False,
    tokenize: str = BLEU.TOKENIZER_DEFAULT,
    use_effective_order: bool = False,
) -> BLEUScore:
    """Corpus BLEU of ``hypotheses`` against reference streams (``[refs]`` for one reference each)."""
    metric = BLEU(lowercase, force, tokenize, smooth_method, smooth_value, effective_order=use_effective_order)
    return metric.corpus_score(hypotheses, references)


def raw_corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    smooth_value: float | None = BLEU.SMOOTH_DEFAULTS["floor"],
) -> BLEUScore:
    """Corpus BLEU of already tokenized text: no tokenization, ``floor`` smoothing, effective order."""
    return corpus_bleu(
        hypotheses,
        references,
        smooth_method="floor",
        smooth_value=smooth_value,
        force=True,
        tokenize="none",
        use_effective_order=True,
    )


def sentence_bleu(
    hypothesis: str,
    references: Sequence[str],
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    lowercase: bool = False,
    tokenize: str = BLEU.TOKENIZER_DEFAULT,
    use_effective_order: bool = True,
) -> BLEUScore:
    """BLEU of one hypothesis against its references (a list of str)."""
    metric = BLEU(lowercase, False, tokenize, smooth_method, smooth_value, effective_order=use_effective_order)
    return metric.sentence_score(hypothesis, references)


def _chrf(char_order: int, word_order: int, beta: int, remove_whitespace: bool, eps_smoothing: bool) -> CHRF:
    return CHRF(
        char_order=char_order,
        word_order=word_order,
        beta=beta,
        whitespace=not remove_whitespace,
        eps_smoothing=eps_smoothing,
    )


def corpus_chrf(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    char_order: int = CHRF.CHAR_ORDER,
    word_order: int = CHRF.WORD_ORDER,
    beta: int = CHRF.BETA,
    remove_whitespace: bool = True,
    eps_smoothing: bool = False,
) -> CHRFScore:
    """Corpus chrF (chrF++ with ``word_order=2``) against reference streams."""
    return _chrf(char_order, word_order, beta, remove_whitespace, eps_smoothing).corpus_score(hypotheses, references)


def sentence_chrf(
    hypothesis: str,
    references: Sequence[str],
    char_order: int = CHRF.CHAR_ORDER,
    word_order: int = CHRF.WORD_ORDER,
    beta: int = CHRF.BETA,
    remove_whitespace: bool = True,
    eps_smoothing: bool = False,
) -> CHRFScore:
    """chrF of one hypothesis against its references."""
    return _chrf(char_order, word_order, beta, remove_whitespace, eps_smoothing).sentence_score(hypothesis, references)


def corpus_ter(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> TERScore:
    """Corpus TER against reference streams."""
    return TER(normalized, no_punct, asian_support, case_sensitive).corpus_score(hypotheses, references)


def sentence_ter(
    hypothesis: str,
    references: Sequence[str],
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> TERScore:
    """TER of one hypothesis against its references."""
    return TER(normalized, no_punct, asian_support, case_sensitive).sentence_score(hypothesis, references)
