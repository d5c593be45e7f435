"""The trace readers on their own: OTLP JSON decoding (AnyValue, ids, enums, old keys), every
bad record named with file, line and field, and how spans of each convention become a case."""

from __future__ import annotations

import json

import pytest

from _helpers.paths import shared_data
from respeval import traces
from respeval.traces.errors import BadRecord, BadRecords, TraceInputError
from respeval.traces.otlp import BadField, any_value, hex_id
from respeval.traces.sources import SourceStats, input_files, read_records

TRACE = "0af7651916cd43dd8448eb211c80319c"


def _attr(k, v):
    if isinstance(v, bool):
        value = {"boolValue": v}
    elif isinstance(v, int):
        value = {"intValue": str(v)}
    elif isinstance(v, float):
        value = {"doubleValue": v}
    else:
        value = {"stringValue": v}
    return {"key": k, "value": value}


def _span(span_id, name, attrs, parent="", start=1, end=2, trace=TRACE, **extra):
    out = {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "startTimeUnixNano": str(1_746_000_000_000_000_000 + start * 1_000_000),
        "endTimeUnixNano": str(1_746_000_000_000_000_000 + end * 1_000_000),
        "attributes": [_attr(k, v) for k, v in attrs.items()],
    }
    out.update(extra)
    return out


def _request(*spans, service="svc"):
    return {
        "resourceSpans": [
            {"resource": {"attributes": [_attr("service.name", service)]}, "scopeSpans": [{"spans": list(spans)}]}
        ]
    }


def _write(path, *objs):
    path.write_text("".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs))
    return path


def _one(tmp_path, *objs, **kw):
    cases = list(traces.read_cases([str(_write(tmp_path / "t.jsonl", *objs))], **kw))
    assert len(cases) == 1
    return cases[0]


def test_any_value_variants():
    assert any_value({"stringValue": "a"}, "x") == "a"
    assert any_value({"intValue": "12"}, "x") == 12 and any_value({"intValue": 12}, "x") == 12
    assert any_value({"doubleValue": 1.5}, "x") == 1.5 and any_value({"doubleValue": "Infinity"}, "x") == float("inf")
    assert any_value({"boolValue": False}, "x") is False
    assert any_value({"arrayValue": {"values": [{"intValue": "1"}, {"stringValue": "b"}]}}, "x") == [1, "b"]
    assert any_value({"arrayValue": {}}, "x") == []
    kv = {
        "kvlistValue": {
            "values": [{"key": "a", "value": {"kvlistValue": {"values": [{"key": "b", "value": {"boolValue": True}}]}}}]
        }
    }
    assert any_value(kv, "x") == {"a": {"b": True}}
    assert any_value({"bytesValue": "AAE="}, "x") == "AAE="
    assert any_value({}, "x") is None
    assert any_value({"string_value": "snake"}, "x") == "snake"
    with pytest.raises(BadField, match=r"x\.intValue: expected an integer"):
        any_value({"intValue": "1.5x"}, "x")
    with pytest.raises(BadField, match=r"x\.arrayValue\.values\[1\]: expected an AnyValue object"):
        any_value({"arrayValue": {"values": [{"intValue": 1}, 3]}}, "x")


def test_ids_hex_and_base64():
    assert hex_id("0AF7651916CD43DD8448EB211C80319C", 16) == TRACE
    assert hex_id("CvdlGRbNQ92ESOshHIAxnA==", 16) == TRACE
    assert hex_id("t61rcWkgMzE=", 8) == "b7ad6b7169203331"
    assert hex_id("", 8) == ""
    assert hex_id("abc", 8) is None and hex_id("zz" * 8, 8) is None and hex_id(5, 8) is None


def test_enums_names_or_numbers_and_old_keys(tmp_path):
    span = _span(
        "b7ad6b7169203331",
        "chat m",
        {"gen_ai.operation.name": "chat"},
        kind="SPAN_KIND_CLIENT",
        status={"code": "STATUS_CODE_ERROR", "message": "boom"},
    )
    old = {"resourceSpans": [{"resource": {}, "instrumentationLibrarySpans": [{"spans": [span]}]}]}
    case = _one(tmp_path, old)
    assert case.error == "chat m: boom" and case.trace_id == TRACE
    span2 = dict(span, kind=3, status={"code": 2})
    assert _one(tmp_path, _request(span2)).error == "chat m: error"


@pytest.mark.parametrize(
    ("mangle", "field", "reason"),
    [
        (lambda s: s.update(traceId="xyz"), "resourceSpans[0].scopeSpans[0].spans[1].traceId", "not a 16-byte id"),
        (lambda s: s.pop("traceId"), "resourceSpans[0].scopeSpans[0].spans[1].traceId", "missing"),
        (lambda s: s.update(traceId="0" * 32), "resourceSpans[0].scopeSpans[0].spans[1].traceId", "all zeros"),
        (lambda s: s.update(spanId="abcd"), "resourceSpans[0].scopeSpans[0].spans[1].spanId", "not an 8-byte id"),
        (
            lambda s: s.update(startTimeUnixNano="soon"),
            "resourceSpans[0].scopeSpans[0].spans[1].startTimeUnixNano",
            "non-negative integer",
        ),
        (lambda s: s.update(kind="SPAN_KIND_WEIRD"), "resourceSpans[0].scopeSpans[0].spans[1].kind", "unknown value"),
        (
            lambda s: s["attributes"].append({"key": "x", "value": {"intValue": "NaN"}}),
            "resourceSpans[0].scopeSpans[0].spans[1].attributes[1].value.intValue",
            "expected an integer",
        ),
        (
            lambda s: s["attributes"].append({"value": {"intValue": 1}}),
            "resourceSpans[0].scopeSpans[0].spans[1].attributes[1].key",
            "missing",
        ),
    ],
)
def test_a_bad_span_is_named_by_file_line_and_field(tmp_path, mangle, field, reason):
    good = _span("b7ad6b7169203331", "chat m", {"gen_ai.operation.name": "chat"})
    bad = _span("c7ad6b7169203331", "chat m", {"gen_ai.operation.name": "chat"})
    mangle(bad)
    path = _write(tmp_path / "t.jsonl", _request(_span("a7ad6b7169203331", "x", {})), _request(good, bad))
    with pytest.raises(TraceInputError) as info:
        list(traces.read_cases([str(path)]))
    record = info.value.record
    assert (record.path, record.line, record.field) == (str(path), 2, field)
    assert reason in record.reason and str(record).startswith(f"{path}:2: {field}: ")
    # skip: the good span of the same request is still read
    seen: list[BadRecord] = []
    cases = list(traces.read_cases([str(path)], on_error="record", errors=seen.append))
    assert [b.field for b in seen] == [field] and len(cases) == 1


def test_bad_lines(tmp_path):
    path = _write(
        tmp_path / "t.jsonl",
        _request(_span("b7ad6b7169203331", "s", {})),
        "{not json",
        '["a list"]',
        '{"hello": 1}',
        "",
    )
    stats = SourceStats()
    seen: list[BadRecord] = []
    records = list(read_records(str(path), BadRecords("record", seen.append), stats))
    assert len(records) == 1 and stats.bad_records == 3
    assert [(b.line, b.field) for b in seen] == [(2, None), (3, None), (4, None)]
    assert "malformed JSON" in seen[0].reason
    assert "neither an OTLP export request" in seen[1].reason and "list" in seen[1].reason
    assert "'hello'" in seen[2].reason
    with pytest.raises(TraceInputError, match=r"t\.jsonl:2: malformed JSON"):
        list(read_records(str(path), BadRecords("fail")))


def test_inputs(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    _write(tmp_path / "d" / "b.jsonl", _request(_span("b7ad6b7169203331", "s", {})))
    _write(tmp_path / "d" / "sub" / "a.json", _request(_span("c7ad6b7169203331", "s", {})))
    _write(tmp_path / "d" / ".hidden.jsonl", "junk")
    (tmp_path / "d" / "notes.txt").write_text("junk")
    assert input_files([tmp_path / "d"]) == [str(tmp_path / "d" / "b.jsonl"), str(tmp_path / "d" / "sub" / "a.json")]
    (tmp_path / "empty").mkdir()
    with pytest.raises(TraceInputError, match="no trace files"):
        input_files([tmp_path / "empty"])
    with pytest.raises(TraceInputError, match="no such file"):
        input_files([tmp_path / "missing.jsonl"])


def test_payload_document_with_a_bad_span_names_the_json_path(tmp_path):
    doc = _request(_span("b7ad6b7169203331", "s", {}), _span("bad", "s", {}))
    path = tmp_path / "payload.json"
    path.write_text(json.dumps(doc, indent=2))
    with pytest.raises(TraceInputError) as info:
        list(traces.read_cases([str(path)]))
    assert (
        str(info.value.record)
        == f"{path}: resourceSpans[0].scopeSpans[0].spans[1].spanId: not an 8-byte id in hex or base64: 'bad'"
    )
    path.write_text('{"resourceSpans": [\n')
    with pytest.raises(TraceInputError, match=r"payload\.json:2: malformed JSON"):
        list(traces.read_cases([str(path)]))


def test_log_events_attach_to_their_span_and_stand_alone(tmp_path):
    chat = _span("b7ad6b7169203331", "chat m", {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 5})

    def log(span_id, name, body, t):
        return {
            "timeUnixNano": str(1_746_000_000_000_000_000 + t * 1_000_000),  # t in ms, as the spans
            "traceId": TRACE,
            "spanId": span_id,
            "eventName": name,
            "body": {"kvlistValue": {"values": [{"key": k, "value": {"stringValue": v}} for k, v in body.items()]}},
        }

    logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
        log("b7ad6b7169203331", "gen_ai.choice", {"message": json.dumps({"content": "hello"})}, 2),
        log("b7ad6b7169203331", "gen_ai.user.message", {"content": "hi"}, 1),
        {"body": {"stringValue": "a plain log line"}, "traceId": TRACE, "spanId": "b7ad6b7169203331"},
        log("d7ad6b7169203331", "gen_ai.user.message", {"content": "and you?"}, 3),
    ]}]}]}  # fmt: skip
    case = _one(tmp_path, _request(chat), logs)
    assert case.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "and you?"},
    ]
    assert case.input_tokens == 5 and case.response == "hello"


def test_tool_arguments_come_from_the_request_when_the_span_has_none(tmp_path):
    chat = _span("b7ad6b7169203331", "chat m", {
        "gen_ai.operation.name": "chat",
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "tool_call", "id": "c9", "name": "f", "arguments": {"x": 1}}]}]),
    }, start=1, end=2)  # fmt: skip
    tool = _span(
        "c7ad6b7169203331",
        "execute_tool f",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f", "gen_ai.tool.call.id": "c9"},
        start=3,
        end=4,
    )
    other = _span(
        "d7ad6b7169203331",
        "execute_tool g",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "g", "gen_ai.tool.call.arguments": '{"y": [2]}'},
        start=5,
        end=6,
    )
    case = _one(tmp_path, _request(other, tool, chat))
    assert case.tool_calls == [{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": {"y": [2]}}]


def test_agent_usage_counts_only_without_model_calls(tmp_path):
    agent = _span(
        "a7ad6b7169203331",
        "invoke_agent a",
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10},
    )
    chat = _span(
        "b7ad6b7169203331",
        "chat m",
        {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": "60", "gen_ai.usage.output_tokens": 4},
        parent="a7ad6b7169203331",
    )
    chat2 = _span(
        "c7ad6b7169203331",
        "chat m",
        {"gen_ai.operation.name": "chat", "gen_ai.usage.prompt_tokens": 40, "gen_ai.usage.completion_tokens": 6},
        parent="a7ad6b7169203331",
        start=3,
        end=4,
    )
    case = _one(tmp_path, _request(agent, chat, chat2))
    assert (case.input_tokens, case.output_tokens) == (100, 10)  # 60 + 40, 4 + 6: the agent's total is not added
    alone = _one(tmp_path, _request(agent))
    assert (alone.input_tokens, alone.output_tokens) == (100, 10)


def test_openinference_completions_and_chain_values(tmp_path):
    llm = _span("b7ad6b7169203331", "completion", {
        "openinference.span.kind": "LLM", "llm.model_name": "gpt-3.5-turbo-instruct",
        "llm.prompts.0.prompt.text": "Say hi", "llm.choices.0.completion.text": "hi",
        "llm.token_count.prompt": 3, "llm.token_count.completion": 1, "llm.cost.total": 0.5,
        "annotations.0.annotation.name": "helpful", "annotations.0.annotation.label": "yes",
        "annotations.0.annotation.score": 1.0, "annotations.0.annotation.annotator_kind": "HUMAN",
    })  # fmt: skip
    case = _one(tmp_path, _request(llm))
    assert case.messages == [{"role": "user", "content": "Say hi"}, {"role": "assistant", "content": "hi"}]
    assert (case.model, case.input_tokens, case.output_tokens, case.cost_usd) == ("gpt-3.5-turbo-instruct", 3, 1, 0.5)
    assert case.feedback == {"helpful": {"label": "yes", "score": 1.0, "annotator_kind": "HUMAN"}}
    chain = _span(
        "a7ad6b7169203331",
        "pipeline",
        {"openinference.span.kind": "CHAIN", "input.value": "What is 2+2?", "output.value": "4"},
    )
    retriever = _span(
        "c7ad6b7169203331", "retrieve", {"openinference.span.kind": "RETRIEVER"}, parent="a7ad6b7169203331"
    )
    case = _one(tmp_path, _request(chain, retriever))
    assert (case.prompt, case.response) == ("What is 2+2?", "4")


def test_older_genai_forms(tmp_path):
    content = _span("b7ad6b7169203331", "chat", {"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4"},
        events=[
            {"name": "gen_ai.content.prompt", "timeUnixNano": "1", "attributes": [_attr("gen_ai.prompt", json.dumps([{"role": "user", "content": "Capital of France?"}]))]},
            {"name": "gen_ai.content.completion", "timeUnixNano": "2", "attributes": [_attr("gen_ai.completion", json.dumps([{"role": "assistant", "content": "Paris."}]))]},
            {"name": "exception", "timeUnixNano": "3", "attributes": [_attr("exception.type", "ValueError"), _attr("exception.message", "x")]},
        ])  # fmt: skip
    case = _one(tmp_path, _request(content))
    assert (case.prompt, case.response, case.model, case.error) == ("Capital of France?", "Paris.", "gpt-4", None)
    failed = dict(content, status={"code": 2})
    assert _one(tmp_path, _request(failed)).error == "chat: ValueError: x"
    flat = _span("b7ad6b7169203331", "openai.chat", {
        "llm.request.type": "chat", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Weather?",
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.tool_calls.0.name": "weather",
        "gen_ai.completion.0.tool_calls.0.arguments": "{\"city\": \"Rome\"}", "gen_ai.prompt.name": "a template",
    })  # fmt: skip
    case = _one(tmp_path, _request(flat))
    assert case.tool_calls == [{"name": "weather", "arguments": {"city": "Rome"}}] and case.prompt == "Weather?"


def test_a_span_sent_twice_counts_once(tmp_path):
    chat = _span("b7ad6b7169203331", "chat m", {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 7})
    case = _one(tmp_path, _request(chat), _request(chat))
    assert case.input_tokens == 7


def test_adk_sessions(tmp_path):
    session = {
        "id": "s-1",
        "app_name": "weather",
        "user_id": "u",
        "state": {},
        "events": [
            {"invocation_id": "i1", "author": "user", "timestamp": 10.0, "content": {"role": "user", "parts": [{"text": "Rain in Oslo?"}]}},
            {"invocation_id": "i1", "author": "agent", "timestamp": 11.0, "model_version": "gemini-2.0-flash",
             "usage_metadata": {"prompt_token_count": 20, "candidates_token_count": 5},
             "content": {"role": "model", "parts": [{"function_call": {"name": "forecast", "args": {"city": "Oslo"}}}]}},
            {"invocation_id": "i1", "author": "agent", "timestamp": 11.5, "content": {"role": "user", "parts": [{"function_response": {"name": "forecast", "response": {"rain": True}}}]}},
            {"invocation_id": "i1", "author": "agent", "timestamp": 12.5, "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 8},
             "content": {"role": "model", "parts": [{"text": "Yes, take an umbrella."}]}},
        ],
    }  # fmt: skip
    path = tmp_path / "s.session.json"
    path.write_text(json.dumps(session, indent=1))
    case = _one_from(path)
    assert (case.trace_id, case.service, case.model) == ("s-1", "weather", "gemini-2.0-flash")
    assert case.tool_calls == [{"name": "forecast", "arguments": {"city": "Oslo"}}]
    assert (case.prompt, case.response, case.input_tokens, case.output_tokens, case.latency_s) == (
        "Rain in Oslo?",
        "Yes, take an umbrella.",
        50,
        13,
        2.5,
    )
    assert [m["role"] for m in case.messages] == ["user", "assistant", "tool", "assistant"]


def _one_from(path):
    cases = list(traces.read_cases([str(path)]))
    assert len(cases) == 1
    return cases[0]


def test_shared_adk_session_dumps():
    root = shared_data("agents", "adk", "adk-samples")
    sessions = sorted(root.rglob("*.session.json"))
    if not sessions:
        pytest.skip("no ADK session dumps in ../shared/data")
    from respeval.agents.loaders import load_session

    for path in sessions[:5]:
        data = json.loads(path.read_text())
        if not data.get("id"):
            continue
        case = _one_from(path)
        session = load_session(path)
        assert case.tool_calls == [
            {"name": c["name"], "arguments": c["args"]} for inv in session.invocations for c in inv.calls
        ]
        assert case.prompt == next((inv.user_text for inv in session.invocations), "")
