"""``respeval metrics``: every metric name the registry knows, with what it computes."""

from __future__ import annotations

import argparse
import json

from respeval.cli.common import Exit

NAME = "metrics"
HELP = "list the metrics --metrics accepts"
DESCRIPTION = "Every metric name respeval knows (the registry used by score, gate, evaluate and Dask)."
EPILOG = """\
examples:
  respeval metrics
  respeval metrics --json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print name, family, inputs and help as JSON")


def run(args: argparse.Namespace) -> int:
    from respeval.metrics import REGISTRY

    if args.json:
        rows = [
            {"name": s.name, "family": s.family, "inputs": s.inputs, "reference": s.reference, "help": s.help}
            for s in REGISTRY.specs()
        ]
        print(json.dumps(rows, indent=2))
    else:
        print(REGISTRY.describe(width=200))
    return Exit.OK
