"""Drop-in for sacreBLEU's Python API: change the import, keep the numbers.

    # from sacrebleu import corpus_bleu, sentence_bleu, corpus_chrf
    # from sacrebleu.metrics import BLEU, CHRF, TER
    from respeval.compat.sacrebleu import BLEU, CHRF, TER, corpus_bleu, sentence_bleu, corpus_chrf

References are sacreBLEU's reference *streams* (``[refs]`` for one reference per
segment; ``None`` items for a variable number).  Unlike sacreBLEU, a stream of
the wrong length raises instead of being silently truncated by ``zip``.
Scores print like sacreBLEU's; signatures have the same fields, with
``version:respeval-<version>``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from respeval.metrics import bleu as _bleu
from respeval.metrics import chrf as _chrf
from respeval.metrics import sacrebleu_scores
from respeval.metrics import ter as _ter
from respeval.stats import sacrebleu as bootstrap_mt

__all__ = [
    "BLEU",
    "BLEUScore",
    "CHRF",
    "CHRFScore",
    "Score",
    "TER",
    "TERScore",
    "corpus_bleu",
    "corpus_chrf",
    "corpus_ter",
    "sentence_bleu",
    "sentence_chrf",
    "sentence_ter",
]


class Score:
    """A score with sacreBLEU's ``format()`` and ``str()``."""

    def __init__(self, name: str, score: float) -> None:
        self.name = name
        self.score = score
        self._mean = -1.0
        self._ci = -1.0
        self._verbose = ""

    def format(self, width: int = 2, score_only: bool = False, signature: str = "", is_json: bool = False) -> str:
        text = f"{self.score:.{width}f}"
        info: dict[str, Any] = {"name": self.name, "score": float(text), "signature": signature}
        if self._mean > 0:
            mean, var = f"{self._mean:.{width}f}", f"{self._ci:.{width}f}"
            text += f" (μ = {mean} ± {var})"
            if is_json:
                info.update(confidence_mean=float(mean), confidence_var=float(var), confidence=f"μ = {mean} ± {var}")
        if score_only:
            return text
        line = f"{self.name}|{signature}" if signature else self.name
        line = f"{line} = {text}"
        if self._verbose:
            line += f" {self._verbose}"
            info["verbose_score"] = self._verbose
        if is_json:
            for part in signature.split("|") if signature else []:
                key, value = part.split(":", 1)
                info[key] = value
            return json.dumps(info, indent=1, ensure_ascii=False)
        return line

    def _set_ci(self, mean: float, ci: float) -> None:
        self._mean, self._ci = mean, ci

    def __repr__(self) -> str:
        return self.format()

    __str__ = __repr__


class BLEUScore(Score):
    def __init__(self, parts: Any) -> None:
        super().__init__("BLEU", parts.score)
        self.counts, self.totals, self.precisions = parts.counts, parts.totals, parts.precisions
        self.bp, self.sys_len, self.ref_len = parts.bp, parts.sys_len, parts.ref_len
        self.prec_str = "/".join(f"{p:.1f}" for p in self.precisions)
        self.ratio = self.sys_len / self.ref_len if self.ref_len else 0
        self._verbose = (
            f"{self.prec_str} (BP = {self.bp:.3f} ratio = {self.ratio:.3f} "
            f"hyp_len = {self.sys_len:d} ref_len = {self.ref_len:d})"
        )


class CHRFScore(Score):
    def __init__(self, score: float, char_order: int, word_order: int, beta: int) -> None:
        self.char_order, self.word_order, self.beta = char_order, word_order, beta
        super().__init__(f"chrF{beta}" + "+" * word_order, score)


class TERScore(Score):
    def __init__(self, score: float, num_edits: float, ref_length: float) -> None:
        super().__init__("TER", score)
        self.num_edits = int(num_edits)
        self.ref_length = ref_length


class _Signature(str):
    """A signature string with ``format(short=...)`` like sacreBLEU's Signature."""

    def format(self, short: bool = False) -> str:  # type: ignore[override]
        if not short:
            return str(self)
        abbr = {
            "nrefs": "#",
            "version": "v",
            "case": "c",
            "eff": "e",
            "smooth": "s",
            "tok": "tok",
            "bs": "bs",
            "seed": "rs",
            "nc": "nc",
            "nw": "nw",
            "space": "s",
            "norm": "nr",
            "punct": "pn",
            "asian": "as",
        }
        return "|".join(f"{abbr.get(k, k)}:{v}" for k, v in (p.split(":", 1) for p in str(self).split("|")))


def _rows(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]]) -> list[list[str]]:
    return _bleu.streams_to_rows(references, len(hypotheses))


def _nrefs(rows: list[list[str]], streams: Sequence) -> int | str:
    return "var" if any(len(r) != len(streams) for r in rows) else len(streams)


class BLEU:
    """sacreBLEU's ``BLEU`` class (``corpus_score``, ``sentence_score``, ``get_signature``)."""

    def __init__(
        self,
        lowercase: bool = False,
        force: bool = False,
        tokenize: str | None = None,
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        max_ngram_order: int = 4,
        effective_order: bool = False,
        trg_lang: str = "",
        references: Any = None,
    ) -> None:
        self.lowercase, self.force = lowercase, force
        self.tokenize = tokenize or ("zh" if trg_lang == "zh" else "13a")
        self.smooth_method, self.smooth_value = smooth_method, smooth_value
        self.max_ngram_order, self.effective_order = max_ngram_order, effective_order
        self._nrefs: int | str | None = None
        self._bootstrap: int | None = None
        self._seed: int | None = None
        self._refs = references

    def _score(self, stats_sum: list) -> BLEUScore:
        return BLEUScore(
            sacrebleu_scores.compute_bleu(
                stats_sum, self.smooth_method, self.smooth_value, self.effective_order, self.max_ngram_order
            )
        )

    def corpus_score(self, hypotheses: Sequence[str], references: Any = None, n_bootstrap: int = 1) -> BLEUScore:
        references = self._refs if references is None else references
        rows = _rows(hypotheses, references)
        self._nrefs = _nrefs(rows, references)
        res = _bleu.bleu(
            list(hypotheses),
            rows,
            tokenize=self.tokenize,
            lowercase=self.lowercase,
            max_order=self.max_ngram_order,
            smooth=self.smooth_method,
            smooth_value=self.smooth_value,
            effective_order=self.effective_order,
        )
        score = self._score(res.stats.sum(axis=0).tolist())
        if n_bootstrap > 1:
            self._bootstrap, self._seed = n_bootstrap, bootstrap_mt.DEFAULT_SEED
            score._set_ci(*res.bootstrap(n_bootstrap))
        return score

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> BLEUScore:
        if not isinstance(hypothesis, str) or isinstance(references, str):
            raise TypeError("sentence_score takes a str hypothesis and a list of reference strs")
        res = _bleu.bleu(
            [hypothesis],
            [list(references)],
            tokenize=self.tokenize,
            lowercase=self.lowercase,
            max_order=self.max_ngram_order,
            smooth=self.smooth_method,
            smooth_value=self.smooth_value,
            effective_order=self.effective_order,
        )
        self._nrefs = len(references)
        return self._score(res.stats[0].tolist())

    def get_signature(self) -> _Signature:
        if self._nrefs is None:
            raise ValueError("Number of references unknown, please evaluate the metric first.")
        return _Signature(
            _bleu.signature(
                nrefs=self._nrefs,
                lowercase=self.lowercase,
                tokenize=self.tokenize,
                smooth=self.smooth_method,
                smooth_value=self.smooth_value,
                effective_order=self.effective_order,
                bootstrap=self._bootstrap,
                seed=self._seed,
            )
        )


class CHRF:
    """sacreBLEU's ``CHRF`` class."""

    def __init__(
        self,
        char_order: int = 6,
        word_order: int = 0,
        beta: int = 2,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
        references: Any = None,
    ) -> None:
        self.metric = _chrf.Chrf(
            char_order=char_order,
            word_order=word_order,
            beta=beta,
            lowercase=lowercase,
            whitespace=whitespace,
            eps_smoothing=eps_smoothing,
        )
        self.char_order, self.word_order, self.beta = char_order, word_order, beta
        self._nrefs: int | str | None = None
        self._bootstrap: int | None = None
        self._seed: int | None = None
        self._refs = references

    def _score(self, value: float) -> CHRFScore:
        return CHRFScore(value, self.char_order, self.word_order, self.beta)

    def corpus_score(self, hypotheses: Sequence[str], references: Any = None, n_bootstrap: int = 1) -> CHRFScore:
        references = self._refs if references is None else references
        rows = _rows(hypotheses, references)
        self._nrefs = _nrefs(rows, references)
        stats = self.metric.row_statistics(self.metric.prepare(rows), list(hypotheses))
        score = self._score(self.metric.corpus_score(stats.sum(axis=0).tolist()))
        if n_bootstrap > 1:
            self._bootstrap, self._seed = n_bootstrap, bootstrap_mt.DEFAULT_SEED
            score._set_ci(*bootstrap_mt.bootstrap_ci(stats.tolist(), self.metric.corpus_score, n_bootstrap))
        return score

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> CHRFScore:
        stats = self.metric.row_statistics(self.metric.prepare([list(references)]), [hypothesis])
        self._nrefs = len(references)
        return self._score(self.metric.corpus_score(stats[0].tolist()))

    def get_signature(self) -> _Signature:
        if self._nrefs is None:
            raise ValueError("Number of references unknown, please evaluate the metric first.")
        return _Signature(self.metric.signature(self._nrefs, self._bootstrap, self._seed))


class TER:
    """sacreBLEU's ``TER`` class."""

    def __init__(
        self,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
        references: Any = None,
    ) -> None:
        self.options = dict(
            normalized=normalized, no_punct=no_punct, asian_support=asian_support, case_sensitive=case_sensitive
        )
        self._nrefs: int | str | None = None
        self._bootstrap: int | None = None
        self._seed: int | None = None
        self._refs = references

    @staticmethod
    def _score(stats_sum: list) -> TERScore:
        r = sacrebleu_scores.compute_ter(stats_sum)
        return TERScore(r.score, r.num_edits, r.ref_length)

    def corpus_score(self, hypotheses: Sequence[str], references: Any = None, n_bootstrap: int = 1) -> TERScore:
        references = self._refs if references is None else references
        rows = _rows(hypotheses, references)
        self._nrefs = _nrefs(rows, references)
        stats = _ter.row_statistics(list(hypotheses), rows, **self.options).tolist()
        score = self._score([sum(int(s[0]) for s in stats), sum(s[1] for s in stats)])
        if n_bootstrap > 1:
            self._bootstrap, self._seed = n_bootstrap, bootstrap_mt.DEFAULT_SEED
            score._set_ci(
                *bootstrap_mt.bootstrap_ci(stats, lambda s: sacrebleu_scores.compute_ter(s).score, n_bootstrap)
            )
        return score

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> TERScore:
        self._nrefs = len(references)
        return self._score(_ter.row_statistics([hypothesis], [list(references)], **self.options)[0].tolist())

    def get_signature(self) -> _Signature:
        if self._nrefs is None:
            raise ValueError("Number of references unknown, please evaluate the metric first.")
        return _Signature(_ter.signature(nrefs=self._nrefs, bootstrap=self._bootstrap, seed=self._seed, **self.options))


def corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    force: bool = False,
    lowercase: bool = False,
    tokenize: str = "13a",
    use_effective_order: bool = False,
) -> BLEUScore:
    return BLEU(
        lowercase=lowercase,
        force=force,
        tokenize=tokenize,
        smooth_method=smooth_method,
        smooth_value=smooth_value,
        effective_order=use_effective_order,
    ).corpus_score(hypotheses, references)


def sentence_bleu(
    hypothesis: str,
    references: Sequence[str],
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    lowercase: bool = False,
    tokenize: str = "13a",
    use_effective_order: bool = True,
) -> BLEUScore:
    return BLEU(
        lowercase=lowercase,
        tokenize=tokenize,
        smooth_method=smooth_method,
        smooth_value=smooth_value,
        effective_order=use_effective_order,
    ).sentence_score(hypothesis, references)


def corpus_chrf(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    char_order: int = 6,
    word_order: int = 0,
    beta: int = 2,
    remove_whitespace: bool = True,
    eps_smoothing: bool = False,
) -> CHRFScore:
    return CHRF(
        char_order=char_order,
        word_order=word_order,
        beta=beta,
        whitespace=not remove_whitespace,
        eps_smoothing=eps_smoothing,
    ).corpus_score(hypotheses, references)


def sentence_chrf(
    hypothesis: str,
    references: Sequence[str],
    char_order: int = 6,
    word_order: int = 0,
    beta: int = 2,
    remove_whitespace: bool = True,
    eps_smoothing: bool = False,
) -> CHRFScore:
    return CHRF(
        char_order=char_order,
        word_order=word_order,
        beta=beta,
        whitespace=not remove_whitespace,
        eps_smoothing=eps_smoothing,
    ).sentence_score(hypothesis, references)


def corpus_ter(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> TERScore:
    return TER(
        normalized=normalized, no_punct=no_punct, asian_support=asian_support, case_sensitive=case_sensitive
    ).corpus_score(hypotheses, references)


def sentence_ter(
    hypothesis: str,
    references: Sequence[str],
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> TERScore:
    return TER(
        normalized=normalized, no_punct=no_punct, asian_support=asian_support, case_sensitive=case_sensitive
    ).sentence_score(hypothesis, references)
