"""The transports the HTTP adapters talk through, one module each (httpx's habit), and the
choice of one when none is injected.

Adapters call an ``httpx.AsyncBaseTransport`` directly (``handle_async_request``), not an
``httpx.AsyncClient``: a judge call needs none of the client's cookies, redirects or auth
flows, and on a 2-core machine the client layer alone costs ~0.3 ms per request, a third of
the engine's budget at 1,000 rows/s.  The transport stays injectable (tests pass
``httpx.MockTransport``), as in httpx.

* :mod:`~respeval.judge.models._transports.http11`: :class:`LoopbackTransport`, the default
  for ``http://`` base URLs on a loopback host;
* :mod:`~respeval.judge.models._transports.sharded`: :class:`ShardedTransport`, httpx's own
  pools for everything else (https, remote hosts, proxies);
* :mod:`~respeval.judge.models._transports.base`: :class:`PostTransport`, what the adapters'
  JSON POST needs of a transport, and the wrapper that gives it to any httpx transport;
* :mod:`~respeval.judge.models._transports.loops`: :class:`PerLoop`, the transports'
  connections kept per event loop and closed as their loop shuts down (a synchronous run
  ends its own loop: an injected transport leaves no connection behind on it).
"""

from __future__ import annotations

import ipaddress
import urllib.request

import httpx

from respeval.judge.models._transports.base import HttpxPost, PostTransport, RawResponse, post_transport
from respeval.judge.models._transports.http11 import LoopbackTransport
from respeval.judge.models._transports.sharded import ShardedTransport

__all__ = [
    "HttpxPost",
    "LoopbackTransport",
    "PostTransport",
    "RawResponse",
    "ShardedTransport",
    "default_transport",
    "is_loopback_host",
    "post_transport",
]


def is_loopback_host(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _env_proxy(url: httpx.URL) -> str | None:
    """The proxy the environment asks for (HTTP(S)_PROXY / NO_PROXY), as httpx's client would."""
    if urllib.request.proxy_bypass(url.host):
        return None
    return urllib.request.getproxies().get(url.scheme)


def default_transport(base_url: str, *, max_connections: int = 256) -> httpx.AsyncBaseTransport:
    """The transport an HTTP adapter uses when none is injected: :class:`LoopbackTransport`
    for plain HTTP to a loopback host, else :class:`ShardedTransport` (with the
    environment's proxy)."""
    url = httpx.URL(base_url)
    if url.scheme == "http" and is_loopback_host(url.host):
        return LoopbackTransport()
    return ShardedTransport(max_connections=max_connections, proxy=_env_proxy(url))
