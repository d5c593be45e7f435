"""The installed package is the one we mean to test: the native core is built."""

from __future__ import annotations

import os

import pytest

from respeval import _backend


def test_native_core_is_built():
    """Native tests skip when the core is missing; CI must not pass that way silently."""
    if os.environ.get("RESPEVAL_ALLOW_PURE_PYTHON") == "1":
        pytest.skip("RESPEVAL_ALLOW_PURE_PYTHON=1: pure-Python install accepted")
    assert _backend.native_available(), "respeval._core failed to import: the extension was not built"


def test_core_module_names_and_threads():
    core = pytest.importorskip("respeval._core")
    assert core.rouge_pair_stats.__module__ == "respeval._core"
    assert core.openmp_threads() >= 1


def test_backend_switch(monkeypatch):
    monkeypatch.setenv("RESPEVAL_IMPLEMENTATION", "python")
    assert _backend.name() == "python"
    monkeypatch.setenv("RESPEVAL_IMPLEMENTATION", "bogus")
    with pytest.raises(ValueError, match="auto, native or python"):
        _backend.get()
    if _backend.native_available():
        monkeypatch.setenv("RESPEVAL_IMPLEMENTATION", "native")
        assert _backend.name() == "native"
