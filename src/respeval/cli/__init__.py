"""The ``respeval`` command line (see ``respeval.cli.app``)."""

from respeval.cli.app import COMMANDS, build_parser, main

__all__ = ["COMMANDS", "build_parser", "main"]
