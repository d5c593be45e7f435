"""A Python function as a system under test: ``python:package.module:function``.

The function is called with the contract's request object (a dict:
:func:`respeval.systems.base.contract_request`) and returns a string or the contract's
reply object (:func:`respeval.systems.base.contract_reply`); it may be ``async``.

* In process (:class:`SystemFunction`, the default): it runs in this process, as a judge
  function does (:class:`respeval.judge.CallableModel`: its answers are cached by its code's
  fingerprint, or by ``@VERSION``; what it prints goes to stderr).  An exception it raises
  fails its row with the exception as the reason, and the other rows run.
* Isolated (:class:`IsolatedFunction`, ``isolation="process"``): it runs in the sandboxed
  worker processes of custom metrics (:class:`respeval.evaluate.isolation.WorkerPool`: a
  fresh interpreter, no API keys in its environment, no network unless allowed, a time and
  a memory limit); calls made at the same time go to the workers together.  It must be a
  plain (not ``async``) module-level function.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from respeval._sandbox import describe_exception, stdout_to_stderr
from respeval.evaluate.isolation import Limits, WorkerPool
from respeval.fingerprint import CodeFingerprint, code_fingerprint, process_token
from respeval.judge.errors import FatalError, JudgeError, RequestFailedError
from respeval.judge.models import CallableModel
from respeval.judge.models.base import BaseJudgeModel, Capabilities, Completion, JudgeRequest
from respeval.systems.base import contract_reply, contract_request

__all__ = ["IsolatedFunction", "SystemFunction"]

_CAPABILITIES = Capabilities(temperature=True, seed=True, tools=True)


class SystemFunction(CallableModel):
    """``fn(request: dict) -> str | dict`` (sync or async), in this process."""

    provider = "python"

    def __init__(self, fn: Callable[[dict[str, Any]], Any], *, name: str | None = None, version: str = "") -> None:
        super().__init__(fn, name=name, version=version, capabilities=_CAPABILITIES)  # type: ignore[arg-type]

    def _identity_extra(self) -> dict[str, Any]:
        return {**super()._identity_extra(), "contract": "agent-contract/1"}

    async def generate(self, request: JudgeRequest) -> Completion:
        payload = contract_request(request)
        try:
            with stdout_to_stderr():  # what it prints never reaches the command's result stream
                result = self._fn(payload)  # type: ignore[arg-type]  # the contract's dict, not a JudgeRequest
                if inspect.isawaitable(result):
                    result = await result
        except (JudgeError, KeyboardInterrupt, asyncio.CancelledError):
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: this row fails with the reason
            raise RequestFailedError(f"system function {self.name} {describe_exception(exc)}") from None
        return contract_reply(result, f"system function {self.name}")


class IsolatedFunction(BaseJudgeModel):
    """``fn(request: dict) -> str | dict`` in sandboxed worker processes (module docstring).

    Args:
        fn: a module-level function (a fresh interpreter imports it by name).
        name, version: as for :class:`SystemFunction`.
        workers: worker processes; timeout (seconds per call), memory_mb, network, env, read:
            the sandbox's :class:`~respeval.evaluate.isolation.Limits`.
    """

    provider = "python"

    def __init__(
        self,
        fn: Callable[[dict[str, Any]], Any],
        *,
        name: str | None = None,
        version: str = "",
        workers: int = 2,
        timeout: float | None = 60.0,
        memory_mb: int | None = 1536,
        network: bool = False,
        env: tuple[str, ...] = (),
        read: tuple[str, ...] = (),
    ) -> None:
        if inspect.iscoroutinefunction(fn):
            raise ValueError(
                f"{name or fn!r}: an async function cannot run isolated (the sandbox's workers call plain "
                "functions); make it a plain function or run it in process"
            )
        label = name or f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
        super().__init__(label, capabilities=_CAPABILITIES)
        self._fn = fn
        self._version = version
        self.limits = Limits(timeout=timeout, memory_mb=memory_mb, network=network, env=env, read=read)
        self._workers = workers
        self.code: CodeFingerprint = code_fingerprint(fn, version=version or None)
        self._pool: WorkerPool | None = None
        self._queue: list[tuple[dict[str, Any], asyncio.Future[tuple[bool, Any]]]] = []
        self._runner: asyncio.Task[None] | None = None

    def _identity_extra(self) -> dict[str, Any]:
        code = self.code.digest if self.code.proven else f"this-process-only:{process_token(self._fn)}"
        return {"version": self._version, "code": code, "contract": "agent-contract/1", "isolation": "process"}

    async def _open(self) -> None:
        try:
            self._pool = WorkerPool(self._fn, self.limits, workers=self._workers, batch=1)
        except ValueError as exc:  # not importable by name, no sandbox here
            raise FatalError(f"system function {self.name}: {exc}") from None

    async def _close(self) -> None:
        if self._runner is not None:
            await asyncio.gather(self._runner, return_exceptions=True)
            self._runner = None
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await asyncio.to_thread(pool.close)

    async def generate(self, request: JudgeRequest) -> Completion:
        await self._ensure_open()
        future: asyncio.Future[tuple[bool, Any]] = asyncio.get_running_loop().create_future()
        self._queue.append((contract_request(request), future))
        if self._runner is None or self._runner.done():
            self._runner = asyncio.ensure_future(self._drain())
        ok, value = await future
        if not ok:
            raise RequestFailedError(f"system function {self.name} (isolated) {value}")
        return contract_reply(value, f"system function {self.name}")

    async def _drain(self) -> None:
        """Send what is queued to the workers together, one map at a time, until the queue
        is empty (the pool runs in a thread: the event loop goes on meanwhile)."""
        while self._queue:
            await asyncio.sleep(0)  # let the calls started at the same moment join this map
            batch, self._queue = self._queue, []
            pool = self._pool
            try:
                if pool is None:
                    raise FatalError(f"system function {self.name}: the worker pool is closed")
                results = await asyncio.to_thread(pool.map, [payload for payload, _ in batch])
            except Exception as exc:  # noqa: BLE001 - a worker that cannot start (SandboxError) stops the run
                failure = (
                    exc
                    if isinstance(exc, FatalError)
                    else FatalError(f"system function {self.name} cannot run isolated: {describe_exception(exc)}")
                )
                for _, future in batch:
                    if not future.done():
                        future.set_exception(failure)
                continue
            for (_, future), result in zip(batch, results):
                if not future.done():
                    future.set_result(result)
