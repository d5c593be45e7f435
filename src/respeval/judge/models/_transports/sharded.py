"""httpx's own transport for everything that is not a plain-HTTP loopback server (https,
remote hosts, proxies), split into small pools."""

from __future__ import annotations

import itertools

import httpx

__all__ = ["ShardedTransport"]


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
