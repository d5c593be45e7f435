"""Run rouge-score's and sacreBLEU's own test suites against respeval.compat (or the peers).

The suites in ../shared/peer_suites are copied unchanged into a scratch folder, then every
``import``/``from ... import`` of the peer package is rewritten to the same import from
``respeval.compat.<package>`` (the *target*). Nothing else changes: :func:`rewrite_imports`
refuses to write a file whose syntax tree differs from the original in anything but import
statements, so an assertion can never be edited by accident. With the target set to the
peer package itself, the same staging runs the suites against the real rouge-score and
sacreBLEU, which is how the "passes on the peer" lists are obtained.

Two data files the suites need are generated at staging time, never committed:

* rouge-score: ``testdata/pyrouge_files/{target,prediction}_multi.N.txt``, four lines of
  ``*_large.txt`` per file, as rouge-score's ``create_pyrouge_files.py`` writes them;
* sacreBLEU: ``test/wmt17_en_de_systems.pkl.bz2`` from ../shared/data/wmt17_en_de (see
  :func:`write_wmt17_pickle`).

Each suite runs in a fresh ``python -m pytest`` subprocess (the peer packages and the
compat ones never meet in one interpreter); a small plugin (:mod:`_helpers.peer_outcomes`)
writes every test's outcome, and the list of imported peer modules, to a JSON file.
"""

from __future__ import annotations

import ast
import bz2
import json
import os
import pickle
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _helpers.paths import PEER_SUITES, SHARED_DATA, TESTS

HELPERS = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Suite:
    """One peer suite: where it lives and which package its tests import."""

    name: str  # the peer package, as the suite imports it
    folder: str  # under ../shared/peer_suites
    tests: str  # the folder pytest is pointed at, relative to the staged copy
    local_modules: tuple[str, ...] = ()  # ``from <package> import X`` that means the suite's own X.py

    @property
    def compat(self) -> str:
        return f"respeval.compat.{self.name}"


SUITES = {
    "rouge_score": Suite("rouge_score", "rouge_score", ".", local_modules=("test_util",)),
    "sacrebleu": Suite("sacrebleu", "sacrebleu", "test"),
}

# The WMT17 system every other one is compared with in test_significance.py: the only one
# of the 16 that its MOSES_P_VALS / MULTEVAL_P_VALS tables leave out.
WMT17_BASELINE = "newstest2017.LIUM-NMT.4900.en-de"


# --- import rewriting ---------------------------------------------------------------------------


def _is_peer(module: str | None, package: str) -> bool:
    return module is not None and (module == package or module.startswith(package + "."))


def _retarget(module: str, package: str, target: str) -> str:
    return target + module[len(package) :]


def _rewritten(node: ast.stmt, suite: Suite, target: str) -> list[ast.stmt] | None:
    """The statements replacing one import, or None when it does not import the peer."""
    package = suite.name
    if isinstance(node, ast.ImportFrom) and node.level == 0 and _is_peer(node.module, package):
        assert node.module is not None
        local = [a for a in node.names if node.module == package and a.name in suite.local_modules]
        other = [a for a in node.names if a not in local]
        out: list[ast.stmt] = []
        if other:
            out.append(ast.ImportFrom(module=_retarget(node.module, package, target), names=other, level=0))
        out.extend(ast.Import(names=[a]) for a in local)
        return out
    if isinstance(node, ast.Import) and any(_is_peer(a.name, package) for a in node.names):
        out = []
        for alias in node.names:
            if not _is_peer(alias.name, package):
                out.append(ast.Import(names=[alias]))
            elif alias.asname is not None:
                out.append(ast.Import(names=[ast.alias(_retarget(alias.name, package, target), alias.asname)]))
            else:
                # ``import pkg.sub`` binds ``pkg``: import the submodule, then bind the name
                out.append(ast.Import(names=[ast.alias(_retarget(alias.name, package, target))]))
                if alias.name != package:
                    out.append(ast.Import(names=[ast.alias(target, package)]))
                else:
                    out[-1] = ast.Import(names=[ast.alias(target, package)])
        return out
    return None


def _without_imports(tree: ast.AST) -> str:
    """``ast.dump`` of a tree with every import statement removed (the rest must not change)."""

    class Strip(ast.NodeTransformer):
        def visit_Import(self, node: ast.Import) -> None:
            return None

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            return None

    return ast.dump(Strip().visit(tree))


def rewrite_imports(source: str, suite: Suite, target: str) -> str:
    """``source`` with the peer package's imports pointed at ``target``; nothing else changes.

    Each rewritten import keeps its line (and indentation); a statement that shares its
    line with other code is refused rather than guessed at.
    """
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        new = _rewritten(node, suite, target)
        if new is None:
            continue
        assert node.end_lineno is not None and node.end_col_offset is not None
        first, last = lines[node.lineno - 1], lines[node.end_lineno - 1]
        indent = first[: node.col_offset]
        if indent.strip() or last[node.end_col_offset :].strip() not in ("", "\\"):
            raise ValueError(f"line {node.lineno}: an import sharing its line with other code: {first!r}")
        text = "; ".join(ast.unparse(stmt) for stmt in new)
        edits.append((node.lineno - 1, node.end_lineno, f"{indent}{text}\n"))
    for start, end, text in sorted(edits, reverse=True):
        lines[start:end] = [text]
    rewritten = "".join(lines)
    if _without_imports(ast.parse(rewritten)) != _without_imports(tree):
        raise AssertionError("rewriting changed more than import statements")
    return rewritten


# --- staging ------------------------------------------------------------------------------------


def write_pyrouge_files(testdata: Path) -> None:
    """rouge-score's create_pyrouge_files.py ``write_files2``: four lines per numbered file."""
    out = testdata / "pyrouge_files"
    out.mkdir(exist_ok=True)
    for prefix, source in (("target_multi", "target_large.txt"), ("prediction_multi", "prediction_large.txt")):
        with open(testdata / source) as f:  # text mode, as the script: universal newlines
            lines = f.readlines()
        for index in range(0, (len(lines) + 3) // 4):
            with open(out / f"{prefix}.{index}.txt", "w") as f:
                f.writelines(lines[4 * index : 4 * index + 4])


def wmt17_systems(data: Path = SHARED_DATA / "wmt17_en_de") -> list[tuple[str, list[Any]]]:
    """The 16 systems as (name, segments), the baseline first, then the reference last.

    test_significance.py pops the last pair as ``(_, refs)`` and passes ``refs`` as a list
    of reference streams, then hands the rest to ``PairedTest``, whose first system is the
    baseline. The other systems follow in case-insensitive name order.
    """

    def lines(path: Path) -> list[str]:
        return path.read_text(encoding="utf-8").rstrip("\n").split("\n")

    names = sorted((p.name.removesuffix(".txt") for p in (data / "systems").glob("*.txt")), key=str.lower)
    if WMT17_BASELINE not in names:
        raise FileNotFoundError(f"{data / 'systems'} has no {WMT17_BASELINE}.txt")
    names.remove(WMT17_BASELINE)
    systems = [(name, lines(data / "systems" / f"{name}.txt")) for name in [WMT17_BASELINE, *names]]
    return [*systems, ("reference", [lines(data / "newstest2017-ende-ref.de")])]


def write_wmt17_pickle(path: Path, data: Path = SHARED_DATA / "wmt17_en_de") -> None:
    """``wmt17_en_de_systems.pkl.bz2`` as test_significance.py's loader reads it."""
    with bz2.BZ2File(path, "wb", compresslevel=1) as f:  # the loader does not care; level 9 takes seconds
        pickle.dump(wmt17_systems(data), f)


def available(suite: Suite) -> bool:
    needed = [PEER_SUITES / suite.folder]
    if suite.name == "sacrebleu":
        needed.append(SHARED_DATA / "wmt17_en_de")
    return all(p.is_dir() for p in needed)


def stage(suite: Suite, target: str, dest: Path) -> Path:
    """Copy ``suite`` into ``dest`` with its imports pointed at ``target``; returns ``dest``."""
    source = PEER_SUITES / suite.folder
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for path in sorted(dest.rglob("*.py")):
        path.write_text(rewrite_imports(path.read_text(encoding="utf-8"), suite, target), encoding="utf-8")
    if suite.name == "rouge_score":
        write_pyrouge_files(dest / "testdata")
    if suite.name == "sacrebleu":
        write_wmt17_pickle(dest / "test" / "wmt17_en_de_systems.pkl.bz2")
    return dest


# --- running ------------------------------------------------------------------------------------


@dataclass
class SuiteRun:
    outcomes: dict[str, str]  # test id -> passed / failed / skipped; "error" for a module that did not import
    imported: list[str]  # modules of the peer packages the run imported
    seconds: float
    output: str

    def passed(self) -> set[str]:
        return {k for k, v in self.outcomes.items() if v == "passed"}


def run(suite: Suite, target: str, workdir: Path, *, timeout: float = 1800) -> SuiteRun:
    """Stage ``suite`` for ``target`` under ``workdir`` and run it in a pytest subprocess."""
    staged = stage(suite, target, workdir / f"{suite.name}-{target.replace('.', '_')}")
    report = staged / ".outcomes.json"
    # an empty ini file: the suites run with pytest's defaults, not respeval's pyproject
    (staged / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        suite.tests,
        "-c",
        "pytest.ini",
        "--rootdir",
        ".",
        "-p",
        "no:cacheprovider",
        "-p",
        "_helpers.peer_outcomes",
        "--continue-on-collection-errors",
        "-q",
        "-o",
        "python_files=*_test.py test_*.py",
    ]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH", "")]))
    env["PEER_OUTCOMES"] = str(report)
    env["PEER_PACKAGE"] = suite.name
    env.pop("SACREBLEU_SEED", None)  # test_significance sets it; an inherited one must not leak in
    proc = subprocess.run(cmd, cwd=staged, env=env, capture_output=True, text=True, timeout=timeout)
    if not report.is_file():
        raise RuntimeError(f"the {suite.name} suite did not run (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}")
    got = json.loads(report.read_text(encoding="utf-8"))
    outcomes = {_relative(k, suite): v for k, v in got["outcomes"].items()}
    return SuiteRun(outcomes, got["imported"], got["seconds"], proc.stdout + proc.stderr)


def _relative(nodeid: str, suite: Suite) -> str:
    """Test ids without the staging folder: ``test/test_bleu.py::test_x[...]`` -> ``test_bleu.py::...``."""
    prefix = "" if suite.tests == "." else suite.tests.rstrip("/") + "/"
    return nodeid[len(prefix) :] if nodeid.startswith(prefix) else nodeid
