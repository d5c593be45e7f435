"""Old spellings of the public API's arguments and values, accepted with a warning.

The front door names one concept one way (``predictions``/``references`` first, ``tokenizer``,
``on_error="fail"|"skip"|"record"``); a name or value a release has replaced keeps working,
with one :class:`DeprecationWarning` per spelling per process.  A leaf: imports nothing from
respeval.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["renamed_arguments", "renamed_value", "warn_once"]

F = TypeVar("F", bound=Callable[..., Any])

_warned: set[str] = set()
_lock = threading.Lock()


def warn_once(key: str, message: str, *, stacklevel: int = 2) -> None:
    """A DeprecationWarning the first time ``key`` is seen in this process."""
    with _lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel + 1)


def renamed_arguments(**renames: str) -> Callable[[F], F]:
    """``@renamed_arguments(hypotheses="predictions")``: the keyword ``hypotheses=`` still
    works, as ``predictions=``, with a warning; passing both is a TypeError.  The signature
    (``inspect.signature``, ``help``) shows the new names only."""

    def decorate(fn: F) -> F:
        # a class's __init__ is called as the class: name it so
        called = fn.__qualname__.removesuffix(".__init__") if fn.__name__ == "__init__" else fn.__name__

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{called}() got both {old}= and its new name {new}=")
                    warn_once(
                        f"{fn.__module__}.{fn.__qualname__}:{old}",
                        f"{called}({old}=...) is now {called}({new}=...)",
                        stacklevel=2,
                    )
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def renamed_value(where: str, argument: str, value: Any, renames: dict[Any, Any]) -> Any:
    """``value`` with an old spelling replaced by its new one (with a warning once)."""
    if isinstance(value, str) and value in renames:
        new = renames[value]
        warn_once(
            f"{where}:{argument}={value}", f"{where}({argument}={value!r}) is now {argument}={new!r}", stacklevel=3
        )
        return new
    return value
