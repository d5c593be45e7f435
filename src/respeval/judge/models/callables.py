"""Any async (or plain) Python callable as a judge model: ``python:module:function``."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Union

from respeval._sandbox import NotPlain, describe_exception, stdout_to_stderr, to_plain
from respeval.fingerprint import CodeFingerprint, code_fingerprint, process_token
from respeval.judge.errors import FatalError, JudgeError
from respeval.judge.models.base import BaseJudgeModel, Capabilities, Completion, JudgeRequest

__all__ = ["CallableModel", "JudgeFunction", "as_completion"]

JudgeResult = Union[str, Completion, Mapping[str, Any]]
JudgeFunction = Callable[[JudgeRequest], JudgeResult | Awaitable[JudgeResult]]


def as_completion(result: Any, where: str) -> Completion:
    """A callable's return value as a Completion: a Completion as is, a string as the reply
    text, a mapping as a structured reply (its JSON is the text)."""
    if isinstance(result, Completion):
        return result
    if isinstance(result, str):
        return Completion(text=result)
    if isinstance(result, Mapping):
        try:
            structured = to_plain(result)
            text = json.dumps(structured)
        except (NotPlain, ValueError) as exc:  # an object, or an integer too long to write
            raise FatalError(f"{where} returned a mapping that is not JSON data ({exc})") from None
        except Exception as exc:  # noqa: BLE001 - reading the mapping ran its own code
            raise FatalError(f"{where} returned a mapping that could not be read: {describe_exception(exc)}") from None
        return Completion(text=text, structured=structured)
    raise FatalError(f"{where} returned {type(result).__name__}; expected str, a mapping or a Completion")


class CallableModel(BaseJudgeModel):
    """Wraps ``fn(request)`` (sync or async) returning a string, a mapping or a Completion.

    ``fn`` may raise :class:`~respeval.judge.errors.TransientError` to be retried or
    :class:`~respeval.judge.errors.FatalError` to stop the run; any other exception is a bug
    in the judge and stops the run too (retrying a bug would only repeat it).

    Cached answers are keyed by the function's code fingerprint (its module, the project
    files it imports, the installed packages' versions: :mod:`respeval.fingerprint`), so an
    edited function is asked again.  ``version`` replaces the code in the key: bump it when
    the behaviour changes (``python:module:function@VERSION`` on the command line).  Code
    that cannot be fingerprinted (a built-in, source not in a file) and has no version is
    cached for this process only (``code`` says why).

    It runs in this process, unsandboxed (it is how a judge reaches your own model, network
    included); ``SystemExit`` stops the run too, and what it prints goes to stderr.
    """

    provider = "python"

    def __init__(
        self, fn: JudgeFunction, *, name: str | None = None, version: str = "", capabilities: Capabilities | None = None
    ) -> None:
        label = name or f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
        super().__init__(
            label, capabilities=capabilities or Capabilities(temperature=True, seed=True, json_schema=True)
        )
        self._fn = fn
        self._version = version
        self.code: CodeFingerprint = code_fingerprint(fn, version=version or None)
        """What the cache key holds of the function: its code's fingerprint, or why there is none."""

    def _identity_extra(self) -> dict[str, Any]:
        code = self.code.digest if self.code.proven else f"this-process-only:{process_token(self._fn)}"
        return {"version": self._version, "code": code}

    async def generate(self, request: JudgeRequest) -> Completion:
        try:
            with stdout_to_stderr():  # what it prints never reaches the command's result stream
                result = self._fn(request)
                if inspect.isawaitable(result):
                    result = await result
        except (JudgeError, KeyboardInterrupt, asyncio.CancelledError):
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: a bug stops the run, with its name
            raise FatalError(f"judge function {self.name} {describe_exception(exc)}") from exc
        return as_completion(result, f"judge function {self.name}")
