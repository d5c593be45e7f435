"""Adapters: respeval's metrics where people already evaluate.

Each adapter is an optional extra and imports its third-party library only when used.

=============================  ==================================  =====================================
public module                  implementation                      extra (``pip install 'respeval[x]'``)
=============================  ==================================  =====================================
``respeval.hf``                ``_adapters/hf/`` (+ ``modules/``)  none; ``hf`` for ``evaluate.load``
``respeval.duckdb``            ``_adapters/duckdb.py``             ``duckdb``
``respeval.polars``            ``_adapters/polars.py``             ``polars``
``respeval.mlflow``            ``_adapters/mlflow.py``             ``mlflow``
``respeval.otel``              ``_adapters/otel.py``               ``otel``
``respeval.testing`` (pytest)  ``_adapters/pytest_plugin.py``      none (pytest is the host)
=============================  ==================================  =====================================

The public modules are the one import path (they only re-export); the code lives here, one
private module per tool.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from respeval.errors import RespevalError


class MissingExtraError(RespevalError, ImportError):
    """An adapter's third-party library is not installed; the message says which extra to install."""


def require(module: str, extra: str, *, purpose: str) -> ModuleType:
    """Import ``module`` or raise ``MissingExtraError`` naming the extra that brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"{purpose} needs the {module!r} package, which is not installed: pip install 'respeval[{extra}]'"
        ) from exc


__all__ = ["MissingExtraError", "require"]
