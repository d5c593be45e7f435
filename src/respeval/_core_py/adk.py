"""ADK EvalSet files read for their tool uses, pure-Python twin of ``cext/adk.pxi`` (same
name, same results).

``adk_eval_set_tool_uses(data)`` takes the bytes of an EvalSet file (``{eval_set_id,
eval_cases: [{eval_id, conversation: [invocation, ...]}]}``) and returns eight buffers, the
cases and invocations in file order:

* ``case_id_offsets`` (int64, cases + 1) and ``case_ids`` (UTF-8): each case's ``eval_id``;
* ``case_kinds``: a byte per case, ``c`` a conversation, ``s`` a ``conversation_scenario``;
* ``case_invocations`` (int64, cases + 1): case ``k``'s invocations are ``case_invocations[k]``
  up to ``case_invocations[k + 1]``;
* ``invocation_id_offsets`` (int64, invocations + 1) and ``invocation_ids`` (UTF-8; ``""``
  when null or absent);
* ``tool_use_starts`` and ``tool_use_ends`` (int64, one per invocation): where each
  invocation's ``intermediate_data.tool_uses`` list stands in ``data`` (its JSON text is
  ``data[start:end]``), -1 and -1 when the list or the intermediate data is null or absent:
  the trajectory kernels read the calls there (``respeval._tool_calls.JsonSpans``).

Field names as ``respeval.agents.load_eval_set`` reads them: snake_case, or camelCase below
the top level where the loader reads both (``evalId``, ``userContent``, ``intermediateData``,
``toolUses``, ...), ``eval_set_id``, ``eval_cases``, ``parts`` and ``rubrics`` as written.

None (the file is the Python loader's, which gives its result or its error, naming file,
case and field, exactly) unless the file certainly loads, and loads as read here:

* UTF-8, and JSON as ``json.loads`` reads it with no NaN or Infinity, no integer part of more
  than 4,000 digits, containers nested at most 64 deep, and no ``\\u[dD][89a-fA-F]`` anywhere
  (the readers' pre-filter for lone surrogates);
* an object with a string ``eval_set_id`` and ``eval_cases`` null or a list of objects;
* each case: a string ``eval_id``; exactly one of ``conversation`` (a list of invocation
  objects) and ``conversation_scenario`` (an object) not null; ``session_input`` null or an
  object naming ``app_name`` and ``user_id``; ``rubrics`` null or a list;
* each invocation: a ``user_content`` key; ``user_content`` and ``final_response`` null or
  objects whose ``parts`` are null or a list of objects; ``invocation_id`` a string or null;
  ``rubrics`` null or a list; ``duration``, ``model_duration`` and ``tool_duration`` null or
  numbers; ``intermediate_data`` null or an object without ``invocation_events`` (calls
  inside events: the newer form, left to the loader), whose ``tool_uses`` is null or a list,
  ``tool_responses`` null or a list of objects, ``intermediate_responses`` null or a list of
  ``[author, parts]`` pairs with ``parts`` null or a list of objects;
* no object gives a field read above twice, in one spelling or both.

The calls inside a tool-use list are not looked at: the trajectory reader refuses what the
loader refuses.  This twin decodes the file with ``json``'s pure-Python scanner, its arrays
carrying where they stand in the text and its objects their keys in order.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from array import array
from collections.abc import Callable
from typing import Any

__all__ = ["adk_eval_set_tool_uses"]

_MAX_DEPTH = 64
_MAX_INT_DIGITS = 4000
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_INT_PART = re.compile(r"-?(\d*)")


class _Refused(Exception):
    """The file is the Python loader's."""


class _Array(list):
    """A JSON array and where it stands in the text: ``text[start:end]``."""

    start = 0
    end = 0


class _Object(dict):
    """A JSON object (the last value of a repeated key, as json.loads keeps it) and its keys
    in order, repeats included."""

    keys_given: list[str]


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    out = _Object(pairs)
    out.keys_given = [k for k, _ in pairs]
    return out


def _int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise _Refused
    return int(text)


def _float(text: str) -> float:
    if len(_INT_PART.match(text).group(1)) > _MAX_INT_DIGITS:  # type: ignore[union-attr]
        raise _Refused
    return float(text)


def _constant(name: str) -> Any:
    raise _Refused  # NaN, Infinity, -Infinity


class _Decoder(json.JSONDecoder):
    def __init__(self) -> None:
        super().__init__(object_pairs_hook=_object, parse_int=_int, parse_float=_float, parse_constant=_constant)

        def parse_array(s_and_end: tuple[str, int], scan_once: Callable[..., Any]) -> tuple[_Array, int]:
            # the stdlib's own array parser and pure-Python scanner (not in typeshed's stubs)
            values, end = json.decoder.JSONArray(s_and_end, scan_once)  # type: ignore[attr-defined]
            out = _Array(values)
            out.start, out.end = s_and_end[1] - 1, end
            return out, end

        self.parse_array = parse_array
        self.scan_once = json.scanner.py_make_scanner(self)  # type: ignore[attr-defined]


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _need(condition: bool) -> None:
    if not condition:
        raise _Refused


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _field(obj: Any, name: str, *, both: bool = True) -> tuple[bool, Any]:
    """(given, value) of a field in snake_case (or camelCase, with ``both``); a field given
    twice, in one spelling or both, refuses the file."""
    _need(isinstance(obj, _Object))
    spellings = {name, _camel(name)} if both else {name}
    given = [k for k in obj.keys_given if k in spellings]
    _need(len(given) <= 1)
    return (True, obj[given[0]]) if given else (False, None)


def _list_of(value: Any, check: Callable[[Any], None]) -> None:
    if value is None:
        return
    _need(isinstance(value, list))
    for item in value:
        check(item)


def _an_object(value: Any) -> None:
    _need(isinstance(value, dict))


def _content(value: Any) -> None:
    if value is None:
        return
    _list_of(_field(value, "parts")[1], _an_object)


def _null_or_list(value: Any) -> None:
    _need(value is None or isinstance(value, list))


def _intermediate_response(item: Any) -> None:
    _need(isinstance(item, list) and len(item) == 2)
    _list_of(item[1], _an_object)


def _tool_uses(inter: Any) -> _Array | None:
    if inter is None:
        return None
    _need(not _field(inter, "invocation_events")[0])
    uses = _field(inter, "tool_uses")[1]
    _need(uses is None or isinstance(uses, list))
    _list_of(_field(inter, "tool_responses")[1], _an_object)
    _list_of(_field(inter, "intermediate_responses")[1], _intermediate_response)
    return uses


def _invocation_id(inv: Any) -> str:
    value = _field(inv, "invocation_id")[1]
    _need(value is None or isinstance(value, str))
    return value or ""


def _check_invocation(inv: Any) -> None:
    given, user = _field(inv, "user_content")
    _need(given)
    _content(user)
    _content(_field(inv, "final_response")[1])
    _null_or_list(_field(inv, "rubrics", both=False)[1])
    for name in ("duration", "model_duration", "tool_duration"):
        value = _field(inv, name)[1]
        _need(value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)))


def _check_case(case: Any) -> tuple[str, bool, list]:
    """(eval_id, a conversation case, its invocations)."""
    eval_id = _field(case, "eval_id")[1]
    _need(isinstance(eval_id, str))
    conv = _field(case, "conversation")[1]
    scenario = _field(case, "conversation_scenario")[1]
    _need((conv is None) != (scenario is None))
    _need(conv is None or isinstance(conv, list))
    _need(scenario is None or isinstance(scenario, dict))
    session = _field(case, "session_input")[1]
    if session is not None:
        _need(_field(session, "app_name")[0] and _field(session, "user_id")[0])
    _null_or_list(_field(case, "rubrics", both=False)[1])
    return eval_id, conv is not None, conv or []


class _Bytes:
    """Byte offsets of character offsets into ``text``, asked for in increasing order."""

    def __init__(self, text: str) -> None:
        self.text, self.ascii = text, text.isascii()
        self.char, self.byte = 0, 0

    def at(self, char: int) -> int:
        if self.ascii:
            return char
        if char < self.char:
            self.char, self.byte = 0, 0
        self.byte += len(self.text[self.char : char].encode("utf-8"))
        self.char = char
        return self.byte


def adk_eval_set_tool_uses(data: Any) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes, bytes, bytes] | None:
    """The cases and invocations of an ADK EvalSet file's bytes, or None when the Python
    loader must read it (see the module docstring)."""
    raw = bytes(data)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if _SURROGATE_ESCAPE.search(raw):
        return None
    try:
        doc = _Decoder().decode(text)
    except (ValueError, RecursionError, _Refused):
        return None
    try:
        _need(isinstance(doc, dict) and _depth(doc) <= _MAX_DEPTH)
        _need(isinstance(_field(doc, "eval_set_id", both=False)[1], str))
        cases = _field(doc, "eval_cases", both=False)[1]
        _list_of(cases, _an_object)
        read = []
        for case in cases or []:
            eval_id, conversation, invocations = _check_case(case)
            for inv in invocations:
                _an_object(inv)
                _check_invocation(inv)
            tool_uses = [(_invocation_id(i), _tool_uses(_field(i, "intermediate_data")[1])) for i in invocations]
            read.append((eval_id, conversation, tool_uses))
    except _Refused:
        return None
    at = _Bytes(text)
    case_off, case_ids, kinds, first = array("q", [0]), bytearray(), bytearray(), array("q", [0])
    inv_off, inv_ids, tool_starts, tool_ends = array("q", [0]), bytearray(), array("q"), array("q")
    for eval_id, conversation, invocations in read:
        case_ids += eval_id.encode("utf-8")
        case_off.append(len(case_ids))
        kinds += b"c" if conversation else b"s"
        for inv_id, uses in invocations:
            inv_ids += inv_id.encode("utf-8")
            inv_off.append(len(inv_ids))
            tool_starts.append(-1 if uses is None else at.at(uses.start))
            tool_ends.append(-1 if uses is None else at.at(uses.end))
        first.append(len(inv_off) - 1)
    return (
        case_off.tobytes(),
        bytes(case_ids),
        bytes(kinds),
        first.tobytes(),
        inv_off.tobytes(),
        bytes(inv_ids),
        tool_starts.tobytes(),
        tool_ends.tobytes(),
    )
