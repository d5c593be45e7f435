"""Completed chunks on disk (``OUT.parts/``) and resuming from them.

Each chunk's results, bad rows and statistics are written to temporary names and
renamed when complete, the statistics last; at the end the parts are joined into
``OUT`` and removed.  ``resume=True`` reuses the completed parts of an interrupted run
with the same inputs and options.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from respeval._version import __version__
from respeval.bulk.chunks import ChunkStats, Inputs
from respeval.io import ResultWriter, join_parquet, parquet_writer
from respeval.io.formats import format_of
from respeval.metrics.base import MetricFamily


def fingerprint(inputs: Inputs, families: Sequence[MetricFamily], chunk_size: int, on_error: str) -> str:
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


class Parts:
    """Completed chunks on disk: results, errors and statistics per chunk."""

    def __init__(self, out: str, fingerprint: str, resume: bool) -> None:
        self.out = out
        self.dir = Path(out + ".parts")
        self.ext = Path(out).suffix.lower()
        self.fmt = format_of(out)
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
        self._live_next = 0 if self.fmt == "parquet" else -1

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

    def write(self, k: int, table: dict[str, Any] | None, errors: list[dict[str, Any]], stats: ChunkStats) -> None:
        results = self._name(k, "results" + self.ext)
        tmp = results.with_name(results.name + ".tmp")
        if table is not None and self.fmt == "parquet":
            import pyarrow as pa

            arrow = pa.table(table)
            writer = parquet_writer(str(tmp), arrow.schema)
            writer.write_table(arrow)
            writer.close()
            os.replace(tmp, results)
            self._write_live(k, arrow)
        elif table is not None:
            with ResultWriter(tmp, fmt=self.fmt) as w:
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

    def load_stats(self, k: int) -> ChunkStats:
        with np.load(self._name(k, "stats.npz"), allow_pickle=False) as z:
            return ChunkStats.from_arrays({name: z[name] for name in z.files})

    def errors(self, k: int) -> list[dict[str, Any]]:
        path = self._name(k, "errors.jsonl")
        return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]

    def finish(self, n_chunks: int, errors_out: str | None) -> None:
        """Join the parts into the final files, then remove them."""
        fmt = self.fmt
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
