"""ruff (lint and format), mypy on ``src/`` and mypy's stubtest on the compiled core's stub,
run by the test command itself so that ``.ci/run`` (exactly the README's command) fails when
any of them does.  Configuration: ``[tool.ruff]`` and ``[tool.mypy]`` in pyproject.toml; the
Cython-generated attributes stubtest may ignore are listed in ``.ci/stubtest-allowlist.txt``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE_TREE = (ROOT / "pyproject.toml").is_file() and (ROOT / "src" / "respeval").is_dir()

pytestmark = pytest.mark.skipif(not SOURCE_TREE, reason="static checks run on a source checkout")


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, env=env, timeout=900)


def _tool(module: str) -> None:
    if shutil.which(module) is None and _run(sys.executable, "-m", module, "--version").returncode != 0:
        pytest.fail(f"{module} is not installed: install the test extra (pip install '.[test]')")


def test_ruff_lint():
    _tool("ruff")
    done = _run(sys.executable, "-m", "ruff", "check", "src", "tests", "benchmarks")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format():
    _tool("ruff")
    done = _run(sys.executable, "-m", "ruff", "format", "--check", "src", "tests", "benchmarks")
    assert done.returncode == 0, "run `ruff format src tests benchmarks`:\n" + done.stdout + done.stderr


def test_mypy():
    _tool("mypy")
    done = _run(sys.executable, "-m", "mypy")  # files and options: [tool.mypy]
    assert done.returncode == 0, done.stdout + done.stderr


def test_stub_of_the_compiled_core():
    pytest.importorskip("respeval._core", reason="respeval._core is not built")
    _tool("mypy")
    env = {**os.environ, "MYPYPATH": str(ROOT / "src")}
    allowlist = str(ROOT / ".ci" / "stubtest-allowlist.txt")
    config = str(ROOT / "pyproject.toml")  # stubtest reads no config file unless told (untyped imports)
    done = _run(
        sys.executable, "-m", "mypy.stubtest", "respeval._core", "--allowlist", allowlist, "--mypy-config-file", config,
        env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_checks_fail_on_bad_code(tmp_path):
    """Each tool, given a file with a defect of its kind, exits non-zero (the checks above can fail)."""
    _tool("ruff")
    _tool("mypy")
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nx: int = 'a'\n")
    assert _run(sys.executable, "-m", "ruff", "check", "--no-cache", str(bad)).returncode != 0
    assert (
        _run(sys.executable, "-m", "mypy", "--no-incremental", "--config-file", "/dev/null", str(bad)).returncode != 0
    )
    ugly = tmp_path / "ugly.py"
    ugly.write_text("x  =  1\n")
    assert _run(sys.executable, "-m", "ruff", "format", "--check", "--no-cache", str(ugly)).returncode != 0
