"""The monitor's store: one SQLite file holding the checkpoint and every result.

Tables (every change is made in a transaction, so a kill at any moment leaves the store as it
was after the last commit, and a rerun goes on from there):

==============  ===============================================================================
``meta``        the settings' fingerprint (a rerun with other settings is refused), the version
``files``       per source file: its kind, the byte offset and line read up to (whole lines
                only), its identity (device, inode) and size; committed with the records read
``counters``    the watermark (the latest span end read), the first window, counts of records
                (read, late, outside the sample) and bad records
``pending``     traces of windows still open: their window and start
``records``     those traces' records (spans, log events), encoded as the dataset build
                spills them (:func:`respeval.traces.spill.encode_record`)
``traces``      every trace of a closed window, once (the primary key): sampled or not, and a
                sampled trace's row (decision of the gate, metric values)
``windows``     every closed window's result: counts, metrics with intervals, the drift test
``bad``         the bad records skipped, with file, line, field and reason (``record``)
``runs``        what each invocation did and spent (calls, cost): the only table that differs
                between a run that was killed and rerun and one that was not
==============  ===============================================================================

WAL journal, ``synchronous=NORMAL``: a killed process never loses a committed transaction
(a power cut may lose the last ones, never consistency).
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from respeval.bulk.parts import ResumeRefused, RunFingerprint
from respeval.io.errors import InputError
from respeval.io.files import refuse_link

__all__ = ["SCHEMA_VERSION", "FileState", "Store", "StoreError"]

SCHEMA_VERSION = "respeval.monitor-store/1"

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, kind TEXT, offset INTEGER NOT NULL, line INTEGER NOT NULL,
    dev INTEGER, ino INTEGER, size INTEGER, mtime_ns INTEGER, done INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pending (trace_id TEXT PRIMARY KEY, window INTEGER NOT NULL, start_ns INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS pending_window ON pending (window);
CREATE TABLE IF NOT EXISTS records (id INTEGER PRIMARY KEY, trace_id TEXT NOT NULL, data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS records_trace ON records (trace_id);
CREATE TABLE IF NOT EXISTS traces (
    trace_id TEXT PRIMARY KEY, window INTEGER NOT NULL, u TEXT NOT NULL, sampled INTEGER NOT NULL, row TEXT);
CREATE INDEX IF NOT EXISTS traces_window ON traces (window);
CREATE TABLE IF NOT EXISTS windows (window INTEGER PRIMARY KEY, start TEXT NOT NULL, result TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bad (id INTEGER PRIMARY KEY, path TEXT, line INTEGER, field TEXT, reason TEXT);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, started REAL, finished REAL, windows INTEGER, judge_calls INTEGER,
    cache_hits INTEGER, cost_usd REAL);
"""

COUNTERS = ("watermark_ns", "first_window", "records", "late_records", "outside_sample", "bad_records", "untimed")


class StoreError(InputError):
    """A store that cannot be used: another tool's file, another monitor's settings, a damaged file."""


@dataclass
class FileState:
    """How far a source file has been read."""

    path: str
    kind: str | None = None
    offset: int = 0
    line: int = 0
    dev: int | None = None
    ino: int | None = None
    size: int | None = None
    mtime_ns: int | None = None
    done: bool = False  # a document read whole (read again only when it changes)


class Store:
    """The SQLite store (see the module docstring).  ``fingerprint``: the settings; a store
    started with other settings is refused, naming what changed."""

    def __init__(self, path: str, fingerprint: RunFingerprint) -> None:
        self.path = os.fspath(path)
        refuse_link(self.path, "monitor store")  # SQLite would write the file it points to
        existed = os.path.exists(self.path) and os.path.getsize(self.path) > 0
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            if existed:
                names = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                if "meta" not in names:
                    raise StoreError(f"{self.path}: not a respeval monitor store (no meta table); give another --store")
            self.db.executescript(_TABLES)  # each CREATE ... IF NOT EXISTS on its own: a kill between them is harmless
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot use it as the monitor's store: {exc}") from None
        stored = self.meta("fingerprint")
        version = self.meta("schema")
        if stored is None:
            with self.transaction():
                self.set_meta("schema", SCHEMA_VERSION)
                self.set_meta("fingerprint", json.dumps(fingerprint.manifest()))
        else:
            if version != SCHEMA_VERSION:
                raise StoreError(f"{self.path}: a store of {version!r}, not {SCHEMA_VERSION!r}; give a new --store")
            try:
                fingerprint.check(
                    json.loads(stored),
                    self.path,
                    start_over="; use the spec and options the store was started with, or a new --store",
                    unproven_advice="; give the code a version, and a new --store",
                )
            except ResumeRefused as exc:
                message = str(exc).replace("cannot resume into", "cannot go on with the store", 1)
                message = message.replace("changed since the interrupted run", "changed since the store was started")
                message = message.replace("what the interrupted run used", "what the store was started with")
                raise StoreError(message) from None
        self._counters = {k: 0 for k in COUNTERS}
        self._counters["first_window"] = -1
        for key, value in self.db.execute("SELECT key, value FROM counters"):
            self._counters[key] = value

    # ------------------------------------------------------------------ basics
    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.db.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # ------------------------------------------------------------------ counters
    def counter(self, key: str) -> int:
        return int(self._counters[key])

    def counters(self) -> dict[str, int]:
        return dict(self._counters)

    def write_counters(self, values: dict[str, int]) -> None:
        """Inside a transaction: store ``values`` (the in-memory copy follows on commit via
        :meth:`reload_counters`)."""
        self.db.executemany("INSERT OR REPLACE INTO counters VALUES (?, ?)", list(values.items()))

    def reload_counters(self) -> None:
        for key, value in self.db.execute("SELECT key, value FROM counters"):
            self._counters[key] = value

    # ------------------------------------------------------------------ files
    def files(self) -> dict[str, FileState]:
        out = {}
        for row in self.db.execute("SELECT path, kind, offset, line, dev, ino, size, mtime_ns, done FROM files"):
            out[row[0]] = FileState(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], bool(row[8]))
        return out

    def write_file(self, state: FileState) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                state.path,
                state.kind,
                state.offset,
                state.line,
                state.dev,
                state.ino,
                state.size,
                state.mtime_ns,
                int(state.done),
            ),
        )

    # ------------------------------------------------------------------ pending traces
    def pending(self) -> dict[str, tuple[int, int]]:
        """trace id -> (window, start_ns) of every trace of an open window."""
        return {r[0]: (r[1], r[2]) for r in self.db.execute("SELECT trace_id, window, start_ns FROM pending")}

    def pending_windows(self) -> list[int]:
        return [r[0] for r in self.db.execute("SELECT DISTINCT window FROM pending ORDER BY window")]

    def write_pending(self, items: Iterable[tuple[str, int, int]]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO pending VALUES (?, ?, ?)", list(items))

    def add_records(self, items: Iterable[tuple[str, Any]]) -> None:
        self.db.executemany(
            "INSERT INTO records (trace_id, data) VALUES (?, ?)", [(t, marshal.dumps(d)) for t, d in items]
        )

    def window_records(self, window: int) -> Iterator[tuple[str, Any]]:
        """(trace id, record data) of the window's pending traces, in the order read."""
        cursor = self.db.execute(
            "SELECT r.trace_id, r.data FROM records r JOIN pending p ON p.trace_id = r.trace_id "
            "WHERE p.window = ? ORDER BY r.id",
            (window,),
        )
        for trace_id, blob in cursor:
            yield trace_id, marshal.loads(blob)

    def handled(self, trace_id: str) -> bool:
        """Whether the trace belongs to a window already closed (scored or left out)."""
        return self.db.execute("SELECT 1 FROM traces WHERE trace_id = ?", (trace_id,)).fetchone() is not None

    def handled_among(self, trace_ids: Iterable[str]) -> set[str]:
        """Which of ``trace_ids`` belong to closed windows (one query per 500 ids)."""
        ids = list(trace_ids)
        out: set[str] = set()
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            out.update(r[0] for r in self.db.execute(f"SELECT trace_id FROM traces WHERE trace_id IN ({marks})", part))  # noqa: S608
        return out

    # ------------------------------------------------------------------ results
    def finish_window(
        self, window: int, start: str, result: dict[str, Any], traces: Iterable[tuple[str, int, bool, Any]]
    ) -> None:
        """Inside a transaction: the window's result, each of its traces once (trace id,
        unit hash, sampled, row), and its pending traces and records removed."""
        self.db.execute(
            "INSERT INTO windows VALUES (?, ?, ?)", (window, start, json.dumps(result, sort_keys=True, allow_nan=False))
        )
        self.db.executemany(
            "INSERT INTO traces VALUES (?, ?, ?, ?, ?)",
            [
                (t, window, f"{u:016x}", int(sampled), None if row is None else json.dumps(row, sort_keys=True))
                for t, u, sampled, row in traces
            ],
        )
        self.db.execute(
            "DELETE FROM records WHERE trace_id IN (SELECT trace_id FROM pending WHERE window = ?)", (window,)
        )
        self.db.execute("DELETE FROM pending WHERE window = ?", (window,))

    def windows(self) -> list[tuple[int, str, dict[str, Any]]]:
        return [
            (w, s, json.loads(r))
            for w, s, r in self.db.execute("SELECT window, start, result FROM windows ORDER BY window")
        ]

    def last_window(self) -> int | None:
        row = self.db.execute("SELECT MAX(window) FROM windows").fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def window_rows(self, windows: Iterable[int]) -> list[dict[str, Any]]:
        """The sampled rows of ``windows``, in the order they were scored."""
        out = []
        for w in windows:
            for (row,) in self.db.execute(
                "SELECT row FROM traces WHERE window = ? AND sampled = 1 ORDER BY u, trace_id", (w,)
            ):
                out.append(json.loads(row))
        return out

    def add_bad(self, records: Iterable[Any]) -> None:
        self.db.executemany(
            "INSERT INTO bad (path, line, field, reason) VALUES (?, ?, ?, ?)",
            [(r.path, r.line, r.field, r.reason) for r in records],
        )

    def bad_records(self, limit: int = 20) -> list[dict[str, Any]]:
        return [
            {"path": p, "line": n, "field": f, "reason": r}
            for p, n, f, r in self.db.execute("SELECT path, line, field, reason FROM bad ORDER BY id LIMIT ?", (limit,))
        ]

    # ------------------------------------------------------------------ invocations
    def start_run(self) -> int:
        with self.transaction():
            cur = self.db.execute("INSERT INTO runs (started, windows) VALUES (?, 0)", (time.time(),))
        return int(cur.lastrowid or 0)

    def update_run(self, run: int, windows: int, calls: int, cache_hits: int, cost: float) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE runs SET finished = ?, windows = ?, judge_calls = ?, cache_hits = ?, cost_usd = ? WHERE id = ?",
                (time.time(), windows, calls, cache_hits, cost, run),
            )
