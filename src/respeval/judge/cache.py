"""A content-addressed, crash-safe cache of judge completions (SQLite in WAL mode).

The key is the SHA-256 of the model's identity (provider, model, endpoint without
credentials, adapter defaults) and the full request (messages, parameters, JSON schema,
template version, sample index, flip orientation).  Nothing else goes in: no headers, no
API key.  The value is the completion (text, usage, finish reason).

Every answer is committed before the engine moves on, so a process killed at any point
(``kill -9`` included) has durably stored every answer it received up to the moment it
died, and a rerun sends none of those requests again.  WAL with ``synchronous=NORMAL``
survives process crashes (only a power loss can drop the last commits), and a lookup plus
a commit cost about 45 µs per answer on this machine (more when other processes compete
for the disk), so one commit per answer is affordable.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from typing import Any, Union

from respeval.errors import RespevalError
from respeval.io.files import refuse_link
from respeval.judge.models.base import Completion, JudgeRequest
from respeval.redact import redact, redact_url

__all__ = ["INSERT_COMPLETION", "CacheError", "JudgeCache", "KeyMaker", "cache_key", "completion_row", "connect"]

SCHEMA_VERSION = "1"
_KEY_VERSION = 2

PathLike = Union[str, "os.PathLike[str]"]


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class KeyMaker:
    """Cache keys for one model: the identity is hashed once, then each request's messages
    are fed in length-prefixed (unambiguous, and ~4x cheaper than JSON-encoding them)."""

    def __init__(self, identity: Mapping[str, Any]) -> None:
        self._prefix = hashlib.sha256(b"respeval-judge-cache/%d\x00" % _KEY_VERSION + _canonical(dict(identity)))

    def __call__(self, request: JudgeRequest) -> str:
        h = self._prefix.copy()
        for message in request.messages:
            role = message.role.encode("utf-8")
            content = message.content.encode("utf-8")
            h.update(b"\x00m%d:%s%d:" % (len(role), role, len(content)))
            h.update(content)
        schema = request.json_schema.canonical_json if request.json_schema is not None else None
        params = [
            request.temperature,
            request.seed,
            request.max_tokens,
            request.logprobs,
            request.template_version,
            request.sample_index,
            request.flip,
            schema,
        ]
        if request.tools:  # only then: every key of a request without tools stays what it was
            params.append(request.tools_json)
        h.update(b"\x00p" + json.dumps(params, ensure_ascii=False).encode("utf-8"))
        return h.hexdigest()


INSERT_COMPLETION = "INSERT OR IGNORE INTO completions VALUES (?, ?, ?, ?, ?, ?)"


class CacheError(RespevalError, sqlite3.DatabaseError, ValueError):
    """The cache file cannot be read or written (a damaged page, a full disk, a lock held
    too long): the message names the file and says what to do.  The engine stops the run
    cleanly on it (rows judged so far are kept); it is a ValueError for the command line
    (exit 1, one line) and still an ``sqlite3.DatabaseError`` for code that catches those."""

    def __init__(self, path: str, error: sqlite3.Error) -> None:
        self.path = path
        name = getattr(error, "sqlite_errorname", "")  # Python 3.11+
        text = str(error)
        if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or "malformed" in text or "not a database" in text:
            message = (
                f"the judge cache {path} is damaged ({text}): move it aside and rerun (its answers are asked "
                f"again), or recover what it holds first: sqlite3 {path} .recover | sqlite3 {path}.recovered, "
                f"then rerun with --cache {path}.recovered"
            )
        elif name.startswith("SQLITE_BUSY") or name.startswith("SQLITE_LOCKED") or "locked" in text:
            message = f"the judge cache {path} stayed locked by another process ({text}); rerun when it is free"
        else:
            message = (
                f"cannot read or write the judge cache {path} ({text}); fix that (disk space, permissions) and rerun"
            )
        super().__init__(message)


class _CheckedCursor(sqlite3.Cursor):
    """A cursor whose failures are :class:`CacheError` naming the file."""

    def _failed(self, exc: sqlite3.Error) -> CacheError:
        return CacheError(getattr(self.connection, "path", "?"), exc)

    def execute(self, *args: Any) -> Any:
        try:
            return super().execute(*args)
        except CacheError:
            raise
        except sqlite3.DatabaseError as exc:
            raise self._failed(exc) from exc

    def executemany(self, *args: Any) -> Any:
        try:
            return super().executemany(*args)
        except CacheError:
            raise
        except sqlite3.DatabaseError as exc:
            raise self._failed(exc) from exc

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._failed(exc) from exc

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._failed(exc) from exc

    def fetchmany(self, *args: Any) -> list[Any]:
        try:
            return super().fetchmany(*args)
        except sqlite3.DatabaseError as exc:
            raise self._failed(exc) from exc

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.DatabaseError as exc:
            raise self._failed(exc) from exc


class _CheckedConnection(sqlite3.Connection):
    """A connection whose statements fail with :class:`CacheError` (see :func:`connect`)."""

    path = "?"

    def cursor(self, factory: Any = _CheckedCursor) -> Any:
        return super().cursor(factory)

    def execute(self, *args: Any) -> Any:
        return self.cursor().execute(*args)

    def executemany(self, *args: Any) -> Any:
        return self.cursor().executemany(*args)


def connect(path: PathLike) -> sqlite3.Connection:
    """The cache file's connection (autocommit, shared between threads, 30 s for a lock),
    on which any failure -- a damaged page met mid-run as much as at open -- is a
    :class:`CacheError` naming the file, never a bare ``DatabaseError`` mid-run."""
    name = os.fspath(path)
    # SQLite writes the file a link points to: a link planted at a cache's default path
    # (OUT.cache.sqlite) would have a run write into any file
    refuse_link(name, "judge cache")
    try:
        # isolation_level=None: autocommit, one durable transaction per put().
        db = sqlite3.connect(
            name, isolation_level=None, check_same_thread=False, timeout=30.0, factory=_CheckedConnection
        )
    except sqlite3.DatabaseError as exc:
        raise CacheError(name, exc) from exc
    db.path = name
    return db


def completion_row(
    key: str, completion: Completion, model: str, endpoint: str, template_version: str
) -> tuple[str, str, str, str, str, float]:
    """One ``completions`` row, scrubbed of secrets (for :data:`INSERT_COMPLETION`)."""
    return (
        key,
        redact(model),
        redact_url(endpoint),
        template_version,
        json.dumps(completion.redacted().to_json()),
        time.time(),
    )


def cache_key(identity: Mapping[str, Any], request: JudgeRequest) -> str:
    """The content address of one call (hex SHA-256): the model's identity and every field
    of the request (see :class:`KeyMaker`, which the engine uses to make many)."""
    return KeyMaker(identity)(request)


class JudgeCache:
    """The completion cache in one SQLite file.  Use as a context manager or ``close()`` it.

    Safe to share between processes (SQLite locking); within a process it is used from
    one event loop at a time.  The first answer stored under a key wins.
    """

    def __init__(self, path: PathLike) -> None:
        self.path = os.fspath(path)
        try:
            self._db = connect(self.path)
            mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS completions (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                "endpoint TEXT NOT NULL, template_version TEXT NOT NULL, completion TEXT NOT NULL, "
                "created REAL NOT NULL) WITHOUT ROWID"
            )
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            schema = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0]
        except CacheError as exc:  # the header or the schema unreadable: not a cache (any more)
            raise ValueError(f"cannot use {self.path} as a judge cache: {exc.__cause__}") from exc
        if schema != SCHEMA_VERSION:
            self._db.close()
            raise ValueError(f"{self.path} is a judge cache of schema {schema}; this respeval uses {SCHEMA_VERSION}")
        self.journal_mode = str(mode).lower()

    def get(self, key: str) -> Completion | None:
        row = self._db.execute("SELECT completion FROM completions WHERE key = ?", (key,)).fetchone()
        return Completion.from_json(json.loads(row[0])) if row is not None else None

    def put(self, key: str, completion: Completion, *, model: str, endpoint: str, template_version: str) -> None:
        """Store (and commit) one answer; a key already present keeps its first answer.
        Nothing secret is stored: the texts are scrubbed (:mod:`respeval.redact`)."""
        self._db.execute(INSERT_COMPLETION, completion_row(key, completion, model, endpoint, template_version))

    def on_miss(self, key: str, request: JudgeRequest) -> None:
        """Called by the engine before a cache miss goes to the model.  Does nothing here; a
        batch-backed cache (:class:`respeval.judge.batch.BatchCache`) raises
        :class:`~respeval.judge.errors.DeferredError` to have the answer come from a provider
        batch, or :class:`~respeval.judge.errors.RequestFailedError` when it failed for good."""

    def __contains__(self, key: object) -> bool:
        return self._db.execute("SELECT 1 FROM completions WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def keys(self) -> Iterator[str]:
        return (row[0] for row in self._db.execute("SELECT key FROM completions").fetchall())

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<JudgeCache {self.path}>"
