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
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name) as pool:
        return pool.submit(asyncio.run, coro).result()
