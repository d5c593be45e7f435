"""Twin of ``cext/csvline.pxi`` (``csvline.h``): CSV lines split, same answers.

A line gets its fields only when the csv module's default dialect certainly reads it as
one whole record of ``ncols`` fields: valid UTF-8, ended by ``\\n``, ``\\r\\n`` or the end
of the file, no other ``\\r`` or ``\\n``, no NUL, fields unquoted (no quote inside) or
quoted (quotes doubled inside, a ``,`` or the end right after the closing quote), not
empty.  Any other line is None, for the caller to read with the csv module.
"""

from __future__ import annotations

import struct
from typing import Any


def _plain(line: bytes, ncols: int) -> list[str] | None:
    if line.endswith(b"\r\n"):
        line = line[:-2]
    elif line.endswith(b"\n"):
        line = line[:-1]
    if not line or b"\r" in line or b"\n" in line or b"\x00" in line:
        return None
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return None
    fields: list[str] = []
    i, n = 0, len(line)
    while True:
        if len(fields) == ncols:
            return None
        if i < n and line[i] == 0x22:
            j = i + 1
            while True:
                if j >= n:
                    return None
                if line[j] == 0x22:
                    if j + 1 < n and line[j + 1] == 0x22:
                        j += 2
                        continue
                    break
                j += 1
            fields.append(line[i + 1 : j].replace(b'""', b'"').decode("utf-8"))
            i = j + 1
            if i < n and line[i] != 0x2C:
                return None
        else:
            j = line.find(b",", i)
            j = n if j < 0 else j
            if b'"' in line[i:j]:
                return None
            fields.append(line[i:j].decode("utf-8"))
            i = j
        if i >= n:
            break
        i += 1
    return fields if len(fields) == ncols else None


def csv_plain_rows(lines: list, ncols: int) -> list[list[str] | None]:
    if ncols <= 0:
        raise ValueError(f"ncols must be positive, got {ncols}")
    out: list[list[str] | None] = []
    for k, line in enumerate(lines):
        if type(line) is not bytes:
            raise TypeError(f"line {k} is a {type(line).__name__}, expected bytes")
        out.append(_plain(line, ncols))
    return out


def csv_columns(lines: list, ncols: int, indices: list, kinds: bytes = b"") -> tuple[list[int], list[Any]]:
    if ncols <= 0:
        raise ValueError(f"ncols must be positive, got {ncols}")
    for index in indices:
        if not 0 <= index < ncols:
            raise ValueError(f"field index {index} is outside 0..{ncols - 1}")
    if kinds and len(kinds) != len(indices):
        raise ValueError(f"{len(indices)} indices but {len(kinds)} kinds")
    fallback: list[int] = []
    columns: list[list[str]] = [[] for _ in indices]
    for i, fields in enumerate(csv_plain_rows(lines, ncols)):
        if fields is None:
            fallback.append(i)
            continue
        for column, index in zip(columns, indices):
            column.append(fields[index])
    out: list[Any] = list(columns)
    for k in range(len(indices)):
        if kinds and kinds[k] == ord("a"):  # the column as Arrow large_string buffers
            data = [value.encode("utf-8") for value in columns[k]]
            offsets = [0]
            for value in data:
                offsets.append(offsets[-1] + len(value))
            out[k] = (struct.pack(f"={len(offsets)}q", *offsets), b"".join(data))
    return fallback, out
