"""HTTP plumbing shared by the HTTP adapters: the request URL, one JSON POST, any other
request (the batch APIs'), and the decoding of errors (status, Retry-After, the server's
message) into :class:`~respeval.judge.errors.TransientError` / ``FatalError``.

The transports themselves live in :mod:`respeval.judge.models._transports`, one module each;
what a POST needs of one is :class:`~respeval.judge.models._transports.PostTransport`, so
:func:`post_json` never asks which transport it has.
"""

from __future__ import annotations

import email.utils
import json
import os
import time
from collections.abc import Mapping
from typing import Any

import httpx

from respeval.judge.errors import FatalError, JudgeError, TransientError
from respeval.judge.models._transports import PostTransport, default_transport, post_transport
from respeval.judge.models.base import BaseJudgeModel, Capabilities, loads_response
from respeval.redact import redact_url, register_headers, register_secret, register_url_secrets

__all__ = [
    "HttpJudgeModel",
    "api_url",
    "decode_json",
    "error_for_status",
    "json_object",
    "parse_retry_after",
    "post_json",
    "send",
    "send_as",
    "token_count",
    "with_query",
]

# Statuses worth retrying: timeouts, conflicts/too-early, rate limits, server errors, and
# the Cloudflare/Anthropic 52x family (529 = overloaded).
_TRANSIENT = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529})
_BODY_SNIPPET = 300


def api_url(base_url: str, path: str, *, unless_endswith: str | None = None) -> httpx.URL:
    """``base_url`` with ``path`` appended to its path, its query string kept (Azure's
    ``?api-version=``, a proxy's ``?key=``); ``path`` is not appended twice when the base
    path already ends with ``unless_endswith``."""
    url = httpx.URL(base_url)
    base_path = url.path.rstrip("/")
    if unless_endswith is not None and base_path.endswith(unless_endswith):
        path = path[len(unless_endswith) :] if path.startswith(unless_endswith) else path
    return url.copy_with(path=base_path + path)


def with_query(url: httpx.URL, query: str) -> httpx.URL:
    """``url`` with the parameters of ``query`` (``a=1&b=2``) added to its own."""
    params = dict(pair.split("=", 1) for pair in query.split("&") if "=" in pair)
    return url.copy_merge_params(params) if params else url


def token_count(value: Any) -> int:
    """A usage count from a provider's JSON: a non-negative int, else 0 (never a crash)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def parse_retry_after(headers: httpx.Headers, *, now: float | None = None) -> float | None:
    """Seconds to wait, from ``retry-after-ms`` (OpenAI) or ``Retry-After`` (seconds, or an
    HTTP date).  Fractional seconds are accepted; garbage is ignored (None), never a crash."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            value = float(raw_ms) / 1000.0
            if value >= 0 and value == value:
                return value
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        value = float(raw)
        return value if value >= 0 and value == value else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _error_message(body: bytes) -> str:
    """The server's own error message when the body is an OpenAI/Anthropic error object."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        text = body[:_BODY_SNIPPET].decode("utf-8", "replace").strip()
        return text
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return str(err["message"])[:_BODY_SNIPPET]
        if isinstance(err, str):
            return err[:_BODY_SNIPPET]
    return json.dumps(data)[:_BODY_SNIPPET]


def error_for_status(
    status: int, body: bytes, headers: httpx.Headers, *, where: str, auth_hint: str = ""
) -> TransientError | FatalError:
    """The exception for a non-2xx response: transient (retry) or fatal (stop the run)."""
    detail = _error_message(body)
    suffix = f": {detail}" if detail else ""
    if status in _TRANSIENT or status >= 500:
        kind = "rate_limited" if status == 429 else "timeout" if status == 408 else "server_error"
        return TransientError(
            f"HTTP {status} from {where}{suffix}", kind=kind, status=status, retry_after=parse_retry_after(headers)
        )
    hint = ""
    if status in (401, 403):
        hint = f" ({auth_hint})" if auth_hint else ""
    elif status == 404:
        hint = " (check the model name and --base-url)"
    return FatalError(f"HTTP {status} from {where}{suffix}{hint}", status=status)


async def post_json(
    transport: PostTransport,
    url: httpx.URL,
    headers: Mapping[str, str],
    body: bytes,
    *,
    timeout: float | None,
    where: str,
    auth_hint: str = "",
) -> Any:
    """POST a JSON body and return the decoded JSON response.

    Raises TransientError for network trouble, retryable statuses and bodies that are not
    JSON; FatalError for other non-2xx statuses.  Network errors are not chained to the
    httpx exception: it holds the request, with its headers (the key) and URL.
    """
    failure: TransientError | None = None
    try:
        status, raw_headers, content = await transport.post(url, headers, body, timeout)
    except httpx.TimeoutException as exc:
        failure = TransientError(f"timeout talking to {where}: {type(exc).__name__}", kind="timeout")
    except (httpx.TransportError, OSError) as exc:
        failure = TransientError(f"connection error talking to {where}: {type(exc).__name__}: {exc}", kind="connection")
    if failure is not None:
        raise failure  # outside the except block: no __context__ either
    if not 200 <= status < 300:
        raise error_for_status(status, content, httpx.Headers(raw_headers), where=where, auth_hint=auth_hint)
    try:
        return loads_response(content)
    except (ValueError, UnicodeDecodeError):
        snippet = content[:80].decode("utf-8", "replace")
    raise TransientError(
        f"malformed response body from {where} (not JSON): {snippet!r}", kind="malformed_response", status=status
    )


async def send(
    transport: httpx.AsyncBaseTransport,
    method: str,
    url: httpx.URL,
    headers: Mapping[str, str],
    content: bytes = b"",
    *,
    timeout: float | None,
    where: str,
    auth_hint: str = "",
) -> bytes:
    """Any request (a batch API's GET, a file upload, a download); the 2xx response body.

    Errors are those of :func:`post_json`.  Slower than its fast path (real httpx objects),
    which does not matter for the handful of calls a provider batch makes.
    """
    failure: TransientError | None = None
    try:
        request = httpx.Request(
            method, url, headers=headers, content=content, extensions={"timeout": httpx.Timeout(timeout).as_dict()}
        )
        response = await transport.handle_async_request(request)
        try:
            body = await response.aread()
        finally:
            await response.aclose()
    except httpx.TimeoutException as exc:
        failure = TransientError(f"timeout talking to {where}: {type(exc).__name__}", kind="timeout")
    except (httpx.TransportError, OSError) as exc:
        failure = TransientError(f"connection error talking to {where}: {type(exc).__name__}: {exc}", kind="connection")
    if failure is not None:
        raise failure  # outside the except block: no __context__ (the request holds the key)
    if not 200 <= response.status_code < 300:
        raise error_for_status(response.status_code, body, response.headers, where=where, auth_hint=auth_hint)
    return body


async def send_as(
    model: HttpJudgeModel,
    method: str,
    url: httpx.URL,
    headers: Mapping[str, str],
    content: bytes = b"",
    *,
    timeout: float | None,
    where: str,
) -> bytes:
    """:func:`send` through ``model``'s transport, with its hint on a refused key (a batch
    API's calls go where the model's own calls go)."""
    return await send(
        model.transport,
        method,
        url,
        headers,
        content,
        timeout=timeout,
        where=where,
        auth_hint=model.auth_hint(),
    )


def decode_json(content: bytes, where: str) -> Any:
    """A response body as JSON; a body that is not JSON is a transient fault (a proxy's page)."""
    try:
        return loads_response(content)
    except (ValueError, UnicodeDecodeError):
        snippet = content[:80].decode("utf-8", "replace")
    raise TransientError(f"malformed response body from {where} (not JSON): {snippet!r}", kind="malformed_response")


def json_object(content: bytes, where: str) -> dict[str, Any]:
    """:func:`decode_json` of a reply that must be a JSON object (else a transient fault)."""
    data = decode_json(content, where)
    if not isinstance(data, dict):
        raise TransientError(f"malformed response from {where}: expected an object", kind="malformed_response")
    return data


class HttpJudgeModel(BaseJudgeModel):
    """What the HTTP adapters share: the URL, the key, the transport and the secrets.

    * ``base_url`` + ``path`` is the URL called (its query string kept); the endpoint in
      the identity, the cache and every message is the base URL without its credentials,
      and those credentials (``user:password@``, ``?api_key=``) are registered with
      :mod:`respeval.redact`, as are credential-named ``headers``.
    * The key is read from ``$api_key_env`` at each call (replay-only runs need none) and
      registered before it is sent.
    * The transport is the injected one (the caller's: never closed here; respeval's own
      transports close a loop's connections as that loop shuts down, so a synchronous run
      leaves none behind) or :func:`~respeval.judge.models._transports.default_transport`
      (opened on first use, closed with the model).
    """

    def __init__(
        self,
        name: str,
        *,
        base_url: str,
        path: str,
        api_key_env: str,
        capabilities: Capabilities,
        transport: httpx.AsyncBaseTransport | None,
        timeout: float | None,
        headers: Mapping[str, str] | None,
        unless_endswith: str | None = None,
    ) -> None:
        base = base_url.rstrip("/")
        super().__init__(name, endpoint=redact_url(base), capabilities=capabilities)
        self._base = base
        register_url_secrets(base)
        register_headers(headers or {})
        self._url = api_url(base, path, unless_endswith=unless_endswith)
        self._api_key_env = api_key_env
        self._injected = transport
        self._transport: httpx.AsyncBaseTransport | None = None
        self._poster: PostTransport | None = None
        self._timeout = timeout
        self._extra_headers = dict(headers or {})

    async def _open(self) -> None:
        self._transport = self._injected or default_transport(str(self._url))
        self._poster = post_transport(self._transport)

    async def _close(self) -> None:
        # An injected transport belongs to the caller, as in httpx.
        if self._transport is not None and self._transport is not self._injected:
            await self._transport.aclose()
        self._transport = None
        self._poster = None

    default_headers: Mapping[str, str] = {"content-type": "application/json"}
    """The headers every call sends (an adapter adds its own, e.g. an API version)."""

    def auth_headers(self) -> dict[str, str]:
        """The header(s) carrying the key; none when the key variable is unset (override)."""
        return {}

    def request_headers(self) -> dict[str, str]:
        """Every header of a call: the defaults, the model's extra headers, the key (the
        batch clients send the same)."""
        return {**self.default_headers, **self._extra_headers, **self.auth_headers()}

    def auth_hint(self) -> str:
        """What a 401/403 means: a wrong key, or none sent."""
        env = self._api_key_env
        return f"check the key in ${env}" if os.environ.get(env) else f"no API key was sent: ${env} is not set"

    @property
    def base_url(self) -> str:
        """The API root as given (it may hold credentials: never print it; ``endpoint`` is
        the scrubbed one)."""
        return self._base

    @property
    def transport(self) -> httpx.AsyncBaseTransport:
        """The open transport (the batch clients share it)."""
        if self._transport is None:
            raise JudgeError(f"{self.model_id} is not open: use it inside 'async with model'")
        return self._transport

    def api_key(self) -> str | None:
        """The key to send (registered as a secret), or None when the variable is unset."""
        key = os.environ.get(self._api_key_env)
        if not key:
            return None
        register_secret(key)
        return key

    async def post(self, body: Mapping[str, Any], *, defaults: Mapping[str, str], auth: Mapping[str, str]) -> Any:
        """POST ``body`` as JSON (see :func:`post_json`) with the ``defaults`` headers, the
        model's extra headers over them and the ``auth`` header(s) last; a 401/403 names the
        key variable."""
        await self._ensure_open()
        assert self._poster is not None
        env = self._api_key_env
        hint = f"check the key in ${env}" if auth else f"no API key was sent: ${env} is not set"
        return await post_json(
            self._poster,
            self._url,
            {**defaults, **self._extra_headers, **auth},
            json.dumps(body).encode(),
            timeout=self._timeout,
            where=self.endpoint,
            auth_hint=hint,
        )
