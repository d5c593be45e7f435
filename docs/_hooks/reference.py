"""MkDocs hook: the CLI reference and the API reference are generated at build time, from the
parser (``respeval.cli.app.build_parser``) and from the front door's docstrings and signatures
(``respeval.__all__``), so they cannot drift from the code."""

from __future__ import annotations

import argparse
import inspect
import io
import os
from contextlib import redirect_stdout
from typing import Any

from mkdocs.structure.files import File, Files

CLI_PAGE = "reference/cli.md"
API_PAGE = "reference/api.md"


def _help_text(parser: argparse.ArgumentParser) -> str:
    buffer = io.StringIO()
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal; the page is the same on every machine
    with redirect_stdout(buffer):
        # every option, the advanced groups too (``respeval COMMAND --help-all``)
        print(parser.format_help_all() if hasattr(parser, "format_help_all") else parser.format_help(), end="")
    return buffer.getvalue()


def cli_reference() -> str:
    from respeval.cli.app import build_parser

    parser = build_parser()
    out = [
        "# Command-line reference\n\n",
        "Generated from respeval's own parser when the docs are built (`respeval COMMAND --help-all` prints the "
        "same; `--help` leaves out the advanced option groups).\n\n",
        "```text\n",
        _help_text(parser),
        "```\n",
    ]
    out += _subcommands(parser, "respeval", "##")
    return "".join(out)


def _subcommands(parser: argparse.ArgumentParser, prog: str, level: str) -> list[str]:
    """Every subcommand's help, and theirs (``respeval dataset from-traces``)."""
    out: list[str] = []
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, sub in sorted(actions[0].choices.items()) if actions else []:
        out += [f"\n{level} {prog} {name}\n\n", "```text\n", _help_text(sub), "```\n"]
        out += _subcommands(sub, f"{prog} {name}", level + "#")
    return out


def _signature(obj: Any) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""


def api_reference() -> str:
    import respeval

    out = [
        "# Python API reference\n\n",
        "Generated from the docstrings and signatures of `respeval.__all__` when the docs are built.\n",
    ]
    for name in respeval.__all__:
        if name.startswith("__"):
            continue
        obj = getattr(respeval, name)
        if inspect.ismodule(obj):
            kind, title = "module", f"respeval.{name}"
        elif inspect.isclass(obj):
            kind, title = "class", f"respeval.{name}{_signature(obj)}"
        elif callable(obj):
            kind, title = "function", f"respeval.{name}{_signature(obj)}"
        else:
            kind, title = "value", f"respeval.{name}"
        doc = inspect.getdoc(obj) or ""
        out += [f"\n## `{name}`\n\n", f"*{kind}*\n\n", "```python\n", title, "\n```\n\n"]
        if doc:
            out += ["```text\n", doc.replace("```", "'''"), "\n```\n"]
    return "".join(out)


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, CLI_PAGE, content=cli_reference()))
    files.append(File.generated(config, API_PAGE, content=api_reference()))
    return files
