"""Reading agent conversations: ADK eval sets (three shapes) and ADK session dumps.

ADK eval files (``agent_semantics.md`` §2.2), detected by content, not by name:

* **EvalSet schema** (``*.evalset.json``, also accepted in ``*.test.json``): an object with
  ``eval_set_id`` and ``eval_cases``; below it snake_case or camelCase keys.
* **legacy turn list** (``*.test.json``): a list of turns ``{query, expected_tool_use,
  reference}``; the file is one eval case, named after its path.
* **legacy eval-set list**: a list of ``{name, data: [turns], initial_session}``.

Session dumps (``*.session.json``: ``{id, app_name, user_id, state, events}``) become
invocations as ADK's ``EvaluationGenerator.convert_events_to_eval_invocations`` does: events
grouped by invocation id (groups without a user event included), the last user event's
content as the user turn, the last final-response event (one without text never replaces
one with text) as the final response, and every other event with text, calls, responses,
inline data or grounding as intermediate data.

Every error names the file, the eval case and the invocation (and the call) it is about.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import uuid
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from respeval import _backend
from respeval._collector import fewer_collections
from respeval._renamed import renamed_value
from respeval._tool_calls import JsonSpans
from respeval.errors import RespevalError
from respeval.io.readers import lone_surrogate

__all__ = [
    "FORMAT_EVAL_SET",
    "FORMAT_LEGACY_LIST",
    "FORMAT_LEGACY_TURNS",
    "USAGE_FIELDS",
    "AgentDataError",
    "ModelCall",
    "Session",
    "EvalCase",
    "EvalSet",
    "EvalSetToolUses",
    "Invocation",
    "invocations_from_events",
    "load_eval_set",
    "load_session",
    "parse_invocations",
    "read_tool_uses",
]

FORMAT_EVAL_SET = "EvalSet schema"
FORMAT_LEGACY_TURNS = "legacy turn list (one eval case per file)"
FORMAT_LEGACY_LIST = "legacy eval-set list [{name, data, initial_session}]"


class AgentDataError(RespevalError, ValueError):
    """An eval set, session or trajectory that cannot be read; the message names the file,
    the eval case and the invocation."""


# google-genai's GenerateContentResponseUsageMetadata counts that ADK's token_usage_v1 reads
USAGE_FIELDS = (
    "prompt_token_count",
    "tool_use_prompt_token_count",
    "candidates_token_count",
    "thoughts_token_count",
    "cached_content_token_count",
)


@dataclass(frozen=True)
class ModelCall:
    """One event of an invocation that ADK counts as a model call (it has usage metadata or
    a model version): its token counts (``USAGE_FIELDS``, None where not reported; ``usage``
    None when the event had no usage metadata) and its model version."""

    usage: Mapping[str, int | None] | None
    model: str | None = None


@dataclass
class Invocation:
    """One user turn and what the agent did for it.

    ``calls`` are ``{"name": str, "args": dict | None}`` in the order made (ADK's
    ``get_all_tool_calls``); ``final_text`` is the final response's text parts joined by
    newlines (``""`` without one, as ADK reads it).
    """

    invocation_id: str
    user_text: str
    final_text: str
    calls: list[dict[str, Any]] = field(default_factory=list)
    tool_responses: list[dict[str, Any]] = field(default_factory=list)
    intermediate_texts: list[tuple[str, str]] = field(default_factory=list)
    rubrics: list[dict[str, Any]] = field(default_factory=list)
    has_final_response: bool = True
    raw: Mapping[str, Any] | None = field(default=None, repr=False)
    model_calls: list[ModelCall] | None = None
    """The events that were model calls (ADK's ``inference_call_count_v1`` counts them);
    None when the invocation's intermediate data is not a list of events (ADK: n/a)."""
    duration: float | None = None
    model_duration: float | None = None
    tool_duration: float | None = None
    """Seconds the invocation took, of them awaiting a model, and inside tools (ADK's
    ``Invocation.duration``, ``model_duration``, ``tool_duration``; None: not timed)."""

    def to_conversation(self) -> list[dict[str, Any]]:
        """This turn as judge-layer messages: the user, each intermediate step, the answer."""
        turns: list[dict[str, Any]] = [{"role": "user", "content": self.user_text}]
        for author, text in self.intermediate_texts:
            turns.append({"role": "assistant", "author": author, "content": text})
        responses = list(self.tool_responses)
        for call in self.calls:
            turns.append({"role": "tool_call", "name": call["name"], "args": call.get("args")})
            for i, resp in enumerate(responses):
                if resp.get("name") == call["name"]:
                    turns.append({"role": "tool_result", "name": resp["name"], "content": resp.get("response")})
                    del responses[i]
                    break
        if self.final_text:
            turns.append({"role": "assistant", "content": self.final_text})
        return turns


@dataclass
class EvalCase:
    eval_id: str
    invocations: list[Invocation] | None  # None: a conversation_scenario case (no static turns)
    scenario: Mapping[str, Any] | None = None
    session_input: dict[str, Any] | None = None
    rubrics: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None  # why the case could not be read (``on_error="record"`` only)

    @property
    def kind(self) -> str:
        if self.error is not None:
            return "unreadable"
        return "conversation" if self.invocations is not None else "conversation_scenario"


@dataclass
class EvalSet:
    eval_set_id: str
    cases: list[EvalCase]
    format: str
    path: str = ""
    name: str | None = None

    def case(self, eval_id: str) -> EvalCase:
        for c in self.cases:
            if c.eval_id == eval_id:
                return c
        raise KeyError(f"{self.path or self.eval_set_id}: no eval case {eval_id!r}")


# ---------------------------------------------------------------------------------------
# key access: snake_case or camelCase
# ---------------------------------------------------------------------------------------


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _get(obj: Mapping[str, Any], name: str, default: Any = None) -> Any:
    if name in obj:
        return obj[name]
    return obj.get(_camel(name), default)


def _has(obj: Mapping[str, Any], name: str) -> bool:
    return name in obj or _camel(name) in obj


class _Where:
    """Where we are in a file, for messages: file, case, invocation."""

    def __init__(self, path: str, case: str | None = None, invocation: int | None = None) -> None:
        self.path, self.case, self.invocation = path, case, invocation

    def at(self, case: str | None = None, invocation: int | None = None) -> _Where:
        return _Where(self.path, case if case is not None else self.case, invocation)

    def error(self, what: str) -> AgentDataError:
        parts = [self.path or "<data>"]
        if self.case is not None:
            parts.append(f"eval case {self.case!r}")
        if self.invocation is not None:
            parts.append(f"invocation {self.invocation}")
        return AgentDataError(", ".join(parts) + ": " + what)


def _mapping(value: Any, what: str, where: _Where) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise where.error(f"{what} is a {type(value).__name__}, expected an object")
    return value


def _list(value: Any, what: str, where: _Where) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise where.error(f"{what} is a {type(value).__name__}, expected a list")
    return value


# ---------------------------------------------------------------------------------------
# google-genai Content
# ---------------------------------------------------------------------------------------


def _parts(content: Any, what: str, where: _Where) -> list[Mapping[str, Any]]:
    if content is None:
        return []
    content = _mapping(content, what, where)
    parts = _list(content.get("parts"), f"{what}.parts", where)
    return [_mapping(p, f"{what}.parts[{i}]", where) for i, p in enumerate(parts)]


def _text(parts: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str) and p.get("text"))


def _call(fc: Any, what: str, where: _Where) -> dict[str, Any]:
    fc = _mapping(fc, what, where)
    name = fc.get("name")
    if not isinstance(name, str):
        raise where.error(f"{what} has no tool name" if name is None else f"{what}.name is a {type(name).__name__}")
    args = fc.get("args")
    if args is not None and not isinstance(args, dict):
        raise where.error(f"{what} ({name}): args is a {type(args).__name__}, expected a JSON object")
    return {"name": name, "args": args, "id": fc.get("id")}


def _response(fr: Any, what: str, where: _Where) -> dict[str, Any]:
    fr = _mapping(fr, what, where)
    return {"name": fr.get("name"), "response": fr.get("response"), "id": fr.get("id")}


def _calls_in(parts: Sequence[Mapping[str, Any]], what: str, where: _Where) -> list[dict[str, Any]]:
    out = []
    for i, p in enumerate(parts):
        fc = _get(p, "function_call")
        if fc is not None:
            # an empty object is a call without a name (ADK keeps it): an error, not a dropped call
            out.append(_call(fc, f"{what}.parts[{i}].function_call", where))
    return out


def _responses_in(parts: Sequence[Mapping[str, Any]], what: str, where: _Where) -> list[dict[str, Any]]:
    out = []
    for i, p in enumerate(parts):
        fr = _get(p, "function_response")
        if fr:
            out.append(_response(fr, f"{what}.parts[{i}].function_response", where))
    return out


# ---------------------------------------------------------------------------------------
# the EvalSet schema
# ---------------------------------------------------------------------------------------


def _usage(event: Mapping[str, Any], what: str, where: _Where) -> ModelCall | None:
    """The model call an event stands for (ADK: usage metadata or a model version), or None."""
    usage = _get(event, "usage_metadata")
    model = _get(event, "model_version")
    if usage is None and model is None:
        return None
    if model is not None and not isinstance(model, str):
        raise where.error(f"{what}.model_version is a {type(model).__name__}, expected a string")
    if usage is None:
        return ModelCall(None, model)
    usage = _mapping(usage, f"{what}.usage_metadata", where)
    counts: dict[str, int | None] = {}
    for name in USAGE_FIELDS:
        value = _get(usage, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise where.error(f"{what}.usage_metadata.{name} is {value!r}, expected a whole number of tokens")
        counts[name] = value
    return ModelCall(counts, model)


def _seconds(data: Mapping[str, Any], name: str, where: _Where) -> float | None:
    value = _get(data, name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise where.error(f"{name} is {value!r}, expected a number of seconds")
    return float(value)


def _invocation(data: Any, where: _Where) -> Invocation:
    data = _mapping(data, "the invocation", where)
    if not _has(data, "user_content"):
        raise where.error("missing user_content")
    user_parts = _parts(_get(data, "user_content"), "user_content", where)
    final = _get(data, "final_response")
    final_parts = _parts(final, "final_response", where)
    calls: list[dict[str, Any]] = []
    responses: list[dict[str, Any]] = []
    texts: list[tuple[str, str]] = []
    model_calls: list[ModelCall] | None = None
    inter = _get(data, "intermediate_data")
    if inter is not None:
        inter = _mapping(inter, "intermediate_data", where)
        if _has(inter, "invocation_events"):
            model_calls = []
            for k, ev in enumerate(_list(_get(inter, "invocation_events"), "invocation_events", where)):
                ev = _mapping(ev, f"invocation_events[{k}]", where)
                call = _usage(ev, f"invocation_events[{k}]", where)
                if call is not None:
                    model_calls.append(call)
                parts = _parts(ev.get("content"), f"invocation_events[{k}].content", where)
                calls += _calls_in(parts, f"invocation_events[{k}].content", where)
                responses += _responses_in(parts, f"invocation_events[{k}].content", where)
                text = _text(parts)
                if text:
                    texts.append((str(ev.get("author", "")), text))
        else:
            for k, fc in enumerate(_list(_get(inter, "tool_uses"), "tool_uses", where)):
                calls.append(_call(fc, f"tool_uses[{k}]", where))
            for k, fr in enumerate(_list(_get(inter, "tool_responses"), "tool_responses", where)):
                responses.append(_response(fr, f"tool_responses[{k}]", where))
            for k, item in enumerate(_list(_get(inter, "intermediate_responses"), "intermediate_responses", where)):
                if not isinstance(item, (list, tuple)) or len(item) != 2:
                    raise where.error(f"intermediate_responses[{k}] must be [author, parts]")
                parts = [
                    _mapping(p, f"intermediate_responses[{k}] part", where) for p in _list(item[1], "parts", where)
                ]
                text = _text(parts)
                if text:
                    texts.append((str(item[0]), text))
    return Invocation(
        invocation_id=str(_get(data, "invocation_id", "") or ""),
        user_text=_text(user_parts),
        final_text=_text(final_parts),
        calls=calls,
        tool_responses=responses,
        intermediate_texts=texts,
        rubrics=list(_list(data.get("rubrics"), "rubrics", where)),
        has_final_response=final is not None,
        raw=data,
        model_calls=model_calls,
        duration=_seconds(data, "duration", where),
        model_duration=_seconds(data, "model_duration", where),
        tool_duration=_seconds(data, "tool_duration", where),
    )


def parse_invocations(items: Sequence[Any], where: str = "<invocations>", case: str | None = None) -> list[Invocation]:
    """ADK ``Invocation`` objects (JSON, snake_case or camelCase) as respeval invocations."""
    at = _Where(where, case)
    return [_invocation(inv, at.at(invocation=i)) for i, inv in enumerate(_list(list(items), "invocations", at))]


def _session_input(data: Any, where: _Where) -> dict[str, Any] | None:
    if data is None:
        return None
    data = _mapping(data, "session_input", where)
    for key in ("app_name", "user_id"):
        if not _has(data, key):
            raise where.error(f"session_input has no {key}")
    return {
        "app_name": _get(data, "app_name"),
        "user_id": _get(data, "user_id"),
        "session_id": _get(data, "session_id"),
        "state": _get(data, "state") or {},
    }


def _eval_set(data: Mapping[str, Any], where: _Where, record: bool = False) -> EvalSet:
    set_id = data.get("eval_set_id")
    if not isinstance(set_id, str):
        raise where.error("eval_set_id must be a string")
    cases = []
    for k, case in enumerate(_list(data.get("eval_cases"), "eval_cases", where)):
        case = _mapping(case, f"eval_cases[{k}]", where)
        eval_id = _get(case, "eval_id")
        if not isinstance(eval_id, str):
            raise where.error(f"eval_cases[{k}] has no eval_id")
        try:
            cases.append(_eval_case(case, eval_id, where.at(case=eval_id)))
        except AgentDataError as exc:
            if not record:
                raise
            cases.append(EvalCase(eval_id, None, error=str(exc)))
    return EvalSet(set_id, cases, FORMAT_EVAL_SET, where.path, data.get("name"))


def _eval_case(case: Mapping[str, Any], eval_id: str, at: _Where) -> EvalCase:
    """One case of the EvalSet schema: a conversation or a conversation_scenario."""
    conv, scenario = _get(case, "conversation"), _get(case, "conversation_scenario")
    if (conv is None) == (scenario is None):
        raise at.error("needs exactly one of conversation and conversation_scenario")
    invocations = None
    if conv is not None:
        invocations = [_invocation(inv, at.at(invocation=i)) for i, inv in enumerate(_list(conv, "conversation", at))]
    return EvalCase(
        eval_id=eval_id,
        invocations=invocations,
        scenario=_mapping(scenario, "conversation_scenario", at) if scenario is not None else None,
        session_input=_session_input(_get(case, "session_input"), at),
        rubrics=list(_list(case.get("rubrics"), "rubrics", at)),
    )


# ---------------------------------------------------------------------------------------
# the legacy shapes
# ---------------------------------------------------------------------------------------


def _legacy_turn(turn: Any, where: _Where) -> Invocation:
    turn = _mapping(turn, "the turn", where)
    query = turn.get("query")
    if not isinstance(query, str):
        raise where.error("the turn has no query" if query is None else "query must be a string")
    calls = []
    for k, use in enumerate(_list(turn.get("expected_tool_use"), "expected_tool_use", where)):
        use = _mapping(use, f"expected_tool_use[{k}]", where)
        name = use.get("tool_name")
        if not isinstance(name, str):
            raise where.error(f"expected_tool_use[{k}] has no tool_name")
        if "tool_input" not in use:
            raise where.error(f"expected_tool_use[{k}] ({name}) has no tool_input")
        args = use["tool_input"]
        if args is not None and not isinstance(args, dict):
            raise where.error(
                f"expected_tool_use[{k}] ({name}): tool_input is a {type(args).__name__}, expected an object"
            )
        calls.append({"name": name, "args": args, "id": None})
    texts = []
    for k, resp in enumerate(
        _list(turn.get("expected_intermediate_agent_responses"), "expected_intermediate_agent_responses", where)
    ):
        resp = _mapping(resp, f"expected_intermediate_agent_responses[{k}]", where)
        if resp.get("text"):
            texts.append((str(resp.get("author", "")), str(resp["text"])))
    reference = turn.get("reference", "")
    if not isinstance(reference, str):
        raise where.error("reference must be a string")
    return Invocation(
        invocation_id=str(uuid.uuid4()),
        user_text=query,
        final_text=reference,
        calls=calls,
        intermediate_texts=texts,
        raw=turn,
    )


def _legacy(data: list, where: _Where, eval_set_id: str, record: bool = False) -> EvalSet:
    if all(isinstance(x, Mapping) and "query" in x for x in data):
        case_id = where.path
        try:
            case = EvalCase(
                case_id, [_legacy_turn(t, where.at(case=case_id, invocation=i)) for i, t in enumerate(data)]
            )
        except AgentDataError as exc:
            if not record:
                raise
            case = EvalCase(case_id, None, error=str(exc))
        return EvalSet(eval_set_id, [case], FORMAT_LEGACY_TURNS, where.path)
    cases = []
    for k, item in enumerate(data):
        if not isinstance(item, Mapping) or "name" not in item or "data" not in item:
            raise where.error(
                f"item {k} is neither a turn {{query, ...}} nor an eval case {{name, data, ...}}: "
                "not an ADK eval file (EvalSet schema, legacy turn list or legacy eval-set list)"
            )
        at = where.at(case=str(item["name"]))
        try:
            invocations = [_legacy_turn(t, at.at(invocation=i)) for i, t in enumerate(_list(item["data"], "data", at))]
        except AgentDataError as exc:
            if not record:
                raise
            cases.append(EvalCase(str(item["name"]), None, error=str(exc)))
            continue
        session = None
        initial = item.get("initial_session")
        if initial:
            initial = _mapping(initial, "initial_session", at)
            session = {
                "app_name": initial.get("app_name", ""),
                "user_id": initial.get("user_id", ""),
                "session_id": None,
                "state": initial.get("state", {}),
            }
        cases.append(EvalCase(str(item["name"]), invocations, session_input=session))
    return EvalSet(eval_set_id, cases, FORMAT_LEGACY_LIST, where.path)


def read_json(path: str | os.PathLike[str]) -> Any:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AgentDataError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AgentDataError(f"{path}: a directory, expected a JSON file") from None
    except UnicodeDecodeError as exc:
        raise AgentDataError(f"{path}: not UTF-8 ({exc}); ADK eval files and session dumps are UTF-8 JSON") from None
    if not text.strip():
        raise AgentDataError(f"{path}: empty file, expected ADK JSON (an eval set or a session dump)")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AgentDataError(f"{path}: not JSON: {exc}") from None
    except RecursionError:
        raise AgentDataError(
            f"{path}: JSON nested too deeply to decode (more than about 1000 levels of arrays and objects)"
        ) from None
    problem = lone_surrogate(doc, text)  # the one rule of every reader (respeval.io.readers)
    if problem is not None:
        raise AgentDataError(f"{path}: {problem[1]}")
    return doc


@fewer_collections()  # the file's objects and the invocations built from them
def load_eval_set(
    path: str | os.PathLike[str],
    *,
    initial_session: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    eval_set_id: str | None = None,
    on_error: str = "fail",
) -> EvalSet:
    """An ADK eval file in any of its three shapes (see the module docstring).

    ``initial_session`` (a path or an object, e.g. ``initial.session.json``) gives the
    legacy shapes their session input (its ``app_name``, ``user_id``, ``state``), as
    ``AgentEvaluator.evaluate(initial_session_file=...)`` does; it is never picked up
    automatically.

    ``on_error="record"``: a case that cannot be read (a malformed call, arguments that are
    not an object, ...) is kept, with no invocations and the reason in ``EvalCase.error``
    (kind ``"unreadable"``), instead of failing the whole file.  A file that is not an ADK
    eval file at all still raises.
    """
    on_error = renamed_value("load_eval_set", "on_error", on_error, {"raise": "fail"})
    if on_error not in ("fail", "record"):
        raise ValueError(f"on_error must be 'fail' or 'record', not {on_error!r}")
    record = on_error == "record"
    where = _Where(str(path))
    data = read_json(path)
    if isinstance(data, Mapping):
        evalset = _eval_set(data, where, record)
    elif isinstance(data, list):
        set_id = eval_set_id or re.sub(r"\.(test|evalset)\.json$|\.json$", "", Path(path).name)
        evalset = _legacy(data, where, set_id, record)
        if initial_session is not None:
            init = read_json(initial_session) if not isinstance(initial_session, Mapping) else initial_session
            init = _mapping(init, "the initial session", _Where(str(initial_session)))
            if init:
                session = {
                    "app_name": init.get("app_name", ""),
                    "user_id": init.get("user_id", ""),
                    "session_id": None,
                    "state": init.get("state", {}),
                }
                for case in evalset.cases:
                    case.session_input = dict(session)
    else:
        raise where.error(f"the top level is a {type(data).__name__}: not an ADK eval file")
    return evalset


@dataclass(frozen=True)
class EvalSetToolUses:
    """An EvalSet file read for its tool uses only (``read_tool_uses``): its cases in file
    order, each one's invocations (a range of rows), and each invocation's tool-use list as
    JSON text standing in the file's bytes."""

    path: str
    case_ids: list[str]
    conversation: list[bool]  # False: a conversation_scenario case (no invocations)
    case_rows: list[int]  # case k's invocations are rows case_rows[k] .. case_rows[k + 1]
    tool_uses: JsonSpans  # a row per invocation
    invocation_id_offsets: bytes = field(repr=False)
    invocation_id_bytes: bytes = field(repr=False)

    def invocation_ids(self) -> list[str]:
        off = array("q", self.invocation_id_offsets).tolist()
        return [self.invocation_id_bytes[a:b].decode("utf-8") for a, b in zip(off, off[1:])]


def _file_bytes(path: str | os.PathLike[str]) -> Any:
    """The file's bytes, mapped (the page cache's pages, no copy), or None if it cannot be."""
    try:
        with open(path, "rb") as fh:
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # not there, a directory, empty (mmap refuses those), ...
        return None


def read_tool_uses(path: str | os.PathLike[str], *, implementation: str | None = None) -> EvalSetToolUses | None:
    """An EvalSet file's cases and tool-use lists, read by the kernels' eval-set reader
    (``adk_eval_set_tool_uses``: no Python object per invocation); None when the file is
    ``load_eval_set``'s to read (a legacy shape, the events form, anything unusual or
    malformed: it gives the file's result or its error, naming file, case and field)."""
    data = _file_bytes(path)
    if data is None:
        return None
    got = _backend.get(implementation).adk_eval_set_tool_uses(data)
    if got is None:
        return None
    case_off, case_bytes, kinds, first, inv_off, inv_bytes, starts, ends = got
    off = array("q", case_off).tolist()
    return EvalSetToolUses(
        path=str(path),
        case_ids=[case_bytes[a:b].decode("utf-8") for a, b in zip(off, off[1:])],
        conversation=[k == ord("c") for k in kinds],
        case_rows=array("q", first).tolist(),
        tool_uses=JsonSpans(data, np.frombuffer(starts, np.int64), np.frombuffer(ends, np.int64)),
        invocation_id_offsets=inv_off,
        invocation_id_bytes=inv_bytes,
    )


# ---------------------------------------------------------------------------------------
# session dumps
# ---------------------------------------------------------------------------------------


def _is_final(event: Mapping[str, Any], parts: Sequence[Mapping[str, Any]]) -> bool:
    """ADK's ``Event.is_final_response``."""
    actions = _get(event, "actions") or {}
    if (isinstance(actions, Mapping) and _get(actions, "skip_summarization")) or _get(event, "long_running_tool_ids"):
        return True
    has_calls = any(_get(p, "function_call") is not None for p in parts)
    partial = bool(event.get("partial"))
    if _get(event, "error_code") and not partial and not has_calls:
        return True
    has_responses = any(_get(p, "function_response") for p in parts)
    trailing_code = bool(parts) and _get(parts[-1], "code_execution_result") is not None
    return not has_calls and not has_responses and not partial and not trailing_code


def invocations_from_events(events: Sequence[Any], where: str = "<events>") -> list[Invocation]:
    """ADK session events -> invocations (see the module docstring)."""
    here = _Where(where)
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for k, ev in enumerate(events):
        ev = _mapping(ev, f"events[{k}]", here)
        groups.setdefault(_get(ev, "invocation_id"), []).append(ev)
    out = []
    for number, (inv_id, group) in enumerate(groups.items()):
        at = here.at(invocation=number)
        user_parts: list[Mapping[str, Any]] = []
        final_parts: list[Mapping[str, Any]] | None = None
        final_event: Mapping[str, Any] | None = None
        kept: list[tuple[Mapping[str, Any], list[Mapping[str, Any]]]] = []
        for ev in group:
            author = str(ev.get("author") or "agent").lower()
            content = ev.get("content")
            if author == "user":
                if content is not None:
                    user_parts = _parts(content, "user content", at)
                continue
            parts = _parts(content, "content", at)
            grounding = _get(ev, "grounding_metadata") is not None
            if parts:
                if _is_final(ev, parts):
                    final_has_text = final_parts is not None and any(p.get("text") for p in final_parts)
                    if not final_has_text or any(p.get("text") for p in parts):
                        final_parts, final_event = parts, ev
                useful = grounding or any(
                    _get(p, "function_call") is not None
                    or _get(p, "function_response")
                    or p.get("text")
                    or _get(p, "inline_data")
                    for p in parts
                )
                if useful:
                    kept.append((ev, parts))
            elif grounding:
                kept.append((ev, parts))
        calls: list[dict[str, Any]] = []
        responses: list[dict[str, Any]] = []
        texts: list[tuple[str, str]] = []
        model_calls: list[ModelCall] = []
        for ev, parts in kept:
            call = _usage(ev, "event", at)
            if call is not None:
                model_calls.append(call)
            ev_calls = _calls_in(parts, "content", at)
            if ev is final_event and not ev_calls:
                continue  # the final text is the final response, not an intermediate step
            calls += ev_calls
            responses += _responses_in(parts, "content", at)
            text = _text(parts)
            if text:
                texts.append((str(ev.get("author", "")), text))
        out.append(
            Invocation(
                invocation_id=str(inv_id or ""),
                user_text=_text(user_parts),
                final_text=_text(final_parts or []),
                calls=calls,
                tool_responses=responses,
                intermediate_texts=texts,
                has_final_response=final_parts is not None,
                model_calls=model_calls,
            )
        )
    return out


@dataclass
class Session:
    """An ADK session dump: its ids, its raw events and the invocations they make."""

    session_id: str
    app_name: str
    user_id: str
    events: list[Mapping[str, Any]]
    invocations: list[Invocation]
    path: str = ""


def load_session(path: str | os.PathLike[str]) -> Session:
    """An ADK session dump (``*.session.json``) as invocations (see the module docstring)."""
    where = _Where(str(path))
    data = _mapping(read_json(path), "the session", where)
    events = _list(data.get("events"), "events", where)
    return Session(
        session_id=str(data.get("id", "")),
        app_name=str(_get(data, "app_name", "")),
        user_id=str(_get(data, "user_id", "")),
        events=events,
        invocations=invocations_from_events(events, str(path)),
        path=str(path),
    )
