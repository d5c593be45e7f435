"""Running a coroutine from synchronous code, whether or not an event loop is running.

Every synchronous entry point over an async run (``judge.run``, ``run_pairwise``,
``run_gate``, ...) goes through :func:`run_sync`.  ``asyncio.run`` refuses to start inside a
running loop (a Jupyter notebook, an async web app), and nest_asyncio patches the loop for
the whole process; a helper thread with a loop of its own needs neither.  A leaf module: it
imports nothing from respeval.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T], *, thread_name: str = "respeval") -> T:
    """Run ``coro`` to completion and return its result (or raise its exception).

    Without a running event loop in this thread this is ``asyncio.run(coro)``.  Inside one,
    the coroutine runs on a helper thread with its own loop, and this call blocks until it
    is done, as any synchronous call would: the caller's loop is not re-entered, so nothing
    of the caller's (tasks, contextvars set later) leaks into the run.  In async code,
    ``await`` the coroutine instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_unboxed(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name) as pool:
        return pool.submit(_run_unboxed, coro).result()


def _run_unboxed(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, with the result kept out of the main task.

    On leaving, ``asyncio.run`` reads back its SIGINT handler, a partial holding the main
    task; ``signal.getsignal`` fails to make it a ``Handlers`` member and formats the repr of
    that task, result included, into a ValueError it then drops.  For a judge run that is
    the repr of every row, twice: ~5% of a 5,000-row loopback run (benchmarks/judge_profile.py).
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await coro)

    asyncio.run(main())
    return box[0]
