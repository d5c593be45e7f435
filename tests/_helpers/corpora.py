"""Loaders for the real corpora in ../shared/data, shared by tests and benchmarks."""

from __future__ import annotations

import json
import re
from pathlib import Path

_T_TAG = re.compile(r"<t>(.*?)</t>", re.S)


def realsumm_text(tagged: str) -> str:
    """REALSumm wraps sentences in <t> ... </t>: one sentence per line, tags removed."""
    return "\n".join(s.strip() for s in _T_TAG.findall(tagged))


def read_jsonl(path: str | Path) -> list:
    """Every record of a JSONL file (the file closed after: no ResourceWarning)."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_realsumm(data: Path) -> list[dict]:
    rows = read_jsonl(data / "realsumm" / "realsumm_cnndm_100docs_25systems.jsonl")
    for row in rows:
        row["prediction"] = realsumm_text(row["system_summary"])
        row["reference"] = realsumm_text(row["ref_summ"])
    return rows


def load_wmt17(data: Path) -> tuple[list[str], dict[str, list[str]]]:
    """The reference and every system's output, one segment per line (3,004 each)."""
    folder = data / "wmt17_en_de"

    def lines(p: Path) -> list[str]:
        return p.read_text(encoding="utf-8").rstrip("\n").split("\n")

    reference = lines(folder / "newstest2017-ende-ref.de")
    systems = {p.name: lines(p) for p in sorted((folder / "systems").iterdir())}
    return reference, systems
