"""tau-bench-shaped trajectory rows for the trajectory benchmarks, in every input form.

Row ``i`` is tau-bench airline row ``i % 120`` (../shared/data/agents/tau_bench, gpt-4o
trajectories against the task's actions) with its user and reservation ids made unique per
pass over the 120 rows (``mia_li_3668`` -> ``mia_li_3668-7``), in the predicted and the
reference trajectory alike: the same shapes, lengths, duplicates and mismatches as the real
rows, but new call strings every pass, so interning never degenerates into 120 distinct calls.

Forms (``FORMS``), each what one kind of input hands the trajectory family:

``json``          a str of JSON text per row: a CSV or JSONL column holding trajectories as
                  JSON strings (json.dumps' default separators, as such files are written)
``arrow-json``    the same text as an Arrow string column (a Parquet column of JSON strings)
``arrow-struct``  an Arrow list<struct<tool_name, tool_input: struct<...>>> column (nested
                  Parquet, or pyarrow's JSON reader on the JSONL)
``dicts``         lists of dicts (library calls; the bulk pipeline's JSONL reader today)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "agents" / "tau_bench"
TAU = SHARED / "airline_trajectories.jsonl"
_IDS = re.compile(r'"(user_id|reservation_id)": "([^"]+)"')
FORMS = ("json", "arrow-json", "arrow-struct", "dicts")


def templates() -> list[tuple[str, str]]:
    """(predicted, reference) JSON text per tau row, ids marked ``%K%`` for the pass number."""
    if not TAU.is_file():
        raise FileNotFoundError(f"{TAU} is missing (the benchmarks need ../shared/data)")
    out = []
    for line in TAU.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out.append(
            tuple(
                _IDS.sub(r'"\1": "\2-%K%"', json.dumps(row[k]))
                for k in ("predicted_trajectory", "reference_trajectory")
            )
        )
    return out  # type: ignore[return-value]


def texts(
    start: int, n: int, tmpl: list[tuple[str, str]] | None = None, unique: bool = False
) -> tuple[list[str], list[str]]:
    """Rows ``start .. start + n`` as JSON text (the ``json`` form).  ``unique``: ids made
    unique per row instead of per pass, so no call text repeats across rows (only within
    a row, where a predicted call equals a reference call): the worst case for the
    native reader's call memo."""
    tmpl = tmpl or templates()
    preds, refs = [], []
    m = len(tmpl)
    for i in range(start, start + n):
        p, r = tmpl[i % m]
        k = str(i if unique else i // m)
        preds.append(p.replace("%K%", k))
        refs.append(r.replace("%K%", k))
    return preds, refs


def convert(values: list[str], form: str) -> Any:
    """JSON text rows in another form (see the module docstring)."""
    if form == "json":
        return values
    if form == "dicts":
        return [json.loads(v) for v in values]
    import pyarrow as pa

    if form == "arrow-json":
        return pa.array(values, pa.string())
    if form == "arrow-struct":
        return pa.array([json.loads(v) for v in values])
    raise ValueError(f"unknown form {form!r}; choose from {', '.join(FORMS)}")


def rows(start: int, n: int, tmpl: list[tuple[str, str]] | None = None, form: str = "dicts") -> tuple[Any, Any]:
    """Predicted and reference trajectories of rows ``start .. start + n`` in ``form``."""
    preds, refs = texts(start, n, tmpl)
    return convert(preds, form), convert(refs, form)


def chunks(total: int, size: int, tmpl: list[tuple[str, str]] | None = None, form: str = "dicts") -> Iterator[tuple]:
    tmpl = tmpl or templates()
    for start in range(0, total, size):
        yield rows(start, min(size, total - start), tmpl, form)
