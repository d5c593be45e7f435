"""The house rules that keep the layout honest, checked on the source tree."""

from __future__ import annotations

import ast
from pathlib import Path

import respeval

SRC = Path(respeval.__file__).parent


def _modules() -> list[Path]:
    return [p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts]


def test_no_private_names_imported_across_modules():
    """``from respeval.x import _name`` reaches into another module's internals: shared
    helpers get public names in the module that owns them."""
    offenders = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("respeval"):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        # private *modules* (_core, _backend, _version, ...) are fine to import
                        target = SRC.parent / (node.module.replace(".", "/") + "/" + alias.name)
                        if not (target.with_suffix(".py").exists() or target.is_dir() or alias.name == "_core"):
                            offenders.append(f"{path.relative_to(SRC)}: from {node.module} import {alias.name}")
    assert offenders == []


def _imported_modules(tree: ast.AST) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def test_production_code_never_imports_the_test_oracles():
    """``respeval._reference`` holds slow readable oracles for the tests; the product runs the
    native core or its pure-Python twin."""
    offenders = []
    for path in _modules():
        if "_reference" in path.parts:
            continue
        imported = _imported_modules(ast.parse(path.read_text(encoding="utf-8")))
        if any(m == "respeval._reference" or m.startswith("respeval._reference.") for m in imported):
            offenders.append(str(path.relative_to(SRC)))
    assert offenders == [], "production modules importing _reference: " + ", ".join(offenders)


def test_the_layout_checks_can_fail():
    """The import walk sees every spelling of an import of the oracles."""
    for text in (
        "from respeval._reference import squad",
        "import respeval._reference.ter",
        "from respeval import _reference",
        "def f():\n    from respeval._reference.bleu import compute_bleu",
    ):
        assert any(m.startswith("respeval._reference") for m in _imported_modules(ast.parse(text))), text
