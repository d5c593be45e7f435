"""The judge layer's exceptions, sorted by what the engine does with them.

* :class:`TransientError`: worth another try (429, 5xx, timeouts, dropped connections,
  a response body that is not the expected JSON).  The engine retries with backoff.
* :class:`FatalError`: another try cannot help (401, 400, 404, a bad model string, a cache
  miss in replay-only mode, an unexpected exception in a user's Python judge).  The engine
  stops the run cleanly instead of retrying forever.

Two more say where an answer comes from in batch mode (:mod:`respeval.judge.batch`), and
the engine neither retries nor stops on them:

* :class:`DeferredError`: the answer will come from a provider batch; the row is left not
  run in this pass (the batch driver submits the request and runs the rows again).
* :class:`RequestFailedError`: the request failed for good (a batch's per-request error,
  an expired or cancelled batch, after the retry limit); the row is unscored with this
  reason.

A parse failure of the *judge's verdict* is not an exception: it makes the row unscored
with its reason (see :mod:`respeval.judge.parsing`).

Messages are scrubbed of secrets when the error is made (:func:`respeval.redact.redact`):
an error body that echoes the request's ``Authorization`` header, or a URL with an
``api_key`` parameter, never reaches ``str()``, ``repr()``, a row reason or a summary.
"""

from __future__ import annotations

from respeval.errors import RespevalError
from respeval.redact import redact

__all__ = [
    "CacheMissError",
    "DeferredError",
    "FatalError",
    "JudgeError",
    "RequestFailedError",
    "TransientError",
]


class JudgeError(RespevalError):
    """Base class of judge-layer errors; the message is stored scrubbed of secrets."""

    def __init__(self, message: object = "", *args: object) -> None:
        super().__init__(redact(message), *(redact(a) if isinstance(a, str) else a for a in args))


class TransientError(JudgeError):
    """A failure that another attempt may not repeat.

    Attributes:
        kind: ``"rate_limited"``, ``"server_error"``, ``"timeout"``, ``"connection"`` or
            ``"malformed_response"``; shows up in unscored reasons and counters.
        status: the HTTP status, when there was one.
        retry_after: seconds the server asked us to wait (``Retry-After``), if it said.
    """

    def __init__(
        self, message: str, *, kind: str = "server_error", status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after


class FatalError(JudgeError):
    """A failure that stops the run: retrying would repeat it (or cost money for nothing)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class CacheMissError(FatalError):
    """Replay-only mode met a request that is not in the cache."""


class DeferredError(JudgeError):
    """The answer to this request will come from a provider batch, not from a call now."""


class RequestFailedError(JudgeError):
    """The request failed for good (after the retry limit); the message is the row's reason."""
