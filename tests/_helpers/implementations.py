"""The implementations a test runs, in one place: the pure-Python twin always, the native core
when built.  Tests take the ``impl`` fixture (tests/conftest.py) to run once per implementation;
a test comparing the implementations with each other loops over :func:`available`."""

from __future__ import annotations

import pytest

from respeval import _backend

NATIVE_MISSING = "respeval._core is not built"


def params() -> list:
    """One pytest parameter per implementation, the native one skipped when not built."""
    return [
        pytest.param("python", id="python"),
        pytest.param(
            "native", id="native", marks=pytest.mark.skipif(not _backend.native_available(), reason=NATIVE_MISSING)
        ),
    ]


def available() -> list[str]:
    """The implementations this build has, the reference (python) first."""
    return ["python", *(["native"] if _backend.native_available() else [])]
