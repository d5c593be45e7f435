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


ORACLES = Path(__file__).resolve().parents[1] / "_helpers" / "reference"


def _respeval_imports(tree: ast.AST) -> set[str]:
    return {m for m in _imported_modules(tree) if m == "respeval" or m.startswith("respeval.")}


def test_the_test_oracles_are_not_in_the_package():
    """The oracles (slow readable re-statements of the peers) are tests: they live under
    ``tests/_helpers/reference``, not in the wheel (which ships every file under src/respeval)."""
    assert [p for p in SRC.rglob("*") if p.name.startswith("_reference")] == []
    assert {p.name for p in ORACLES.glob("*.py")} >= {"bleu.py", "chrf.py", "rouge.py", "squad.py", "ter.py"}


def test_the_oracles_share_no_code_with_the_product():
    """An oracle that imports respeval's arithmetic or tokenizers agrees with the product by
    construction; they use their own, or the peers' (sacreBLEU, NLTK's Porter stemmer)."""
    offenders = {
        path.name: sorted(_respeval_imports(ast.parse(path.read_text(encoding="utf-8"))))
        for path in sorted(ORACLES.glob("*.py"))
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_layout_checks_can_fail():
    """The import walk sees every spelling of an import of respeval, at any depth."""
    for text in (
        "from respeval.metrics.sacrebleu_scores import compute_bleu",
        "import respeval.tokenizers.porter",
        "from respeval import tokenizers",
        "def f():\n    from respeval.tokenizers.tercom import tercom_normalize",
    ):
        assert _respeval_imports(ast.parse(text)), text
    assert not _respeval_imports(ast.parse("from sacrebleu.tokenizers import tokenizer_13a\nimport respevalx"))
