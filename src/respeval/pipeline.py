"""Bulk scoring of files: chunked, resumable, nothing lost.

The input is read in chunks of ``chunk_size`` source records (every file of a
run in lockstep, so chunk ``k`` of every file covers the same rows).  Each
chunk's references are prepared (tokenized) once and scored against every
system.  Results go to part files under ``OUT.parts/``, each written to a
temporary name and renamed when complete, with the chunk's statistics beside
it; at the end the parts are joined into ``OUT`` and removed.  ``resume=True``
reuses the completed parts of an interrupted run (same inputs, same options),
so the final output equals an uninterrupted run's, row for row.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from respeval._version import __version__
from respeval.io import (
    Chunk,
    InputError,
    ResultWriter,
    RowError,
    count_rows,
    join_parquet,
    parquet_writer,
    read_columns,
)
from respeval.metrics import REGISTRY, MetricOptions
from respeval.metrics.base import MetricFamily
from respeval.stats import DEFAULT_SEED
from respeval.summary import Comparison, CorpusRow, StatsCollector, compare, corpus_row

EXAMPLE = Path(__file__).with_name("data") / "example.jsonl"
_BACKLOG = 2  # chunks that may wait for the writer or the statistics thread
DEFAULT_PRED_FIELD = "response"
DEFAULT_REF_FIELD = "reference"
ON_ERROR = ("fail", "skip", "record")


def build_families(
    metrics: Sequence[str], *, tokenizer: str = "rouge", stemmer: bool = False, threads: int | None = None
) -> list[MetricFamily]:
    """Metric names -> families, through the one registry (ROUGE types are scored together)."""
    return REGISTRY.build_families(metrics, MetricOptions(tokenizer=tokenizer, stemmer=stemmer, threads=threads))


@dataclass
class RunSummary:
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

    def to_json(self) -> dict[str, Any]:
        from respeval.summary import to_json

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
        }
        out.update(to_json(self.table, self.comparisons))
        return out


# --------------------------------------------------------------------------- inputs


_STRUCTURED = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def input_format(path: str) -> str:
    """jsonl, csv or parquet by extension; anything else (.txt, .de, .hyp, ...) is plain text."""
    return _STRUCTURED.get(Path(path).suffix.lower(), "text")


def _is_text(path: str) -> bool:
    return input_format(path) == "text"


@dataclass
class _Inputs:
    preds: list[str]  # prediction files (one per system, or one with system_field)
    ref: str | None  # separate reference file, or None (same file as each pred)
    pred_field: str
    ref_field: str
    id_field: str | None
    system_field: str | None
    group_field: str | None

    def system_names(self) -> list[str]:
        names = [Path(p).stem for p in self.preds]
        if len(set(names)) != len(names):
            names = [str(Path(p)) for p in self.preds]
        return names

    def pred_fields(self) -> list[str]:
        fields = [self.pred_field]
        if self.ref is None:
            fields.append(self.ref_field)
        for extra in (self.id_field, self.system_field, self.group_field):
            if extra and extra not in fields:
                fields.append(extra)
        return fields


def _fingerprint(inputs: _Inputs, families: Sequence[MetricFamily], chunk_size: int, on_error: str) -> str:
    files = [*inputs.preds, *([inputs.ref] if inputs.ref else [])]
    meta = []
    for path in files:
        st = os.stat(path)
        meta.append([os.path.abspath(path), st.st_size, st.st_mtime_ns])
    blob = json.dumps(
        {
            "files": meta,
            "families": [f.signature() for f in families],
            "chunk_size": chunk_size,
            "on_error": on_error,
            "fields": inputs.__dict__,
            "version": __version__,
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _reader(
    path: str, fields: list[str], chunk_size: int, on_error: str, start_row: int, list_fields: tuple[str, ...] = ()
) -> Iterator[Chunk]:
    mode = "fail" if on_error == "fail" else "record"
    return read_columns(
        path,
        fields,
        fmt=input_format(path),
        chunk_size=chunk_size,
        on_error=mode,
        start_row=start_row,
        allow_list_fields=list_fields,
    )


# --------------------------------------------------------------------------- parts (resume)


class _Parts:
    """Completed chunks on disk: results, errors and statistics per chunk."""

    def __init__(self, out: str, fingerprint: str, resume: bool) -> None:
        self.out = out
        self.dir = Path(out + ".parts")
        self.ext = Path(out).suffix.lower()
        manifest = self.dir / "manifest.json"
        if self.dir.exists() and resume:
            try:
                stored = json.loads(manifest.read_text())
            except (OSError, ValueError):
                stored = {}
            if stored.get("fingerprint") != fingerprint:
                raise ValueError(
                    f"cannot resume into {out}: its inputs or options changed since the "
                    f"interrupted run (or {manifest} is missing); run without --resume"
                )
        elif self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        manifest.write_text(json.dumps({"fingerprint": fingerprint}))
        # A Parquet output is also built as the parts are written (a run that does not
        # resume sees every chunk in order), so finishing is a rename rather than a
        # second decode and encode of everything.
        self._live: Any = None
        self._live_next = 0 if self.ext in (".parquet", ".pq") else -1

    def _name(self, k: int, what: str) -> Path:
        return self.dir / f"part-{k:06d}.{what}"

    def done(self) -> list[int]:
        """Chunk indices whose three files are complete (the stats file is renamed last)."""
        ks = sorted(int(p.name[5:11]) for p in self.dir.glob("part-*.stats.npz"))
        # chunks run in order, so only a gap-free prefix counts
        prefix = []
        for i, k in enumerate(ks):
            if k != i:
                break
            prefix.append(k)
        return prefix

    def write(self, k: int, table: dict[str, Any] | None, errors: list[dict[str, Any]], stats: _ChunkStats) -> None:
        results = self._name(k, "results" + self.ext)
        tmp = results.with_name(results.name + ".tmp")
        if table is not None and self.ext in (".parquet", ".pq"):
            import pyarrow as pa

            arrow = pa.table(table)
            writer = parquet_writer(str(tmp), arrow.schema)
            writer.write_table(arrow)
            writer.close()
            os.replace(tmp, results)
            self._write_live(k, arrow)
        elif table is not None:
            with ResultWriter(tmp, fmt=self.ext.lstrip(".").replace("ndjson", "jsonl")) as w:
                w.write(table)
            os.replace(tmp, results)
        if table is None and self._live_next == k:
            self._live_next += 1
        err = self._name(k, "errors.jsonl")
        with open(err.with_name(err.name + ".tmp"), "w", encoding="utf-8") as fh:
            for e in errors:
                fh.write(json.dumps(e, ensure_ascii=False) + "\n")
        os.replace(err.with_name(err.name + ".tmp"), err)
        st = self._name(k, "stats.npz")
        with open(st.with_name(st.name + ".tmp"), "wb") as fh:
            np.savez(fh, **stats.to_arrays())
        os.replace(st.with_name(st.name + ".tmp"), st)

    def _write_live(self, k: int, arrow: Any) -> None:
        if self._live_next != k:
            return
        if self._live is None:
            self._live = parquet_writer(self.out + ".tmp", arrow.schema)
        if arrow.schema != self._live.schema:
            self._drop_live()  # finish() joins the parts, and names the mismatch
            return
        self._live.write_table(arrow)
        self._live_next += 1

    def _drop_live(self) -> None:
        if self._live is not None:
            self._live.close()
            os.unlink(self.out + ".tmp")
        self._live, self._live_next = None, -1

    def load_stats(self, k: int) -> _ChunkStats:
        with np.load(self._name(k, "stats.npz"), allow_pickle=False) as z:
            return _ChunkStats.from_arrays({name: z[name] for name in z.files})

    def errors(self, k: int) -> list[dict[str, Any]]:
        path = self._name(k, "errors.jsonl")
        return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]

    def finish(self, n_chunks: int, errors_out: str | None) -> None:
        """Join the parts into the final files, then remove them."""
        fmt = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}[self.ext]
        results = [self._name(k, "results" + self.ext) for k in range(n_chunks)]
        results = [p for p in results if p.exists()]
        tmp_out = self.out + ".tmp"
        if self._live is not None and self._live_next == n_chunks:
            self._live.close()  # every chunk went into the output as it was written
        elif fmt == "parquet":
            self._drop_live()
            import pyarrow.parquet as pq

            join_parquet((pq.read_table(p) for p in results), tmp_out)
        else:
            with open(tmp_out, "wb") as dst:
                for i, p in enumerate(results):
                    with open(p, "rb") as src:
                        if fmt == "csv" and i > 0:
                            src.readline()  # each part carries the header; keep the first only
                        shutil.copyfileobj(src, dst)
        os.replace(tmp_out, self.out)
        if errors_out:
            with open(errors_out + ".tmp", "w", encoding="utf-8") as dst:
                for k in range(n_chunks):
                    p = self._name(k, "errors.jsonl")
                    if p.exists():
                        dst.write(p.read_text(encoding="utf-8"))
            os.replace(errors_out + ".tmp", errors_out)
        shutil.rmtree(self.dir)


# --------------------------------------------------------------------------- the run


@dataclass
class _ChunkStats:
    """Per (system, group): the scored rows' record indices and each family's statistics."""

    entries: list[tuple[str, str | None, np.ndarray, dict[str, np.ndarray]]] = field(default_factory=list)

    def to_arrays(self) -> dict[str, np.ndarray]:
        arrays: dict[str, np.ndarray] = {}
        index = []
        for i, (system, group, keys, fams) in enumerate(self.entries):
            arrays[f"keys{i}"] = keys
            for j, (_name, mat) in enumerate(fams.items()):
                arrays[f"stats{i}_{j}"] = mat
            index.append([system, group, list(fams)])
        arrays["index"] = np.array(json.dumps(index))
        return arrays

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> _ChunkStats:
        out = cls()
        for i, (system, group, names) in enumerate(json.loads(str(arrays["index"]))):
            fams = {name: arrays[f"stats{i}_{j}"] for j, name in enumerate(names)}
            out.entries.append((system, group, arrays[f"keys{i}"], fams))
        return out


def _bad_records(chunk: Chunk) -> dict[int, RowError]:
    """Source record index -> its error (one error per bad record, in order)."""
    good = set(chunk.records)
    bad = [r for r in range(chunk.start_row, chunk.end_row) if r not in good]
    return dict(zip(bad, chunk.errors))


def _error_row(system: str, record: int, errs: list[RowError]) -> dict[str, Any]:
    first = errs[0]
    return {
        "system": system,
        "record": record,
        "file": first.path,
        "line": first.line,
        "unit": first.unit,
        "field": first.field,
        "reason": "; ".join(str(e) for e in errs),
    }


def score_files(
    preds: str | Sequence[str],
    ref: str | None = None,
    *,
    metrics: Sequence[str] = ("rouge1", "rouge2", "rougeL"),
    pred_field: str | None = None,
    ref_field: str | None = None,
    id_field: str | None = None,
    system_field: str | None = None,
    group_by: str | None = None,
    stemmer: bool = False,
    tokenizer: str = "rouge",
    out: str | None = None,
    errors_out: str | None = None,
    on_error: str = "fail",
    resume: bool = False,
    threads: int | None = None,
    chunk_size: int = 20_000,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int | None = DEFAULT_SEED,
    compare_to: str | None = None,
    comparison_trials: int = 1000,
    progress: Callable[[int], None] | None = None,
) -> RunSummary:
    """Score prediction file(s) against references, chunk by chunk.

    Parameters
    ----------
    preds : one file, or one file per system (named by file stem)
    ref : the references file; None reads ``ref_field`` from each predictions file
    system_field : with one predictions file, the field naming each row's system
    group_by : a field of the predictions file; the table is repeated per value
    out : per-row results (.parquet, .jsonl or .csv); parts are kept until the end
    errors_out : where bad rows go with ``on_error="record"`` (default ``OUT.errors.jsonl``)
    on_error : ``fail`` (stop at the first bad row, naming file, line and field),
        ``skip`` (leave bad rows out, counted in the summary) or ``record``
        (leave them out and write each with its reason to ``errors_out``)
    resume : continue an interrupted run that wrote to the same ``out``
    compare_to : a system name: paired significance of every other system against it
    """
    started = time.perf_counter()
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
    if chunk_size <= 0:
        raise ValueError("chunk_size must be positive")
    pred_paths = [preds] if isinstance(preds, (str, os.PathLike)) else [str(p) for p in preds]
    if not pred_paths:
        raise ValueError("no predictions file given")
    if system_field and len(pred_paths) > 1:
        raise ValueError("use either several prediction files or --system-field, not both")
    if resume and not out:
        raise ValueError("resume needs an output file (--out) to resume into")
    for path in [*pred_paths, *([ref] if ref else [])]:
        if not os.path.exists(path):
            raise InputError(f"cannot read {path}: No such file or directory")
    same_file = ref is None or (len(pred_paths) == 1 and Path(ref) == Path(pred_paths[0]))
    inputs = _Inputs(
        preds=[str(p) for p in pred_paths],
        ref=None if same_file else str(ref),
        pred_field="text" if _is_text(pred_paths[0]) else (pred_field or DEFAULT_PRED_FIELD),
        ref_field="text" if (ref and _is_text(ref)) else (ref_field or DEFAULT_REF_FIELD),
        id_field=id_field,
        system_field=system_field,
        group_field=group_by,
    )
    if same_file and inputs.pred_field == inputs.ref_field:
        raise ValueError(
            f"the prediction and reference fields are both {inputs.pred_field!r}: "
            "give --ref FILE or distinct --pred-field/--ref-field"
        )
    families = build_families(metrics, tokenizer=tokenizer, stemmer=stemmer, threads=threads)
    if errors_out is None and out and on_error == "record":
        errors_out = out + ".errors.jsonl"
    if on_error == "record" and not errors_out:
        raise ValueError("on_error='record' needs an errors file (give --out or --errors)")
    parts = _Parts(out, _fingerprint(inputs, families, chunk_size, on_error), resume) if out else None
    collector = StatsCollector(
        families, bootstrap=bootstrap, seed=seed, keep_rows=compare_to is not None, threads=threads
    )
    done = parts.done() if (parts and resume) else []
    system_names = inputs.system_names()
    rows_failed = 0
    error_examples: list[str] = []
    memory_errors: list[dict[str, Any]] = []

    def remember(stats: _ChunkStats) -> None:
        for system, group, keys, fams in stats.entries:
            collector.add(system, group, keys, fams)

    for k in done:
        remember(parts.load_stats(k))
        errs = parts.errors(k)
        rows_failed += len(errs)
        error_examples.extend(_describe(e) for e in errs[: max(0, 5 - len(error_examples))])
    start_row = len(done) * chunk_size
    if progress is not None and start_row:
        progress(min(start_row, 10**18))

    pred_readers = [
        _reader(
            p, inputs.pred_fields(), chunk_size, on_error, start_row, (inputs.ref_field,) if inputs.ref is None else ()
        )
        for p in inputs.preds
    ]
    ref_reader = (
        _reader(inputs.ref, [inputs.ref_field], chunk_size, on_error, start_row, (inputs.ref_field,))
        if inputs.ref
        else None
    )
    k = len(done)
    # Reading (and decoding) the next chunk, writing the previous part and folding
    # its statistics into the corpus sums run on helper threads while this chunk
    # scores: pyarrow, file I/O and the native core all release the GIL, so the
    # stages overlap instead of taking turns.  At most _BACKLOG chunks wait for a
    # helper, so memory stays bounded when a helper is the slowest stage.
    writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="respeval-writer")
    folder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="respeval-stats")
    pending: deque[Future] = deque()
    try:
        for p_chunks, r_chunk in _prefetch(_lockstep(pred_readers, ref_reader)):
            _check_lockstep(inputs, p_chunks, r_chunk)
            table, errors, stats = _score_chunk(inputs, system_names, families, p_chunks, r_chunk)
            rows_failed += len(errors)
            error_examples.extend(_describe(e) for e in errors[: max(0, 5 - len(error_examples))])
            if parts is not None:
                pending.append(writer.submit(parts.write, k, table, errors if on_error == "record" else [], stats))
            elif on_error == "record":
                memory_errors.extend(errors)
            # one folding thread, fed in chunk order: the sums see rows in row order
            pending.append(folder.submit(remember, stats))
            while len(pending) > 2 * _BACKLOG or (pending and pending[0].done()):
                pending.popleft().result()
            if progress is not None:
                progress(max((c.end_row - c.start_row) for c in p_chunks if c is not None))
            k += 1
        while pending:
            pending.popleft().result()
    finally:
        writer.shutdown(wait=True)
        folder.shutdown(wait=True)
    if parts is not None:
        parts.finish(k, errors_out if on_error == "record" else None)
    elif on_error == "record" and errors_out:
        with open(errors_out, "w", encoding="utf-8") as fh:
            for e in memory_errors:
                fh.write(json.dumps(e, ensure_ascii=False) + "\n")

    table_rows, comparisons, fields_shown = summarize(
        collector, families, system_names, confidence=confidence, compare_to=compare_to, trials=comparison_trials
    )
    rows_scored = sum(r.rows for r in table_rows if r.group is None)
    return RunSummary(
        rows_total=rows_scored + rows_failed,
        rows_scored=rows_scored,
        rows_failed=rows_failed,
        table=table_rows,
        comparisons=comparisons,
        fields=fields_shown,
        signatures={f.name: f.signature() for f in families},
        seconds=time.perf_counter() - started,
        output=out,
        errors_output=errors_out if on_error == "record" else None,
        confidence=confidence,
        bootstrap=bootstrap,
        seed=seed,
        error_examples=error_examples,
        resumed_chunks=len(done),
    )


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


def _table_chunk(
    table: Any, fields: list[str], list_fields: tuple[str, ...], source: str, record_offset: int = 0
) -> Chunk:
    """An Arrow table as one Chunk, every value checked (a null or a non-str names its row)."""
    import pyarrow as pa

    columns: dict[str, list[Any]] = {}
    missing = [f for f in fields if f not in table.column_names]
    if missing:
        raise InputError(
            f"{source}: missing column {missing[0]!r}; available columns: {', '.join(map(repr, table.column_names))}"
        )
    for name in fields:
        column = table.column(name)
        values = column.to_pylist()
        if (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)) and column.null_count == 0:
            columns[name] = values  # every value is a str: nothing to check row by row
            continue
        for i, v in enumerate(values):
            ok = isinstance(v, str) or (
                name in list_fields and isinstance(v, list) and v and all(isinstance(x, str) for x in v)
            )
            if not ok:
                what = "null" if v is None else type(v).__name__
                raise InputError(f"{source}:row {record_offset + i}: field {name!r}: expected a string, got {what}")
        columns[name] = values
    n = table.num_rows
    return Chunk(
        record_offset,
        list(range(record_offset, record_offset + n)),
        columns,
        [],
        record_offset + n,
        list(range(record_offset, record_offset + n)),
    )


def score_arrow(
    table: Any,
    families: Sequence[MetricFamily],
    *,
    pred_field: str = DEFAULT_PRED_FIELD,
    ref_field: str = DEFAULT_REF_FIELD,
    id_field: str | None = None,
    system_field: str | None = None,
    group_by: str | None = None,
    source: str = "table",
    record_offset: int = 0,
) -> tuple[Any, _ChunkStats]:
    """The engine-neutral core: an Arrow table in, per-row results and statistics out.

    Rows are keyed by ``record_offset + position``.  Dask, Ray Data
    (``map_batches(batch_format="pyarrow")``) and Spark (``mapInArrow``) run this
    per partition; corpus values are then ``family.corpus`` of the summed statistics.
    """
    import pyarrow as pa

    inputs = _Inputs(
        preds=[source],
        ref=None,
        pred_field=pred_field,
        ref_field=ref_field,
        id_field=id_field,
        system_field=system_field,
        group_field=group_by,
    )
    chunk = _table_chunk(table, inputs.pred_fields(), (ref_field,), source, record_offset)
    name = "" if system_field else "default"
    columns, _errors, stats = _score_chunk(inputs, [name], families, [chunk], None)
    return (pa.table(columns) if columns is not None else pa.table({})), stats


def score_table(
    table: Any,
    *,
    metrics: Sequence[str] = ("rouge1", "rouge2", "rougeL"),
    pred_field: str = DEFAULT_PRED_FIELD,
    ref_field: str = DEFAULT_REF_FIELD,
    id_field: str | None = None,
    system_field: str | None = None,
    group_by: str | None = None,
    stemmer: bool = False,
    tokenizer: str = "rouge",
    threads: int | None = None,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int | None = DEFAULT_SEED,
    compare_to: str | None = None,
) -> tuple[Any, RunSummary]:
    """Score an Arrow table or pandas DataFrame in memory: (results table, summary).

    The same rows, metrics and summary as ``score_files`` on the same data.
    """
    import pyarrow as pa

    started = time.perf_counter()
    if not isinstance(table, pa.Table):
        table = pa.Table.from_pandas(table, preserve_index=False)
    families = build_families(metrics, tokenizer=tokenizer, stemmer=stemmer, threads=threads)
    results, stats = score_arrow(
        table,
        families,
        pred_field=pred_field,
        ref_field=ref_field,
        id_field=id_field,
        system_field=system_field,
        group_by=group_by,
    )
    collector = StatsCollector(
        families, bootstrap=bootstrap, seed=seed, keep_rows=compare_to is not None, threads=threads
    )
    for system, group, keys, fams in stats.entries:
        collector.add(system, group, keys, fams)
    rows, comps, fields = summarize(collector, families, ["default"], confidence=confidence, compare_to=compare_to)
    scored = sum(r.rows for r in rows if r.group is None)
    summary = RunSummary(
        scored,
        scored,
        0,
        rows,
        comps,
        fields,
        {f.name: f.signature() for f in families},
        time.perf_counter() - started,
        None,
        None,
        confidence,
        bootstrap,
        seed,
    )
    return results, summary


def _lockstep(
    pred_readers: list[Iterator[Chunk]], ref_reader: Iterator[Chunk] | None
) -> Iterator[tuple[list[Chunk | None], Chunk | None]]:
    """Chunk k of every file together, until every file is exhausted."""
    while True:
        p_chunks = [next(r, None) for r in pred_readers]
        r_chunk = next(ref_reader, None) if ref_reader is not None else None
        if all(c is None for c in p_chunks) and r_chunk is None:
            return
        yield p_chunks, r_chunk


_DONE = object()


def _prefetch(items: Iterator[Any], depth: int = 1) -> Iterator[Any]:
    """Iterate ``items`` on a helper thread, ``depth`` items ahead; errors re-raise here."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        q.put((item, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put((_DONE, None))
        except BaseException as exc:  # handed to the consumer, which re-raises it
            q.put((_DONE, exc))

    thread = threading.Thread(target=produce, name="respeval-reader", daemon=True)
    thread.start()
    try:
        while True:
            item, exc = q.get()
            if exc is not None:
                raise exc
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()
        while thread.is_alive():
            try:
                q.get_nowait()
            except queue.Empty:
                thread.join(timeout=0.05)


def _order(names: list[str], system: str) -> int:
    return names.index(system) if system in names else len(names)


def _describe(e: dict[str, Any]) -> str:
    return f"[{e['system']}] {e['reason']}" if e.get("system") else e["reason"]


def _check_lockstep(inputs: _Inputs, p_chunks: list[Chunk | None], r_chunk: Chunk | None) -> None:
    """Every file must have the same number of records: name the short one."""
    ends = {p: (c.end_row if c is not None else None) for p, c in zip(inputs.preds, p_chunks)}
    if inputs.ref is not None:
        ends[inputs.ref] = r_chunk.end_row if r_chunk is not None else None
    known = {p: e for p, e in ends.items() if e is not None}
    if len(set(known.values())) > 1 or len(known) != len(ends):
        longest = max(known, key=lambda p: known[p])
        for p, e in ends.items():
            if e is None or e < known[longest]:
                raise InputError(
                    f"{longest} has more rows than {p} ({p} ends before row {known[longest]}): "
                    "predictions and references must pair up row by row"
                )


@dataclass
class _SystemRows:
    """One system's good rows of a chunk, column-wise."""

    records: list[int] = field(default_factory=list)
    preds: list[str] = field(default_factory=list)
    refs: list[Any] = field(default_factory=list)
    ids: list[Any] = field(default_factory=list)
    groups: list[Any] = field(default_factory=list)


def _chunk_rows(
    inputs: _Inputs,
    file_name: str,
    chunk: Chunk,
    r_chunk: Chunk | None,
    refs_by_record: dict[int, Any] | None,
    rows: dict[str, _SystemRows],
) -> None:
    """Sort a chunk's good rows by system.  The common case (one system per file,
    no bad row, the reference file in step) takes whole columns without a row loop."""
    cols = chunk.columns
    ids = cols.get(inputs.id_field) if inputs.id_field else None
    groups = cols.get(inputs.group_field) if inputs.group_field else None
    aligned = r_chunk is None or (not r_chunk.errors and r_chunk.records == chunk.records)
    if not inputs.system_field and not chunk.errors and aligned:
        refs = cols[inputs.ref_field] if r_chunk is None else r_chunk.columns[inputs.ref_field]
        rows[file_name] = _SystemRows(chunk.records, cols[inputs.pred_field], refs, ids or [], groups or [])
        return
    if refs_by_record is None and r_chunk is not None:
        refs_by_record = dict(zip(r_chunk.records, r_chunk.columns[inputs.ref_field]))
    systems = cols.get(inputs.system_field) if inputs.system_field else None
    for i, record in enumerate(chunk.records):
        if r_chunk is None:
            ref = cols[inputs.ref_field][i]
        elif record in refs_by_record:
            ref = refs_by_record[record]
        else:
            continue  # its reference record is bad: reported by the caller
        into = rows.get(systems[i] if systems is not None else file_name)
        if into is None:
            into = rows[systems[i] if systems is not None else file_name] = _SystemRows()
        into.records.append(record)
        into.preds.append(cols[inputs.pred_field][i])
        into.refs.append(ref)
        if ids is not None:
            into.ids.append(ids[i])
        if groups is not None:
            into.groups.append(groups[i])


def _score_chunk(
    inputs: _Inputs,
    system_names: list[str],
    families: Sequence[MetricFamily],
    p_chunks: list[Chunk],
    r_chunk: Chunk | None,
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], _ChunkStats]:
    """Score one chunk for every system: result table, error rows, statistics.

    A row fails for a system when its prediction record or its reference record
    is bad; it is reported once per system, with every reason.
    """
    errors: list[dict[str, Any]] = []
    ref_bad: dict[int, RowError] = _bad_records(r_chunk) if r_chunk is not None and r_chunk.errors else {}
    refs_by_record = None
    rows: dict[str, _SystemRows] = {}
    for file_name, chunk in zip(system_names, p_chunks):
        pred_bad = _bad_records(chunk) if chunk.errors else {}
        # with --system-field, a bad record's system cannot be trusted: "" names it
        owner = "" if inputs.system_field else file_name
        for record in sorted(set(pred_bad) | set(ref_bad)):
            errs = [e for e in (pred_bad.get(record), ref_bad.get(record)) if e is not None]
            errors.append(_error_row(owner, record, errs))
        _chunk_rows(inputs, file_name, chunk, r_chunk, refs_by_record, rows)
    stats = _ChunkStats()
    table_parts: list[dict[str, Any]] = []
    multi = len(p_chunks) > 1 or bool(inputs.system_field)
    # systems that share the very same reference list (every --pred file against
    # one --ref file) share one preparation: references are tokenized once
    prepared: dict[tuple[int, str], Any] = {}
    for system, got in rows.items():
        n = len(got.records)
        records = np.array(got.records, np.int64)
        part: dict[str, Any] = {}
        if multi:
            part["system"] = [system] * n
        part["row"] = records
        if inputs.id_field:
            part[inputs.id_field] = got.ids
        if inputs.group_field:
            part[inputs.group_field] = got.groups
        fam_stats: dict[str, np.ndarray] = {}
        for fam in families:
            key = (id(got.refs), fam.name)
            if key not in prepared:
                prepared[key] = fam.prepare(got.refs)
            scored = fam.score(prepared[key], got.preds)
            part.update(scored.columns)
            fam_stats[fam.name] = scored.stats
        table_parts.append(part)
        stats.entries.append((system, None, records, fam_stats))
        if inputs.group_field:
            groups = np.array([str(g) for g in got.groups], dtype=object)
            for g in sorted(set(got.groups), key=str):
                mask = groups == str(g)
                stats.entries.append((system, str(g), records[mask], {name: m[mask] for name, m in fam_stats.items()}))
    table = _concat_parts(table_parts) if table_parts else None
    return table, errors, stats


def _concat_parts(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in parts[0]:
        values = [p[name] for p in parts]
        if isinstance(values[0], np.ndarray):
            out[name] = np.concatenate(values)
        else:
            out[name] = [v for vs in values for v in vs]
    return out


def total_rows(path: str) -> int | None:
    """Rows in ``path`` for a progress bar, or None when counting is not possible."""
    try:
        return count_rows(path, fmt=input_format(path))
    except (OSError, ValueError):
        return None
