"""Where the judge engine's time goes: cProfile of one loopback run (issue 34).

    python benchmarks/judge_profile.py              # 5,000 rows, concurrency 64, no cache
    python benchmarks/judge_profile.py --rows 20000

The same workload as bench_judge.py's ``http-nocache`` (an instantly answering
OpenAI-compatible server on 127.0.0.1 in its own process, the engine's loopback transport),
after a 500-row warm-up; prints the functions with the most time of their own.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))
from _helpers.judge_server import spawn_server  # noqa: E402
from bench_judge import CONCURRENCY, _items  # noqa: E402
from respeval import judge  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=5_000)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    items = _items(args.rows)
    with spawn_server(0.0) as srv:
        model = judge.OpenAIChatModel("bench", base_url=srv.url)
        judge.run(items[:500], model, concurrency=CONCURRENCY)
        profile = cProfile.Profile()
        profile.enable()
        judge.run(items, model, concurrency=CONCURRENCY)
        profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
