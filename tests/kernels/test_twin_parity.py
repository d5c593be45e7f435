"""The pure-Python twin mirrors the compiled core name for name, and production code
reaches the kernels only through ``_backend`` (never through the test oracles)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import respeval
from respeval import _backend, _core_py

core = pytest.importorskip("respeval._core", reason="respeval._core is not built")

SRC = Path(respeval.__file__).resolve().parent


def _public(module) -> dict[str, object]:
    """Public functions, classes and constants (modules imported by the twin's files aside)."""
    return {n: v for n, v in vars(module).items() if not n.startswith("_") and not inspect.ismodule(v)}


def _params(fn) -> list[tuple[str, object, object]]:
    sig = inspect.signature(fn)
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()]


def test_same_public_functions():
    assert sorted(_public(core)) == sorted(_core_py.__all__)
    assert sorted(_public(_core_py)) == sorted(_core_py.__all__), "the twin re-exports exactly its __all__"


@pytest.mark.parametrize("name", sorted(_core_py.__all__))
def test_same_signature(name):
    native, twin = getattr(core, name), getattr(_core_py, name)
    if not callable(twin):  # a constant: the same value
        assert native == twin, name
    elif isinstance(twin, type):
        members = sorted(m for m in vars(twin) if not m.startswith("_"))  # methods and properties
        assert members == sorted(m for m in dir(native) if not m.startswith("_")), name
        for m in (m for m in members if callable(getattr(twin, m))):
            assert _params(getattr(native, m)) == _params(getattr(twin, m)), f"{name}.{m}"
    else:
        assert _params(native) == _params(twin), name


def test_protocol_lists_every_kernel():
    members = {n for n in [*vars(_backend.Kernels), *_backend.Kernels.__annotations__] if not n.startswith("_")}
    assert members == set(_core_py.__all__)
    vocab_members = {n for n in vars(_backend.VocabLike) if not n.startswith("_")}
    assert vocab_members == {m for m in vars(_core_py.Vocab) if not m.startswith("_")}


def test_backend_resolves_both():
    assert _backend.name("native") == "native" and _backend.get("native") is core
    assert _backend.name("python") == "python" and _backend.get("python") is _core_py


def test_production_code_does_not_probe_the_kernels():
    """Every kernel exists in both implementations, so no call site asks whether it does."""
    offenders = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if "getattr(kernels" in path.read_text(encoding="utf-8")
        or "getattr(_backend.get()" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


ODD_REFERENCES = [  # factories: an iterator is used up by one call
    lambda: "one str",
    lambda: [],
    lambda: [None],
    lambda: [[None, None]],
    lambda: [["a", None, "b"], "c", ("d",), None],
    lambda: [["a", 3]],
    lambda: [5],
    lambda: [{"x": 1}],
    lambda: [iter(["a", "b"])],
    lambda: [["a"], []],
    lambda: (r for r in ["a", ["b", None]]),
]


@pytest.mark.parametrize("case", range(len(ODD_REFERENCES)))
def test_mt_reference_rows_twin_and_core_agree(case):
    def outcome(module):
        try:
            return module.mt_reference_rows(ODD_REFERENCES[case]())
        except (TypeError, ValueError) as exc:
            return type(exc).__name__, str(exc)

    assert outcome(core) == outcome(_core_py)
