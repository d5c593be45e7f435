"""respeval.fingerprint: the one code fingerprint (evaluate's resume, the python: judge's
cache key).  A change to anything a function can depend on -- its own body, a constant of
its module, a project module it imports (however deep, however imported), the values a
closure or a partial holds -- changes the digest; what it cannot read it refuses, with the
reason; the same code gives the same digest in another process."""

from __future__ import annotations

import functools
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from respeval.evaluate import load_function
from respeval.fingerprint import code_fingerprint, split_version


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    # a rewrite within the same clock tick and with the same size must still be seen
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A small project on sys.path: a metric module importing helpers three ways."""
    root = tmp_path / "proj"
    write(
        root / "metric.py",
        """
        import json
        import numpy as np
        from helpers import norm
        from pkg import consts
        from pkg.deep import scale

        WEIGHT = 2

        def short(row):
            from lazy import limit  # imported only when it runs
            return len(norm(row["response"])) * WEIGHT * scale() < limit() + consts.BASE
    """,
    )
    write(root / "helpers.py", "def norm(x):\n    return x.lower()\n")
    write(root / "lazy.py", "def limit():\n    return 10\n")
    write(root / "pkg/__init__.py", "")
    write(root / "pkg/consts.py", "BASE = 1\n")
    write(root / "pkg/deep.py", "from .consts import BASE\n\ndef scale():\n    return BASE * 3\n")
    write(root / "unrelated.py", "X = 1\n")
    monkeypatch.syspath_prepend(str(root))
    saved = set(sys.modules)
    yield root
    for name in set(sys.modules) - saved:  # the next test imports its own copies
        del sys.modules[name]


def fingerprint_of(root: Path, target: str = "metric.py:short") -> str:
    for name in ("metric", "helpers", "lazy", "pkg", "pkg.consts", "pkg.deep"):
        sys.modules.pop(name, None)
    fp = code_fingerprint(load_function(str(root / target)))
    assert fp.proven, fp.reason
    return fp.digest


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("metric.py", "WEIGHT = 2", "WEIGHT = 3"),  # a module constant
        ("metric.py", "* WEIGHT *", "* WEIGHT * 1 *"),  # the body
        ("helpers.py", "x.lower()", "x.upper()"),  # from helpers import norm
        ("lazy.py", "return 10", "return 11"),  # an import inside the function
        ("pkg/consts.py", "BASE = 1", "BASE = 2"),  # from pkg import consts (a submodule)
        ("pkg/deep.py", "BASE * 3", "BASE * 4"),  # from pkg.deep import scale
        ("pkg/__init__.py", "", "X = 1\n"),  # the package a submodule is in
    ],
    ids=["constant", "body", "helper", "lazy-import", "submodule", "relative-import", "package-init"],
)
def test_a_change_to_anything_the_function_imports_changes_the_digest(project, path, old, new):
    before = fingerprint_of(project)
    assert fingerprint_of(project) == before  # stable
    file = project / path
    text = file.read_text()
    assert old in text
    write(file, text.replace(old, new) if old else new)
    assert fingerprint_of(project) != before


def test_files_not_imported_and_installed_packages_are_not_hashed(project):
    before = fingerprint_of(project)
    write(project / "unrelated.py", "X = 2\n")
    assert fingerprint_of(project) == before
    fp = code_fingerprint(load_function(str(project / "metric.py:short")))
    assert fp.files == 6  # metric, helpers, lazy, pkg/__init__, pkg/consts, pkg/deep: not numpy's hundreds


def test_the_same_code_gives_the_same_digest_in_another_process(project):
    here = code_fingerprint(load_function(str(project / "metric.py:short"))).digest
    script = (
        "import sys; from respeval.evaluate import load_function; from respeval.fingerprint import code_fingerprint; "
        f"sys.path.insert(0, {str(project)!r}); "
        f"print(code_fingerprint(load_function({str(project / 'metric.py:short')!r})).digest)"
    )
    there = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    assert there == here


def test_what_cannot_be_read_is_refused_with_the_reason():
    assert "built-in" in code_fingerprint(len).reason
    assert "built-in or C-extension" in code_fingerprint(math.sqrt).reason
    assert "built-in or C-extension" in code_fingerprint(np.sqrt).reason  # a ufunc
    namespace: dict = {}
    exec("def f(row):\n    return 1\n", namespace)  # source in no file (python -c, a notebook)
    fp = code_fingerprint(namespace["f"])
    assert not fp.proven and "not in a file" in fp.reason and fp.token == "unproven"
    lock = __import__("threading").Lock()

    def holds_a_lock(row):
        return lock.locked()

    fp = code_fingerprint(holds_a_lock)
    assert not fp.proven and "'lock'" in fp.reason and "lock" in fp.reason.lower()


def test_a_version_stands_for_the_code():
    fp = code_fingerprint(len, version="2")
    assert fp.proven and fp.version == "2" and fp.token == "@2"
    assert code_fingerprint(math.sqrt, version="2").digest == fp.digest
    assert code_fingerprint(len, version="3").digest != fp.digest
    with pytest.raises(ValueError, match="non-empty string"):
        code_fingerprint(len, version="")
    assert split_version("checks:fn@2") == ("checks:fn", "2")
    assert split_version("checks:fn") == ("checks:fn", None)
    with pytest.raises(ValueError):
        split_version("checks:fn@")


def _closure(limit):
    def check(row):
        return len(row) < limit

    return check


class _Scorer:
    def __init__(self, cut):
        self.cut = cut

    def score(self, row):
        return row > self.cut

    def __call__(self, row):
        return row > self.cut


def _two(a, b):
    return a + b


def test_values_outside_the_source_are_covered():
    """What a closure captured, a partial's arguments, a callable object's state: not in
    any file, so their values are part of the digest."""
    assert code_fingerprint(_closure(3)).digest == code_fingerprint(_closure(3)).digest
    assert code_fingerprint(_closure(3)).digest != code_fingerprint(_closure(4)).digest
    assert code_fingerprint(functools.partial(_two, 1)).digest != code_fingerprint(functools.partial(_two, 2)).digest
    assert code_fingerprint(_Scorer(1).score).digest != code_fingerprint(_Scorer(2).score).digest
    assert code_fingerprint(_Scorer(1)).digest != code_fingerprint(_Scorer(2)).digest
    assert code_fingerprint(_Scorer(1)).digest == code_fingerprint(_Scorer(1)).digest


def test_an_environment_derived_constant_is_covered(tmp_path, monkeypatch):
    """The source is the same, the value it computed at import is not."""
    write(
        tmp_path / "envy.py", "import os\nCUT = int(os.environ.get('CUT', '1'))\n\ndef f(row):\n    return row > CUT\n"
    )
    digests = []
    for cut in ("1", "2"):
        monkeypatch.setenv("CUT", cut)
        digests.append(code_fingerprint(load_function(f"{tmp_path / 'envy.py'}:f")).digest)
    assert digests[0] != digests[1]


def test_a_submodule_of_a_namespace_package_imported_in_a_function_is_not_an_error(tmp_path):
    # opentelemetry is a namespace package: finding opentelemetry.sdk without importing its
    # parent raised KeyError from the import system; run where nothing imported it yet
    pytest.importorskip("opentelemetry.sdk")
    write(
        tmp_path / "uses_otel.py",
        """
        def judge(request):
            from opentelemetry.sdk.trace import TracerProvider
            return str(TracerProvider)
        """,
    )
    code = (
        "import sys; from respeval.fingerprint import code_fingerprint; import uses_otel\n"
        "assert 'opentelemetry' not in sys.modules\n"
        "fp = code_fingerprint(uses_otel.judge); print(fp.proven)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
