"""File formats by extension: the one map every command uses.

========  ===========================  ==============================================
format    extensions                   record / row number
========  ===========================  ==============================================
text      ``.txt``, ``.text``          one line (field ``text``); 1-based line number
jsonl     ``.jsonl``, ``.ndjson``      one JSON object per line; 1-based line number
csv       ``.csv``                     one CSV record after the header; 1-based line
                                       number of its first line (the header is line 1)
parquet   ``.parquet``, ``.pq``        one table row; 0-based row index
json      ``.json``                    one JSON document: an array of objects (one row
                                       each), or an ``{id: answer}`` object (SQuAD's
                                       predictions: rows ``id``, ``prediction``);
                                       0-based row index
========  ===========================  ==============================================

A file whose extension the map does not name (``.de``, ``.hyp``: parallel corpora name
their files by language; a pipe has none) is read as plain text, unless its first bytes
say it is something else: JSON, JSON lines, Parquet, a compressed or a binary file is
refused, naming the extension to give it (:func:`sniff_mismatch`).  A command refuses a
format it does not read, naming the ones it does.
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
READ_FORMATS = ("text", "jsonl", "csv", "parquet", "json")  # what the chunked readers stream
WRITE_FORMATS = ("jsonl", "csv", "parquet")  # what result writers produce
TABLE_FORMATS = ("jsonl", "json", "csv", "parquet")  # what whole-table loaders accept
STRUCTURED = ("jsonl", "csv", "parquet")  # formats with named fields


def format_of(path: str | os.PathLike[str]) -> str | None:
    """The format implied by the extension of ``path``, or None when it names none."""
    return EXTENSIONS.get(os.path.splitext(os.fspath(path))[1].lower())


def input_format(path: str | os.PathLike[str], unnamed: str | None = None) -> str:
    """The format of an input by extension; an extension the map does not name (.de, .hyp,
    none: a pipe) is ``unnamed`` when given (``--input-format``), else plain text, one record
    per line: parallel corpora name their files by language (the readers refuse such a file
    when its first bytes are another format's)."""
    return format_of(path) or unnamed or "text"


_MAGIC = (
    (b"PAR1", "a Parquet file: name it .parquet"),
    (b"\x1f\x8b", "gzip-compressed: decompress it first (gunzip)"),
    (b"BZh", "bzip2-compressed: decompress it first (bunzip2)"),
    (b"\xfd7zXZ\x00", "xz-compressed: decompress it first (unxz)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed: decompress it first (unzstd)"),
    (b"PK\x03\x04", "a zip archive: extract it first"),
)


def sniff_mismatch(head: bytes) -> str | None:
    """What a file read as plain text under an extension the map does not name really is,
    from its first bytes (``head``), or None when it may well be text."""
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    if b"\x00" in head:
        return "binary, not text"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] in (b"{", b"["):
        import json

        first = text.split(b"\n", 1)[0].strip()
        try:
            value = json.loads(first)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return "JSON lines (its first line is a JSON object): name it .jsonl"
        if isinstance(value, list) or first in (b"[", b"{"):
            return "JSON: name it .json (an array of objects, or an {id: answer} object)"
    return None


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
