"""Every ``$ respeval ...`` command and every ``>>>`` example in docs/custom_metrics.md runs as
written (offline, in a copy of docs/examples/evaluate/)."""

from __future__ import annotations

import doctest
import shlex
import shutil
import sys

from _helpers.paths import ROOT
from respeval.cli import main

DOC = ROOT / "docs" / "custom_metrics.md"
COMMANDS = [line[2:] for line in DOC.read_text().splitlines() if line.startswith("$ respeval ")]


def _workdir(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "docs" / "examples" / "evaluate", tmp_path / "ex")
    monkeypatch.chdir(tmp_path / "ex")
    monkeypatch.syspath_prepend(str(tmp_path / "ex"))
    monkeypatch.delitem(sys.modules, "my_checks", raising=False)
    return tmp_path / "ex"


def test_doc_commands_run(tmp_path, monkeypatch, capsys):
    work = _workdir(tmp_path, monkeypatch)
    assert any("--spec" in c for c in COMMANDS) and any("report" in c for c in COMMANDS)
    for command in COMMANDS:
        status = main(shlex.split(command)[1:])
        out = capsys.readouterr()
        assert status == 0, (command, out.err)
    assert (work / "report.html").exists() and (work / "again.html").exists()
    assert "GROUNDING" in (work / "report.html").read_text()


def test_doc_python_examples(tmp_path, monkeypatch):
    _workdir(tmp_path, monkeypatch)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(DOC.read_text(), {}, "custom_metrics.md", str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 6
