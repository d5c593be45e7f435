"""The one place that decides which implementation of the kernels runs.

``RESPEVAL_IMPLEMENTATION`` = ``auto`` (default: the compiled core when it is
built, else the pure-Python reference), ``native`` (the compiled core, or an
ImportError) or ``python`` (the reference).  Tests and benchmarks pass
``implementation=`` explicitly to run both side by side.
"""

from __future__ import annotations

import os
from types import ModuleType

IMPLEMENTATIONS = ("native", "python")


def _load_native() -> ModuleType:
    from respeval import _core

    return _core


def _load_python() -> ModuleType:
    from respeval._reference import rouge

    return rouge


def native_available() -> bool:
    try:
        _load_native()
    except ImportError:
        return False
    return True


def get(implementation: str | None = None) -> ModuleType:
    """The kernel module for ``implementation`` (None = the environment's choice)."""
    choice = (implementation or os.environ.get("RESPEVAL_IMPLEMENTATION") or "auto").lower()
    if choice == "native":
        return _load_native()
    if choice == "python":
        return _load_python()
    if choice == "auto":
        try:
            return _load_native()
        except ImportError:
            return _load_python()
    raise ValueError(f"RESPEVAL_IMPLEMENTATION must be auto, native or python, not {choice!r}")


def name(implementation: str | None = None) -> str:
    """``"native"`` or ``"python"``: what ``get(implementation)`` resolves to."""
    return "native" if get(implementation).__name__ == "respeval._core" else "python"
