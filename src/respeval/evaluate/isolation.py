"""Running custom metric functions in worker processes, with limits.

``isolation="process"`` runs a custom function in forked worker processes, each with:

* a **time limit per row** (per call for batch functions; default 60 s): the parent waits for
  each answer with a deadline, and a worker that misses it is killed (SIGKILL) and replaced;
  the row is unscored with ``timed out after 60 s``;
* a **memory limit** (default 1.5 GB): ``RLIMIT_AS`` is set to the worker's size when it
  starts plus the limit, so the function can add at most that much address space; an
  allocation past it raises ``MemoryError`` in the function (the row is unscored with ``out of
  memory``), and a worker that dies instead is replaced;
* **no network**, where the OS allows it.  On Linux the worker leaves the parent's network
  namespace (``unshare(CLONE_NEWNET)``, or ``CLONE_NEWUSER | CLONE_NEWNET`` for an unprivileged
  user where user namespaces are enabled): its only interface is a loopback that is down, so
  every ``connect`` fails with ``ENETUNREACH``, whatever library or C extension makes it.  Where
  that is refused (no privileges, no user namespaces, not Linux), a Python audit hook refuses
  ``socket.connect``, ``socket.bind``, ``socket.sendto``, ``socket.getaddrinfo`` and
  ``socket.sendmsg`` instead (Python code cannot remove an audit hook; a C extension calling
  the OS directly is not stopped by it).  :attr:`WorkerPool.network_guard` says which applied
  (``netns`` or ``audit-hook``); it is written into the metric's signature.

Workers are forked, so the function needs no pickling (lambdas and closures work); rows and
results cross a pipe, pickled.  The pool keeps ``workers`` processes (default: 2) busy with
small batches of rows, so the per-row overhead is a few tens of microseconds.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import resource
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

__all__ = ["DEFAULT_MEMORY_MB", "DEFAULT_TIMEOUT", "Limits", "WorkerPool", "describe_exception", "disable_network"]

DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY_MB = 1536
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_BLOCKED_EVENTS = frozenset(
    {"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo", "socket.gethostbyname"}
)


@dataclass(frozen=True)
class Limits:
    """Per-worker limits: seconds per row (or batch call), megabytes of address space the
    function may add, and whether the network is cut off."""

    timeout: float | None = DEFAULT_TIMEOUT
    memory_mb: int | None = DEFAULT_MEMORY_MB
    network: bool = False


def _unshare(flags: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.unshare(flags)) == 0
    except (OSError, AttributeError):
        return False


def _audit_hook(event: str, args: tuple[Any, ...]) -> None:
    if event in _BLOCKED_EVENTS:
        raise PermissionError(f"network access is disabled for this metric ({event})")


def disable_network() -> str:
    """Cut this process off the network (see the module docstring); returns the mechanism."""
    if _unshare(_CLONE_NEWNET) or _unshare(_CLONE_NEWUSER | _CLONE_NEWNET):
        return "netns"
    sys.addaudithook(_audit_hook)
    return "audit-hook"


def _vm_size() -> int:
    """This process's address space in bytes (Linux), or 0 where it cannot be read."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _apply_limits(limits: Limits) -> str:
    guard = "none"
    if not limits.network:
        guard = disable_network()
    if limits.memory_mb is not None:
        cap = _vm_size() + limits.memory_mb * 1024 * 1024
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        except (ValueError, OSError):
            pass
    return guard


def describe_exception(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return "out of memory (the function went past the memory limit)"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    return f"raised {name}: {text}"[:500] if text else f"raised {name}"


def _worker_main(conn: Connection, fn: Callable[[Any], Any], limits: Limits) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    guard = _apply_limits(limits)
    conn.send(("ready", guard))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        for key, payload in message:
            try:
                value = fn(payload)
                answer = (key, True, value)
            except BaseException as exc:  # noqa: BLE001 - every failure becomes the row's reason
                answer = (key, False, describe_exception(exc))
            try:
                conn.send(answer)
            except Exception as exc:  # noqa: BLE001 - an unpicklable return value
                conn.send((key, False, f"returned {type(answer[2]).__name__}, which cannot be sent back: {exc}"))


class _Worker:
    def __init__(self, ctx: Any, fn: Callable[[Any], Any], limits: Limits) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, fn, limits), daemon=True)
        self.proc.start()
        child.close()
        self.guard = "unknown"
        self.pending: list[Any] = []  # keys sent and not yet answered, in order
        self.deadline = 0.0
        if self.conn.poll(30):
            tag, self.guard = self.conn.recv()

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()


class WorkerPool:
    """Forked workers running ``fn`` on payloads, under :class:`Limits`.

    ``map(payloads)`` returns, in order, ``(True, value)`` or ``(False, reason)`` per payload;
    a payload whose worker hangs, dies or runs out of memory fails alone, and the pool goes on.
    """

    def __init__(self, fn: Callable[[Any], Any], limits: Limits, *, workers: int = 2, batch: int = 32) -> None:
        methods = mp.get_all_start_methods()
        if "fork" not in methods:
            raise ValueError("isolation='process' needs the fork start method (Linux, macOS)")
        self._ctx = mp.get_context("fork")
        self.fn = fn
        self.limits = limits
        self.n_workers = max(1, workers)
        self.batch = max(1, batch)
        self._workers: list[_Worker] = []
        self.network_guard = "none" if limits.network else "pending"
        self.restarts = 0

    def _spawn(self) -> _Worker:
        worker = _Worker(self._ctx, self.fn, self.limits)
        if not self.limits.network:
            self.network_guard = worker.guard
        return worker

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for worker in self._workers:
            try:
                worker.conn.send(None)
            except OSError:
                pass
            worker.proc.join(1)
            worker.kill()
        self._workers = []

    def map(self, payloads: Sequence[Any]) -> list[tuple[bool, Any]]:
        self._payloads = payloads
        self._results: list[tuple[bool, Any] | None] = [None] * len(payloads)
        self._todo = list(range(len(payloads)))
        self._todo.reverse()  # pop() from the end hands out rows in order
        while len(self._workers) < self.n_workers:
            self._workers.append(self._spawn())
        for worker in self._workers:
            self._feed(worker)
        while any(w.pending for w in self._workers):
            busy = [w for w in self._workers if w.pending]
            wait_for = max(0.0, min(w.deadline for w in busy) - time.monotonic())
            ready = wait([w.conn for w in busy], timeout=min(wait_for, 3600.0))
            for worker in busy:
                if worker.conn in ready:
                    try:
                        key, ok, value = worker.conn.recv()
                    except (EOFError, OSError):
                        self._replace(worker, self._death_reason(worker))
                        continue
                    self._results[key] = (ok, value)
                    worker.pending.remove(key)
                    worker.deadline = self._deadline()
                    if not worker.pending:
                        self._feed(worker)
                elif time.monotonic() >= worker.deadline:
                    self._replace(worker, f"timed out after {self.limits.timeout:g} s (the time limit)")
        results = [r if r is not None else (False, "not run") for r in self._results]
        self._payloads, self._results, self._todo = [], [], []
        return results

    def _deadline(self) -> float:
        return time.monotonic() + self.limits.timeout if self.limits.timeout is not None else float("inf")

    def _feed(self, worker: _Worker) -> None:
        keys = [self._todo.pop() for _ in range(min(self.batch, len(self._todo)))]
        if not keys:
            return
        worker.pending = keys
        worker.deadline = self._deadline()
        worker.conn.send([(k, self._payloads[k]) for k in keys])

    def _death_reason(self, worker: _Worker) -> str:
        worker.proc.join(1)
        code = worker.proc.exitcode
        if code is not None and code < 0:
            if -code == signal.SIGKILL:
                return "the worker was killed (SIGKILL: out of memory?)"
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the worker died ({name})"
        return f"the worker exited (status {code})"

    def _replace(self, worker: _Worker, reason: str) -> None:
        """The worker's current row fails with ``reason``; the rows queued behind it go back to
        the queue; a fresh worker takes its place."""
        first, rest = worker.pending[0], worker.pending[1:]
        self._results[first] = (False, reason)
        self._todo.extend(reversed(rest))
        worker.pending = []
        worker.kill()
        self.restarts += 1
        fresh = self._spawn()
        self._workers[self._workers.index(worker)] = fresh
        self._feed(fresh)
