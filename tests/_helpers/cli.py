"""Run the command line in this process: (exit code, stdout, stderr), argparse's SystemExit
(``--help``, usage errors) included as its code."""

from __future__ import annotations

from respeval.cli import main


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err
