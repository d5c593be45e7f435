"""Corpus tables from the collected statistics: per system (and per slice), with seeded
bootstrap intervals and paired significance against a baseline; the run summary."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from respeval._run_summary import RunSummaryBase
from respeval.bulk.collector import StatsCollector
from respeval.metrics.base import MetricFamily
from respeval.stats.exact import ExactSums

_BLOCK_ROWS = 1_000_000


@dataclass
class CorpusRow:
    """One system (and slice): row count, corpus values and their intervals."""

    system: str
    group: str | None
    rows: int
    values: dict[str, float | None]  # None: no row of the system (slice) was scored, no value
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


def corpus_row(system: str, group: str | None, collector: StatsCollector, *, confidence: float) -> CorpusRow:
    rows = collector.rows(system, group)
    values: dict[str, float | None] = {}
    intervals: dict[str, tuple[float, float]] = {}
    delta = (1 - confidence) / 2
    for fam in collector.families:
        for name, v in fam.corpus(collector.sums(system, group, fam), rows).items():
            # a corpus value of zero rows is undefined, whatever 0/0 the family's formula gives
            values[name] = float(v) if rows else None
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


@dataclass
class ScoringRunSummary(RunSummaryBase):
    """What a scoring run produced: counts, the corpus table, comparisons."""

    rows_total: int
    rows_scored: int
    rows_failed: int
    table: list[CorpusRow]
    comparisons: list[Comparison]
    fields: list[str]
    signatures: dict[str, str]
    seconds: float
    output: str | None
    errors_output: str | None
    confidence: float
    bootstrap: int
    seed: int | None
    error_examples: list[str] = field(default_factory=list)
    resumed_chunks: int = 0
    notes: list[str] = field(default_factory=list)  # what the numbers do not say (e.g. nothing scored)

    def to_json(self) -> dict[str, Any]:
        out = {
            "rows_total": self.rows_total,
            "rows_scored": self.rows_scored,
            "rows_failed": self.rows_failed,
            "fields": self.fields,
            "signatures": self.signatures,
            "confidence": self.confidence,
            "bootstrap_samples": self.bootstrap,
            "bootstrap_method": "poisson (weights from seed, row index, resample)",
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            "output": self.output,
            "errors_output": self.errors_output,
            "resumed_chunks": self.resumed_chunks,
            "notes": self.notes,
        }
        out.update(to_json(self.table, self.comparisons))
        return out

    def format(self) -> str:
        """What ``respeval score`` prints: the counts, the corpus table (P, R, F per ROUGE type
        for one system), the comparisons, the signatures and where the outputs are."""
        lines = [
            f"{self.rows_scored} rows scored in {self.seconds:.2f}s"
            + (f", {self.rows_failed} rows failed" if self.rows_failed else "")
            + (f" (resumed after {self.resumed_chunks} chunks)" if self.resumed_chunks else ""),
            "",
        ]
        if len(self.table) == 1 and all(f.endswith("_f") for f in self.fields):
            lines += self._prf_table()
        elif self.table:
            lines.append(format_table(self.table, self.fields, self.confidence))
        if self.comparisons:
            lines += ["", format_comparisons(self.comparisons, self.fields)]
        lines.append("")
        lines += [f"signature: {sig}" for sig in self.signatures.values()]
        if self.output:
            lines.append(f"per-row results: {self.output}")
        if self.errors_output:
            lines.append(f"bad rows and reasons: {self.errors_output}")
        if self.error_examples:
            lines.append("first bad rows:")
            lines += [f"  {e}" for e in self.error_examples]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def _prf_table(self) -> list[str]:
        """The single-system table: P, R, F and the F interval per ROUGE type."""
        row = self.table[0]
        pct = int(round(self.confidence * 100))
        lines = [f"{'metric':<10} {'P':>8} {'R':>8} {'F':>8}   F {pct}% CI (bootstrap)"]
        for f in self.fields:
            name = f[:-2]
            ci = row.intervals.get(f)
            ci_text = f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "-"
            p, r, fv = (row.values[name + "_p"], row.values[name + "_r"], row.values[f])
            cells = " ".join("       -" if v is None else f"{v:8.4f}" for v in (p, r, fv))
            lines.append(f"{name:<10} {cells}   {ci_text}")
        return lines


# the name it had before the judge's summary and it shared a base (and needed names of their own)
RunSummary = ScoringRunSummary


def summarize(
    collector: StatsCollector,
    families: Sequence[MetricFamily],
    system_names: Sequence[str],
    *,
    confidence: float,
    compare_to: str | None = None,
    trials: int = 1000,
) -> tuple[list[CorpusRow], list[Comparison], list[str]]:
    """The corpus table (per system and slice) and the comparisons against ``compare_to``."""
    names = list(system_names)
    table_rows = [
        corpus_row(system, group, collector, confidence=confidence)
        for system, group in sorted(collector.keys(), key=lambda sg: (_order(names, sg[0]), sg[0], sg[1] or ""))
    ]
    fields_shown = [f for fam in families for f in fam.headline]
    comparisons: list[Comparison] = []
    if compare_to is not None:
        systems = {s for s, _ in collector.keys()}
        if compare_to not in systems:
            raise ValueError(
                f"--compare {compare_to!r} is not a system of this run; systems: {', '.join(sorted(systems))}"
            )
        for system, group in collector.keys():
            if system != compare_to and (compare_to, group) in collector.keys():
                comparisons.append(
                    compare(
                        system, compare_to, group, collector, fields=fields_shown, trials=trials, seed=collector.seed
                    )
                )
    return table_rows, comparisons, fields_shown


def summary_without_failures(
    collector: StatsCollector,
    families: Sequence[MetricFamily],
    system_names: Sequence[str],
    *,
    confidence: float,
    compare_to: str | None,
    bootstrap: int,
    seed: int | None,
    started: float,
    output: str | None,
) -> ScoringRunSummary:
    """The summary of a run that scores every row it reads or fails as a whole (in-memory
    scoring, the Dask engine): :func:`summarize`'s table and comparisons, every row counted
    as scored, ``started`` a ``time.perf_counter()`` reading."""
    table, comparisons, fields = summarize(
        collector, families, system_names, confidence=confidence, compare_to=compare_to
    )
    scored = sum(r.rows for r in table if r.group is None)
    return ScoringRunSummary(
        scored,
        scored,
        0,
        table,
        comparisons,
        fields,
        collector.signatures(),
        time.perf_counter() - started,
        output,
        None,
        confidence,
        bootstrap,
        seed,
    )


def _order(names: list[str], system: str) -> int:
    return names.index(system) if system in names else len(names)
