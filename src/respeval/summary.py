"""Corpus tables from per-row statistics: per system (and per slice), with seeded
bootstrap intervals and paired significance against a baseline.

Every corpus value is ``family.corpus(sum of the rows' statistics, rows)``.  The
collector folds each chunk in as it comes: exactly rounded running sums (so a
value here equals the library's ``.mean()`` bit for bit, however the rows were
chunked) and streaming Poisson bootstrap sums.  Memory does not grow with the
corpus; only ``--compare`` keeps per-row statistics, because a paired test needs
both systems' rows side by side.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from respeval.metrics.base import MetricFamily
from respeval.stats import DEFAULT_SEED, bootstrap_add, new_accumulator, replicate_sums, resolve_seed
from respeval.stats.exact import ExactSums

_BLOCK_ROWS = 1_000_000


@dataclass
class CorpusRow:
    """One system (and slice): row count, corpus values and their intervals."""

    system: str
    group: str | None
    rows: int
    values: dict[str, float]
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass
class Comparison:
    """A system against the baseline on the rows both scored: difference and p-value."""

    system: str
    baseline: str
    group: str | None
    rows: int
    delta: dict[str, float]
    p_value: dict[str, float]
    method: str = "paired approximate randomization"


@dataclass
class _Series:
    """One (system, group, family): exact sums and the bootstrap replicates' sums.

    A small series keeps its rows instead: the accumulators cost as much as
    ``n_replicates`` rows, so many small slices (``--group-by`` a field with
    thousands of values) would otherwise cost far more than their rows.  Rows are
    folded into the accumulators, in order, once they outgrow them; the sums are
    the same either way.
    """

    sums: ExactSums
    replicates: np.ndarray | None = None
    held: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    held_rows: int = 0


class StatsCollector:
    """Running corpus statistics per (system, group, family).

    ``add`` must see each (system, group)'s rows in row order for the bootstrap
    sums to be reproducible bit for bit (the exact sums do not care).  Rows are
    keyed by their input record index: the key, not the position, picks each
    row's bootstrap weights.
    """

    def __init__(
        self,
        families: Sequence[MetricFamily],
        *,
        bootstrap: int = 0,
        seed: int | None = DEFAULT_SEED,
        keep_rows: bool = False,
        threads: int | None = None,
    ) -> None:
        self.families = list(families)
        self.bootstrap = int(bootstrap)
        self.seed = resolve_seed(seed)
        self.keep_rows = keep_rows
        self.threads = threads
        self._rows: dict[tuple[str, str | None], int] = {}
        self._series: dict[tuple[str, str | None, str], _Series] = {}
        self._kept_keys: dict[tuple[str, str | None], list[np.ndarray]] = {}
        self._kept_stats: dict[tuple[str, str | None, str], list[np.ndarray]] = {}

    def add(self, system: str, group: str | None, row_keys: np.ndarray, stats_by_family: dict[str, np.ndarray]) -> None:
        keys = np.ascontiguousarray(row_keys, dtype=np.int64)
        self._rows[(system, group)] = self._rows.get((system, group), 0) + len(keys)
        if self.keep_rows:
            self._kept_keys.setdefault((system, group), []).append(keys)
        for fam in self.families:
            width = len(fam.stat_names)
            mat = np.ascontiguousarray(stats_by_family[fam.name], dtype=np.float64).reshape(-1, width)
            finite = np.isfinite(mat)
            if not finite.all():
                r, c = map(int, np.argwhere(~finite)[0])
                raise ValueError(
                    f"record {int(keys[r])} of system {system!r}: {fam.name} statistic "
                    f"{fam.stat_names[c]} is {float(mat[r, c])!r}, which no corpus sum can hold"
                )
            series = self._series.get((system, group, fam.name))
            if series is None:
                series = self._series[(system, group, fam.name)] = _Series(ExactSums(width))
            series.sums.add(mat)
            if self.bootstrap > 0 and len(keys):
                self._fold(series, mat, keys)
            if self.keep_rows:
                self._kept_stats.setdefault((system, group, fam.name), []).append(mat)

    def _fold(self, series: _Series, mat: np.ndarray, keys: np.ndarray) -> None:
        if series.replicates is None and series.held_rows + len(keys) <= self.bootstrap:
            series.held.append((mat.copy(), keys.copy()))
            series.held_rows += len(keys)
            return
        if series.replicates is None:
            series.replicates = self._accumulate(series.held, mat.shape[1])
            series.held, series.held_rows = [], 0
        bootstrap_add(series.replicates, mat, keys, self.seed, self.threads)

    def _accumulate(self, blocks: list[tuple[np.ndarray, np.ndarray]], width: int) -> np.ndarray:
        acc = new_accumulator(width, self.bootstrap)
        for mat, keys in blocks:
            bootstrap_add(acc, mat, keys, self.seed, self.threads)
        return acc

    def keys(self) -> list[tuple[str, str | None]]:
        return list(self._rows)

    def rows(self, system: str, group: str | None) -> int:
        return self._rows.get((system, group), 0)

    def sums(self, system: str, group: str | None, family: MetricFamily) -> np.ndarray:
        series = self._series.get((system, group, family.name))
        return series.sums.values() if series else np.zeros(len(family.stat_names))

    def replicates(self, system: str, group: str | None, family: MetricFamily) -> tuple[np.ndarray, np.ndarray] | None:
        """(sums, sizes) of the bootstrap replicates that drew a row, or None without bootstrap."""
        series = self._series.get((system, group, family.name))
        if series is None or self.bootstrap <= 0:
            return None
        if series.replicates is None:  # a small series: its rows were held
            return replicate_sums(self._accumulate(series.held, len(family.stat_names)))
        return replicate_sums(series.replicates)

    def row_keys(self, system: str, group: str | None) -> np.ndarray:
        self._need_rows()
        parts = self._kept_keys.get((system, group), [])
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def matrix(self, system: str, group: str | None, family: MetricFamily) -> np.ndarray:
        """The per-row statistics, rows x statistics (only with ``keep_rows``)."""
        self._need_rows()
        parts = self._kept_stats.get((system, group, family.name), [])
        return np.concatenate(parts) if parts else np.zeros((0, len(family.stat_names)))

    def _need_rows(self) -> None:
        if not self.keep_rows:
            raise RuntimeError("per-row statistics were not kept: build the collector with keep_rows=True")


def corpus_row(system: str, group: str | None, collector: StatsCollector, *, confidence: float) -> CorpusRow:
    rows = collector.rows(system, group)
    values: dict[str, float] = {}
    intervals: dict[str, tuple[float, float]] = {}
    delta = (1 - confidence) / 2
    for fam in collector.families:
        for name, v in fam.corpus(collector.sums(system, group, fam), rows).items():
            values[name] = float(v)
        reps = collector.replicates(system, group, fam)
        if reps is None or len(reps[1]) == 0:
            continue
        for name, arr in fam.corpus(*reps).items():
            lo, hi = np.percentile(np.asarray(arr), [100 * delta, 100 * (1 - delta)])
            intervals[name] = (float(lo), float(hi))
    return CorpusRow(system, group, rows, values, intervals)


def compare(
    system: str,
    baseline: str,
    group: str | None,
    collector: StatsCollector,
    *,
    fields: Iterable[str],
    trials: int,
    seed: int | None,
) -> Comparison:
    """Paired approximate randomization on the rows both systems scored.

    Each trial swaps every row's statistics between the two systems with
    probability 1/2; the p-value is (exceeding trials + 1) / (trials + 1) for the
    absolute corpus difference, per field.
    """
    ka, kb = collector.row_keys(system, group), collector.row_keys(baseline, group)
    common, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    rows = len(common)
    fields = list(fields)
    delta: dict[str, float] = {}
    p_value: dict[str, float] = {}
    rng = np.random.default_rng(seed)
    for fam in collector.families:
        wanted = [f for f in fields if f in fam.corpus(np.zeros(len(fam.stat_names)), 1)]
        if not wanted or rows == 0:
            continue
        a = collector.matrix(system, group, fam)[ia]
        b = collector.matrix(baseline, group, fam)[ib]
        sa, sb = _exact_column_sums(a), _exact_column_sums(b)
        obs_a, obs_b = fam.corpus(sa, rows), fam.corpus(sb, rows)
        diff = b - a
        exceed = {f: 0 for f in wanted}
        block = max(1, _BLOCK_ROWS // rows)
        for start in range(0, trials, block):
            m = rng.random((min(block, trials - start), rows)) < 0.5
            shift = m.astype(np.float64) @ diff
            pa, pb = fam.corpus(sa + shift, rows), fam.corpus(sb - shift, rows)
            for f in wanted:
                observed = abs(float(obs_a[f]) - float(obs_b[f]))
                exceed[f] += int(np.sum(np.abs(np.asarray(pa[f]) - np.asarray(pb[f])) >= observed - 1e-12))
        for f in wanted:
            delta[f] = float(obs_a[f]) - float(obs_b[f])
            p_value[f] = (exceed[f] + 1) / (trials + 1)
    return Comparison(system, baseline, group, rows, delta, p_value)


def _exact_column_sums(matrix: np.ndarray) -> np.ndarray:
    sums = ExactSums(matrix.shape[1])
    sums.add(matrix)
    return sums.values()


def format_table(rows: Sequence[CorpusRow], fields: Sequence[str], confidence: float) -> str:
    """A plain-text table: one line per system (and slice), one column per field."""
    pct = int(round(confidence * 100))
    label_w = max([len(_label(r)) for r in rows] + [6])
    head = f"{'system':<{label_w}} {'rows':>8} " + " ".join(f"{f:>24}" for f in fields)
    lines = [head, f"{'':<{label_w}} {'':>8} " + " ".join(f"{'value [' + str(pct) + '% CI]':>24}" for _ in fields)]
    for r in rows:
        cells = []
        for f in fields:
            v = r.values.get(f)
            ci = r.intervals.get(f)
            text = "-" if v is None else (f"{v:.4f}" if ci is None else f"{v:.4f} [{ci[0]:.3f},{ci[1]:.3f}]")
            cells.append(f"{text:>24}")
        lines.append(f"{_label(r):<{label_w}} {r.rows:>8} " + " ".join(cells))
    return "\n".join(lines)


def _label(r: CorpusRow) -> str:
    return r.system if r.group is None else f"{r.system} / {r.group}"


def format_comparisons(comps: Sequence[Comparison], fields: Sequence[str]) -> str:
    if not comps:
        return ""
    lines = [f"paired significance vs {comps[0].baseline} ({comps[0].method}):"]
    for c in comps:
        parts = [f"{f}: {c.delta[f]:+.4f} (p={c.p_value[f]:.4f})" for f in fields if f in c.delta]
        where = c.system if c.group is None else f"{c.system} / {c.group}"
        lines.append(f"  {where} [{c.rows} rows]: " + ", ".join(parts))
    return "\n".join(lines)


def to_json(rows: Sequence[CorpusRow], comps: Sequence[Comparison]) -> dict[str, Any]:
    return {
        "systems": [
            {
                "system": r.system,
                "group": r.group,
                "rows": r.rows,
                "values": r.values,
                "intervals": {k: list(v) for k, v in r.intervals.items()},
            }
            for r in rows
        ],
        "comparisons": [
            {
                "system": c.system,
                "baseline": c.baseline,
                "group": c.group,
                "rows": c.rows,
                "delta": c.delta,
                "p_value": c.p_value,
                "method": c.method,
            }
            for c in comps
        ],
    }
