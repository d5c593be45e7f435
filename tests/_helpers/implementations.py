"""The implementations a test runs: the pure-Python twin always, the native core when built."""

from __future__ import annotations

import pytest

from respeval import _backend

IMPLS = [
    "python",
    pytest.param(
        "native", marks=pytest.mark.skipif(not _backend.native_available(), reason="respeval._core is not built")
    ),
]
