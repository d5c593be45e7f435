"""``module:attribute`` (or ``path/to/file.py:attribute``) -> the object: the one loader behind
every spec that names user code (``python:`` judges and systems, ``adk:`` agents, embedding
callables, custom metrics).  A leaf: imports nothing from respeval."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

__all__ = ["load_target"]


def load_target(target: str, label: str, *, expected: str, files: bool = False, callable_only: bool = True) -> Any:
    """The object ``target`` names; a ValueError starting with ``label`` (how the caller names
    the spec) that says what was expected, what could not be imported or which attribute is
    missing.  Modules are found in the working directory too, as ``python -m`` finds them;
    ``files``: a ``file.py`` before the colon is loaded from that path."""
    module_name, sep, attr = target.rpartition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"{label}: expected {expected}")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        if files and module_name.endswith(".py"):
            spec = importlib.util.spec_from_file_location(os.path.basename(module_name)[:-3], module_name)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load {module_name}")
            obj: Any = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(obj)
        else:
            obj = importlib.import_module(module_name)
    except (ImportError, OSError) as exc:
        raise ValueError(f"{label}: cannot import {module_name}: {exc}") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"{label}: {module_name} has no attribute {attr}") from None
    if callable_only and not callable(obj):
        raise ValueError(f"{label}: {module_name}:{attr} is not callable")
    return obj
