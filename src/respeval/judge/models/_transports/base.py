"""What the adapters' one POST needs of a transport: :class:`PostTransport`.

A judge call is one JSON POST; building httpx Request and Response objects for it costs
~100 µs of CPU, a fifth of the engine's budget at 1,000 rows/s.  A transport that can do the
exchange on bytes (:class:`~respeval.judge.models._transports.http11.LoopbackTransport`)
implements ``post`` itself; any other ``httpx.AsyncBaseTransport`` (httpx's pools,
``httpx.MockTransport`` in tests, a user's own) is wrapped in :class:`HttpxPost`, which does
the same exchange with real httpx objects.  Errors are httpx's exceptions either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

import httpx

__all__ = ["HttpxPost", "PostTransport", "RawResponse", "post_transport"]

RawResponse = tuple[int, list[tuple[bytes, bytes]], bytes]
"""Status, raw headers, body."""


@runtime_checkable
class PostTransport(Protocol):
    """A transport that POSTs bytes and answers with :data:`RawResponse`."""

    async def post(
        self, url: httpx.URL, headers: Mapping[str, str], body: bytes, timeout: float | None
    ) -> RawResponse: ...


class HttpxPost:
    """:class:`PostTransport` over any ``httpx.AsyncBaseTransport``."""

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self.transport = transport

    async def post(self, url: httpx.URL, headers: Mapping[str, str], body: bytes, timeout: float | None) -> RawResponse:
        request = httpx.Request(
            "POST", url, headers=headers, content=body, extensions={"timeout": httpx.Timeout(timeout).as_dict()}
        )
        response = await self.transport.handle_async_request(request)
        try:
            content = await response.aread()
        finally:
            await response.aclose()
        return response.status_code, response.headers.raw, content


def post_transport(transport: httpx.AsyncBaseTransport) -> PostTransport:
    """``transport`` itself when it implements :class:`PostTransport`, else :class:`HttpxPost`
    around it (decided once, when a model opens its transport)."""
    return transport if isinstance(transport, PostTransport) else HttpxPost(transport)
