"""tau-bench-shaped trajectory rows for the trajectory benchmarks.

Row ``i`` is tau-bench airline row ``i % 120`` (../shared/data/agents/tau_bench, gpt-4o
trajectories against the task's actions) with its user and reservation ids made unique per
pass over the 120 rows (``mia_li_3668`` -> ``mia_li_3668-7``), in the predicted and the
reference trajectory alike: the same shapes, lengths, duplicates and mismatches as the real
rows, but new call strings every pass, so interning never degenerates into 120 distinct calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "agents" / "tau_bench"
TAU = SHARED / "airline_trajectories.jsonl"
_IDS = re.compile(r'"(user_id|reservation_id)": "([^"]+)"')


def templates() -> list[str]:
    if not TAU.is_file():
        raise FileNotFoundError(f"{TAU} is missing (the benchmarks need ../shared/data)")
    out = []
    for line in TAU.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        pair = json.dumps([row["predicted_trajectory"], row["reference_trajectory"]])
        out.append(_IDS.sub(r'"\1": "\2-%K%"', pair))
    return out


def rows(start: int, n: int, tmpl: list[str] | None = None) -> tuple[list, list]:
    """Predicted and reference trajectories of rows ``start .. start + n`` (lists of dicts)."""
    tmpl = tmpl or templates()
    preds, refs = [], []
    m = len(tmpl)
    for i in range(start, start + n):
        p, r = json.loads(tmpl[i % m].replace("%K%", str(i // m)))
        preds.append(p)
        refs.append(r)
    return preds, refs


def chunks(total: int, size: int, tmpl: list[str] | None = None) -> Iterator[tuple[list, list]]:
    tmpl = tmpl or templates()
    for start in range(0, total, size):
        yield rows(start, min(size, total - start), tmpl)
