"""A lean keep-alive HTTP/1.1 client on asyncio protocols, for plain-HTTP servers beside
the job (vLLM, llama.cpp's server, Ollama, LiteLLM on a loopback address).

httpcore's pool does O(connections) bookkeeping per request, which measured 130-500
requests/s at 64 connections here, against ~3,000 for this one.  It also answers
:meth:`LoopbackTransport.post` without building httpx Request/Response objects (~100 µs of
CPU per call, a fifth of the engine's), which is what :func:`~respeval.judge.models._http.post_json`
uses (see :class:`~respeval.judge.models._transports.base.PostTransport`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

import httpx

from respeval.judge.models._transports.loops import PerLoop

__all__ = ["LoopbackTransport"]

_MAX_HEADER_BYTES = 65536


class _Conn(asyncio.Protocol):
    """One keep-alive connection: a byte buffer plus a future woken by new data or close."""

    def __init__(self) -> None:
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
        # per event loop: a connection only works on the loop that opened it
        self._idle: PerLoop[dict[tuple[str, int], list[_Conn]]] = PerLoop(dict, _abort_all)
        self._max_keepalive = max_keepalive
        # keepalive_expiry stays under uvicorn's 5 s default so that we drop an idle
        # connection before the server does (a race that would look like a dropped request).
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
        """POST ``body`` without httpx Request/Response objects: status, raw headers, body
        (:class:`~respeval.judge.models._transports.base.PostTransport`)."""
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
        idle = (await self._idle.get()).setdefault(key, [])
        conn = self._checkout(idle)
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
        # to the loop's pool of now, not of the checkout: aclose() may have replaced it since
        self._checkin((await self._idle.get()).setdefault(key, []), conn, keep)
        return status, headers, content

    def _checkout(self, idle: list[_Conn]) -> _Conn | None:
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if now - conn.idle_since < self._keepalive_expiry and not conn.closed and not conn.buf:
                return conn
            conn.abort()
        return None

    def _checkin(self, idle: list[_Conn], conn: _Conn, keep: bool) -> None:
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
        """Close the idle connections of the running loop (those of other loops close when
        their loop shuts down); the transport stays usable."""
        await self._idle.aclose()


async def _abort_all(idle: dict[tuple[str, int], list[_Conn]]) -> None:
    for conns in idle.values():
        for conn in conns:
            conn.abort()
    idle.clear()
