"""The docs: the site builds with no warning (``mkdocs build --strict``), every ``$ respeval ...``
console sample in README.md and docs/ runs as written (and prints what the page shows, where it
shows output), and every ```python block runs, page by page in one namespace, from a scratch copy
of the project's docs.  A block preceded by ``<!-- not run: REASON -->`` is skipped with that
reason (Ray and Spark sketches, a public endpoint); the test lists them so none hides.
docs/judging.md, docs/custom_metrics.md and docs/viewer.md have their own tests (tests/judge/test_judging_docs.py,
tests/evaluate/test_custom_metrics_docs.py, tests/view/test_viewer_docs.py), which run their samples in the set-up they need."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers.paths import ROOT
from respeval.cli import main

OWN_TESTS = {"judging.md", "custom_metrics.md", "viewer.md"}
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name not in OWN_TESTS)]
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")
# what changes from run to run in a command's output: its timing
TIMING = re.compile(r"\b(in )?\d+(\.\d+)? ?s\b")

pytestmark = pytest.mark.skipif(not (ROOT / "docs").is_dir(), reason="needs the source tree's docs/")


def blocks(text: str) -> list[tuple[str, str, str | None]]:
    """(language, body, not-run reason) of every fenced block, in order."""
    out = []
    lines = text.splitlines()
    i = 0
    reason: str | None = None
    while i < len(lines):
        line = lines[i]
        marker = NOT_RUN.search(line)
        if marker:
            reason = marker.group(1)
        if line.startswith("```"):
            language = line[3:].strip()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append((language, "\n".join(lines[i + 1 : j]) + "\n", reason))
            reason = None
            i = j + 1
            continue
        if line.strip() and not marker:
            reason = None
        i += 1
    return out


def console_samples(page: Path) -> list[tuple[str, list[str]]]:
    """(command, the output lines the page shows after it) for each ``$ respeval`` line."""
    samples = []
    for language, body, _ in blocks(page.read_text(encoding="utf-8")):
        if language not in ("text", "console", "bash", "shell"):
            continue
        current: tuple[str, list[str]] | None = None
        for line in body.splitlines():
            if line.startswith("$ "):
                current = (line[2:], [])
                samples.append(current)
            elif current is not None:
                current[1].append(line)
    return [s for s in samples if s[0].startswith("respeval ")]


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A copy of docs/ (the examples the samples name), the current folder, importable."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("_hooks"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "docs" or m.startswith("docs.")]:
        monkeypatch.delitem(sys.modules, name)
    return tmp_path


def test_the_docs_site_builds_with_no_warning(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs site needs mkdocs-material (in respeval[test])")
    pytest.importorskip("material", reason="the docs site needs mkdocs-material (in respeval[test])")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-q",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").exists()
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="rouge"' in api and 'id="evaluate"' in api and "Command-line reference" not in api


def test_the_pages_have_samples_to_run():
    """The parsers below find what they look for (a test of the test: an empty list would pass)."""
    readme = console_samples(ROOT / "README.md")
    assert [c for c, _ in readme][:1] == ["respeval run --example"]  # the loop is the first quickstart
    assert sum(1 for p in PAGES for lang, _, _ in blocks(p.read_text()) if lang == "python") >= 10


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_console_samples_run_and_print_what_the_page_shows(page, scratch, capsys):
    for command, shown in console_samples(page):
        capsys.readouterr()
        status = main(shlex.split(command)[1:])
        printed = capsys.readouterr()
        assert status == 0, (page.name, command, printed.err)
        if shown:
            want = [TIMING.sub("Xs", x).rstrip() for x in shown]
            got = [TIMING.sub("Xs", x).rstrip() for x in printed.out.splitlines()]
            assert got == want, (page.name, command)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_python_samples_run(page, scratch):
    namespace: dict[str, object] = {"__name__": f"docs_sample_{page.stem}"}
    skipped = []
    for number, (language, body, reason) in enumerate(blocks(page.read_text(encoding="utf-8"))):
        if language != "python":
            continue
        if reason is not None:
            skipped.append(reason)
            continue
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                exec(compile(body, f"{page.name}[block {number}]", "exec"), namespace)
            except Exception as exc:  # noqa: BLE001 - any failure of a sample is the finding
                pytest.fail(f"{page.name}, python block {number} failed: {type(exc).__name__}: {exc}\n{body}")
    for reason in skipped:
        print(f"{page.name}: a python block not run: {reason}")


def shell_commands(page: Path) -> list[str]:
    """Every ``respeval ...`` command line of the page's bash/shell blocks (continuation lines
    joined, a trailing ``# comment`` dropped): the synopses the samples above do not run."""
    out = []
    for language, body, _ in blocks(page.read_text(encoding="utf-8")):
        if language not in ("bash", "shell", "sh"):
            continue
        joined = body.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ")
            if not line.startswith("respeval "):
                continue
            out.extend(
                part.strip() for part in re.split(r"\s(?:&&|\|)\s", line) if part.strip().startswith("respeval ")
            )
    return out


def _without_comment(command: str) -> list[str]:
    import shlex

    lexer = shlex.shlex(command, posix=True, punctuation_chars=False)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    # a usage synopsis marks optional parts [--opt VALUE]: they are checked as if given
    return [token.removeprefix("[").removesuffix("]") for token in lexer]


@pytest.mark.parametrize("page", PAGES + [ROOT / "docs" / name for name in sorted(OWN_TESTS)], ids=lambda p: p.name)
def test_every_shell_synopsis_parses_with_todays_options(page, capsys):
    """A synopsis is not run (it names files and models the reader has), but every option in it
    must exist: a renamed option would leave a command the reader cannot copy."""
    from respeval.cli.app import build_parser

    problems = []
    for command in shell_commands(page):
        argv = _without_comment(command)[1:]
        if argv and argv[0] in ("--help", "--version", "-h"):
            continue
        try:
            build_parser(argv[0] if argv else None).parse_args(argv)
        except SystemExit as exc:
            if exc.code not in (0, None):
                problems.append(f"{command}\n    {capsys.readouterr().err.strip().splitlines()[-1]}")
    capsys.readouterr()
    assert problems == [], "\n".join(problems)


def test_the_synopsis_check_sees_a_stale_option(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text(
        "```bash\nrespeval score --input a.jsonl --no-such-option \\\n    --metric rouge1  # a comment\n```\n"
    )
    assert shell_commands(page) == ["respeval score --input a.jsonl --no-such-option      --metric rouge1  # a comment"]
    with pytest.raises(AssertionError, match="unrecognized arguments: --no-such-option"):
        test_every_shell_synopsis_parses_with_todays_options(page, capsys)
