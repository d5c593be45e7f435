"""``respeval view``: a local, read-only web viewer over any run's outputs."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from respeval.cli.common import Exit

NAME = "view"
HELP = "a local web viewer over runs' outputs (summaries, rows, judge calls)"
DESCRIPTION = (
    "Serve a read-only web page over run outputs: the run list; each run's summary with intervals (the "
    "run summary respeval report renders); its rows, filtered, sorted and searched by metric, status, system "
    "and text; one row with its prompt, response, reference, the judge's prompt, raw reply and parsed "
    "verdict (both orders of a pairwise call), an agent's expected and actual tool calls side by side; two "
    "runs side by side with the flipped rows first. Rows are queried through DuckDB, so a million-row run "
    "pages at once. Needs respeval[view] (duckdb, uvicorn)."
)
EPILOG = """\
examples:
  respeval evaluate --input rows.jsonl --spec spec.yaml --out run/rows.parquet --summary-out run/summary.json
  respeval view run/                      # opens on that run: its summary and first rows
  respeval view runs/ other/summary.json --port 8001
  respeval view run/ --port 0             # any free port; the address is printed

what it reads (files, or folders of them and their sub-folders):
  run summaries (--summary-out), with the per-row file each names (--out of score, judge, gate,
  evaluate), respeval agent --out results (with their --summary-out beside them), or per-row
  files (.parquet, .jsonl, .csv) on their own.

It binds to 127.0.0.1 (this machine only) unless --host says otherwise; it has no login, so
bind elsewhere only on a network you trust.  Nothing is written; Ctrl-C stops it.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="RUN_DIR_OR_FILE",
        help="run summaries, per-row files, agent results, or folders of them",
    )
    p.add_argument("--port", type=int, default=8000, metavar="N", help="port to listen on (default 8000; 0: any free)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")


def run(args: argparse.Namespace) -> int:
    """Run ``respeval view`` until interrupted; prints the address first."""
    from respeval.view.server import check_dependencies, is_loopback, serve

    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port {args.port}: a port is 0 to 65535")
    check_dependencies()

    def ready(url: str, app: Any) -> None:
        runs = ", ".join(f"{r.id}. {r.title}" for r in app.runs)
        print(f"respeval view: {url} ({len(app.runs)} run{'s' if len(app.runs) != 1 else ''}: {runs})", flush=True)
        if not is_loopback(args.host):
            print(
                f"respeval view: listening on {args.host}: anyone who can reach it can read these runs", file=sys.stderr
            )
        print("respeval view: Ctrl-C stops it", file=sys.stderr, flush=True)

    try:
        serve(args.inputs, host=args.host, port=args.port, ready=ready)
    except KeyboardInterrupt:
        pass
    return Exit.OK
