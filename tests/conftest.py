"""Shared fixtures: the implementation switch, seeded randomness, the real corpora."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from respeval import _backend

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def implementations() -> list:
    params = [pytest.param("python", id="python")]
    params.append(pytest.param(
        "native", id="native",
        marks=pytest.mark.skipif(not _backend.native_available(), reason="respeval._core is not built"),
    ))
    return params


@pytest.fixture(params=implementations())
def impl(request) -> str:
    """Runs a test once per implementation (pure-Python reference and native core)."""
    return request.param


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or a clean skip saying what is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real corpus not available: {path} (expected ../shared/data beside the project)")
    return path


@pytest.fixture
def rng(request) -> random.Random:
    """A seeded Random; the seed is printed so a failure can be replayed with RESPEVAL_SEED."""
    seed = int(os.environ.get("RESPEVAL_SEED", "20261129"))
    print(f"seed={seed} (set RESPEVAL_SEED to replay)")
    return random.Random(seed)
