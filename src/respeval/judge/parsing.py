"""Reading a verdict out of a judge's reply, honestly.

Order of trust, first stage that yields verdict-like data wins:

1. ``structured``: a mapping the adapter already parsed (a structured-output API);
2. ``json``: the whole reply is one JSON object (what JSON-schema mode produces);
3. ``fenced``: JSON inside Markdown code fences;
4. ``embedded``: JSON objects inside prose (balanced braces, string-aware), with small
   repairs (trailing commas, Python literals, single quotes);
5. ``labels``: ``SCORE: 0.5`` / ``PASS: yes`` lines, last match wins (the ``GRADE:`` style).

Never a default: when no stage yields a valid verdict, the result is a
:class:`ParseFailure` with the reason (and the reply, quoted), and the row is reported
unscored.  Within a stage, several verdict-like objects must agree, or the reply is
ambiguous (a failure too).  An object whose keys repeat (``"score"`` twice, or ``"score"``
and ``"Score"``: keys are read case-insensitively) is no verdict: which one the judge meant
cannot be told.  A score is a JSON number or a string that is exactly one
(:func:`parse_number`): ``"1/2"``, ``"1 out of 2"`` or ``"0,5"`` are not read by a prefix.

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

from respeval.judge.models.base import Completion, RepeatedKeys, repeated_keys

__all__ = [
    "DataShown",
    "ParseFailure",
    "Parsed",
    "RepeatedKeys",
    "extract_verdict",
    "loads_lenient",
    "objects_in",
    "quote_reply",
]

V = TypeVar("V")

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)```", re.S)
# a number, all of it: ASCII digits only (``\d`` would take other scripts' digits too)
_NUMBER = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_MAX_OBJECTS = 64  # a reply with more brace groups than this is not worth scanning further
_REPLY_QUOTED = 160  # characters of the reply an unscored reason quotes


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


def _loads_json(text: str) -> Any:
    """``json.loads``, with the repeated keys of every object found (a top-level object
    that has any becomes a :class:`RepeatedKeys`)."""
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        repeated.extend(repeated_keys([k for k, _ in items]))
        return dict(items)

    value = json.loads(text, object_pairs_hook=pairs)
    return _marked(value, repeated)


def _marked(value: Any, repeated: Sequence[str]) -> Any:
    if repeated and isinstance(value, dict):
        marked = RepeatedKeys(value)
        marked.repeated = tuple(dict.fromkeys(repeated))
        return marked
    return value


def _loads_literal(text: str) -> Any:
    """The repaired reading: ``text`` as a Python literal (literals only), with the
    repeated keys of its dicts found as :func:`_loads_json` finds them."""
    tree = ast.parse(_pythonize(text).strip(), mode="eval")
    repeated: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            repeated.extend(repeated_keys([k.value for k in node.keys if isinstance(k, ast.Constant)]))
    return _marked(ast.literal_eval(tree), repeated)


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
    ValueError when neither works.  An object with repeated keys comes back as a
    :class:`RepeatedKeys` (the last value of each, as ``json.loads`` keeps it)."""
    try:
        return _loads_json(text)
    except (ValueError, RecursionError):
        pass
    try:
        return _loads_literal(text)
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
            r"""(?im)^[\s>#*_`-]*(?:{})[\s*_`"']*[:=][\s*_`"']*(.+?)[\s*_`."']*$""".format(
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
        text_of = json.dumps(obj, default=str)
        if completion.structured_repeated:  # the provider's object had a key twice
            obj = RepeatedKeys(obj)
            obj.repeated = completion.structured_repeated
        yield "structured", [(obj, text_of)]
    text = text.strip()
    if text.startswith("{"):
        whole: Any
        try:
            whole = _loads_json(text)
        except (ValueError, RecursionError):
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
            return _decide(stage, kept, validate, same, completion.text)
    if labels:
        obj, span, copied = _labels(text, labels, data)
        if copied:
            echoed["a label line"] = None
        if obj:
            source = data.echo_of(obj, span)
            if source is None:
                return _decide("labels", [obj], validate, same, completion.text)
            echoed[source] = None
    return ParseFailure(_nothing_found(completion, list(echoed), quoted))


def _decide(
    stage: str,
    objects: list[dict[str, Any]],
    validate: Callable[[Mapping[str, Any]], Validated[V]],
    same: Callable[[V, V], bool],
    reply: str,
) -> Parsed[V] | ParseFailure:
    results = [_repeated(obj) or validate(obj) for obj in objects]
    errors = [r for r in results if isinstance(r, str)]
    verdicts = [r for r in results if not isinstance(r, str)]
    where = "" if stage in ("json", "structured") else f" ({stage})"
    if errors and not verdicts:
        unique = list(dict.fromkeys(errors))
        return ParseFailure(f"invalid verdict{where}: {'; '.join(unique)}; the judge replied {quote_reply(reply)}")
    if errors or any(not same(verdicts[0], v) for v in verdicts[1:]):
        return ParseFailure(f"ambiguous: {len(objects)} different verdicts in the judge output{where}")
    return Parsed(verdicts[0], stage)


def _repeated(obj: Mapping[str, Any]) -> str | None:
    """What is wrong with an object whose keys repeat (None when none do)."""
    repeated = getattr(obj, "repeated", ())
    if not repeated:
        return None
    names = ", ".join(repr(k) for k in repeated[:3])
    return f"duplicate key {names} in the verdict object (which one the judge meant cannot be told)"


def quote_reply(text: str) -> str:
    """The judge's reply, whitespace squeezed and cut, quoted for an unscored reason."""
    squeezed = " ".join(text.split())
    if len(squeezed) > _REPLY_QUOTED:
        squeezed = squeezed[:_REPLY_QUOTED] + "..."
    return repr(squeezed)


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
    """A JSON number, or a string that is exactly a number (``"0.5"``, ``" 1 "``, ``"1e-1"``),
    as float; or what is wrong with it.  A string is never read by a numeric prefix:
    ``"1/2"``, ``"1 out of 2"``, ``"0,5"`` and ``"4 stars"`` are not numbers."""
    if isinstance(value, bool):
        return f"must be a number, got {json.dumps(value)}"
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:
            return f"must be a finite number, got {str(value)[:40]}"
    elif isinstance(value, str):
        if _NUMBER.fullmatch(value.strip()) is None:
            return f"must be a number, got {value[:40]!r}"
        number = float(value.strip())
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
