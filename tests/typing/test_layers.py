"""The layers, as the table in docs/architecture.md lists them, against the import graph of
``src/respeval``: no import circle, and no import from a lower layer to a higher one.

The graph has an edge for every import a module can execute: at module level or inside a
function (``TYPE_CHECKING`` blocks included: a type named is a dependency), relative or
absolute, ``importlib.import_module("respeval.x")``, and, in a module that imports a computed
name, every string constant that names a respeval module (the tables such calls read: the
front door's lazy names, the metric families, the CLI's commands).  The compiled core is the
module ``respeval._core``; its Python-level imports are read from ``cext/*.pyx`` and
``cext/*.pxi``.  A package's ``__init__`` running before its modules is Python's load order,
not an import, so it is no edge.

Known upward imports and circles in the layers other work is restructuring are listed below
with the point of issue 29 that removes each; an entry that no longer occurs fails the test,
so the lists can only shrink.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "respeval"
CEXT = ROOT / "cext"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

pytestmark = pytest.mark.skipif(not (SRC.is_dir() and CEXT.is_dir()), reason="needs the source tree")

# (importer, imported) -> why it is still there and what removes it.
ALLOWED_UPWARD = {
    # evaluate runs judge metrics; issue 29 point 3 (one judge.run that resolves batch or live
    # for every method, one report protocol) leaves one entry point for these.  Whether
    # evaluate then sits above the judge in the table is the design's call.
    ("respeval.evaluate", "respeval.judge.methods.predefined"): "issue 29 point 3",
    ("respeval.evaluate", "respeval.judge.methods.templates"): "issue 29 point 3",
    ("respeval.evaluate.plan", "respeval.judge.methods.predefined"): "issue 29 point 3",
    ("respeval.evaluate.plan", "respeval.judge.methods.templates"): "issue 29 point 3",
    ("respeval.evaluate.run", "respeval.judge.batch"): "issue 29 point 3",
    ("respeval.evaluate.run", "respeval.judge.cache"): "issue 29 point 3",
    ("respeval.evaluate.run", "respeval.judge.engine"): "issue 29 point 3",
    ("respeval.evaluate.run", "respeval.judge.methods.pairwise"): "issue 29 point 3",
    ("respeval.evaluate.run", "respeval.judge.methods.sampling"): "issue 29 point 3",
    ("respeval.evaluate.run", "respeval.judge.specs"): "issue 29 point 3",
    ("respeval.evaluate.spec", "respeval.judge.methods.predefined"): "issue 29 point 3",
    ("respeval.evaluate.spec", "respeval.judge.methods.prompts"): "issue 29 point 3",
    ("respeval.evaluate.spec", "respeval.judge.methods.templates"): "issue 29 point 3",
    # evaluate's summary is the judge's results schema; point 7 (one RunSummary base, one
    # status enum, one Spend) moves the shared schema below both
    ("respeval.evaluate.summary", "respeval.report.schema"): "issue 29 point 7",
    ("respeval.agents.report", "respeval.report.schema"): "issue 29 point 7",
    ("respeval.agents.report", "respeval.report.agents"): "issue 29 point 7",
}

# Import circles (each the set of modules it runs through) -> what removes it.
ALLOWED_CIRCLES = {
    # point 5: transports and the providers' batch APIs in their own modules
    frozenset({"respeval.judge.models.openai", "respeval.judge.models.openai_batch"}): "issue 29 point 5",
    frozenset({"respeval.judge.models.anthropic", "respeval.judge.models.anthropic_batch"}): "issue 29 point 5",
    # not in issue 29's list (this test found it: plan.py:106 and spec.py:115 import each other
    # inside functions); evaluate is being restructured under point 2, which should end it
    frozenset({"respeval.evaluate.plan", "respeval.evaluate.spec"}): "issue 29 point 2",
}


# --- the layers, from docs/architecture.md ------------------------------------------------------------


def readme_layers(text: str) -> list[tuple[str, list[str]]]:
    """(layer name, its paths) for each row of the table under "## Architecture", bottom first."""
    section = text.split("# Architecture\n", 1)
    if len(section) != 2:
        raise AssertionError("docs/architecture.md has no '# Architecture' heading")
    layers = []
    in_table = False
    for line in section[1].splitlines():
        if line.startswith("## "):
            break
        if line.startswith("| layer |"):
            in_table = True
            continue
        if in_table:
            if not line.startswith("|"):
                break
            cells = [c.strip() for c in line.strip("|").split("|")]
            if set(cells[0]) <= {"-", ":", " "}:
                continue
            where = cells[1].split("→")[-1] if "→" in cells[1] else cells[1]
            layers.append((cells[0], re.findall(r"`([^`]+)`", where)))
    if not layers:
        raise AssertionError("docs/architecture.md has no '| layer | where | ... |' table")
    return layers


def _room(path: str, package: str) -> str:
    """``io/`` -> ``respeval.io``; ``gate.py`` -> ``respeval.gate``; ``__init__.py`` -> ``respeval``;
    ``_core`` (the compiled module) -> ``respeval._core``."""
    path = path.strip().rstrip("/")
    if path.endswith(".py"):
        path = path[:-3]
    parts = [p for p in path.split("/") if p and p != "__init__"]
    return ".".join([package, *parts])


def layer_index(layers: list[tuple[str, list[str]]], package: str) -> dict[str, int]:
    rooms: dict[str, int] = {}
    for i, (name, paths) in enumerate(layers):
        for path in paths:
            room = _room(path, package)
            if room in rooms:
                raise AssertionError(f"{path} is listed twice ({layers[rooms[room]][0]!r} and {name!r})")
            rooms[room] = i
    return rooms


def layer_of(module: str, rooms: dict[str, int], package: str) -> int | None:
    """The layer of the longest room that holds ``module`` (a package room holds its modules)."""
    if module in rooms:
        return rooms[module]
    best = None
    for room, i in rooms.items():
        if room != package and module.startswith(room + ".") and (best is None or len(room) > len(best[0])):
            best = (room, i)
    return best[1] if best else None


# --- the import graph -------------------------------------------------------------------------


def module_names(src: Path, package: str) -> dict[str, Path]:
    out = {}
    for path in src.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join([package, *parts])] = path
    return out


def _target(name: str, known: set[str]) -> str | None:
    """The module an import of ``name`` executes last: the longest known prefix."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def _dotted_names(tree: ast.AST, package: str) -> set[str]:
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(rf"{re.escape(package)}(\.\w+)+", node.value)
    }


def python_imports(tree: ast.AST, module: str, is_package: bool, package: str) -> set[str]:
    """Dotted names ``module`` imports (``from a import b`` gives ``a.b``: the module ``a.b``
    if there is one, else a name of ``a``; :func:`_target` tells them apart)."""
    here = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()
    computed = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = here.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            out.update(f"{base}.{alias.name}" for alias in node.names)  # a name, or a submodule
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("import_module", "__import__") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    out.add(arg.value)
                else:
                    computed = True
    if computed:
        out |= _dotted_names(tree, package)
    return out


_CYTHON_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)|import[ \t]+([^\n#]+))", re.M
)


def cython_imports(text: str) -> set[str]:
    """Python-level imports of Cython source (``cimport`` lines are C declarations, not imports)."""
    out: set[str] = set()
    for match in _CYTHON_IMPORT.finditer(text):
        module, names, plain = match.groups()
        if module:
            for name in names.strip("() \n").split(","):
                name = name.split(" as ")[0].strip()
                if name:
                    out.add(module if name == "*" else f"{module}.{name}")
        else:
            out.update(n.split(" as ")[0].strip() for n in plain.split(","))
    return out


def import_graph(src: Path, cext: Path | None, package: str) -> dict[str, set[str]]:
    """module -> the package's modules it imports (the compiled core: ``<package>._core``)."""
    files = module_names(src, package)
    native = f"{package}._core"
    known = set(files) | {native}
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        names = python_imports(tree, module, path.name == "__init__.py", package)
        graph[module] = {t for n in names if (t := _target(n, known)) and t != module}
    if cext is not None:
        names = set()
        for path in sorted([*cext.glob("*.pyx"), *cext.glob("*.pxi")]):
            names |= cython_imports(path.read_text(encoding="utf-8"))
        graph[native] = {t for n in names if (t := _target(n, known)) and t != native}
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The graph's strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def upward_imports(graph, layers, package: str) -> list[tuple[str, str, str, str]]:
    """(importer, its layer, imported, its layer) for every import of a higher layer."""
    rooms = layer_index(layers, package)
    out = []
    for module, targets in sorted(graph.items()):
        mine = layer_of(module, rooms, package)
        for target in sorted(targets):
            theirs = layer_of(target, rooms, package)
            if mine is not None and theirs is not None and theirs > mine:
                out.append((module, layers[mine][0], target, layers[theirs][0]))
    return out


def unplaced(graph, layers, package: str) -> list[str]:
    rooms = layer_index(layers, package)
    return sorted(m for m in graph if layer_of(m, rooms, package) is None)


# --- the checks on respeval -------------------------------------------------------------------


@pytest.fixture(scope="module")
def layers():
    return readme_layers(ARCHITECTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def graph():
    return import_graph(SRC, CEXT, "respeval")


def test_the_readme_lists_the_layers_bottom_first(layers):
    names = [name for name, _ in layers]
    assert names[:2] == ["leaves", "native kernels"] and names[-1] == "edges", names
    assert len(names) == len(set(names)), names


def test_every_module_has_a_layer(graph, layers):
    assert unplaced(graph, layers, "respeval") == [], "add them to the table in docs/architecture.md"


def test_no_import_circle(graph):
    found = set(circles(graph))
    new = [sorted(c) for c in found - set(ALLOWED_CIRCLES)]
    assert new == [], "import circles"
    gone = [sorted(c) for c in set(ALLOWED_CIRCLES) - found]
    assert gone == [], "these circles are gone: remove them from ALLOWED_CIRCLES"


def test_no_import_from_a_lower_layer_to_a_higher_one(graph, layers):
    found = {(m, t): f"{m} ({lm}) imports {t} ({lt})" for m, lm, t, lt in upward_imports(graph, layers, "respeval")}
    new = [why for edge, why in found.items() if edge not in ALLOWED_UPWARD]
    assert new == [], "upward imports"
    gone = sorted(set(ALLOWED_UPWARD) - set(found))
    assert gone == [], "these imports are gone: remove them from ALLOWED_UPWARD"


def test_the_core_and_the_twin_import_only_leaves(graph, layers):
    """The bottom, stated on its own: what ``_core`` and ``_core_py`` import is the kernels,
    the leaves or the twin itself, and nothing imports the twin but ``_backend`` (and the
    twin's own modules)."""
    rooms = layer_index(layers, "respeval")
    bottom = {rooms["respeval._core"], rooms["respeval.limits"], rooms["respeval._core_py"]}
    for module, targets in graph.items():
        if module == "respeval._core" or module.startswith("respeval._core_py"):
            assert {t for t in targets if layer_of(t, rooms, "respeval") not in bottom} == set(), module
    assert "respeval._core_py" not in {t.rpartition(".")[0] for t in graph["respeval._core"]} | graph["respeval._core"]
    users = {
        m
        for m, targets in graph.items()
        for t in targets
        if t == "respeval._core_py" or t.startswith("respeval._core_py.")
    }
    assert {m for m in users if not m.startswith("respeval._core_py")} == {"respeval._backend"}


_LOADED = """
import importlib.util, json, sys, types
spec = importlib.util.find_spec("respeval")
bare = types.ModuleType("respeval")  # the package without its front door, which loads the metrics
bare.__path__ = list(spec.submodule_search_locations)
sys.modules["respeval"] = bare
import {module}
print(json.dumps(sorted(m for m in sys.modules if m.startswith("respeval."))))
"""


@pytest.mark.parametrize("module", ["respeval._core", "respeval._core_py"])
def test_loading_the_bottom_loads_nothing_above_it(module, layers):
    """At run time too: importing the compiled core (or the twin) loads only leaves and
    itself, and the packages around them (a package's ``__init__`` loads before its
    modules; ``tokenizers/__init__.py`` imports nothing)."""
    if module == "respeval._core":
        pytest.importorskip("respeval._core", reason="respeval._core is not built")
    done = subprocess.run(
        [sys.executable, "-c", _LOADED.format(module=module)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    import json

    loaded = json.loads(done.stdout.splitlines()[-1])
    rooms = layer_index(layers, "respeval")
    allowed = {rooms["respeval._core"], rooms["respeval.limits"], rooms["respeval._core_py"]}
    parents = {m.rsplit(".", k)[0] for m in loaded for k in range(1, m.count("."))}
    above = [
        m
        for m in loaded
        if m != "respeval._cyutility" and m not in parents and layer_of(m, rooms, "respeval") not in allowed
    ]
    assert above == [], f"importing {module} loads modules above the bottom layers"
    assert module == "respeval._core_py" or not any(m.startswith("respeval._core_py") for m in loaded)


# --- the checks can fail ----------------------------------------------------------------------

_TABLE = """\
# pkg

## Architecture

| layer | where | what it owns |
|---|---|---|
| leaves | `low.py`, `util/leaf.py` | nothing |
| native kernels | `cext/` → `_core` | C |
| middle | `util/`, `mid.py` | things |
| top | `top.py`, `__init__.py` | the rest |

## Next section
"""


def _plant(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    src, cext = tmp_path / "pkg", tmp_path / "cext"
    for name, text in {"__init__.py": "", "util/__init__.py": "", **files}.items():
        path = (cext if name.endswith((".pxi", ".pyx")) else src) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return src, cext


def test_the_checks_fail_on_a_planted_circle_and_upward_imports(tmp_path):
    src, cext = _plant(
        tmp_path,
        {
            "low.py": "def f():\n    from pkg.top import y  # upward, inside a function\n",
            "util/leaf.py": "import importlib\nimportlib.import_module('pkg.top')  # upward, by string\n",
            "mid.py": "from pkg.util import helper\nx = 1\n",
            "util/helper.py": "import json\nfrom ..mid import x  # mid -> helper -> mid\n",
            "top.py": "import pkg.mid\nTABLE = ['pkg.low']\nimport importlib\nimportlib.import_module(TABLE[0])\n",
            "_core.pyx": "from pkg.util.leaf import thing\ninclude 'x.pxi'\n",
            "x.pxi": "from cpython cimport PyObject\nfrom pkg import (low as _low,\n    mid as _mid)\n",
            "stray.py": "",
        },
    )
    layers = readme_layers(_TABLE)
    assert [name for name, _ in layers] == ["leaves", "native kernels", "middle", "top"]
    graph = import_graph(src, cext, "pkg")
    assert graph["pkg.top"] == {"pkg.mid", "pkg.low"}  # the computed import reads the table's names
    assert graph["pkg._core"] == {"pkg.util.leaf", "pkg.low", "pkg.mid"}  # cimport is no import
    # mid -> helper -> mid (relative imports); top -> low by a string, low -> top in a function
    assert set(circles(graph)) == {frozenset({"pkg.mid", "pkg.util.helper"}), frozenset({"pkg.low", "pkg.top"})}
    # util/helper.py is in `util/` (middle), as mid.py is: its import of mid is no upward one
    assert {(m, t) for m, _, t, _ in upward_imports(graph, layers, "pkg")} == {
        ("pkg.low", "pkg.top"),
        ("pkg.util.leaf", "pkg.top"),
        ("pkg._core", "pkg.mid"),
    }
    assert unplaced(graph, layers, "pkg") == ["pkg.stray"]


def test_the_table_must_name_each_room_once():
    twice = _TABLE.replace("| top | `top.py`", "| top | `mid.py`, `top.py`")
    with pytest.raises(AssertionError, match="listed twice"):
        layer_index(readme_layers(twice), "pkg")
    with pytest.raises(AssertionError, match="no '# Architecture'"):
        readme_layers("# pkg\n")
