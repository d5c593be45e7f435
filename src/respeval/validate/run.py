"""One metric validated end to end, and a whole results table."""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from respeval.stats import DEFAULT_SEED
from respeval.validate.agreement import Agreement, agreement, sorted_labels
from respeval.validate.columns import MetricColumns, find_metrics, scorer_of, table_column
from respeval.validate.correlation import Correlation, correlations
from respeval.validate.pairwise import (
    DEFAULT_TIES,
    PairwiseConsistency,
    VerbosityProbe,
    pairwise_consistency,
    text_length,
    verbosity_pairwise,
    verbosity_pointwise,
)
from respeval.validate.resampling import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, Interval, Label, plain_value

# Longest text kept per field in a disagreement record (the report shows it folded).
_TEXT_LIMIT = 4000


TEXT_COLUMNS = (
    "prompt",
    "instruction",
    "input",
    "reference",
    "response",
    "baseline_model_response",
    "response_a",
    "response_b",
    "response1",
    "response2",
    "output_1",
    "output_2",
)


@dataclass(frozen=True)
class PairwiseScheme:
    """How a family of pairwise verdicts is spelled (see the module docstring's table)."""

    first: Label
    second: Label
    tie: Label
    first_texts: tuple[str, ...]  # columns holding the response ``first`` names
    second_texts: tuple[str, ...]
    shown_first: Label | None  # the label of the response shown first, if known

    @property
    def labels(self) -> frozenset[Label]:
        """The three labels of the scheme."""
        return frozenset((self.first, self.second, self.tie))


PAIRWISE_SCHEMES = (
    PairwiseScheme("A", "B", "TIE", ("response_a",), ("response_b",), "A"),
    PairwiseScheme(1, 2, 0, ("response1", "output_1"), ("response2", "output_2"), 1),
    PairwiseScheme("CANDIDATE", "BASELINE", "TIE", ("response",), ("baseline_model_response",), None),
)


@dataclass
class MetricValidation:
    """Everything :func:`validate_pair` found for one metric; ``to_dict()`` is the
    ``validation`` entry of a report run summary (see :mod:`respeval.report`)."""

    name: str
    kind: str
    judge_column: str
    human_column: str
    rows: int
    used: int
    dropped: dict[str, int]
    scorer: str = "judge"
    """What gave the values checked: ``"judge"`` or ``"metric"`` (ROUGE-2 against human scores)."""
    agreement: Agreement | None = None
    agreement_intervals: dict[str, Interval] = field(default_factory=dict)
    agreement_note: str | None = None
    correlation: Correlation | None = None
    correlation_intervals: dict[str, Interval] = field(default_factory=dict)
    pairwise: PairwiseConsistency | None = None
    pairwise_intervals: dict[str, Interval] = field(default_factory=dict)
    pairwise_note: str | None = None
    verbosity: VerbosityProbe | None = None
    distribution: dict[str, Any] | None = None
    disagreements: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (labels as plain values, NaN as ``null``)."""
        out: dict[str, Any] = {
            "metric": self.name,
            "kind": self.kind,
            "judge_column": self.judge_column,
            "human_column": self.human_column,
            "rows": self.rows,
            "used": self.used,
            "dropped": dict(self.dropped),
            "scorer": self.scorer,
        }
        out["agreement"] = _with_intervals(self.agreement, self.agreement_intervals)
        out["agreement_note"] = self.agreement_note
        out["correlation"] = _with_intervals(self.correlation, self.correlation_intervals)
        out["pairwise"] = _with_intervals(self.pairwise, self.pairwise_intervals)
        out["pairwise_note"] = self.pairwise_note
        out["verbosity"] = self.verbosity.to_dict() if self.verbosity else None
        out["distribution"] = self.distribution
        out["disagreements"] = self.disagreements
        return out


def _with_intervals(result: Any, intervals: Mapping[str, Interval]) -> dict[str, Any] | None:
    if result is None:
        return None
    out = result.to_dict()
    out["intervals"] = {k: v.to_dict() for k, v in intervals.items()}
    return out


def validate_pair(
    judge: Sequence[Any],
    human: Sequence[Any],
    *,
    name: str = "judge",
    kind: Literal["pointwise", "pairwise"] | None = None,
    judge_column: str = "",
    human_column: str = "",
    swapped: Sequence[Any] | None = None,
    texts: Mapping[str, Sequence[Any]] | None = None,
    first_shown: Label | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    max_disagreements: int = 10,
    scorer: str = "judge",
) -> MetricValidation:
    """Validate one judged metric against human values, end to end.

    Drops rows where either side is missing (counted in ``dropped``); numeric-looking strings
    become numbers.  Computes:

    * agreement, when both sides are labels (strings, or integers with at most 20 distinct
      values — a mean rating like 3.67 is not a label and is never rounded);
    * correlations, when both sides are numbers (pointwise only: pairwise choices are nominal);
    * pairwise consistency, when ``swapped`` verdicts are given;
    * the verbosity probe, when the response texts are among ``texts``;
    * the score distributions, and the worst disagreements with their ``texts``.

    ``kind`` defaults to ``pairwise`` when ``swapped`` is given, else ``pointwise``; ``scorer``
    says what gave the values (``"judge"``, or ``"metric"`` for ROUGE-2 against human scores).
    """
    if len(judge) != len(human):
        raise ValueError(f"{name}: judge has {len(judge)} rows but human has {len(human)}")
    kind = kind or ("pairwise" if swapped is not None else "pointwise")
    keep, dropped = _complete_rows(judge, human)
    j = _coerce([judge[i] for i in keep])
    h = _coerce([human[i] for i in keep])
    if scorer not in ("judge", "metric"):
        raise ValueError(f"{name}: scorer must be 'judge' or 'metric', not {scorer!r}")
    result = MetricValidation(
        name, kind, judge_column, human_column, rows=len(judge), used=len(keep), dropped=dropped, scorer=scorer
    )
    if not keep:
        result.agreement_note = "no row has both a judge and a human value"
        return result
    boot = {"n": n_boot, "seed": seed, "confidence": confidence}
    _add_agreement(result, j, h, boot)
    if kind == "pointwise":  # pairwise choices are nominal, even when coded 0/1/2
        _add_correlation(result, j, h, boot)
    kept_texts = {k: [v[i] for i in keep] for k, v in (texts or {}).items()}
    if kind == "pairwise":
        _add_pairwise(
            result, j, h, None if swapped is None else [swapped[i] for i in keep], kept_texts, first_shown, boot
        )
    else:
        _add_pointwise_verbosity(result, j, h, kept_texts, boot)
    result.distribution = _distribution(j, h, scorer)
    result.disagreements = _disagreements(j, h, keep, kept_texts, kind, max_disagreements)
    return result


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _complete_rows(judge: Sequence[Any], human: Sequence[Any]) -> tuple[list[int], dict[str, int]]:
    keep: list[int] = []
    counts = {"judge_missing": 0, "human_missing": 0, "both_missing": 0}
    for i, (a, b) in enumerate(zip(judge, human)):
        ma, mb = _is_missing(a), _is_missing(b)
        if ma and mb:
            counts["both_missing"] += 1
        elif ma:
            counts["judge_missing"] += 1
        elif mb:
            counts["human_missing"] += 1
        else:
            keep.append(i)
    counts["total"] = len(judge) - len(keep)
    return keep, counts


def is_number(value: Any) -> bool:
    """A real number that is not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _coerce(values: list[Any]) -> list[Any]:
    """Plain Python values; a side made only of numbers or numeric strings becomes numbers
    (whole floats become ints, so ``4.0`` and ``"4"`` are the label ``4``)."""
    plain = [plain_value(v) for v in values]
    numbers_ = [_try_float(v) for v in plain]
    if all(is_number(v) for v in numbers_):
        return [_int_if_whole(v) for v in numbers_]
    return plain


def _try_float(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _int_if_whole(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _are_labels(values: list[Any]) -> bool:
    if all(isinstance(v, (str, bool)) for v in values):
        return True
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values) and len(set(values)) <= 20


def _add_agreement(result: MetricValidation, j: list[Any], h: list[Any], boot: dict[str, Any]) -> None:
    if not (_are_labels(j) and _are_labels(h)):
        result.agreement_note = (
            "not computed: the values are not labels (non-integer numbers or more than 20 levels); see the correlations"
        )
        return
    try:
        result.agreement = agreement(j, h)
    except ValueError as exc:
        result.agreement_note = f"not computed: {exc}"
        return
    if boot["n"]:
        result.agreement_intervals = result.agreement.bootstrap(**boot)


def _add_correlation(result: MetricValidation, j: list[Any], h: list[Any], boot: dict[str, Any]) -> None:
    if not (all(is_number(v) for v in j) and all(is_number(v) for v in h)):
        return
    result.correlation = correlations(j, h)
    if boot["n"] and len(j) > 1:
        result.correlation_intervals = result.correlation.bootstrap(**boot)


def _pairwise_scheme(values: Iterable[Label]) -> PairwiseScheme | None:
    """The first known scheme spelling every value, if any."""
    seen = set(values)
    return next((scheme for scheme in PAIRWISE_SCHEMES if seen <= scheme.labels), None)


def _add_pairwise(
    result: MetricValidation,
    j: list[Any],
    h: list[Any],
    swapped: list[Any] | None,
    texts: Mapping[str, list[Any]],
    first_shown: Label | None,
    boot: dict[str, Any],
) -> None:
    scheme = _pairwise_scheme(j + h)
    ties = DEFAULT_TIES if scheme is None else (scheme.tie,)
    shown = first_shown if first_shown is not None else (scheme.shown_first if scheme else None)
    if swapped is None:
        result.pairwise_note = (
            "position consistency needs the verdicts in the swapped order ({metric}/pairwise_choice_swapped)"
        )
    else:
        both = [i for i, v in enumerate(swapped) if not _is_missing(v)]
        if both:
            sw = _coerce([swapped[i] for i in both])
            result.pairwise = pairwise_consistency([j[i] for i in both], sw, ties=ties, first_shown=shown)
            if boot["n"]:
                result.pairwise_intervals = result.pairwise.bootstrap(**boot)
            if len(both) < len(j):
                result.pairwise_note = f"{len(j) - len(both)} rows without a swapped verdict left out"
    if scheme is None:
        return
    first = next((c for c in scheme.first_texts if c in texts), None)
    second = next((c for c in scheme.second_texts if c in texts), None)
    if first and second:
        result.verbosity = verbosity_pairwise(
            j,
            human=h,
            length_first=text_length(texts[first]),
            length_second=text_length(texts[second]),
            first=scheme.first,
            second=scheme.second,
            n_boot=boot["n"],
            seed=boot["seed"],
            confidence=boot["confidence"],
        )


def _add_pointwise_verbosity(
    result: MetricValidation, j: list[Any], h: list[Any], texts: Mapping[str, list[Any]], boot: dict[str, Any]
) -> None:
    if "response" not in texts or not all(is_number(v) for v in j) or len(j) < 3:
        return
    human = h if all(is_number(v) for v in h) else None
    result.verbosity = verbosity_pointwise(
        j, text_length(texts["response"]), human, n_boot=boot["n"], seed=boot["seed"], confidence=boot["confidence"]
    )


def _distribution(j: list[Any], h: list[Any], scorer: str = "judge") -> dict[str, Any]:
    """Counts per label (categorical) or a shared-bin histogram (numeric) of both sides."""
    if _are_labels(j) and _are_labels(h):
        try:
            labels = sorted_labels(set(j) | set(h))
        except ValueError:
            labels = tuple(dict.fromkeys(j + h))
        return {
            "kind": "categorical",
            "labels": [plain_value(x) for x in labels],
            "series": [
                {"name": side, "counts": [vals.count(x) for x in labels]} for side, vals in ((scorer, j), ("human", h))
            ],
        }
    if all(is_number(v) for v in j + h):
        bins = min(30, max(5, int(math.sqrt(len(j)))))
        edges = np.histogram_bin_edges(np.asarray(j + h, dtype=np.float64), bins=bins)
        return {
            "kind": "numeric",
            "edges": edges.tolist(),
            "series": [
                {"name": side, "counts": np.histogram(vals, bins=edges)[0].tolist()}
                for side, vals in ((scorer, j), ("human", h))
            ],
        }
    return {"kind": "none"}


def _disagreement_size(a: Any, b: Any, kind: str, ties: set[Label]) -> float:
    """0 when equal; pairwise: 2 for opposite winners, 1 for a tie against a winner; numbers:
    the absolute difference; other labels: 1."""
    if a == b:
        return 0.0
    if kind == "pairwise":
        return 1.0 if (a in ties or b in ties) else 2.0
    if is_number(a) and is_number(b):
        return abs(float(a) - float(b))
    return 1.0


def _disagreements(
    j: list[Any], h: list[Any], keep: list[int], texts: Mapping[str, list[Any]], kind: str, limit: int
) -> list[dict[str, Any]]:
    """The ``limit`` rows where judge and human differ most (largest gap first, then row)."""
    ties = set(DEFAULT_TIES)
    sizes = [_disagreement_size(a, b, kind, ties) for a, b in zip(j, h)]
    worst = sorted((i for i, s in enumerate(sizes) if s > 0), key=lambda i: (-sizes[i], i))[:limit]
    return [
        {
            "row": keep[i],
            "judge": j[i],
            "human": h[i],
            "gap": sizes[i],
            "texts": {k: _clip(v[i]) for k, v in texts.items() if not _is_missing(v[i])},
        }
        for i in worst
    ]


def _clip(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(plain_value(value), default=str)
    return text if len(text) <= _TEXT_LIMIT else text[:_TEXT_LIMIT] + " […]"


def validate_table(
    table: Mapping[str, list[Any]],
    *,
    metrics: Sequence[MetricColumns] | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    first_shown: Label | None = None,
    max_disagreements: int = 10,
) -> list[MetricValidation]:
    """Validate every metric of a table (default: :func:`find_metrics` on its columns).

    Text columns for the verbosity probe and the disagreements are taken from
    :data:`TEXT_COLUMNS` and ``{metric}/explanation`` when present.
    """
    found = list(metrics) if metrics is not None else find_metrics(table)
    if not found:
        raise ValueError(
            "no metric with both a judge and a human column: expected "
            "{metric}/score with {metric}/human_rating, or {metric}/pairwise_choice "
            f"with {{metric}}/human_pairwise_choice; columns: {', '.join(list(table)[:20])}"
        )
    out = []
    for m in found:
        texts = {c: table_column(table, c) for c in TEXT_COLUMNS if c in table}
        if f"{m.name}/explanation" in table:
            texts["explanation"] = list(table[f"{m.name}/explanation"])
        out.append(
            validate_pair(
                table_column(table, m.judge),
                table_column(table, m.human),
                name=m.name,
                kind=m.kind,
                judge_column=m.judge,
                human_column=m.human,
                swapped=table_column(table, m.swapped) if m.swapped else None,
                texts=texts,
                first_shown=first_shown,
                n_boot=n_boot,
                seed=seed,
                confidence=confidence,
                max_disagreements=max_disagreements,
                scorer=m.scorer or scorer_of(m.name, m.judge, m.kind),
            )
        )
    return out
