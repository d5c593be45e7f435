"""The fixed cost of a ``respeval score`` run: the CPU time (user + system, imports included)
of the whole command on a 20-row JSONL file, best of N runs, and the modules it imports.

    python benchmarks/cli_start_report.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="cli-start-")
    data = os.path.join(folder, "rows.jsonl")
    with open(data, "w", encoding="utf-8") as fh:
        for i in range(20):
            fh.write(json.dumps({"id": i, "response": "the cat sat", "reference": "the cat sat on"}) + "\n")
    respeval = shutil.which("respeval") or os.path.join(os.path.dirname(sys.executable), "respeval")
    cmd = [
        respeval,
        "score",
        "--input",
        data,
        "--id-field",
        "id",
        "--out",
        os.path.join(folder, "o.parquet"),
        "--quiet",
    ]
    best = float("inf")
    for _ in range(args.runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    # the same command in this interpreter, counting the modules loaded once it has run
    probe = (
        "import sys\nimport respeval.cli.app as app\napp.main(sys.argv[1:])\nprint(len(sys.modules), file=sys.stderr)"
    )
    modules = subprocess.run([sys.executable, "-c", probe, *cmd[1:]], check=True, capture_output=True, text=True)
    print(
        f"20-row respeval score: {best:.2f} CPU-s (best of {args.runs}); modules imported: {modules.stderr.split()[-1]}"
    )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
