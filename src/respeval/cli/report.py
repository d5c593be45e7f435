"""``respeval report``: one self-contained HTML report of one or more runs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from respeval import report as rep
from respeval import validate as val
from respeval.cli.common import Exit, add_bootstrap_arguments
from respeval.io.files import check_readable, guarded_outputs
from respeval.io.formats import TABLE_FORMATS, format_of

NAME = "report"
HELP = "one self-contained HTML report of a run"
DESCRIPTION = (
    "Render run summaries (JSON files, or directories of them) into one HTML file that opens without "
    "network: the result first, then only the sections the run has (summary tables, systems with intervals, "
    "confusion heatmaps, score distributions, the gate funnel, worst rows and disagreements). Several runs "
    "make one page with each run on its own. A results table with Vertex's judge and human columns is "
    "validated first."
)
EPILOG = """\
examples:
  respeval validate --results judged.jsonl --summary-out run/validation.json
  respeval report run/ --out report.html
  respeval report judged.jsonl --out report.html --title "judge v3"
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="RUN_DIR_OR_FILES",
        help="run summaries (*.json), directories holding them, or results tables",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
    p.add_argument("--title", help="page title")
    add_bootstrap_arguments(p)


def _summaries_for(path: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Run summaries from one input: a summary, a directory of them, or a results table."""
    fmt = format_of(path)
    if path.is_dir() or (fmt == "json" and _is_summary_file(path)):
        return rep.load_summaries([path])
    if fmt == "json" and _is_command_output(path):
        return [rep.to_run_summary(json.loads(path.read_text(encoding="utf-8")), str(path))]
    if fmt in TABLE_FORMATS:
        results = val.validate_table(val.load_table(path), n_boot=args.bootstrap, seed=args.seed)
        return [
            rep.validation_summary(
                results, title=f"Validation of {path.name}", meta={"command": "validate", "results": str(path)}
            )
        ]
    raise ValueError(f"{path}: not a run summary, a directory or a results table")


def _is_summary_file(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return True  # let load_summaries report the problem with the file's name
    return isinstance(data, dict) and "schema" in data


def _is_command_output(path: Path) -> bool:
    """The --json output of score, judge or gate (an object without a schema)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and "schema" not in data


def run(args: argparse.Namespace) -> int:
    """Run ``respeval report``; prints where the report is and returns the exit status."""
    summaries: list[dict[str, Any]] = []
    for raw in args.inputs:
        check_readable(raw)  # names a missing file, a symlink loop, a permission problem
    with guarded_outputs([("input", raw) for raw in args.inputs], [("--out", args.out)]):
        for raw in args.inputs:
            summaries.extend(_summaries_for(Path(raw), args))
        summary = rep.merge_summaries(summaries, title=args.title)  # several runs: each its own part
        out = rep.write_report(summary, args.out)
    print(f"report: {out}")
    return Exit.OK
