"""HTTP plumbing shared by the HTTP adapters: one POST, error mapping, Retry-After, and the
choice of transport.

Adapters call an ``httpx.AsyncBaseTransport`` directly (``handle_async_request``), not an
``httpx.AsyncClient``: a judge call needs none of the client's cookies, redirects or auth
flows, and on a 2-core machine the client layer alone costs ~0.3 ms per request, a third of
the engine's budget at 1,000 rows/s.  The transport stays injectable (tests pass
``httpx.MockTransport``), as in httpx.

For ``http://`` base URLs on a loopback host (vLLM, llama.cpp's server, Ollama, LiteLLM
running beside the job) the default is :class:`LoopbackTransport`, a small keep-alive
HTTP/1.1 client on asyncio protocols: httpcore's pool does O(connections) bookkeeping per
request, which measured 130-500 requests/s at 64 connections here, against ~3,000 for this
one.  :func:`post_json` also skips building httpx Request/Response objects when it talks to
a LoopbackTransport (another ~100 µs of CPU per call); an injected transport of any other
kind gets real httpx objects.  Everything else (https, remote hosts, proxies) uses httpx's
own ``AsyncHTTPTransport``, split into small pools (:class:`ShardedTransport`).
"""

from __future__ import annotations

import asyncio
import email.utils
import ipaddress
import itertools
import json
import os
import time
import urllib.request
from collections.abc import Mapping
from typing import Any

import httpx

from respeval.judge.errors import FatalError, JudgeError, TransientError
from respeval.judge.models.base import BaseJudgeModel, Capabilities
from respeval.redact import redact_url, register_headers, register_secret, register_url_secrets

__all__ = [
    "HttpJudgeModel",
    "LoopbackTransport",
    "ShardedTransport",
    "api_url",
    "decode_json",
    "default_transport",
    "is_loopback_host",
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
_MAX_HEADER_BYTES = 65536
_BODY_SNIPPET = 300


def is_loopback_host(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


def _env_proxy(url: httpx.URL) -> str | None:
    """The proxy the environment asks for (HTTP(S)_PROXY / NO_PROXY), as httpx's client would."""
    if urllib.request.proxy_bypass(url.host):
        return None
    return urllib.request.getproxies().get(url.scheme)


def default_transport(base_url: str, *, max_connections: int = 256) -> httpx.AsyncBaseTransport:
    """The transport an HTTP adapter uses when none is injected (see the module docstring)."""
    url = httpx.URL(base_url)
    if url.scheme == "http" and is_loopback_host(url.host):
        return LoopbackTransport()
    return ShardedTransport(max_connections=max_connections, proxy=_env_proxy(url))


class ShardedTransport(httpx.AsyncBaseTransport):
    """httpx's ``AsyncHTTPTransport`` split into small pools, used in turn.

    httpcore's pool scans all its connections and queued requests on every request: at 64
    connections one pool cost ~5.5 ms of CPU per request here (~140 requests/s, slower than
    a remote judge at high concurrency); pools of 8 cost ~1.5 ms.  The pools share one TLS
    context (loading the CA bundle once, not once per pool) and the proxy settings.
    """

    def __init__(self, *, max_connections: int = 256, per_pool: int = 8, proxy: str | None = None) -> None:
        pools = max(1, -(-max_connections // per_pool))
        context = httpx.create_ssl_context()
        limits = httpx.Limits(max_connections=per_pool, max_keepalive_connections=per_pool)
        self.pools = [
            httpx.AsyncHTTPTransport(verify=context, limits=limits, proxy=proxy, retries=0) for _ in range(pools)
        ]
        self._turn = itertools.cycle(self.pools)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await next(self._turn).handle_async_request(request)

    async def aclose(self) -> None:
        for pool in self.pools:
            await pool.aclose()


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
    transport: httpx.AsyncBaseTransport,
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
        if isinstance(transport, LoopbackTransport):
            # The default for local servers: the same exchange without building httpx
            # Request/Response objects (~100 µs of CPU per call, a fifth of the engine's).
            status, raw_headers, content = await transport.post(url, headers, body, timeout)
            response_headers = httpx.Headers(raw_headers) if not 200 <= status < 300 else None
        else:
            request = httpx.Request(
                "POST", url, headers=headers, content=body, extensions={"timeout": httpx.Timeout(timeout).as_dict()}
            )
            response = await transport.handle_async_request(request)
            try:
                content = await response.aread()
            finally:
                await response.aclose()
            status, response_headers = response.status_code, response.headers
    except httpx.TimeoutException as exc:
        failure = TransientError(f"timeout talking to {where}: {type(exc).__name__}", kind="timeout")
    except (httpx.TransportError, OSError) as exc:
        failure = TransientError(f"connection error talking to {where}: {type(exc).__name__}: {exc}", kind="connection")
    if failure is not None:
        raise failure  # outside the except block: no __context__ either
    if not 200 <= status < 300:
        raise error_for_status(status, content, response_headers or httpx.Headers(), where=where, auth_hint=auth_hint)
    try:
        return json.loads(content)
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
        return json.loads(content)
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
    * The transport is the injected one (the caller's: never closed here) or
      :func:`default_transport` (opened on first use, closed with the model).
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
        self._timeout = timeout
        self._extra_headers = dict(headers or {})

    async def _open(self) -> None:
        self._transport = self._injected or default_transport(str(self._url))

    async def _close(self) -> None:
        # An injected transport belongs to the caller, as in httpx.
        if self._transport is not None and self._transport is not self._injected:
            await self._transport.aclose()
        self._transport = None

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
        assert self._transport is not None
        env = self._api_key_env
        hint = f"check the key in ${env}" if auth else f"no API key was sent: ${env} is not set"
        return await post_json(
            self._transport,
            self._url,
            {**defaults, **self._extra_headers, **auth},
            json.dumps(body).encode(),
            timeout=self._timeout,
            where=self.endpoint,
            auth_hint=hint,
        )


# --------------------------------------------------------------------------- the transport


class _Conn(asyncio.Protocol):
    """One keep-alive connection: a byte buffer plus a future woken by new data or close."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()  # a connection only works on the loop that opened it
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.waiter: asyncio.Future[None] | None = None
        self.closed = False
        self.idle_since = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self._wake()

    def eof_received(self) -> bool:
        self.closed = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, timeout: float | None) -> None:
        """Wait for more bytes (or close); ReadTimeout after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self.waiter = fut
        # A bare timer instead of asyncio.wait_for: no extra task per read.
        handle = loop.call_later(timeout, _expire, fut) if timeout is not None else None
        try:
            await fut
        finally:
            self.waiter = None
            if handle is not None:
                handle.cancel()

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


def _expire(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_exception(httpx.ReadTimeout("no response data within the read timeout"))


class LoopbackTransport(httpx.AsyncBaseTransport):
    """A lean keep-alive HTTP/1.1 transport for plain-HTTP servers (see the module docstring).

    Supports Content-Length, chunked and read-until-close bodies, ``Connection: close``,
    1xx interim responses, and httpx's timeout extension (connect and read).  Errors are
    raised as the matching httpx exceptions, so callers treat both transports alike.  It
    does not do TLS, proxies or HTTP/2: use httpx's ``AsyncHTTPTransport`` for those.
    """

    def __init__(self, *, max_keepalive: int = 256, keepalive_expiry: float = 4.0) -> None:
        # keepalive_expiry stays under uvicorn's 5 s default so that we drop an idle
        # connection before the server does (a race that would look like a dropped request).
        self._idle: dict[tuple[str, int], list[_Conn]] = {}
        self._max_keepalive = max_keepalive
        self._keepalive_expiry = keepalive_expiry
        self.connections_opened = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme != "http":
            raise httpx.UnsupportedProtocol(f"LoopbackTransport speaks plain http only, not {url.scheme}://")
        timeouts = request.extensions.get("timeout", {})
        await request.aread()
        head = [b"%s %s HTTP/1.1" % (request.method.encode("ascii"), url.raw_path)]
        head.extend(name + b": " + value for name, value in request.headers.raw)
        status, headers, content = await self._exchange(
            (url.host, url.port or 80),
            b"\r\n".join(head) + b"\r\n\r\n" + request.content,
            request.method == "HEAD",
            timeouts.get("connect"),
            timeouts.get("read"),
        )
        return httpx.Response(
            status, headers=headers, content=content, request=request, extensions={"http_version": b"HTTP/1.1"}
        )

    async def post(
        self, url: httpx.URL, headers: Mapping[str, str], body: bytes, timeout: float | None
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """POST ``body`` (the fast path of :func:`post_json`): status, raw headers, body."""
        if url.scheme != "http":
            raise httpx.UnsupportedProtocol(f"LoopbackTransport speaks plain http only, not {url.scheme}://")
        port = url.port or 80
        host = b"[%s]" % url.raw_host if b":" in url.raw_host else url.raw_host  # IPv6 literal
        lines = [b"POST %s HTTP/1.1" % url.raw_path, b"Host: %s:%d" % (host, port), b"Content-Length: %d" % len(body)]
        lines.extend(f"{name}: {value}".encode("latin-1") for name, value in headers.items())
        return await self._exchange((url.host, port), b"\r\n".join(lines) + b"\r\n\r\n" + body, False, timeout, timeout)

    async def _exchange(
        self,
        key: tuple[str, int],
        payload: bytes,
        head_only: bool,
        connect_timeout: float | None,
        read_timeout: float | None,
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        conn = self._checkout(key)
        if conn is None:
            conn = await self._connect(key, connect_timeout)
        done = False
        try:
            if conn.closed or conn.transport is None:
                raise httpx.RemoteProtocolError("connection closed before the request was sent")
            try:
                conn.transport.write(payload)
            except (OSError, RuntimeError) as exc:
                raise httpx.WriteError(str(exc)) from exc
            status, headers, content, keep = await self._read_response(conn, head_only, read_timeout)
            done = True
        finally:
            if not done:  # cancelled or failed mid-exchange: the connection state is unknown
                conn.abort()
        self._checkin(key, conn, keep)
        return status, headers, content

    def _checkout(self, key: tuple[str, int]) -> _Conn | None:
        idle = self._idle.get(key)
        if not idle:
            return None
        now = time.monotonic()
        loop = asyncio.get_running_loop()
        while idle:
            conn = idle.pop()
            fresh = now - conn.idle_since < self._keepalive_expiry
            if conn.loop is loop and fresh and not conn.closed and not conn.buf:
                return conn
            if conn.loop is loop:
                conn.abort()
            # else: its loop is gone (a previous asyncio.run); it was closed with it
        return None

    def _checkin(self, key: tuple[str, int], conn: _Conn, keep: bool) -> None:
        idle = self._idle.setdefault(key, [])
        if keep and not conn.closed and not conn.buf and len(idle) < self._max_keepalive:
            conn.idle_since = time.monotonic()
            idle.append(conn)
        else:
            conn.abort()

    async def _connect(self, key: tuple[str, int], timeout: float | None) -> _Conn:
        loop = asyncio.get_running_loop()
        try:
            coro = loop.create_connection(_Conn, key[0], key[1])
            _, conn = await (asyncio.wait_for(coro, timeout) if timeout is not None else coro)
        except asyncio.TimeoutError as exc:
            raise httpx.ConnectTimeout(f"connecting to {key[0]}:{key[1]} timed out") from exc
        except OSError as exc:
            raise httpx.ConnectError(f"cannot connect to {key[0]}:{key[1]}: {exc}") from exc
        self.connections_opened += 1
        return conn

    async def _read_response(
        self, conn: _Conn, head_only: bool, timeout: float | None
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes, bool]:
        while True:  # skip 1xx interim responses
            head = await self._read_head(conn, timeout)
            status, version, headers = self._parse_head(head)
            if not 100 <= status < 200 or status == 101:
                break
        fields = {}
        for name, value in headers:
            fields[name.lower()] = value
        connection = fields.get(b"connection", b"").lower()
        keep = b"close" not in connection if version == b"HTTP/1.1" else b"keep-alive" in connection
        if head_only or status in (204, 304):
            return status, headers, b"", keep
        if b"chunked" in fields.get(b"transfer-encoding", b"").lower():
            body = await self._read_chunked(conn, timeout)
        elif b"content-length" in fields:
            try:
                length = int(fields[b"content-length"])
            except ValueError as exc:
                raise httpx.RemoteProtocolError("invalid Content-Length") from exc
            body = await self._read_exactly(conn, length, timeout)
        else:  # body delimited by the server closing the connection
            while not conn.closed:
                await conn.wait(timeout)
            body = bytes(conn.buf)
            conn.buf.clear()
            keep = False
        return status, headers, body, keep

    @staticmethod
    async def _read_head(conn: _Conn, timeout: float | None) -> bytes:
        start = 0
        while True:
            end = conn.buf.find(b"\r\n\r\n", start)
            if end >= 0:
                head = bytes(conn.buf[:end])
                del conn.buf[: end + 4]
                return head
            if len(conn.buf) > _MAX_HEADER_BYTES:
                raise httpx.RemoteProtocolError("response headers too large")
            if conn.closed:
                raise httpx.RemoteProtocolError("server disconnected without sending a complete response")
            start = max(0, len(conn.buf) - 3)
            await conn.wait(timeout)

    @staticmethod
    def _parse_head(head: bytes) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
            raise httpx.RemoteProtocolError(f"invalid status line {lines[0][:80]!r}")
        try:
            status = int(parts[1])
        except ValueError as exc:
            raise httpx.RemoteProtocolError(f"invalid status line {lines[0][:80]!r}") from exc
        headers = []
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep:
                raise httpx.RemoteProtocolError(f"invalid header line {line[:80]!r}")
            headers.append((name.strip(), value.strip()))
        return status, parts[0], headers

    @staticmethod
    async def _read_exactly(conn: _Conn, n: int, timeout: float | None) -> bytes:
        while len(conn.buf) < n:
            if conn.closed:
                raise httpx.RemoteProtocolError(f"server disconnected after {len(conn.buf)} of {n} body bytes")
            await conn.wait(timeout)
        body = bytes(conn.buf[:n])
        del conn.buf[:n]
        return body

    async def _read_line(self, conn: _Conn, timeout: float | None) -> bytes:
        while True:
            end = conn.buf.find(b"\r\n")
            if end >= 0:
                line = bytes(conn.buf[:end])
                del conn.buf[: end + 2]
                return line
            if conn.closed:
                raise httpx.RemoteProtocolError("server disconnected inside a chunked body")
            await conn.wait(timeout)

    async def _read_chunked(self, conn: _Conn, timeout: float | None) -> bytes:
        chunks: list[bytes] = []
        while True:
            size_line = await self._read_line(conn, timeout)
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError as exc:
                raise httpx.RemoteProtocolError(f"invalid chunk size {size_line[:40]!r}") from exc
            if size == 0:
                while await self._read_line(conn, timeout):  # trailers, up to the empty line
                    pass
                return b"".join(chunks)
            chunks.append(await self._read_exactly(conn, size, timeout))
            if await self._read_exactly(conn, 2, timeout) != b"\r\n":
                raise httpx.RemoteProtocolError("chunk not followed by CRLF")

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for conn in idle:
                conn.abort()
        self._idle.clear()
