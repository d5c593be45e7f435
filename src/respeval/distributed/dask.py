"""Bulk scoring on a Dask cluster: one task per input Parquet file.

Each task reads its file, scores it with :func:`respeval.bulk.score_arrow`,
writes its own result part (to a temporary name, renamed when complete, so a
task that Dask re-runs after losing a worker overwrites instead of
duplicating) and returns its statistics.  The driver folds the
statistics in file order into the same running sums a single process keeps, so
the summary (values and bootstrap intervals) equals a single process's bit for
bit.

Needs ``pip install 'respeval[dask]'`` on the driver and on every worker (with
the compiled core: a worker without it fails with an error naming the worker).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from respeval.bulk import (
    DEFAULT_PRED_FIELD,
    DEFAULT_REF_FIELD,
    ChunkStats,
    ScoringRunSummary,
    StatsCollector,
    build_families,
    score_arrow,
)
from respeval.bulk.parts import parts_folder
from respeval.bulk.summary import summary_without_failures
from respeval.io import join_parquet
from respeval.io.files import OutputError, OutputLock, atomic_output, check_outputs, refuse_link
from respeval.io.formats import format_of
from respeval.io.writers import write_parquet
from respeval.stats import DEFAULT_SEED


@dataclass(frozen=True)
class TaskConfig:
    """Everything a worker needs to score one file (plain data: it travels by pickle)."""

    metrics: tuple[str, ...]
    pred_field: str
    ref_field: str
    id_field: str | None
    system_field: str | None
    group_by: str | None
    stemmer: bool
    tokenizer: str


def _check_worker_core() -> None:
    from respeval import _backend

    wanted = os.environ.get("RESPEVAL_IMPLEMENTATION", "auto").lower()
    if wanted != "python" and not _backend.native_available():
        try:
            from distributed import get_worker

            where = get_worker().address
        except (ImportError, ValueError):
            where = "this worker"
        raise RuntimeError(
            f"respeval's compiled core is not importable on {where}: install respeval "
            "(with its native extension) on every worker, or set "
            "RESPEVAL_IMPLEMENTATION=python there to use the slow reference"
        )


def score_file_task(
    index: int, path: str, part_path: str, config: TaskConfig
) -> tuple[int, int, dict[str, np.ndarray]]:
    """Score one Parquet file into ``part_path``; returns (index, rows, statistics)."""
    import pyarrow.parquet as pq

    _check_worker_core()
    table = pq.read_table(path)
    families = build_families(config.metrics, tokenizer=config.tokenizer, stemmer=config.stemmer, threads=1)
    results, stats = score_arrow(
        table,
        families,
        pred_field=config.pred_field,
        ref_field=config.ref_field,
        id_field=config.id_field,
        system_field=config.system_field,
        group_by=config.group_by,
        source=path,
    )
    with atomic_output(part_path, "wb", durable=False) as fh:
        write_parquet(results, fh)
    return index, table.num_rows, stats.to_arrays()


def local_cluster(n_workers: int = 2, threads_per_worker: int = 1) -> Any:
    """A LocalCluster bound to loopback only: its workers, the scheduler and the scheduler's HTTP
    status server (no dashboard, on a free port) listen on 127.0.0.1 alone."""
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=n_workers,
        threads_per_worker=threads_per_worker,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        # without an address the status server asks for 8787 and warns when another cluster
        # (the user's own) holds it; nobody looks at this private cluster's status page
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
    )


def expand_inputs(inputs: str | Sequence[str]) -> list[str]:
    """Files from a glob pattern, a directory, or a list (sorted, so the run is deterministic)."""
    items = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    files: list[str] = []
    for item in items:
        item = str(item)
        if os.path.isdir(item):
            files.extend(sorted(str(p) for p in Path(item).glob("*.parquet")))
        elif any(ch in item for ch in "*?["):
            files.extend(sorted(glob.glob(item)))
        else:
            files.append(item)
    if not files:
        raise ValueError(f"no Parquet files match {inputs!r}")
    for f in files:
        if not os.path.exists(f):
            raise FileNotFoundError(f"cannot read {f}: No such file or directory")
    return files


def score_parquet(
    inputs: str | Sequence[str],
    output: str,
    *,
    metrics: Sequence[str] = ("rouge1", "rouge2", "rougeL"),
    pred_field: str = DEFAULT_PRED_FIELD,
    ref_field: str = DEFAULT_REF_FIELD,
    id_field: str | None = None,
    system_field: str | None = None,
    group_by: str | None = None,
    stemmer: bool = False,
    tokenizer: str = "rouge",
    client: Any = None,
    scheduler: str | None = None,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int | None = DEFAULT_SEED,
    compare_to: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> ScoringRunSummary:
    """Score Parquet files on Dask; write ``output`` (a Parquet file) and return the summary.

    ``client``: a ``distributed.Client``; else ``scheduler`` (an address such as
    ``tcp://host:8786``); else a 2-worker LocalCluster on 127.0.0.1 is started
    and closed afterwards.  Rows are keyed across files by their position in the
    concatenation of the files in sorted order.
    """
    started = time.perf_counter()
    files = expand_inputs(inputs)
    if format_of(output) != "parquet":
        raise ValueError(f"the Dask engine writes Parquet: give an output ending in .parquet, not {output}")
    check_outputs(
        [("--input", f) for f in files], [("--out", output)], scratch=[("--out's parts folder", parts_folder(output))]
    )
    config = TaskConfig(tuple(metrics), pred_field, ref_field, id_field, system_field, group_by, stemmer, tokenizer)
    families = build_families(metrics, tokenizer=tokenizer, stemmer=stemmer)  # validates names early
    with OutputLock(output):
        collector = StatsCollector(families, bootstrap=bootstrap, seed=seed, keep_rows=compare_to is not None)
        _run(files, output, config, collector, client=client, scheduler=scheduler, progress=progress)
    return summary_without_failures(
        collector,
        families,
        ["" if system_field else "default"],
        confidence=confidence,
        compare_to=compare_to,
        bootstrap=bootstrap,
        seed=seed,
        started=started,
        output=output,
    )


def _run(
    files: list[str],
    output: str,
    config: TaskConfig,
    collector: StatsCollector,
    *,
    client: Any,
    scheduler: str | None,
    progress: Callable[[int], None] | None,
) -> None:
    """Score every file on the cluster, fold the statistics, join the parts into ``output``.

    Each run writes its parts under a directory of its own (``OUT.parts/run-<id>/``): tasks
    of a killed earlier driver may still be running on the cluster, and must not write into
    this run's parts.  Whatever an earlier run left is removed first.
    """
    import pyarrow.parquet as pq
    from distributed import Client, as_completed

    root = Path(parts_folder(output))
    refuse_link(root, "run's parts")
    _remove(root)
    parts_dir = root / f"run-{uuid.uuid4().hex[:12]}"
    parts_dir.mkdir(parents=True)
    own_cluster = None
    if client is None:
        if scheduler:
            client = Client(scheduler)
        else:
            own_cluster = local_cluster()
            client = Client(own_cluster)
    try:
        futures = [
            client.submit(
                score_file_task, i, f, str(parts_dir / f"part-{i:06d}.parquet"), config, pure=False, retries=2
            )
            for i, f in enumerate(files)
        ]
        # Statistics are folded in file order as soon as they can be (a file that
        # finishes early waits for the ones before it), so the driver holds few
        # files' statistics at a time and its sums are those of a single process.
        by_index: dict[int, int] = {}
        waiting: dict[int, dict[str, np.ndarray]] = {}
        folded = offset = 0
        for fut in as_completed(futures):
            index, rows, arrays = fut.result()
            fut.release()
            by_index[index] = rows
            waiting[index] = arrays
            while folded in waiting:
                collector.add_chunk(ChunkStats.from_arrays(waiting.pop(folded)), offset)
                offset += by_index[folded]
                folded += 1
            if progress is not None:
                progress(rows)
    finally:
        client_to_close = client if (own_cluster is not None or scheduler) else None
        if client_to_close is not None:
            client_to_close.close()
        if own_cluster is not None:
            own_cluster.close()

    def parts() -> Iterator[Any]:
        for i in range(len(files)):
            path = parts_dir / f"part-{i:06d}.parquet"
            t = pq.read_table(path)
            if t.num_rows != by_index[i]:  # every row of every file, once
                raise OSError(f"{path} holds {t.num_rows} rows, not the {by_index[i]} of {files[i]}: rerun the command")
            if "row" in t.column_names:  # row numbers across all files, as one process numbers them
                t = t.set_column(t.column_names.index("row"), "row", _shift(t.column("row"), _offset(by_index, i)))
            yield t

    try:
        with atomic_output(output, "wb") as fh:
            join_parquet(parts(), fh)
    except OSError as exc:
        raise OutputError.wrap(exc, output) from exc
    _remove(root)


def _remove(directory: Path) -> None:
    """Remove a parts directory: renamed away first (one step), then deleted."""
    for old in directory.parent.glob(directory.name + ".trash-*"):
        shutil.rmtree(old, ignore_errors=True)
    trash = directory.with_name(f"{directory.name}.trash-{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        os.replace(directory, trash)
        shutil.rmtree(trash, ignore_errors=True)


def _offset(by_index: dict[int, int], i: int) -> int:
    return sum(by_index[j] for j in range(i))


def _shift(column: Any, offset: int) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.add(column, pa.scalar(offset, pa.int64()))
