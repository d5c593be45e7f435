"""Where the tests find their data: the committed fixtures and the real corpora in ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
# ../shared beside the project, or RESPEVAL_SHARED (a git worktree lives elsewhere)
SHARED = Path(os.environ.get("RESPEVAL_SHARED") or ROOT.parent / "shared")
SHARED_DATA = SHARED / "data"
PEER_SUITES = SHARED / "peer_suites"


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or a clean skip saying what is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real corpus not available: {path} (expected ../shared/data beside the project)")
    return path
