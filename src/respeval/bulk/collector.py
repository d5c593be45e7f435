"""Running corpus statistics: exactly rounded sums and streaming Poisson bootstrap sums.

Every corpus value is ``family.corpus(sum of the rows' statistics, rows)``.  The
collector folds each chunk in as it comes: exactly rounded running sums (so a
value here equals the library's ``.mean()`` bit for bit, however the rows were
chunked) and streaming Poisson bootstrap sums.  Memory does not grow with the
corpus; only ``--compare`` keeps per-row statistics, because a paired test needs
both systems' rows side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from respeval.metrics.base import MetricFamily
from respeval.stats import DEFAULT_SEED, bootstrap_add, new_accumulator, replicate_sums, resolve_seed
from respeval.stats.exact import ExactSums


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
        self.nrefs: set[int] = set()  # references per scored row, over the run (the signatures' nrefs)

    def add_chunk(self, stats: Any, offset: int = 0) -> None:
        """Every entry of a chunk's statistics (:class:`respeval.bulk.chunks.ChunkStats`)."""
        self.nrefs |= stats.nrefs
        for system, group, keys, fams in stats.entries:
            self.add(system, group, keys + offset if offset else keys, fams)

    def signatures(self) -> dict[str, str]:
        """Each family's signature; the MT families' count the references the rows had
        (``nrefs:1`` with one reference file, ``nrefs:var`` when rows differ), as sacreBLEU's."""
        nrefs: int | str = next(iter(self.nrefs)) if len(self.nrefs) == 1 else "var"
        out = {}
        for f in self.families:
            counted = getattr(f, "signature_for_run", None)
            out[f.name] = counted(nrefs) if counted is not None else f.signature()
        return out

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
