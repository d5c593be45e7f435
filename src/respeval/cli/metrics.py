"""``respeval metrics``: every metric name the registry knows, with what it computes."""

from __future__ import annotations

import argparse
import json

from respeval.cli.common import Exit

NAME = "metrics"
HELP = "list the metrics: computed ones with their options, and the predefined judge metrics"
DESCRIPTION = (
    "Every metric name respeval knows: the computed metrics (the registry used by score, gate, evaluate and "
    "Dask) with the options each takes (--metric-option METRIC.KEY=VALUE, or a spec entry's options), and the "
    "predefined judge metrics evaluate takes by name (GROUNDING, SAFETY, ...)."
)
EPILOG = """\
examples:
  respeval metrics
  respeval metrics --json
  respeval score --input p.jsonl --references gold.jsonl --reference-field answers --metric squad \\
      --metric-option squad.version=v2
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print each metric (name, kind, family, inputs, options, help) as JSON"
    )


def run(args: argparse.Namespace) -> int:
    from respeval.judge.methods.predefined import describe_predefined
    from respeval.metrics import REGISTRY

    judges = describe_predefined()
    if args.json:
        rows = [
            {
                "name": s.name,
                "kind": "computed",
                "family": s.family,
                "inputs": s.inputs,
                "reference": s.reference,
                "help": s.help,
                "options": dict(s.options),
            }
            for s in REGISTRY.specs()
        ]
        rows += [{"kind": "judge", **j, "help": j["summary"]} for j in judges]
        print(json.dumps(rows, indent=2))
        return Exit.OK
    print("computed metrics (score --metric, evaluate, gate; options: --metric-option METRIC.KEY=VALUE):")
    print(REGISTRY.describe(width=200, options=True))
    print("\npredefined judge metrics (evaluate --metric NAME, or a spec entry; need --model):")
    pad = max(len(j["name"]) for j in judges) + 2
    for j in judges:
        print(f"  {j['name'].ljust(pad)}{j['summary']} ({j['scale']}, passes {j['passes']}; columns: "
              f"{', '.join(j['columns'])})")  # fmt: skip
    return Exit.OK
