"""Where batch mode keeps its state: three tables in the judge cache's own SQLite file.

``batch_jobs``     one row per batch respeval prepared: provider, model, state, the
                   provider's batch id, counts, tokens and cost once downloaded.
``batch_members``  which requests (cache keys, also the ``custom_id``) a job holds.
``batch_keys``     each request's standing: ``queued`` in a job, ``failed`` (how many times,
                   and the provider's last reason) or ``done`` (its answer is in the cache).
``batch_foreign``  provider batches found after a lost submission that turned out not to be
                   respeval's (never looked at again, never cancelled).

Every request of a job goes out with the job's marker in its ``custom_id``
(:func:`custom_id`: ``r<job id>_<the cache key's first 38 hex digits>``), and OpenAI batches
carry ``metadata: {"respeval_job": <job id>}`` too.  A batch found again after a submission
was lost (or a run killed while submitting) is this job's only when it carries the marker:
OpenAI's by its metadata at once; an Anthropic one (message batches carry no metadata, so
it can only be found by its size and creation time) stays *unconfirmed*, is never
cancelled, and is adopted only once its results show that every ``custom_id`` is this
job's; otherwise it is recorded as foreign and the job is sent again.

A job is written, with its members, *before* anything is sent, and each step is recorded
before the next starts::

    preparing -> uploaded -> submitting -> submitted -> downloaded
         \\___________\\___________\\-> abandoned (nothing was submitted)

so a run killed at any moment finds, on the rerun, what it was doing: a ``submitting``
job is looked up at the provider (it may exist) before anything is sent again, and a
``submitted`` one is polled, never sent twice.  Results are stored in one transaction per
batch together with the job's ``downloaded`` state: a kill while downloading leaves the
job ``submitted``, and the rerun downloads it again (answers are inserted once).

:class:`BatchCache` is the :class:`~respeval.judge.cache.JudgeCache` the engine sees in
batch mode: on a miss it defers the request to a batch, says the request failed for good,
or lets the engine call the model (an interactive retry).
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.judge.cache import INSERT_COMPLETION, JudgeCache, PathLike, completion_row, connect
from respeval.judge.errors import DeferredError, RequestFailedError
from respeval.judge.limits import Price
from respeval.judge.models.base import Completion, JudgeRequest
from respeval.judge.models.batching import CANCELLED, EXPIRED, SUCCEEDED, BatchResult, RemoteBatch
from respeval.redact import redact, redact_url

__all__ = ["JOB_STATES", "RETRY_MODES", "BatchCache", "BatchStore", "Job", "Stored"]

PREPARING = "preparing"
UPLOADED = "uploaded"
SUBMITTING = "submitting"
SUBMITTED = "submitted"
DOWNLOADED = "downloaded"
ABANDONED = "abandoned"
JOB_STATES = (PREPARING, UPLOADED, SUBMITTING, SUBMITTED, DOWNLOADED, ABANDONED)
OPEN_STATES = (PREPARING, UPLOADED, SUBMITTING, SUBMITTED)

QUEUED = "queued"
FAILED = "failed"
DONE = "done"

RETRY_MODES = ("batch", "interactive")

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS batch_jobs (
        id TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL, endpoint TEXT NOT NULL,
        state TEXT NOT NULL, remote_id TEXT, handle TEXT, remote_status TEXT,
        requests INTEGER NOT NULL, bytes INTEGER NOT NULL,
        created REAL NOT NULL, submit_started REAL, updated REAL NOT NULL, error TEXT,
        succeeded INTEGER NOT NULL DEFAULT 0, errored INTEGER NOT NULL DEFAULT 0,
        expired INTEGER NOT NULL DEFAULT 0, cancelled INTEGER NOT NULL DEFAULT 0,
        missing INTEGER NOT NULL DEFAULT 0, tokens_in INTEGER NOT NULL DEFAULT 0,
        tokens_out INTEGER NOT NULL DEFAULT 0, cost REAL, cost_interactive REAL,
        marked INTEGER NOT NULL DEFAULT 0, confirmed INTEGER NOT NULL DEFAULT 1)""",
    """CREATE TABLE IF NOT EXISTS batch_members (
        job TEXT NOT NULL, key TEXT NOT NULL, template_version TEXT NOT NULL,
        PRIMARY KEY (job, key)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS batch_keys (
        key TEXT PRIMARY KEY, job TEXT, state TEXT NOT NULL, attempts INTEGER NOT NULL,
        reason TEXT) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS batch_jobs_state ON batch_jobs (state)",
    """CREATE TABLE IF NOT EXISTS batch_foreign (
        remote_id TEXT PRIMARY KEY, job TEXT NOT NULL, found REAL NOT NULL) WITHOUT ROWID""",
)
# columns added since the first release: (name, declaration) for caches written before them
_ADDED_COLUMNS = (
    ("marked", "INTEGER NOT NULL DEFAULT 0"),  # old jobs sent their cache keys as custom_ids
    ("confirmed", "INTEGER NOT NULL DEFAULT 1"),
)
_CUSTOM_ID_KEY = 38  # hex digits of the cache key in a marked custom_id (64 characters in all)


def custom_id(job_id: str, key: str) -> str:
    """The ``custom_id`` of request ``key`` in job ``job_id``: the job's marker and the key's
    first 38 hex digits (64 characters, as Anthropic allows: ``^[a-zA-Z0-9_-]{1,64}$``)."""
    return f"{marker(job_id)}{key[:_CUSTOM_ID_KEY]}"


def marker(job_id: str) -> str:
    """The prefix every ``custom_id`` of job ``job_id`` starts with."""
    return f"r{job_id}_"


def new_job_id() -> str:
    return uuid.uuid4().hex[:24]


@dataclass(frozen=True)
class Job:
    """One row of ``batch_jobs``."""

    id: str
    provider: str
    model: str
    endpoint: str
    state: str
    remote_id: str | None
    handle: str | None
    remote_status: str | None
    requests: int
    bytes: int
    created: float
    submit_started: float | None
    updated: float
    error: str | None
    succeeded: int = 0
    errored: int = 0
    expired: int = 0
    cancelled: int = 0
    missing: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    cost_interactive: float | None = None
    marked: int = 0
    """1 when its requests carry the job's marker in their custom_id (every job since the
    marker came; 0: an older job, whose custom_ids are its cache keys)."""
    confirmed: int = 1
    """0 while its remote batch was only found by size and time (see the module docstring)."""
    resent: int = field(default=0, compare=False)
    """Of its requests, how many had failed in an earlier batch (set by create_job only)."""

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "resent"}

    def custom_id(self, key: str) -> str:
        """The custom_id request ``key`` goes out with in this job."""
        return custom_id(self.id, key) if self.marked else key

    def keys_by_custom_id(self, keys: Sequence[str]) -> dict[str, str]:
        """custom_id -> cache key, for this job's requests ``keys``."""
        return {self.custom_id(key): key for key in keys}


@dataclass
class Stored:
    """What storing one batch's results did."""

    succeeded: int = 0
    errored: int = 0
    expired: int = 0
    cancelled: int = 0
    missing: int = 0
    unknown: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    cost_interactive: float = 0.0

    @property
    def failed(self) -> int:
        return self.errored + self.expired + self.cancelled + self.missing


_JOB_COLUMNS = ", ".join(name for name in Job.__dataclass_fields__ if name != "resent")


class BatchStore:
    """The batch tables (see the module docstring), on a connection of their own."""

    def __init__(self, path: PathLike) -> None:
        self.path = str(path)
        self._db = connect(self.path)  # a damaged page is a CacheError naming the file
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        for statement in _SCHEMA:
            self._db.execute(statement)
        present = {row[1] for row in self._db.execute("PRAGMA table_info(batch_jobs)")}
        for name, declaration in _ADDED_COLUMNS:
            if name not in present:
                self._db.execute(f"ALTER TABLE batch_jobs ADD COLUMN {name} {declaration}")

    def close(self) -> None:
        self._db.close()

    # ------------------------------------------------------------------ reading

    def key_state(self, key: str) -> tuple[str, int, str | None, str | None] | None:
        """(state, attempts, reason, job) of a request, or None if batch mode never saw it."""
        row = self._db.execute("SELECT state, attempts, reason, job FROM batch_keys WHERE key = ?", (key,)).fetchone()
        return None if row is None else (row[0], int(row[1]), row[2], row[3])

    def job(self, job_id: str) -> Job | None:
        row = self._db.execute(f"SELECT {_JOB_COLUMNS} FROM batch_jobs WHERE id = ?", (job_id,)).fetchone()
        return Job(*row) if row is not None else None

    def jobs(self, states: Sequence[str] | None = None) -> list[Job]:
        if states is None:
            rows = self._db.execute(f"SELECT {_JOB_COLUMNS} FROM batch_jobs ORDER BY created").fetchall()
        else:
            marks = ", ".join("?" for _ in states)
            rows = self._db.execute(
                f"SELECT {_JOB_COLUMNS} FROM batch_jobs WHERE state IN ({marks}) ORDER BY created", tuple(states)
            ).fetchall()
        return [Job(*row) for row in rows]

    def open_jobs(self) -> list[Job]:
        return self.jobs(OPEN_STATES)

    def members(self, job_id: str) -> dict[str, str]:
        """key -> template version of a job's requests."""
        rows = self._db.execute("SELECT key, template_version FROM batch_members WHERE job = ?", (job_id,))
        return dict(rows.fetchall())

    def key_counts(self) -> dict[str, int]:
        """Requests by standing: queued, failed, done."""
        rows = self._db.execute("SELECT state, COUNT(*) FROM batch_keys GROUP BY state").fetchall()
        return {state: int(n) for state, n in rows}

    def claimed_remote_ids(self) -> frozenset[str]:
        """Remote batches a lookup must skip: those of jobs, and those found to be foreign."""
        rows = self._db.execute(
            "SELECT remote_id FROM batch_jobs WHERE remote_id IS NOT NULL UNION SELECT remote_id FROM batch_foreign"
        ).fetchall()
        return frozenset(r[0] for r in rows)

    def foreign_remote_ids(self) -> frozenset[str]:
        return frozenset(r[0] for r in self._db.execute("SELECT remote_id FROM batch_foreign"))

    # ------------------------------------------------------------------ writing

    def create_job(
        self,
        *,
        provider: str,
        model: str,
        endpoint: str,
        members: Mapping[str, str],
        size: int,
        job_id: str | None = None,
    ) -> Job:
        """Record a new job (``job_id``, or a new one; its lines may be built before it is
        recorded, with :func:`custom_id`) and queue its requests, in one transaction, before
        anything is sent.  Raises ValueError when a request is already queued in another
        open job (a concurrent run took it)."""
        job_id = job_id or new_job_id()
        now = time.time()
        with self._transaction():
            standing = dict(self._db.execute("SELECT key, state FROM batch_keys WHERE state != ?", (DONE,)))
            taken = sum(standing.get(key) == QUEUED for key in members)
            if taken:
                raise ValueError(f"{taken} of these requests are already queued in another batch (another run?)")
            resent = sum(standing.get(key) == FAILED for key in members)
            self._db.execute(
                f"INSERT INTO batch_jobs ({_JOB_COLUMNS}) VALUES ({', '.join('?' for _ in _JOB_COLUMNS.split(', '))})",
                (
                    job_id,
                    provider,
                    model,
                    redact_url(endpoint),
                    PREPARING,
                    None,
                    None,
                    None,
                    len(members),
                    size,
                    now,
                    None,
                    now,
                    None,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    None,
                    None,
                    1,
                    1,
                ),
            )
            self._db.executemany(
                "INSERT INTO batch_members VALUES (?, ?, ?)", ((job_id, k, tv) for k, tv in members.items())
            )
            self._db.executemany(
                "INSERT INTO batch_keys VALUES (?, ?, ?, 0, NULL) ON CONFLICT (key) DO UPDATE SET job = excluded.job, "
                "state = excluded.state",
                ((k, job_id, QUEUED) for k in members),
            )
        job = self.job(job_id)
        assert job is not None
        return dataclasses.replace(job, resent=resent)

    def set_state(self, job_id: str, state: str, **fields: Any) -> None:
        """Move a job on (with ``handle``, ``remote_id``, ``remote_status``,
        ``submit_started`` or ``error``), committed before the caller's next step."""
        allowed = {"handle", "remote_id", "remote_status", "submit_started", "error", "confirmed"}
        unknown = set(fields) - allowed
        if unknown:
            raise ValueError(f"unknown job fields {sorted(unknown)}")
        sets = ", ".join(["state = ?", "updated = ?", *(f"{name} = ?" for name in fields)])
        values = [
            state,
            time.time(),
            *(redact(v) if isinstance(v, str) and k == "error" else v for k, v in fields.items()),
        ]
        self._db.execute(f"UPDATE batch_jobs SET {sets} WHERE id = ?", (*values, job_id))

    def release_foreign(self, job_id: str, remote_id: str, reason: str) -> None:
        """The batch a lookup found for ``job_id`` is not its own: remember it as foreign
        (never found, waited on or cancelled again) and put the job back to ``submitting``
        with no batch (the next run looks again, then sends it)."""
        with self._transaction():
            self._db.execute("INSERT OR IGNORE INTO batch_foreign VALUES (?, ?, ?)", (remote_id, job_id, time.time()))
            self._db.execute(
                "UPDATE batch_jobs SET state = ?, remote_id = NULL, remote_status = NULL, confirmed = 1, error = ?, "
                "updated = ? WHERE id = ?",
                (SUBMITTING, redact(reason), time.time(), job_id),
            )

    def mark_done(self, key: str) -> None:
        """A request answered by an interactive call."""
        self._db.execute("UPDATE batch_keys SET state = ?, job = NULL WHERE key = ?", (DONE, key))

    def set_remote_status(self, job_id: str, status: str) -> None:
        self._db.execute(
            "UPDATE batch_jobs SET remote_status = ?, updated = ? WHERE id = ?", (status, time.time(), job_id)
        )

    def abandon(self, job_id: str, reason: str) -> None:
        """A job that was never submitted: its requests go back to what they were."""
        with self._transaction():
            self._db.execute(
                "UPDATE batch_jobs SET state = ?, error = ?, updated = ? WHERE id = ?",
                (ABANDONED, redact(reason), time.time(), job_id),
            )
            self._db.execute("DELETE FROM batch_keys WHERE job = ? AND state = ? AND attempts = 0", (job_id, QUEUED))
            self._db.execute(
                "UPDATE batch_keys SET state = ?, job = NULL WHERE job = ? AND state = ?", (FAILED, job_id, QUEUED)
            )

    def store_results(
        self,
        job: Job,
        remote: RemoteBatch,
        results: Sequence[BatchResult],
        *,
        identity_endpoint: str,
        batch_price: Price | None,
        interactive_price: Price | None,
    ) -> Stored:
        """Every result of an ended batch, matched to the job's requests by ``custom_id``,
        in one transaction with the job's ``downloaded`` state (see the module docstring).
        Answers go into the cache's ``completions``; failures leave their request ``failed``
        with the provider's reason; a request without a result line failed too."""
        members = self.members(job.id)
        by_custom_id = job.keys_by_custom_id(list(members))
        stored = Stored()
        seen: set[str] = set()
        completions: list[tuple[str, str, str, str, str, float]] = []
        failures: list[tuple[str, str]] = []
        where = f"batch {remote.id}"
        for result in results:
            key = by_custom_id.get(result.custom_id)
            if key is None or key in seen:
                stored.unknown += 1  # not ours (or a duplicate line): never matched by position
                continue
            seen.add(key)
            if result.kind == SUCCEEDED and result.completion is not None:
                completion: Completion = result.completion
                stored.succeeded += 1
                stored.tokens_in += completion.tokens_in
                stored.tokens_out += completion.tokens_out
                if batch_price is not None:
                    stored.cost += batch_price.cost(completion.tokens_in, completion.tokens_out)
                if interactive_price is not None:
                    stored.cost_interactive += interactive_price.cost(completion.tokens_in, completion.tokens_out)
                completions.append(completion_row(key, completion, job.model, identity_endpoint, members[key]))
                continue
            if result.kind == EXPIRED:
                stored.expired += 1
            elif result.kind == CANCELLED:
                stored.cancelled += 1
            else:
                stored.errored += 1
            failures.append((key, f"{result.kind} in {where}: {result.error or 'no reason given'}"))
        missing_reason = remote.error or f"the batch ended ({remote.status}) without a result for this request"
        for key in members.keys() - seen:
            stored.missing += 1
            failures.append((key, f"no result in {where}: {missing_reason}"))
        with self._transaction():
            self._db.executemany(INSERT_COMPLETION, completions)
            self._db.executemany(
                "UPDATE batch_keys SET state = ?, job = NULL WHERE key = ?", ((DONE, row[0]) for row in completions)
            )
            self._db.executemany(
                "UPDATE batch_keys SET state = ?, job = NULL, attempts = attempts + 1, reason = ? WHERE key = ?",
                ((FAILED, redact(reason), key) for key, reason in failures),
            )
            self._db.execute(
                "UPDATE batch_jobs SET state = ?, remote_status = ?, updated = ?, error = ?, succeeded = ?, "
                "errored = ?, expired = ?, cancelled = ?, missing = ?, tokens_in = ?, tokens_out = ?, cost = ?, "
                "cost_interactive = ? WHERE id = ?",
                (
                    DOWNLOADED,
                    remote.status,
                    time.time(),
                    redact(remote.error) if remote.error else None,
                    stored.succeeded,
                    stored.errored,
                    stored.expired,
                    stored.cancelled,
                    stored.missing,
                    stored.tokens_in,
                    stored.tokens_out,
                    stored.cost if batch_price is not None else None,
                    stored.cost_interactive if interactive_price is not None else None,
                    job.id,
                ),
            )
        return stored

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on an exception): all of it or none of it."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._db.execute("COMMIT" if exc_type is None else "ROLLBACK")


@dataclass
class LiveSpend:
    """Interactive calls made in batch mode (retries of failed batch requests)."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0


class BatchCache(JudgeCache):
    """The judge cache in batch mode (see the module docstring).

    Args:
        path: the cache file (batch tables are added beside the answers).
        retries: how many times a request that failed in a batch (per-request error,
            expired or cancelled batch) is sent again before its row is left unscored.
        retry: ``batch`` (in the next batch) or ``interactive`` (an ordinary call now).
        interactive_price: prices the interactive retries (for the run's spend).
    """

    def __init__(
        self,
        path: PathLike,
        *,
        retries: int = 2,
        retry: str = "batch",
        interactive_price: Price | None = None,
    ) -> None:
        if retries < 0:
            raise ValueError(f"retries must be non-negative, got {retries}")
        if retry not in RETRY_MODES:
            raise ValueError(f"retry must be one of {', '.join(RETRY_MODES)}, got {retry!r}")
        super().__init__(path)
        try:
            self.store = BatchStore(self.path)
        except sqlite3.DatabaseError as exc:
            super().close()
            raise ValueError(f"cannot use {self.path} as a judge cache: {exc}") from exc
        self.retries = retries
        self.retry = retry
        self.interactive_price = interactive_price
        self.deferred: dict[str, JudgeRequest] = {}
        self.gave_up: set[str] = set()
        self.retried_live: set[str] = set()
        self.live = LiveSpend()

    def begin_round(self) -> None:
        """Forget the previous pass's deferrals (the driver submitted them)."""
        self.deferred = {}

    def on_miss(self, key: str, request: JudgeRequest) -> None:
        state = self.store.key_state(key)
        if state is not None and state[0] == FAILED:
            _, attempts, reason, _ = state
            if attempts > self.retries:
                self.gave_up.add(key)
                raise RequestFailedError(
                    f"batch request failed {attempts} times (retry limit {self.retries}); last: {reason}"
                )
            if self.retry == "interactive":
                self.retried_live.add(key)
                return  # the engine calls the model now, with its own retries
        self.deferred.setdefault(key, request)
        raise DeferredError("the answer comes from a provider batch")

    def put(self, key: str, completion: Completion, *, model: str, endpoint: str, template_version: str) -> None:
        super().put(key, completion, model=model, endpoint=endpoint, template_version=template_version)
        # Only interactive calls reach put() in batch mode: count what they cost.
        self.live.calls += 1
        self.live.tokens_in += completion.tokens_in
        self.live.tokens_out += completion.tokens_out
        if self.interactive_price is not None:
            self.live.cost += self.interactive_price.cost(completion.tokens_in, completion.tokens_out)
        self.store.mark_done(key)

    def close(self) -> None:
        self.store.close()
        super().close()

    def __enter__(self) -> BatchCache:
        return self

    def __repr__(self) -> str:
        return f"<BatchCache {self.path}>"


def job_summary(job: Job) -> dict[str, Any]:
    """A job as JSON for listings (no secrets: the endpoint is stored scrubbed)."""
    data = job.to_json()
    data["created"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(job.created))
    return json.loads(json.dumps(data))
