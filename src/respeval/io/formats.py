"""File formats by extension: the one map every command uses.

========  ===========================  ==============================================
format    extensions                   record / row number
========  ===========================  ==============================================
text      ``.txt``, ``.text``          one line (field ``text``); 1-based line number
jsonl     ``.jsonl``, ``.ndjson``      one JSON object per line; 1-based line number
csv       ``.csv``                     one CSV record after the header; 1-based line
                                       number of its first line (the header is line 1)
parquet   ``.parquet``, ``.pq``        one table row; 0-based row index
json      ``.json``                    one JSON document (whole tables, summaries)
========  ===========================  ==============================================
"""

from __future__ import annotations

import os
from collections.abc import Sequence

EXTENSIONS = {
    ".txt": "text",
    ".text": "text",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
}
READ_FORMATS = ("text", "jsonl", "csv", "parquet")  # what the chunked readers stream
WRITE_FORMATS = ("jsonl", "csv", "parquet")  # what result writers produce
TABLE_FORMATS = ("jsonl", "json", "csv", "parquet")  # what whole-table loaders accept
STRUCTURED = ("jsonl", "csv", "parquet")  # formats with named fields


def format_of(path: str | os.PathLike[str]) -> str | None:
    """The format implied by the extension of ``path``, or None when it names none."""
    return EXTENSIONS.get(os.path.splitext(os.fspath(path))[1].lower())


def input_format(path: str | os.PathLike[str]) -> str:
    """jsonl, csv or parquet by extension; anything else (.txt, .de, .hyp, ...) is plain text,
    one record per line: parallel corpora name their files by language."""
    fmt = format_of(path)
    return fmt if fmt in STRUCTURED else "text"


def resolve_format(path: str, fmt: str | None, allowed: Sequence[str]) -> str:
    """The explicit ``fmt``, or the one implied by the file's extension; either must be allowed."""
    if fmt is None:
        fmt = format_of(path)
        if fmt is None:
            raise ValueError(
                f"cannot infer the format of {path!r} from its extension; pass fmt= one of {list(allowed)}"
            )
    if fmt not in allowed:
        raise ValueError(f"unsupported format {fmt!r}; expected one of {list(allowed)}")
    return fmt


def extensions_for(fmt: str) -> list[str]:
    """The extensions of one format, for messages ("expected .jsonl or .ndjson")."""
    return [ext for ext, f in EXTENSIONS.items() if f == fmt]
