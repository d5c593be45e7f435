"""Every ``$ respeval ...`` command in docs/viewer.md runs as written (offline, in a copy of
docs/examples/evaluate/): the runs are written, and each ``respeval view`` opens what it names
(served in-process through the ASGI app rather than until Ctrl-C)."""

from __future__ import annotations

import doctest
import shlex
import shutil
import sys

from _helpers.paths import ROOT
from _helpers.view_runs import get, visible
from respeval.cli import main
from respeval.cli.app import build_parser
from respeval.view import Viewer, find_runs

DOC = ROOT / "docs" / "viewer.md"
COMMANDS = [line[2:] for line in DOC.read_text().splitlines() if line.startswith("$ respeval ")]


def test_doc_commands_run(tmp_path, monkeypatch, capsys):
    shutil.copytree(ROOT / "docs" / "examples" / "evaluate", tmp_path / "ex")
    monkeypatch.chdir(tmp_path / "ex")
    monkeypatch.syspath_prepend(str(tmp_path / "ex"))
    monkeypatch.delitem(sys.modules, "my_checks", raising=False)
    views = [c for c in COMMANDS if c.startswith("respeval view ")]
    assert len(views) == 2 and len(COMMANDS) == 4
    for command in COMMANDS:
        argv = shlex.split(command)[1:]
        if argv[0] == "view":
            args = build_parser().parse_args(argv)  # the options as written parse
            app = Viewer(find_runs(args.inputs))
            status, _, page = get(app, "/")
            assert status == 200
            if len(app.runs) == 1:
                assert "rows 1–4 of 4" in visible(page)  # the run's summary and first rows
            else:
                status, _, page = get(app, "/compare", "a=1&b=2&metric=GROUNDING")
                assert status == 200 and "rows in both runs" in visible(page)
            continue
        status = main(argv)
        out = capsys.readouterr()
        assert status == 0, (command, out.err)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(DOC.read_text(), {}, "viewer.md", str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 3
