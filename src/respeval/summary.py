"""Corpus tables from per-row statistics: per system (and per slice), with seeded
bootstrap intervals and paired significance against a baseline.

Every corpus value is ``family.corpus(sum of the rows' statistics, rows)``, so
resampling is "sum a resample of rows" and the table never needs the texts.
Statistics are kept per column as contiguous arrays, and summed with numpy's
pairwise summation, so a mean here is bit-identical to ``array.mean()`` in the
library API.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from respeval.metrics.base import MetricFamily
from respeval.stats import bootstrap_sums

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


class StatsCollector:
    """Per (system, group, family): the per-row statistics and the row keys.

    Chunks are kept as they come and joined once, on first use, into one
    column-major matrix (so each statistic is a contiguous column and sums equal
    ``column.sum()`` in the library API); the chunk list is then dropped.
    """

    def __init__(self, families: Sequence[MetricFamily]) -> None:
        self.families = list(families)
        self._stats: dict[tuple[str, str | None, str], list[np.ndarray] | np.ndarray] = {}
        self._keys: dict[tuple[str, str | None], list[np.ndarray] | np.ndarray] = {}

    def add(self, system: str, group: str | None, row_keys: np.ndarray,
            stats_by_family: dict[str, np.ndarray]) -> None:
        keys = self._keys.setdefault((system, group), [])
        if isinstance(keys, np.ndarray):
            keys = self._keys[(system, group)] = [keys]
        keys.append(np.asarray(row_keys, np.int64))
        for fam in self.families:
            mats = self._stats.setdefault((system, group, fam.name), [])
            if isinstance(mats, np.ndarray):
                mats = self._stats[(system, group, fam.name)] = [mats]
            mats.append(np.asarray(stats_by_family[fam.name], dtype=np.float64).reshape(-1, len(fam.stat_names)))

    def keys(self) -> list[tuple[str, str | None]]:
        return list(self._keys)

    def row_keys(self, system: str, group: str | None) -> np.ndarray:
        parts = self._keys.get((system, group))
        if parts is None:
            return np.zeros(0, np.int64)
        if not isinstance(parts, np.ndarray):
            parts = self._keys[(system, group)] = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        return parts

    def matrix(self, system: str, group: str | None, family: MetricFamily) -> list[np.ndarray]:
        stored = self._stats.get((system, group, family.name))
        width = len(family.stat_names)
        if stored is None:
            return [np.zeros(0) for _ in range(width)]
        if not isinstance(stored, np.ndarray):
            joined = np.empty((sum(len(m) for m in stored), width), dtype=np.float64, order="F")
            row = 0
            for m in stored:
                joined[row:row + len(m)] = m
                row += len(m)
            stored = self._stats[(system, group, family.name)] = joined
        return [stored[:, i] for i in range(width)]


def _sums(columns: list[np.ndarray]) -> np.ndarray:
    return np.array([c.sum() for c in columns], dtype=np.float64)


def _resample_sums(columns: list[np.ndarray], n: int, seed: int | None) -> np.ndarray:
    """Sums of ``n`` bootstrap resamples of the rows: shape (n, stats)."""
    return bootstrap_sums(np.column_stack(columns), n, seed)


def corpus_row(system: str, group: str | None, collector: StatsCollector, *, bootstrap: int,
               confidence: float, seed: int | None) -> CorpusRow:
    rows = len(collector.row_keys(system, group))
    values: dict[str, float] = {}
    intervals: dict[str, tuple[float, float]] = {}
    for fam in collector.families:
        cols = collector.matrix(system, group, fam)
        for name, v in fam.corpus(_sums(cols), rows).items():
            values[name] = float(v)
        if bootstrap > 0 and rows > 0:
            reps = fam.corpus(_resample_sums(cols, bootstrap, seed), rows)
            delta = (1 - confidence) / 2
            for name, arr in reps.items():
                lo, hi = np.percentile(np.asarray(arr), [100 * delta, 100 * (1 - delta)])
                intervals[name] = (float(lo), float(hi))
    return CorpusRow(system, group, rows, values, intervals)


def compare(system: str, baseline: str, group: str | None, collector: StatsCollector, *,
            fields: Iterable[str], trials: int, seed: int | None) -> Comparison:
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
        a = np.column_stack(collector.matrix(system, group, fam))[ia]
        b = np.column_stack(collector.matrix(baseline, group, fam))[ib]
        sa, sb = a.sum(axis=0), b.sum(axis=0)
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
        "systems": [{"system": r.system, "group": r.group, "rows": r.rows, "values": r.values,
                     "intervals": {k: list(v) for k, v in r.intervals.items()}} for r in rows],
        "comparisons": [{"system": c.system, "baseline": c.baseline, "group": c.group, "rows": c.rows,
                         "delta": c.delta, "p_value": c.p_value, "method": c.method} for c in comps],
    }
