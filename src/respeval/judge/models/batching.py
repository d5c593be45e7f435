"""What a provider's batch API is, to respeval: the shapes both clients share.

A batch client turns judge requests into the provider's batch lines (keyed by
``custom_id``), uploads and submits them, reports a batch's state, and reads its results
back, each matched to its request by ``custom_id`` (never by order).  The clients are
:class:`~respeval.judge.models.openai_batch.OpenAIBatchClient` (files + ``/v1/batches``)
and :class:`~respeval.judge.models.anthropic_batch.AnthropicBatchClient`
(``/v1/messages/batches``); :mod:`respeval.judge.batch` drives them.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from respeval.judge.errors import TransientError
from respeval.judge.models.base import Completion, JudgeRequest

__all__ = [
    "BatchClient",
    "BatchResult",
    "RemoteBatch",
    "SupportsBatch",
    "batch_basics",
    "error_text",
    "timestamp",
]

SUCCEEDED = "succeeded"
ERRORED = "errored"
EXPIRED = "expired"
CANCELLED = "cancelled"
RESULT_KINDS = (SUCCEEDED, ERRORED, EXPIRED, CANCELLED)


@dataclass(frozen=True)
class RemoteBatch:
    """A batch as the provider reports it.

    Attributes:
        id: the provider's batch id (``batch_...``, ``msgbatch_...``).
        status: the provider's own word (``in_progress``, ``completed``, ``ended``, ...).
        ended: processing is over: the results that exist can be fetched.
        created_at: Unix seconds.
        counts: the provider's request counts (``completed``/``failed``, or
            ``succeeded``/``errored``/``expired``/``canceled``/``processing``).
        total: requests in the batch.
        error: why the whole batch failed (validation), if it did.
        metadata: what was attached at submission (OpenAI only).
        raw: the provider's object, for ``respeval batches list --json``.
    """

    id: str
    status: str
    ended: bool
    created_at: float
    counts: Mapping[str, int] = field(default_factory=dict)
    total: int = 0
    error: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def done(self) -> int:
        """Requests processed so far (any outcome)."""
        return sum(v for k, v in self.counts.items() if k not in ("total", "processing"))


@dataclass(frozen=True)
class BatchResult:
    """One request's outcome: a completion (``succeeded``), or ``errored``, ``expired``
    or ``cancelled`` with the provider's reason."""

    custom_id: str
    kind: str
    completion: Completion | None = None
    error: str | None = None


@runtime_checkable
class BatchClient(Protocol):
    """A provider's batch API (see the module docstring)."""

    provider: str
    max_requests: int
    """Requests per batch the provider accepts."""
    max_bytes: int
    """Bytes of request lines per batch the provider accepts."""

    def line(self, custom_id: str, request: JudgeRequest) -> bytes:
        """The request as one batch line (JSON, newline-terminated)."""

    async def prepare(self, job: str, lines: Sequence[bytes]) -> str | None:
        """Whatever must exist before submitting (OpenAI: the uploaded input file, found
        again by its name when an earlier upload completed); its id, or None."""

    async def submit(self, job: str, handle: str | None, lines: Sequence[bytes]) -> RemoteBatch:
        """Create the batch (marked with ``job`` where the provider keeps metadata)."""

    async def find(self, job: str, *, since: float, count: int, claimed: frozenset[str]) -> RemoteBatch | None:
        """The batch an interrupted :meth:`submit` of ``job`` created, if any: by its
        metadata, or else by creation time and request count among batches not ``claimed``."""

    async def retrieve(self, remote_id: str) -> RemoteBatch: ...

    async def cancel(self, remote_id: str) -> RemoteBatch: ...

    async def results(self, remote: RemoteBatch) -> list[BatchResult]:
        """Every result line of an ended batch, by ``custom_id``."""

    async def recent(self, limit: int = 100) -> list[RemoteBatch]: ...


@runtime_checkable
class SupportsBatch(Protocol):
    """A judge model whose provider has a batch API."""

    def batch_client(self) -> BatchClient: ...


def timestamp(value: Any) -> float:
    """Unix seconds from a Unix number or an RFC 3339 string (0.0 when neither)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return 0.0
    return 0.0


def error_text(error: Any, default: str = "no reason given") -> str:
    """A provider's error object (nested ``{"error": {"type", "message"}}`` shapes, a
    code and a message, or a string) as one line."""
    for _ in range(3):
        if isinstance(error, Mapping) and isinstance(error.get("error"), Mapping):
            error = error["error"]
    if isinstance(error, Mapping):
        code = error.get("code") or error.get("type")
        message = error.get("message")
        parts = [str(p) for p in (code, message) if p]
        return ": ".join(parts)[:300] if parts else default
    if isinstance(error, str) and error:
        return error[:300]
    return default


def batch_basics(data: Mapping[str, Any], status_key: str, where: str) -> tuple[str, str, dict[str, int]]:
    """A provider's batch object's id, its status (under ``status_key``) and its whole-number
    ``request_counts``; an object without an id or status is a transient fault."""
    batch_id = data.get("id")
    status = data.get(status_key)
    if not isinstance(batch_id, str) or not isinstance(status, str):
        raise TransientError(f"malformed batch object from {where}: no id or status", kind="malformed_response")
    raw_counts = data.get("request_counts")
    counts = {k: int(v) for k, v in raw_counts.items() if isinstance(v, int)} if isinstance(raw_counts, dict) else {}
    return batch_id, status, counts
