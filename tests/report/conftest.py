"""The headless browser the report tests share (one per module)."""

from __future__ import annotations

import pytest

from _helpers.browser import DevTools, chromium


@pytest.fixture(scope="module")
def browser():
    devtools = DevTools(chromium())
    try:
        yield devtools
    finally:
        devtools.close()
