"""A transport's connections kept per event loop, and closed while their loop shuts down:
:class:`PerLoop`.

A connection works only on the loop that opened it, and closing a loop does not close the
sockets on it.  A synchronous ``judge.run`` runs its own loop (``asyncio.run``), so the
connections an injected transport opened during the run would outlive the run on a loop
nobody can run again: the caller, who owns the transport, could not close them, and they
would be freed by the garbage collector (a ``ResourceWarning`` each).  ``asyncio.run``, and
every runner that calls ``loop.shutdown_asyncgens()``, closes the async generators still
open on a loop before closing it; :class:`PerLoop` parks one per loop whose ``finally``
closes that loop's connections, after the loop's tasks are done.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Generic, TypeVar

__all__ = ["PerLoop"]

T = TypeVar("T")


class PerLoop(Generic[T]):
    """One state (a transport's connections) per event loop, made on first use in a loop by
    ``make`` and closed by ``close`` when that loop shuts down, or on :meth:`aclose`."""

    def __init__(self, make: Callable[[], T], close: Callable[[T], Awaitable[None]]) -> None:
        self._make = make
        self._close = close
        self._states: dict[asyncio.AbstractEventLoop, tuple[T, AsyncGenerator[None, None]]] = {}

    async def get(self) -> T:
        """The running loop's state."""
        entry = self._states.get(asyncio.get_running_loop())
        if entry is None:
            entry = await self._start()
        return entry[0]

    async def _start(self) -> tuple[T, AsyncGenerator[None, None]]:
        loop = asyncio.get_running_loop()
        # a loop closed without shutting down its async generators left its state here: its
        # connections cannot be closed any more (their loop cannot run), only forgotten
        for stale in [other for other in self._states if other.is_closed()]:
            del self._states[stale]
        state = self._make()
        guard = self._close_at_shutdown(state)
        entry = self._states[loop] = (state, guard)
        await guard.__anext__()  # runs to the yield: the loop now holds the guard
        return entry

    async def _close_at_shutdown(self, state: T) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            # on the state's own loop: its shutdown, or aclose below
            loop = asyncio.get_running_loop()
            if loop in self._states and self._states[loop][0] is state:
                del self._states[loop]
            await self._close(state)

    async def aclose(self) -> None:
        """Close the running loop's state now (the next :meth:`get` makes a new one); the
        states of other loops close with their loops."""
        entry = self._states.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[1].aclose()
