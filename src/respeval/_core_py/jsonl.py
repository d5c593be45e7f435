"""Twin of ``cext/jsonl.pxi`` (``jsonl.h``): JSON lines checked and split, same answers.

A line is "ok" only when ``json.loads`` certainly reads it as one object: valid UTF-8
(non-ASCII inside strings only), JSON's grammar exactly, nesting at most ``MAX_DEPTH``
deep, integers of at most ``MAX_INT_DIGITS`` digits, top-level keys without escapes.
Anything else is "unsure" (0), for the caller to read with ``json.loads``.
"""

from __future__ import annotations

import json
import re
import struct
from typing import Any

MAX_DEPTH = 64
MAX_INT_DIGITS = 4000
_WS = b" \t\n\r"
_HEX = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES = frozenset(b'"\\/bfnrt')
_DIGITS = frozenset(b"0123456789")


class _Unsure(Exception):
    pass


def _ws(s: bytes, i: int) -> int:
    while i < len(s) and s[i] in _WS:
        i += 1
    return i


def _utf8(s: bytes, i: int) -> int:
    """The length of the UTF-8 sequence at ``s[i]`` (a byte >= 0x80), as Python's strict
    decoder takes it."""
    lead = s[i]
    length = 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 0
    try:
        if length and i + length <= len(s):
            s[i : i + length].decode("utf-8")
            return length
    except UnicodeDecodeError:
        pass
    raise _Unsure


def _string(s: bytes, i: int) -> tuple[int, bool]:
    """At '"': the index past the closing quote, and whether it had a backslash."""
    i += 1
    escaped = False
    while i < len(s):
        ch = s[i]
        if ch == 0x22:
            return i + 1, escaped
        if ch < 0x20:
            raise _Unsure
        if ch >= 0x80:
            i += _utf8(s, i)
            continue
        if ch == 0x5C:
            escaped = True
            if i + 1 >= len(s):
                raise _Unsure
            if s[i + 1] == 0x75:  # \uXXXX
                if i + 5 >= len(s) or not all(c in _HEX for c in s[i + 2 : i + 6]):
                    raise _Unsure
                i += 6
            elif s[i + 1] in _ESCAPES:
                i += 2
            else:
                raise _Unsure
            continue
        i += 1
    raise _Unsure


def _digits(s: bytes, i: int) -> int:
    while i < len(s) and s[i] in _DIGITS:
        i += 1
    return i


def _number(s: bytes, i: int) -> int:
    if i < len(s) and s[i] == 0x2D:
        i += 1
    if i >= len(s):
        raise _Unsure
    if s[i] == 0x30:
        i += 1
    elif 0x31 <= s[i] <= 0x39:
        j = _digits(s, i + 1)
        if j - i > MAX_INT_DIGITS:
            raise _Unsure
        i = j
    else:
        raise _Unsure
    if i < len(s) and s[i] == 0x2E:
        j = _digits(s, i + 1)
        if j == i + 1:
            raise _Unsure
        i = j
    if i < len(s) and s[i] in b"eE":
        i += 1
        if i < len(s) and s[i] in b"+-":
            i += 1
        j = _digits(s, i)
        if j == i:
            raise _Unsure
        i = j
    return i


def _container(s: bytes, i: int, depth: int) -> int:
    is_object = s[i] == 0x7B
    close = 0x7D if is_object else 0x5D
    if depth >= MAX_DEPTH:
        raise _Unsure
    i = _ws(s, i + 1)
    if i < len(s) and s[i] == close:
        return i + 1
    while True:
        if is_object:
            if i >= len(s) or s[i] != 0x22:
                raise _Unsure
            i, _ = _string(s, i)
            i = _ws(s, i)
            if i >= len(s) or s[i] != 0x3A:
                raise _Unsure
            i = _ws(s, i + 1)
        i = _ws(s, _value(s, i, depth + 1))
        if i >= len(s):
            raise _Unsure
        if s[i] == close:
            return i + 1
        if s[i] != 0x2C:
            raise _Unsure
        i = _ws(s, i + 1)


def _value(s: bytes, i: int, depth: int) -> int:
    if i >= len(s):
        raise _Unsure
    ch = s[i]
    if ch == 0x22:
        return _string(s, i)[0]
    if ch in b"{[":
        return _container(s, i, depth)
    for word in (b"true", b"false", b"null"):
        if ch == word[0]:
            if s[i : i + len(word)] != word:
                raise _Unsure
            return i + len(word)
    return _number(s, i)


def _fields(s: bytes, keys: list[bytes], spans: list[int]) -> bool:
    i = _ws(s, 0)
    if i >= len(s) or s[i] != 0x7B:
        return False
    i = _ws(s, i + 1)
    if i < len(s) and s[i] == 0x7D:
        i += 1
    else:
        while True:
            if i >= len(s) or s[i] != 0x22:
                return False
            key_at = i + 1
            i, escaped = _string(s, i)
            if escaped:
                return False
            key = s[key_at : i - 1]
            i = _ws(s, i)
            if i >= len(s) or s[i] != 0x3A:
                return False
            value_at = i = _ws(s, i + 1)
            i = _value(s, i, 1)
            for k, wanted in enumerate(keys):
                if key == wanted:
                    spans[2 * k], spans[2 * k + 1] = value_at, i
            i = _ws(s, i)
            if i >= len(s):
                return False
            if s[i] == 0x7D:
                i += 1
                break
            if s[i] != 0x2C:
                return False
            i = _ws(s, i + 1)
    return _ws(s, i) == len(s)


def jsonl_field_spans(lines: list, keys: list) -> tuple[bytes, bytes]:
    encoded = [k.encode("utf-8") for k in keys]
    ok = bytearray(len(lines))
    spans_out: list[int] = []
    for n, line in enumerate(lines):
        if type(line) is not bytes:
            raise TypeError(f"line {n} is a {type(line).__name__}, expected bytes")
        spans = [-1] * (2 * len(keys))
        try:
            ok[n] = _fields(line, encoded, spans)
        except _Unsure:
            ok[n] = 0
        if not ok[n]:
            spans = [-1] * (2 * len(keys))
        spans_out.extend(spans)
    return bytes(ok), struct.pack(f"={len(spans_out)}q", *spans_out)


class _Other(Exception):
    pass


# an escape of a UTF-16 surrogate (readers._SURROGATE_ESCAPE): such a line is json.loads'
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


def _simple_value(line: bytes, start: int, end: int, kind: int) -> Any:
    """The value ``json.loads`` gives for ``line[start:end]`` when it can be taken directly
    (``jsonl.h``'s ``rv_jl_value_kind``); :class:`_Other` when the line must be decoded."""
    if start < 0 or end <= start:
        raise _Other
    span = line[start:end]
    if span[0] == 0x22:
        if b"\\" in span:
            return json.loads(span)  # no lone surrogate: the line has no surrogate escape
        return span[1:-1].decode("utf-8")
    if kind == ord("r") and span[0] in b"[{":
        return span.decode("utf-8")
    if kind not in b"rk" or not all(ch in _DIGITS for ch in span):  # (an 'a' key takes strings only)
        raise _Other
    if kind == ord("k"):
        return span.decode("ascii")
    if len(span) > 18:
        raise _Other
    return int(span)


def jsonl_columns(lines: list, keys: list, kinds: bytes) -> tuple[list[int], list[Any]]:
    if len(kinds) != len(keys):
        raise ValueError(f"{len(keys)} keys but {len(kinds)} kinds")
    ok, raw_spans = jsonl_field_spans(lines, keys)
    spans = struct.unpack(f"={len(raw_spans) // 8}q", raw_spans)
    width = 2 * len(keys)
    fallback: list[int] = []
    columns: list[list[Any]] = [[] for _ in keys]
    for i, line in enumerate(lines):
        try:
            if not ok[i] or _SURROGATE_ESCAPE.search(line):
                raise _Other
            at = width * i
            values = [_simple_value(line, spans[at + 2 * k], spans[at + 2 * k + 1], kinds[k]) for k in range(len(keys))]
        except _Other:
            fallback.append(i)
            continue
        for column, value in zip(columns, values):
            column.append(value)
    out: list[Any] = list(columns)
    for k, kind in enumerate(kinds):
        if kind == ord("a"):  # the column as Arrow large_string buffers
            data = [value.encode("utf-8") for value in columns[k]]
            offsets = [0]
            for value in data:
                offsets.append(offsets[-1] + len(value))
            out[k] = (struct.pack(f"={len(offsets)}q", *offsets), b"".join(data))
    return fallback, out


def line_block(data: Any, start: int, max_lines: int, final: bool) -> tuple[int, int]:
    """``(lines, end)``: how many of the lines of ``data[start:]`` (each ending with ``\\n``;
    with ``final``, the last may end with the data instead) are taken, at most
    ``max_lines``, and the offset just past them."""
    data = bytes(data)
    if start < 0 or start > len(data) or max_lines < 0:
        raise ValueError(f"start {start} and max_lines {max_lines} do not fit data of {len(data)} bytes")
    lines, at = 0, start
    while lines < max_lines and at < len(data):
        nl = data.find(b"\n", at)
        if nl < 0:
            if final:
                lines, at = lines + 1, len(data)
            break
        lines, at = lines + 1, nl + 1
    return lines, at


def jsonl_block_columns(block: Any, keys: list, kinds: bytes) -> tuple[list[tuple[int, int, int]], list[Any]]:
    """``jsonl_columns`` of the lines of ``block`` (each ending with ``\\n``, the last
    perhaps not: a block ``line_block`` measured), read in place, without a bytes object
    per line.  Returns ``(fallback, columns)``, each line left to ``json.loads`` as
    ``(index, start, end)``: its place in the block."""
    data = bytes(block)
    lines = _split_lines(data)
    fallback, columns = jsonl_columns(lines, keys, kinds)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return [(i, starts[i], starts[i + 1]) for i in fallback], columns


def _split_lines(data: bytes) -> list[bytes]:
    """The lines of ``data``, each with its ``\\n`` (the last perhaps without), as a binary
    file's iteration gives them."""
    lines = [line + b"\n" for line in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]
