"""ADK eval-set files read for their tool uses by the core's reader (``adk_eval_set_tool_uses``)
and its twin, and scored from the files' bytes (``tool_trajectory_scores_from_files``).

The two implementations must give the same buffers on every file; what they read must be
what ``load_eval_set`` reads (ids, kinds, invocations, calls) whenever they read a file; and
the scores, statuses and errors from the files must be ``evaluate_agent``'s, on the shared ADK
files and on generated eval sets (both spellings, escapes, unicode, nested arguments, missing
and damaged fields)."""

from __future__ import annotations

import json
import re
from array import array
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from _helpers import implementations
from _helpers.paths import shared_data
from respeval import _backend
from respeval._tool_calls import JsonSpans
from respeval.agents.adk import Criterion
from respeval.agents.evaluation import evaluate_agent, tool_trajectory_scores_from_files
from respeval.agents.loaders import AgentDataError, load_eval_set, read_tool_uses

MODES = [(mt, ia) for mt in ("EXACT", "IN_ORDER", "ANY_ORDER") for ia in (False, True)]
FILES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _read_all(data: bytes) -> dict:
    """Each implementation's answer on ``data``; they must agree."""
    got = {name: _backend.get(name).adk_eval_set_tool_uses(data) for name in implementations.available()}
    first = next(iter(got.values()))
    for name, value in got.items():
        assert value == first, name
    return first


def _decoded(got: tuple, data: bytes) -> dict:
    """The reader's buffers as Python values: case ids, kinds, invocation ids and calls."""
    case_off, case_ids, kinds, first, inv_off, inv_ids, starts, ends = got
    co, io = array("q", case_off).tolist(), array("q", inv_off).tolist()
    rows = array("q", first).tolist()
    s, e = array("q", starts).tolist(), array("q", ends).tolist()
    calls = [[] if a < 0 else json.loads(data[a:b]) for a, b in zip(s, e)]
    return {
        "cases": [case_ids[a:b].decode() for a, b in zip(co, co[1:])],
        "kinds": list(kinds.decode()),
        "invocations": [calls[a:b] for a, b in zip(rows, rows[1:])],
        "invocation_ids": [inv_ids[a:b].decode() for a, b in zip(io, io[1:])],
    }


def _as_loaded(path: Path) -> dict:
    es = load_eval_set(path)
    return {
        "cases": [c.eval_id for c in es.cases],
        "kinds": ["s" if c.invocations is None else "c" for c in es.cases],
        "invocations": [
            [[{"name": k["name"], "args": k["args"]} for k in i.calls] for i in (c.invocations or [])] for c in es.cases
        ],
        "invocation_ids": [i.invocation_id for c in es.cases for i in (c.invocations or [])],
    }


def _calls_as_loaded(got: dict) -> dict:
    """The calls read from the spans as the loader keeps them: a name and arguments (None if absent)."""
    out = dict(got)
    out["invocations"] = [
        [[{"name": k["name"], "args": k.get("args")} for k in i] for i in c] for c in got["invocations"]
    ]
    return out


def _check_against_loader(path: Path) -> dict | None:
    """The reader on ``path``: where it reads the file, the loader reads the same (or refuses a
    call the trajectory reader refuses too); returns what was read."""
    data = path.read_bytes()
    got = _read_all(data)
    if got is None:
        return None
    read = _decoded(got, data)
    try:
        loaded = _as_loaded(path)
    except AgentDataError as exc:
        # the reader does not look inside a tool-use list: only a call can make the loader refuse
        assert "tool_uses[" in str(exc), exc
        return read
    assert _calls_as_loaded(read) == loaded
    return read


def _same_outcomes(expected: Path, actual: Path, criterion: Criterion, impl: str) -> None:
    """The fast path gives evaluate_agent's outcomes, or raises its error."""
    try:
        want = evaluate_agent(expected, [actual], [criterion], diagnostics=False, implementation=impl).runs[0]
    except AgentDataError as exc:
        with pytest.raises(AgentDataError) as got:
            tool_trajectory_scores_from_files(expected, actual, criterion, implementation=impl)
        assert str(got.value) == str(exc)
        return
    assert tool_trajectory_scores_from_files(expected, actual, criterion, implementation=impl) == want


# --- the shared ADK files ------------------------------------------------------------------------


def _shared_files() -> list[Path]:
    return sorted(shared_data("agents", "adk").rglob("*.json"))


def test_the_implementations_agree_on_every_shared_file_and_read_every_eval_set_schema_file():
    read = 0
    for path in _shared_files():
        got = _check_against_loader(path)
        try:
            schema = load_eval_set(path).format == "EvalSet schema"
        except AgentDataError:
            schema = False
        assert (got is not None) == schema, path  # legacy shapes, configs and sessions: the loader's
        read += got is not None
    assert read >= 7


def test_shared_eval_sets_score_as_evaluate_agent_scores_them(impl, tmp_path):
    for path in _shared_files():
        if _read_all(path.read_bytes()) is None:
            continue
        # against itself, and against a copy whose calls are shifted by one invocation
        doc = json.loads(path.read_text())
        for case in doc["eval_cases"]:
            conv = case.get("conversation") or []
            uses = [(inv.get("intermediate_data") or {}).get("tool_uses") for inv in conv]
            for inv, u in zip(conv, uses[1:] + uses[:1]):
                if inv.get("intermediate_data") is not None:
                    inv["intermediate_data"]["tool_uses"] = u
        shifted = tmp_path / "shifted.evalset.json"
        shifted.write_text(json.dumps(doc, indent=1))
        for mt, ia in MODES:
            for actual in (path, shifted):
                _same_outcomes(path, actual, Criterion("tool_trajectory_avg_score", 1.0, mt, ia), impl)


# --- generated eval sets ---------------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
_scalars = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False) | _text
_args = st.dictionaries(
    _text,
    st.recursive(_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(_text, c, max_size=3), max_leaves=6),
    max_size=3,
)
_call = st.fixed_dictionaries(
    {"name": st.sampled_from(["get_user", "book", 'q"uote\\', "ü→名"])},
    optional={"args": st.none() | _args, "id": st.none() | _text},
)


def _key(name: str, camel: bool) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest) if camel else name


@st.composite
def _content(draw, role: str):
    return draw(
        st.none()
        | st.fixed_dictionaries(
            {"parts": st.lists(st.fixed_dictionaries({"text": _text}), max_size=2), "role": st.just(role)}
        )
    )


@st.composite
def _invocation(draw, calls=None):
    k = lambda name: _key(name, draw(st.booleans()))  # noqa: E731 - a spelling per field
    inv = {k("user_content"): draw(_content("user"))}
    if draw(st.booleans()):
        inv[k("invocation_id")] = draw(st.none() | _text)
    if draw(st.booleans()):
        inv[k("final_response")] = draw(_content("model"))
    uses = draw(st.lists(_call, max_size=3)) if calls is None else calls
    if draw(st.integers(0, 4)):
        inter = {k("tool_uses"): uses if uses or draw(st.booleans()) else None}
        if draw(st.booleans()):
            inter[k("tool_responses")] = [{"name": "f", "response": {"ok": True}}]
            inter[k("intermediate_responses")] = [["agent", [{"text": "thinking"}]]]
        inv[k("intermediate_data")] = inter
    elif draw(st.booleans()):
        inv[k("intermediate_data")] = None
    if draw(st.booleans()):
        inv[k("model_duration")] = draw(st.none() | st.floats(0, 10))
    return inv


@st.composite
def _eval_set(draw, an_invocation: bool = False):
    """An eval set; ``an_invocation``: its first case a conversation of one invocation or more
    (for the damages, which change the first invocation)."""
    cases = []
    for n in range(draw(st.integers(1 if an_invocation else 0, 3))):
        k = lambda name: _key(name, draw(st.booleans()))  # noqa: E731
        case = {k("eval_id"): draw(st.sampled_from([f"case-{n}", f'ca"se\\{n}', f"fall-{n}-ß"]))}
        if draw(st.integers(0, 5)) or (an_invocation and n == 0):
            case["conversation"] = draw(st.lists(_invocation(), min_size=int(an_invocation and n == 0), max_size=3))
        else:
            case[k("conversation_scenario")] = {"starting_prompt": "hi", "conversation_plan": "plan"}
        if draw(st.booleans()):
            case[k("session_input")] = {k("app_name"): "app", k("user_id"): "u", "state": {}}
        cases.append(case)
    return {"eval_set_id": draw(_text), "name": "generated", "eval_cases": cases}


def _damages():
    """What can be wrong with an eval set: each refuses it, or leaves it readable."""

    def inv(doc):
        return next((i for c in doc["eval_cases"] for i in c.get("conversation") or []), None)

    def set_field(field, value):
        def damage(doc):
            target = inv(doc)
            if target is not None:
                for spelling in (field, _key(field, True)):
                    target.pop(spelling, None)
                target[field] = value
            return doc

        return damage

    def drop_user_content(doc):
        target = inv(doc)
        if target is not None:
            target.pop("user_content", None)
            target.pop("userContent", None)
        return doc

    def events(doc):
        target = inv(doc)
        if target is not None:
            target["intermediate_data"] = {"invocation_events": [{"author": "a", "content": {"parts": []}}]}
        return doc

    def bad_call(doc):
        target = inv(doc)
        if target is not None:
            target["intermediate_data"] = {"tool_uses": [{"args": {}}]}
        return doc

    def surrogate(doc):
        doc["name"] = "\ud800"
        return doc

    def case_id(doc):
        if doc["eval_cases"]:
            case = doc["eval_cases"][0]
            case.pop("evalId", None)
            case["eval_id"] = 7
        return doc

    def both(doc):
        if doc["eval_cases"]:
            doc["eval_cases"][0]["conversation_scenario"] = {"x": 1}
        return doc

    return st.sampled_from(
        [
            lambda doc: doc,
            set_field("user_content", "text"),
            set_field("user_content", {"parts": "no"}),
            set_field("final_response", {"parts": [1]}),
            set_field("intermediate_data", []),
            set_field("intermediate_data", {"tool_uses": {}}),
            set_field("intermediate_data", {"intermediate_responses": [["a"]]}),
            set_field("invocation_id", 5),
            set_field("duration", True),
            set_field("rubrics", {}),
            drop_user_content,
            events,
            bad_call,
            surrogate,
            case_id,
            both,
            lambda doc: {**doc, "eval_cases": {}},
            lambda doc: [doc],
        ]
    )


_texts = st.fixed_dictionaries({"indent": st.none() | st.integers(0, 3), "ensure_ascii": st.booleans()})


def _write(path: Path, doc, options, duplicate: bool = False) -> Path:
    text = json.dumps(doc, **options)
    if duplicate:
        # a field given in both spellings: json.loads keeps the snake_case one, the reader refuses
        text = text.replace('"user_content":', '"userContent": null, "user_content":', 1)
    # a lone surrogate: an escape (ensure_ascii), or bytes that are no UTF-8
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return path


@settings(FILES, max_examples=200)
@given(doc=_eval_set(an_invocation=True), damage=_damages(), options=_texts, duplicate=st.booleans())
def test_generated_eval_sets_read_as_the_loader_reads_them(tmp_path, doc, damage, options, duplicate):
    path = _write(tmp_path / "set.evalset.json", damage(doc), options, duplicate)
    _check_against_loader(path)


@FILES
@given(doc=_eval_set(), options=_texts)
def test_every_well_formed_generated_eval_set_is_read(tmp_path, doc, options):
    path = _write(tmp_path / "set.evalset.json", doc, options)
    # a UTF-16 pair's escape (ensure_ascii's spelling of a character beyond U+FFFF) goes to the
    # loader: the reader refuses every \uD8.. as the readers' lone-surrogate pre-filter does
    assume(not re.search(rb"\\u[dD][89abcdefABCDEF]", path.read_bytes()))
    assert _check_against_loader(path) is not None


@st.composite
def _pair(draw):
    """An expected eval set and an actual one of the same cases, some calls changed, some
    cases left out, repeated or of another length, each possibly damaged."""
    expected = draw(_eval_set())
    actual_cases = []
    for case in expected["eval_cases"]:
        conv = case.get("conversation")
        if conv is None or draw(st.integers(0, 6)) == 0:
            continue
        invs = [_invocation(calls=draw(st.sampled_from([None, "same"]))) for _ in conv]
        new = []
        for i, strategy in zip(conv, invs):
            got = draw(strategy)
            if draw(st.booleans()):  # the expected calls, as the agent made them
                inter = i.get("intermediate_data") or i.get("intermediateData") or {}
                got["intermediate_data"] = {"tool_uses": inter.get("tool_uses", inter.get("toolUses"))}
                got.pop("intermediateData", None)
            new.append(got)
        if draw(st.integers(0, 8)) == 0:
            new.append(draw(_invocation()))  # a count mismatch: evaluate_agent raises
        eval_id = case.get("eval_id", case.get("evalId"))
        actual_cases.append({"eval_id": eval_id, "conversation": new})
        if draw(st.integers(0, 8)) == 0:
            actual_cases.append({"eval_id": eval_id, "conversation": new[:1]})  # the later one counts
    actual = {"eval_set_id": "actual", "eval_cases": actual_cases}
    return expected, actual


@FILES
@given(pair=_pair(), damage=_damages(), options=_texts, mode=st.sampled_from(MODES))
def test_generated_pairs_score_as_evaluate_agent_scores_them(impl, tmp_path, pair, damage, options, mode):
    expected = _write(tmp_path / "expected.evalset.json", pair[0], options)
    actual = _write(tmp_path / "actual.evalset.json", damage(pair[1]), options)
    _same_outcomes(expected, actual, Criterion("tool_trajectory_avg_score", 0.5, *mode), impl)


# --- errors, named ---------------------------------------------------------------------------------


def _one_case(calls) -> dict:
    return {
        "eval_set_id": "s",
        "eval_cases": [
            {
                "eval_id": "c1",
                "conversation": [{"user_content": None, "intermediate_data": {"tool_uses": calls}}],
            }
        ],
    }


def test_a_call_without_a_name_is_the_loaders_error_naming_file_case_and_field(impl, tmp_path):
    expected = _write(tmp_path / "e.evalset.json", _one_case([{"name": "f", "args": {}}]), {})
    actual = _write(tmp_path / "a.evalset.json", _one_case([{"args": {"x": 1}}]), {})
    assert read_tool_uses(actual, implementation=impl) is not None  # the reader does not look inside
    with pytest.raises(AgentDataError) as err:
        tool_trajectory_scores_from_files(expected, actual, implementation=impl)
    message = str(err.value)
    assert str(actual) in message and "eval case 'c1'" in message and "tool_uses[0] has no tool name" in message


def test_malformed_files_are_the_loaders_errors(impl, tmp_path):
    good = _write(tmp_path / "e.evalset.json", _one_case([]), {})
    broken = tmp_path / "a.evalset.json"
    broken.write_text('{"eval_set_id": "s", "eval_cases": [', encoding="utf-8")
    with pytest.raises(AgentDataError, match="a.evalset.json: not JSON"):
        tool_trajectory_scores_from_files(good, broken, implementation=impl)
    wrong = _write(
        tmp_path / "w.evalset.json", {"eval_set_id": "s", "eval_cases": [{"eval_id": "c1", "conversation": [{}]}]}, {}
    )
    with pytest.raises(AgentDataError, match=r"w.evalset.json, eval case 'c1', invocation 0: missing user_content"):
        tool_trajectory_scores_from_files(good, wrong, implementation=impl)
    with pytest.raises(AgentDataError, match="no such file"):
        tool_trajectory_scores_from_files(tmp_path / "missing.json", good, implementation=impl)
    with pytest.raises(ValueError, match="scores tool_trajectory_avg_score"):
        tool_trajectory_scores_from_files(good, good, Criterion("response_match_score", 0.8))


def test_counts_that_differ_are_evaluate_agents_error(impl, tmp_path):
    expected = _write(tmp_path / "e.evalset.json", _one_case([]), {})
    doc = _one_case([])
    doc["eval_cases"][0]["conversation"] *= 2
    actual = _write(tmp_path / "a.evalset.json", doc, {})
    with pytest.raises(AgentDataError, match="1 expected; invocations are paired by position"):
        tool_trajectory_scores_from_files(expected, actual, implementation=impl)


# --- rows of JSON text standing in one buffer ------------------------------------------------------


def test_json_spans_intern_as_their_texts_do(impl):
    rows = ['[{"name": "f", "args": {"b": 1, "a": [1.0, true]}}]', "[]", '[{"name": "g"}, {"name": "f", "args": null}]']
    rows += ['[{"name": 3}]', "not json", '[{"name": "h", "args": {"k": NaN}}]', '[{"name": "\\u00fc"}]']
    data = (" ".join(rows) + " \xff").encode()  # a byte that is no UTF-8 at the end
    starts, ends, at = [], [], 0
    for r in rows:
        starts.append(at)
        ends.append(at + len(r.encode()))
        at = ends[-1] + 1
    starts += [-1, len(data) - 1]
    ends += [-1, len(data)]
    kernels = _backend.get(impl)
    got = kernels.CallTable().intern(JsonSpans(data, starts, ends), "name", "args", False)
    want = kernels.CallTable().intern([*rows, [], "[]"], "name", "args", False)
    assert got[:3] == want[:3]
    assert got[3][:-1] == want[3]
    assert got[3][-1] == (len(rows) + 1, "not UTF-8 text (invalid start byte at byte 0)")


def test_json_spans_refuse_spans_outside_their_buffer():
    with pytest.raises(ValueError, match="past the end"):
        JsonSpans(b"[]", [0], [3])
    with pytest.raises(ValueError, match="ends before it starts"):
        JsonSpans(b"[]", [2], [1])
    with pytest.raises(ValueError, match="as many ends as starts"):
        JsonSpans(b"[]", [0, 0], [2])
    spans = JsonSpans(b"[] [1]", np.array([3, -1, 0]), np.array([6, -1, 2]))
    assert [spans.take([1, 0]).value(i) for i in range(2)] == [[], "[1]"]
