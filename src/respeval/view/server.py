"""Serving the viewer: uvicorn on a socket bound here (``--port 0``: a free port), so the
address printed is the one listening before the first request can come."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Iterable
from typing import Any

from respeval.view.app import Viewer
from respeval.view.runs import find_runs

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "is_loopback", "serve"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
MISSING = "respeval view needs duckdb and uvicorn: pip install 'respeval[view]'"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _hosts(host: str, port: int) -> list[str] | None:
    """The Host headers a loopback-bound viewer answers; None (any) when bound elsewhere."""
    if not is_loopback(host):
        return None
    names = {host, "localhost", "127.0.0.1", "[::1]"}
    if ":" in host and not host.startswith("["):
        names.add(f"[{host}]")
    return sorted({f"{n}:{port}" for n in names} | names)


def check_dependencies() -> None:
    """Raise ``ValueError`` saying what to install when duckdb or uvicorn is missing."""
    for module in ("duckdb", "uvicorn"):
        try:
            __import__(module)
        except ImportError:
            raise ValueError(f"{MISSING} ({module} is not installed)") from None


def serve(
    paths: Iterable[str | os.PathLike[str]],
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    ready: Callable[[str, Viewer], Any] | None = None,
) -> None:
    """Serve the viewer over the runs under ``paths`` until interrupted; ``ready(url, app)``
    is called once the socket listens."""
    check_dependencies()
    import uvicorn

    runs = find_runs(paths)
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise ValueError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); choose another --port (0: any free port)"
        ) from None
    sock.listen(128)
    bound = sock.getsockname()[1]
    app = Viewer(runs, hosts=_hosts(host.strip("[]"), bound))
    shown = f"[{host.strip('[]')}]" if family == socket.AF_INET6 else host
    url = f"http://{shown}:{bound}/"
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", server_header=False)
    server = uvicorn.Server(config)
    if ready is not None:
        ready(url, app)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
