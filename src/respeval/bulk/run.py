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

import json
import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from respeval.bulk.chunks import (
    ChunkStats,
    Inputs,
    check_lockstep,
    describe,
    empty_results,
    lockstep,
    score_chunk,
    table_chunk,
)
from respeval.bulk.collector import StatsCollector
from respeval.bulk.parts import PartMeta, Parts, fingerprint, parts_folder
from respeval.bulk.prefetch import prefetch
from respeval.bulk.summary import ScoringRunSummary, summarize, summary_without_failures
from respeval.io import count_rows, input_format, read_columns
from respeval.io.errors import RowError, check_on_error
from respeval.io.files import atomic_output, check_outputs, check_readable, is_regular, lock_outputs
from respeval.io.files import same_file as same_path
from respeval.io.formats import READ_FORMATS, WRITE_FORMATS, format_of
from respeval.io.readers import ChunkReader, read_json_document, rows_reader, sniff_file
from respeval.metrics import REGISTRY, MetricOptions
from respeval.metrics.base import MetricFamily
from respeval.stats import DEFAULT_SEED

EXAMPLE = Path(__file__).parents[1] / "data" / "example.jsonl"
_BACKLOG = 2  # chunks that may wait for the writer or the statistics thread
DEFAULT_PRED_FIELD = "response"
DEFAULT_REF_FIELD = "reference"


def build_families(
    metrics: Sequence[str],
    *,
    tokenizer: str = "rouge",
    stemmer: bool = False,
    threads: int | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[MetricFamily]:
    """Metric names -> families, through the one registry (ROUGE types are scored together).
    ``params``: family-specific options by metric name (``{"trajectory_single_tool_use":
    {"tool_name": "search"}}``)."""
    options = MetricOptions(tokenizer=tokenizer, stemmer=stemmer, threads=threads, params=dict(params or {}))
    return REGISTRY.build_families(metrics, options)


def _is_text(path: str, unnamed: str | None = None) -> bool:
    return input_format(path, unnamed) == "text"


def _reader(
    path: str,
    fields: list[str],
    chunk_size: int,
    on_error: str,
    start_row: int,
    kinds: dict[str, Any],
    inputs: Inputs | None = None,
) -> ChunkReader:
    mode = "fail" if on_error == "fail" else "record"
    if inputs is not None and path in inputs.joined:
        rows, digest = inputs.joined[path]
        return rows_reader(
            rows, path, fields, digest=digest, chunk_size=chunk_size, on_error=mode, start_row=start_row, **kinds
        )
    unnamed = inputs.unnamed_format if inputs is not None else None
    return read_columns(
        path,
        fields,
        fmt=input_format(path, unnamed),
        chunk_size=chunk_size,
        on_error=mode,
        start_row=start_row,
        check_content=unnamed is None,  # told the format: the content is not second-guessed
        **kinds,
    )


def _join_by_id(pred: str, ref: str | None, inputs: Inputs, chunk_size: int) -> tuple[list[Any], str] | None:
    """An ``{id: answer}`` predictions file (SQuAD's; its order is not the references'), lined
    up with the references by id: one row per reference row, the answer under the prediction
    field, or a bad row naming the id that has none.  None for any other file."""
    if inputs.format(pred) != "json":
        return None
    document = read_json_document(pred)
    if document.keyed is None:
        return None
    id_field = inputs.id_field or "id"
    if ref is None:
        raise ValueError(
            f"{pred} is an {{id: answer}} predictions file: give --references FILE with the questions, whose "
            f"{id_field!r} field pairs each with its answer"
        )
    if not is_regular(ref):
        raise ValueError(
            f"{pred} is joined to --references {ref} by id, which reads --references twice: give a file, not a pipe"
        )
    ids: list[str | None] = []
    reader = read_columns(ref, [id_field], fmt=inputs.format(ref), chunk_size=chunk_size, on_error="record",
                          key_fields=[id_field], check_content=inputs.unnamed_format is None)  # fmt: skip
    with reader:
        for chunk in reader:
            got = dict(zip(chunk.records, chunk.columns[id_field]))
            ids.extend(got.get(r) for r in range(chunk.start_row, chunk.end_row))
    rows: list[Any] = []
    answers = document.keyed
    for n, key in enumerate(ids):
        if key is None:
            rows.append(RowError(pred, n, inputs.pred_field, f"the reference's row {n} has no {id_field!r}", "row"))
        elif key not in answers:
            rows.append(RowError(pred, n, inputs.pred_field, f"no prediction for id {key!r} (in {ref})", "row"))
        else:
            rows.append({inputs.pred_field: answers[key], **({inputs.id_field: key} if inputs.id_field else {})})
    return rows, document.digest


def score_files(
    preds: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Mapping[str, str | os.PathLike[str]],
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
    metric_options: Mapping[str, Mapping[str, Any]] | None = None,
    input_format: str | None = None,
) -> ScoringRunSummary:
    """Score prediction file(s) against references, chunk by chunk.

    Parameters
    ----------
    preds : one file, or one file per system (named by file stem), or ``{name: file}``
        naming each system (a pipe's stem is a number: ``<(cmd)`` is ``/dev/fd/63``)
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
    metric_options : family-specific options by metric name, as ``build_families`` takes them
    input_format : the format of an input whose extension names none (a pipe, ``/dev/stdin``,
        a ``.de`` corpus): text, jsonl, csv, parquet or json; by default such a file is plain
        text, refused when its first bytes are another format's
    """
    started = time.perf_counter()
    check_on_error(on_error)
    if chunk_size <= 0:
        raise ValueError("chunk_size must be positive")
    names: tuple[str | None, ...] = ()
    if isinstance(preds, Mapping):
        given = [str(name) for name in preds]
        if any(not name.strip() for name in given):
            raise ValueError("a system name is empty: name each file (NAME=FILE) or give its path alone")
        names = tuple(given)
        pred_paths = [os.fspath(p) for p in preds.values()]
    elif isinstance(preds, (str, os.PathLike)):
        pred_paths = [os.fspath(preds)]
    else:
        pred_paths = [os.fspath(p) for p in preds]
    if not pred_paths:
        raise ValueError("no predictions file given")
    if system_field and len(pred_paths) > 1:
        raise ValueError("use either several prediction files or --system-field, not both")
    if resume and not out:
        raise ValueError("resume needs an output file (--out) to resume into")
    if errors_out is not None and on_error != "record":
        raise ValueError(
            f"an errors file ({errors_out}) is written only with on_error='record' (--on-error record); "
            f"with on_error={on_error!r} it would stay empty"
        )
    if out is not None and format_of(out) not in WRITE_FORMATS:
        raise ValueError(f"cannot write results to {out}: use a .parquet, .jsonl or .csv file")
    if input_format is not None and input_format not in READ_FORMATS:
        raise ValueError(f"input_format must be one of {', '.join(READ_FORMATS)}, not {input_format!r}")
    for path in [*pred_paths, *([os.fspath(ref)] if ref else [])]:
        check_readable(path)
        if input_format is None:
            sniff_file(path)  # a file read as text that is another format's is refused now
    ref = os.fspath(ref) if ref is not None else None
    # --references naming the predictions file itself (by any spelling) reads it once
    same_file = ref is None or (len(pred_paths) == 1 and (ref == pred_paths[0] or same_path(ref, pred_paths[0])))
    families = build_families(metrics, tokenizer=tokenizer, stemmer=stemmer, threads=threads, params=metric_options)
    inputs = Inputs(
        preds=pred_paths,
        ref=None if same_file else ref,
        pred_field="text" if _is_text(pred_paths[0], input_format) else (pred_field or DEFAULT_PRED_FIELD),
        ref_field="text" if (ref and _is_text(ref, input_format)) else (ref_field or DEFAULT_REF_FIELD),
        id_field=id_field,
        system_field=system_field,
        group_field=group_by,
        kinds=frozenset(f.inputs for f in families),
        json_text=all(getattr(f, "reads_json_text", False) for f in families),
        empty_references=all(getattr(f, "empty_references", False) for f in families),
        unnamed_format=input_format,
        arrow_text=all(getattr(f, "reads_arrow_text", False) for f in families),
        names=names,
    )
    for pred in pred_paths:
        lined_up = _join_by_id(pred, inputs.ref, inputs, chunk_size)
        if lined_up is not None:
            inputs.joined[pred] = lined_up
    if ref is None and inputs.pred_field == inputs.ref_field:
        raise ValueError(
            f"the prediction and reference fields are both {inputs.pred_field!r}: "
            "give --references FILE or distinct --response-field/--reference-field"
        )
    system_names = inputs.system_names()
    if compare_to is not None and not system_field and compare_to not in system_names:
        raise ValueError(f"--compare {compare_to!r} is not a system of this run; systems: {', '.join(system_names)}")
    if errors_out is None and out and on_error == "record":
        errors_out = out + ".errors.jsonl"
    if on_error == "record" and not errors_out:
        raise ValueError("on_error='record' needs an errors file (give --out or --errors)")
    check_outputs(
        [("--input", p) for p in inputs.preds] + ([("--references", inputs.ref)] if inputs.ref else []),
        [("--out", out), ("--errors", errors_out)],
        scratch=[("--out's parts folder", parts_folder(out) if out else None)],
    )
    with lock_outputs([out, errors_out]):
        return _run(
            inputs,
            system_names,
            families,
            out=out,
            errors_out=errors_out,
            on_error=on_error,
            resume=resume,
            chunk_size=chunk_size,
            collector=StatsCollector(
                families, bootstrap=bootstrap, seed=seed, keep_rows=compare_to is not None, threads=threads
            ),
            seed=seed,
            confidence=confidence,
            compare_to=compare_to,
            comparison_trials=comparison_trials,
            progress=progress,
            started=started,
            # what changes a number without showing in every family's signature (BLEU's
            # max_order is not in sacreBLEU's): part of the resume fingerprint
            options={
                "the metric options": {k: dict(v) for k, v in (metric_options or {}).items()},
                "the tokenizer": tokenizer,
                "stemming": stemmer,
            },
        )


def _run(
    inputs: Inputs,
    system_names: list[str],
    families: list[MetricFamily],
    *,
    out: str | None,
    errors_out: str | None,
    on_error: str,
    resume: bool,
    chunk_size: int,
    collector: StatsCollector,
    seed: int | None,
    confidence: float,
    compare_to: str | None,
    comparison_trials: int,
    progress: Callable[[int], None] | None,
    started: float,
    options: Mapping[str, Any] | None = None,
) -> ScoringRunSummary:
    parts = None
    if out is not None:
        parts = Parts(
            out,
            fingerprint(inputs, families, chunk_size, on_error, system_names, options),
            resume,
            empty_table=empty_results(inputs, families),
            rows_per_record=1 if inputs.system_field else len(inputs.preds),
        )
    done = parts.done() if parts is not None else []
    start_row = done[-1].end_row if done else 0
    files = inputs.files()
    pred_readers = [
        _reader(p, inputs.pred_fields(), chunk_size, on_error, start_row, inputs.pred_kinds(), inputs)
        for p in inputs.preds
    ]
    ref_reader = (
        _reader(inputs.ref, [inputs.ref_field], chunk_size, on_error, start_row, inputs.ref_kinds(), inputs)
        if inputs.ref
        else None
    )
    readers: list[ChunkReader] = [*pred_readers, *([ref_reader] if ref_reader is not None else [])]
    try:
        if done:
            # the parts are reused only if every input starts with the bytes the interrupted
            # run read: a content digest, not size and mtime (cp -p keeps those)
            for path, reader, digest in zip(files, readers, done[-1].digests):
                if reader.skip() != digest:
                    raise ValueError(
                        f"cannot resume into {out}: {path} is not the file the interrupted run read (its first "
                        f"{start_row} records differ); run without --resume to start over"
                    )
        return _score(
            inputs,
            system_names,
            families,
            parts,
            done,
            pred_readers,
            ref_reader,
            errors_out=errors_out,
            on_error=on_error,
            collector=collector,
            seed=seed,
            confidence=confidence,
            compare_to=compare_to,
            comparison_trials=comparison_trials,
            progress=progress,
            started=started,
        )
    finally:
        for reader in readers:
            reader.close()


def _score(
    inputs: Inputs,
    system_names: list[str],
    families: list[MetricFamily],
    parts: Parts | None,
    done: list[PartMeta],
    pred_readers: list[ChunkReader],
    ref_reader: ChunkReader | None,
    *,
    errors_out: str | None,
    on_error: str,
    collector: StatsCollector,
    seed: int | None,
    confidence: float,
    compare_to: str | None,
    comparison_trials: int,
    progress: Callable[[int], None] | None,
    started: float,
) -> ScoringRunSummary:
    rows_failed = 0
    error_examples: list[str] = []
    memory_errors: list[dict[str, Any]] = []
    metas: list[PartMeta] = list(done)

    def remember(stats: ChunkStats) -> None:
        collector.add_chunk(stats)

    for meta in done:
        assert parts is not None
        remember(parts.load_stats(meta.chunk))
        errs = parts.errors(meta.chunk)
        rows_failed += len(errs)
        error_examples.extend(describe(e) for e in errs[: max(0, 5 - len(error_examples))])
    if progress is not None and done:
        progress(done[-1].end_row)
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
        for p_chunks, r_chunk in prefetch(lockstep(pred_readers, ref_reader)):
            check_lockstep(inputs, p_chunks, r_chunk)
            chunks = [c for c in (*p_chunks, r_chunk) if c is not None]
            table, errors, stats = score_chunk(inputs, system_names, families, p_chunks, r_chunk, on_error)
            rows_failed += len(errors)
            error_examples.extend(describe(e) for e in errors[: max(0, 5 - len(error_examples))])
            if parts is not None:
                digests = [c.digest for c in chunks]
                pending.append(
                    writer.submit(parts.write, k, chunks[0].start_row, chunks[0].end_row, table, errors, stats, digests)
                )
            elif on_error == "record":
                memory_errors.extend(errors)
            # one folding thread, fed in chunk order: the sums see rows in row order
            pending.append(folder.submit(remember, stats))
            while len(pending) > 2 * _BACKLOG or (pending and pending[0].done()):
                _collect(pending.popleft(), metas)
            if progress is not None:
                progress(chunks[0].end_row - chunks[0].start_row)
            k += 1
        while pending:
            _collect(pending.popleft(), metas)
    except BaseException:
        writer.shutdown(wait=True)
        if parts is not None:
            parts.abort()
        raise
    finally:
        writer.shutdown(wait=True)
        folder.shutdown(wait=True)
    if parts is not None:
        parts.finish(metas, errors_out if on_error == "record" else None)
    elif on_error == "record" and errors_out:
        with atomic_output(errors_out) as fh:
            for e in memory_errors:
                fh.write(json.dumps(e, ensure_ascii=False) + "\n")

    table_rows, comparisons, fields_shown = summarize(
        collector, families, system_names, confidence=confidence, compare_to=compare_to, trials=comparison_trials
    )
    rows_scored = sum(r.rows for r in table_rows if r.group is None)
    notes = []
    if rows_scored == 0:
        notes.append(
            "nothing was scored: every row was bad (see the errors above)"
            if rows_failed
            else "nothing was scored: the input has no rows"
        )
    return ScoringRunSummary(
        rows_total=rows_scored + rows_failed,
        rows_scored=rows_scored,
        rows_failed=rows_failed,
        table=table_rows,
        comparisons=comparisons,
        fields=fields_shown,
        signatures=collector.signatures(),
        seconds=time.perf_counter() - started,
        output=parts.out if parts is not None else None,
        errors_output=errors_out if on_error == "record" else None,
        confidence=confidence,
        bootstrap=collector.bootstrap,
        seed=seed,
        error_examples=error_examples,
        resumed_chunks=len(done),
        notes=notes,
    )


def _collect(future: Future, metas: list[PartMeta]) -> None:
    result = future.result()
    if isinstance(result, PartMeta):
        metas.append(result)


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
) -> tuple[Any, ChunkStats]:
    """The engine-neutral core: an Arrow table in, per-row results and statistics out.

    Rows are keyed by ``record_offset + position``.  Dask, Ray Data
    (``map_batches(batch_format="pyarrow")``) and Spark (``mapInArrow``) run this
    per partition; corpus values are then ``family.corpus`` of the summed statistics.
    """
    import pyarrow as pa

    inputs = Inputs(
        preds=[source],
        ref=None,
        pred_field=pred_field,
        ref_field=ref_field,
        id_field=id_field,
        system_field=system_field,
        group_field=group_by,
        kinds=frozenset(f.inputs for f in families),
        tables=True,
        empty_references=all(getattr(f, "empty_references", False) for f in families),
    )
    chunk = table_chunk(table, inputs, source, record_offset)
    name = "" if system_field else "default"
    # in memory there is no errors file: a row that cannot be scored stops the call, named
    columns, _, stats = score_chunk(inputs, [name], families, [chunk], None, on_error="fail")
    return pa.table(columns if columns is not None else empty_results(inputs, families)), stats


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
) -> tuple[Any, ScoringRunSummary]:
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
    collector.add_chunk(stats)
    summary = summary_without_failures(
        collector,
        families,
        ["default"],
        confidence=confidence,
        compare_to=compare_to,
        bootstrap=bootstrap,
        seed=seed,
        started=started,
        output=None,
    )
    return results, summary


def total_rows(path: str, unnamed: str | None = None) -> int | None:
    """Rows in ``path`` for a progress bar, or None when counting is not possible."""
    try:
        return count_rows(path, fmt=input_format(path, unnamed))
    except (OSError, ValueError):
        return None
