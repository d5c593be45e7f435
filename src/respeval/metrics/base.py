"""The shapes every metric shares: a family (how rows become statistics) and one result type.

A family (ROUGE, BLEU, chrF, ...) turns references once into a prepared form,
then scores chunks of predictions against them.  Per row it returns output
columns (what goes to the results file) and *statistic* columns whose sums
determine the corpus score, so a corpus score, a bootstrap resample and a
distributed reduce are all "sum the rows, then apply ``corpus``".

``MetricResult`` is what the library functions (``respeval.rouge``, ``bleu``,
``chrf``, ``ter``, ``squad``, ``exact_match``, ...) return: the same ``columns``,
``res[name]``, ``corpus_scores()``, ``mean()``, ``bootstrap()``, ``to_arrow()`` and
``signature`` whatever the metric, all computed from the family's statistics.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from respeval.errors import RespevalError
from respeval.stats import DEFAULT_SEED, bootstrap_add, new_accumulator, percentile_interval, replicate_sums
from respeval.stats import resolve_seed as _resolve_seed
from respeval.stats.exact import exact_mean, exact_sum
from respeval.stats.intervals import Interval

# What a family's ``score`` receives per row:
#   "text": the prediction as str; references as str or a non-empty list of str
#   "json": parsed JSON values (lists, dicts, numbers, str), e.g. tool-call trajectories
#   "row":  the whole input record (a dict of every field), e.g. custom Python metrics
INPUT_KINDS = ("text", "json", "row")


class RowValueError(RespevalError, ValueError):
    """A row the metric cannot score (bad shape, beyond a documented limit, ...).

    ``row`` is the 0-based row in the call (or chunk) and ``reason`` says what is wrong
    and what to do; the bulk pipeline turns it into an unscored row under ``--on-error``.
    """

    def __init__(self, row: int, reason: str) -> None:
        super().__init__(f"row {row}: {reason}")
        self.row = row
        self.reason = reason


@dataclass
class ChunkScores:
    """One chunk's per-row results of one family.

    ``errors`` maps a row (0-based within the chunk) to the reason it could not be
    scored; such rows carry NaN in ``columns`` and zeros in ``stats``, and the
    pipeline leaves them out of the corpus statistics.  ``error_sides`` says, for the
    errors that concern one input only, which: ``"prediction"`` or ``"reference"`` (the
    pipeline then names that input's file, line and field).
    """

    columns: dict[str, np.ndarray]  # written to the results file
    stats: np.ndarray  # [rows, len(family.stat_names)], float64 (or int64 for count statistics)
    errors: dict[int, str] = field(default_factory=dict)
    error_sides: dict[int, str] = field(default_factory=dict)


@runtime_checkable
class MetricFamily(Protocol):
    """A family of metrics computed together (e.g. rouge1+rouge2+rougeL)."""

    # read-only members (properties), so a family may hold them as plain attributes of narrower types
    @property
    def name(self) -> str: ...

    @property
    def stat_names(self) -> tuple[str, ...]: ...

    @property
    def headline(self) -> tuple[str, ...]:
        """Corpus fields shown in tables, e.g. ("rouge1_f", "rougeL_f")."""

    @property
    def inputs(self) -> str:
        """One of INPUT_KINDS."""

    def prepare(self, references: list[Any]) -> Any:
        """Tokenize/analyse references once (reused for every system of a chunk)."""

    def score(self, prepared: Any, predictions: list[Any]) -> ChunkScores:
        """Per-row results of ``predictions`` against the prepared references (same rows)."""

    def corpus(self, sums: np.ndarray, rows: Any) -> dict[str, Any]:
        """Corpus values from summed statistics.

        ``sums`` may be 2-D, one row per bootstrap resample; ``rows`` is then an
        array of the resamples' sizes (Poisson resamples differ in size).
        """

    def signature(self) -> str:
        """Everything needed to reproduce the numbers, built by the one
        :class:`respeval.metrics.signature.Signature` (which writes the package version)."""


class MetricResult:
    """Per-row scores of one metric family, and everything computed from them.

    * ``columns``: per-row numpy columns (also ``res[name]``, ``name in res``, ``keys()``);
    * ``stats``: the per-row statistics whose sums give the corpus values;
    * ``corpus_scores()``: the corpus values (sums of statistics through the family);
    * ``mean()``: exactly rounded means of the score columns;
    * ``bootstrap(n, ci, seed)``: seeded Poisson-bootstrap percentile intervals of the
      corpus values, the same resamples as the bulk pipeline's tables;
    * ``to_arrow()``, ``to_dict()``; ``signature`` says how to reproduce the numbers.
    """

    def __init__(self, family: MetricFamily, scores: ChunkScores, *, implementation: str = "native") -> None:
        self.family = family
        self._columns = scores.columns
        self.stats = scores.stats
        self.errors = dict(scores.errors)
        self.implementation = implementation
        self.signature = family.signature()

    @property
    def columns(self) -> dict[str, np.ndarray]:
        return self._columns

    def __len__(self) -> int:
        return int(self.stats.shape[0])

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self._columns[name]
        except KeyError:
            raise KeyError(f"{name!r} is not a column of this result; columns: {', '.join(self._columns)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._columns

    def keys(self) -> Iterator[str]:
        return iter(self._columns)

    def _scored(self) -> np.ndarray:
        if not self.errors:
            return self.stats
        keep = np.ones(len(self), dtype=bool)
        keep[list(self.errors)] = False
        return self.stats[keep]

    def corpus_scores(self) -> dict[str, float]:
        """The corpus values: the family's score of the summed statistics (unscored rows left out)."""
        stats = self._scored()
        if np.issubdtype(stats.dtype, np.integer):
            sums = stats.sum(axis=0)
        else:
            sums = np.array([exact_sum(np.ascontiguousarray(stats[:, j])) for j in range(stats.shape[1])])
        return {k: float(v) for k, v in self.family.corpus(sums, stats.shape[0]).items()}

    def mean(self) -> dict[str, float]:
        """Exactly rounded mean of each float score column over the scored rows (0 when none)."""
        keep = None
        if self.errors:
            keep = np.ones(len(self), dtype=bool)
            keep[list(self.errors)] = False
        out = {}
        for name, col in self._columns.items():
            if col.dtype.kind != "f":
                continue
            out[name] = exact_mean(col if keep is None else col[keep])
        return out

    def bootstrap(
        self, n: int = 1000, ci: float = 0.95, seed: int | None = DEFAULT_SEED, threads: int | None = None
    ) -> dict[str, Interval]:
        """Seeded Poisson-bootstrap percentile interval of each corpus value.

        The replicates are those of ``respeval.stats`` (a row's weight depends only on the
        seed, its row index and the replicate), so the bulk pipeline's intervals over the
        same rows are the same.  ``threads``: the native core's threads for the replicate
        sums (None: all cores); the sums, and so the intervals, are the same for any count.
        """
        stats = self._scored()
        if stats.shape[0] == 0:
            raise ValueError("cannot bootstrap a result without scored rows")
        matrix = np.ascontiguousarray(stats, dtype=np.float64)
        acc = new_accumulator(matrix.shape[1], n)
        keys = np.arange(len(self), dtype=np.int64)
        if self.errors:
            keys = keys[np.setdiff1d(keys, list(self.errors))]
        bootstrap_add(acc, matrix, keys, _resolve_seed(seed), threads)
        sums, sizes = replicate_sums(acc)
        values = self.family.corpus(sums, sizes)
        names = list(values)
        samples = np.column_stack([np.asarray(values[k], dtype=np.float64) for k in names])
        q = percentile_interval(samples, ci)
        return {
            k: Interval(float(q[0, i]), float(q[1, i]), float(q[2, i]), ci, "poisson bootstrap percentile")
            for i, k in enumerate(names)
        }

    def to_dict(self) -> dict[str, list[Any]]:
        return {k: v.tolist() for k, v in self._columns.items()}

    def to_arrow(self) -> Any:
        import pyarrow as pa

        return pa.table(self._columns)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rows={len(self)}, columns={list(self._columns)}, signature={self.signature!r})"


def split_metric_names(names: Sequence[str]) -> list[str]:
    """``"rouge1,rougeL"`` style lists, flattened and stripped."""
    out: list[str] = []
    for name in names:
        out.extend(n.strip() for n in name.split(",") if n.strip())
    return out


def check_options(family: str, options: Mapping[str, Any], allowed: Sequence[str]) -> None:
    """Reject an option a family does not know, naming the ones it does."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(f"{family} got unknown option(s) {', '.join(unknown)}; it takes {', '.join(allowed)}")


def describe_value(value: Any) -> str:
    """A value as an error message shows it: ``the string 'false'``, ``int 1``, ``None``."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    return f"{type(value).__name__} {str(value)[:40]}"


def check_flag(value: Any, option: str, owner: str) -> bool:
    """A true/false option as a bool.  Anything else is an error naming the option: the string
    ``"false"`` a quoted YAML value (or a JSON/TOML string) gives is truthy, and taking it as
    True would silently do the opposite of what was written."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{owner}: {option} must be true or false, got {describe_value(value)}")
