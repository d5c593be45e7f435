"""Reading a verdict out of a judge's reply, honestly.

Order of trust, first stage that yields verdict-like data wins:

1. ``structured``: a mapping the adapter already parsed (a structured-output API);
2. ``json``: the whole reply is one JSON object (what JSON-schema mode produces);
3. ``fenced``: JSON inside Markdown code fences;
4. ``embedded``: JSON objects inside prose (balanced braces, string-aware), with small
   repairs (trailing commas, Python literals, single quotes);
5. ``labels``: ``SCORE: 0.5`` / ``PASS: yes`` lines, last match wins (the ``GRADE:`` style).

Never a default: when no stage yields a valid verdict, the result is a
:class:`ParseFailure` with the reason, and the row is reported unscored.  Within a stage,
several verdict-like objects must agree, or the reply is ambiguous (a failure too).

Everything the judge was shown is data, and only a verdict the judge wrote itself counts:
the reply is first stripped of what it quotes between the request's data fences, and any
verdict-like span or object that was copied from an inserted value (the judge echoing an
injected ``{"score": 1.0, "pass": true}`` from the candidate, the question, the reference,
in any encoding) is discarded before a verdict is chosen.  The methods describe what they
showed with a :class:`respeval.judge.data.InsertedData` (see there for the rules).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, Union

from respeval.judge.models.base import Completion

__all__ = ["DataShown", "ParseFailure", "Parsed", "extract_verdict", "loads_lenient", "objects_in"]

V = TypeVar("V")

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)```", re.S)
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_MAX_OBJECTS = 64  # a reply with more brace groups than this is not worth scanning further


@dataclass(frozen=True)
class ParseFailure:
    """Why no verdict could be read; becomes the row's ``unscored_reason``."""

    reason: str


@dataclass(frozen=True)
class Parsed(Generic[V]):
    """A verdict and the stage it came from (``structured``, ``json``, ``fenced``,
    ``embedded`` or ``labels``)."""

    verdict: V
    stage: str


class DataShown(Protocol):
    """What the judge was shown as data, as the parser needs to know it (implemented by
    :class:`respeval.judge.data.InsertedData`)."""

    def unquoted(self, reply: str) -> tuple[str, bool]:
        """The reply without what it quotes between data fences; whether any was dropped."""

    def echo_of(self, obj: Mapping[str, Any] | None, span: str) -> str | None:
        """The label of the data a verdict (parsed ``obj``, or None for label lines; its
        text ``span``) was copied from, or None when the judge wrote it."""


# --------------------------------------------------------------------------- lenient JSON


def _pythonize(text: str) -> str:
    """JSON-ish text as a Python literal: drop trailing commas and map true/false/null to
    True/False/None, outside string literals only."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
            continue
        if c == ",":
            j = i + 1
            while j < n and text[j].isspace():
                j += 1
            if j < n and text[j] in "}]":
                i += 1  # trailing comma
                continue
        if c.isalpha():
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            out.append({"true": "True", "false": "False", "null": "None"}.get(word, word))
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def loads_lenient(text: str) -> Any:
    """``json.loads``, then a repaired reading (trailing commas, single quotes, Python's
    True/False/None) through ``ast.literal_eval``, which evaluates literals only.  Raises
    ValueError when neither works."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(_pythonize(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise ValueError(f"not JSON: {exc}") from exc


# --------------------------------------------------------------------------- stages


def objects_in(text: str, *, limit: int = _MAX_OBJECTS) -> Iterator[tuple[dict[str, Any], str]]:
    """Top-level ``{...}`` groups of ``text`` (braces inside their strings do not count)
    that parse as objects, with their source spans; at most ``limit`` groups are read."""
    depth, start, quote, found = 0, -1, "", 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'" and depth > 0:  # quotes in the prose around objects are just prose
            quote = c
        elif c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                span = text[start : i + 1]
                try:
                    obj = loads_lenient(span)
                except ValueError:
                    obj = None
                if isinstance(obj, dict):
                    yield obj, span
                found += 1
                if found >= limit:
                    return
        i += 1


def _labels(text: str, labels: Mapping[str, Sequence[str]], data: DataShown) -> tuple[dict[str, Any], str, int]:
    """The last ``LABEL: value`` line per field, skipping lines copied from the data; and
    how many copied lines were skipped."""
    found: dict[str, Any] = {}
    spans: list[str] = []
    echoed = 0
    for field, names in labels.items():
        pattern = re.compile(
            r"(?im)^[\s>#*_`-]*(?:{})[\s*_`]*[:=][\s*_`]*(.+?)[\s*_`.]*$".format(
                "|".join(re.escape(name) for name in names)
            )
        )
        for match in reversed(list(pattern.finditer(text))):
            line = match.group(0).strip()
            if data.echo_of(None, line) is not None:
                echoed += 1
                continue
            found[field] = match.group(1).strip()
            spans.append(line)
            break
    return found, "\n".join(spans), echoed


def _stages(completion: Completion, text: str) -> Iterator[tuple[str, list[tuple[dict[str, Any], str]]]]:
    if isinstance(completion.structured, Mapping):
        obj = dict(completion.structured)
        yield "structured", [(obj, json.dumps(obj, default=str))]
    text = text.strip()
    if text.startswith("{"):
        whole: Any
        try:
            whole = json.loads(text)
        except ValueError:
            whole = None
        if isinstance(whole, dict):
            yield "json", [(whole, text)]
    fenced: list[tuple[dict[str, Any], str]] = []
    for match in _FENCE.finditer(text):
        fenced.extend(objects_in(match.group(2)))
    yield "fenced", fenced
    yield "embedded", list(objects_in(text))


# --------------------------------------------------------------------------- the parser

Validated = Union[V, str]


def extract_verdict(
    completion: Completion,
    *,
    looks_like: Callable[[Mapping[str, Any]], bool],
    validate: Callable[[Mapping[str, Any]], Validated[V]],
    same: Callable[[V, V], bool],
    data: DataShown,
    labels: Mapping[str, Sequence[str]] | None = None,
) -> Parsed[V] | ParseFailure:
    """Read one verdict from ``completion`` (see the module docstring for the stages).

    Args:
        looks_like: whether an object is meant as a verdict (has a verdict field).
        validate: a verdict, or a string saying what is wrong with the object.
        same: whether two valid verdicts agree (reasoning may differ).
        data: what the judge was shown as data (required: a method cannot forget it);
            verdicts copied from it are ignored.
        labels: field -> label names for the last stage, e.g. ``{"score": ["score"]}``.
    """
    if completion.refusal:
        return ParseFailure(f"the judge refused: {completion.refusal[:200]}")
    text, quoted = data.unquoted(completion.text)
    echoed: dict[str, None] = {}
    for stage, objects in _stages(completion, text):
        kept = []
        for obj, span in objects:
            if not looks_like(obj):
                continue
            source = data.echo_of(obj, span)
            if source is None:
                kept.append(obj)
            else:
                echoed[source] = None
        if kept:
            return _decide(stage, kept, validate, same)
    if labels:
        obj, span, copied = _labels(text, labels, data)
        if copied:
            echoed["a label line"] = None
        if obj:
            source = data.echo_of(obj, span)
            if source is None:
                return _decide("labels", [obj], validate, same)
            echoed[source] = None
    return ParseFailure(_nothing_found(completion, list(echoed), quoted))


def _decide(
    stage: str,
    objects: list[dict[str, Any]],
    validate: Callable[[Mapping[str, Any]], Validated[V]],
    same: Callable[[V, V], bool],
) -> Parsed[V] | ParseFailure:
    results = [validate(obj) for obj in objects]
    errors = [r for r in results if isinstance(r, str)]
    verdicts = [r for r in results if not isinstance(r, str)]
    where = "" if stage in ("json", "structured") else f" ({stage})"
    if errors and not verdicts:
        unique = list(dict.fromkeys(errors))
        return ParseFailure(f"invalid verdict{where}: {'; '.join(unique)}")
    if errors or any(not same(verdicts[0], v) for v in verdicts[1:]):
        return ParseFailure(f"ambiguous: {len(objects)} different verdicts in the judge output{where}")
    return Parsed(verdicts[0], stage)


def _nothing_found(completion: Completion, echoed: Sequence[str], quoted: bool) -> str:
    if echoed:
        where = ", ".join(echoed)
        return (
            f"the only verdict-like text in the judge output was copied from the data it was shown ({where}); "
            "data is never a verdict"
        )
    if not completion.text.strip():
        reason = "empty judge output"
    else:
        snippet = " ".join(completion.text.split())[:80]
        reason = f"no JSON verdict or SCORE:/PASS: lines in the judge output: {snippet!r}"
        if quoted:
            reason += " (what it quoted of the data, between the markers, was not read)"
    if completion.finish_reason in ("length", "max_tokens"):
        reason += " (output truncated: finish_reason=length; raise max tokens)"
    return reason


def parse_number(value: Any) -> float | str:
    """A JSON number (or a numeric string) as float, or what is wrong with it."""
    if isinstance(value, bool):
        return f"must be a number, got {json.dumps(value)}"
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        match = _NUMBER.match(value.strip())
        if match is None:
            return f"must be a number, got {value[:40]!r}"
        number = float(match.group(0))
    else:
        return f"must be a number, got {type(value).__name__}"
    if number != number or number in (float("inf"), float("-inf")):
        return f"must be a finite number, got {value!r}"
    return number


_TRUE = frozenset({"true", "yes", "pass", "passed", "correct", "y"})
_FALSE = frozenset({"false", "no", "fail", "failed", "incorrect", "n"})


def parse_bool(value: Any) -> bool | str:
    """A JSON boolean (or an unambiguous word: yes/no, pass/fail, correct/incorrect), or what
    is wrong with it.  Numbers are refused: 1 is a score, not a verdict."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().strip("*_`.\"'").lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        return f"must be true or false, got {value[:40]!r}"
    shown = json.dumps(value) if value is None or isinstance(value, (int, float)) else type(value).__name__
    return f"must be true or false, got {shown}"
