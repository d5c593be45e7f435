"""Acceptance 1: spans from the real OpenTelemetry SDK (a scripted agent, exported with the
SDK's own OTLP encoder and protobuf's JSON mapping) become cases whose messages, tool calls
and token counts equal what the script sent, in every convention respeval reads; the same
for the collector's hex-id OTLP/JSON, for OTLP/HTTP payload files, and for chat-completions
logs."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is in the test extra")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common", reason="the OTLP encoder is in the test extra")

from _helpers import otel_agent  # noqa: E402
from respeval import traces  # noqa: E402


def _cases(paths, **kw):
    return {c.trace_id: c for c in traces.read_cases([str(p) for p in paths], **kw)}


def _check(case, want):
    assert case.messages == want.messages
    assert case.tool_calls == want.tool_calls
    assert (case.input_tokens, case.output_tokens) == (want.input_tokens, want.output_tokens)
    assert case.model_calls == want.model_calls
    assert case.prompt == want.prompt and case.response == want.response
    assert case.model == want.model and case.error == want.error
    assert case.service == "travel-agent" and case.route == "/v1/agent"
    assert (case.feedback or {}).get("user.feedback") == want.feedback
    assert case.latency_s is not None and case.latency_s > 0
    assert case.start_time is not None and case.start_time.endswith("Z")


@pytest.mark.parametrize("style", otel_agent.STYLES)
def test_sdk_spans_round_trip(tmp_path, style):
    convs = otel_agent.conversations(12, seed=3)
    rec = otel_agent.run(convs, style, seed=1)
    spans = tmp_path / "spans.jsonl"
    otel_agent.write_lines(spans, rec.span_lines)
    inputs = [spans]
    if rec.log_lines:
        logs = tmp_path / "logs.jsonl"
        otel_agent.write_lines(logs, rec.log_lines)
        inputs.append(logs)
    cases = _cases(inputs)
    assert set(cases) == {e.trace_id for e in rec.expected}
    for want in rec.expected:
        _check(cases[want.trace_id], want)
    if style in ("semconv", "openinference"):
        some = next(iter(cases.values()))
        assert [t["name"] for t in some.tools] == ["get_weather", "book_hotel"]


def test_the_collectors_hex_ids_and_payload_files_read_the_same(tmp_path):
    """The collector's file exporter writes hex ids; OTLP/HTTP bodies are one request per
    (pretty-printed) file.  Both give the cases the base64 lines give."""
    rec = otel_agent.run(otel_agent.conversations(6, seed=4), "semconv", requests=2)
    b64 = tmp_path / "b64.jsonl"
    otel_agent.write_lines(b64, rec.span_lines)
    hexed = tmp_path / "hex.jsonl"
    otel_agent.write_lines(hexed, [json.dumps(otel_agent.to_collector_json(json.loads(x))) for x in rec.span_lines])
    assert (
        '"traceId": "' + rec.expected[0].trace_id in hexed.read_text() or rec.expected[0].trace_id in hexed.read_text()
    )
    payloads = tmp_path / "payloads"
    payloads.mkdir()
    for i, line in enumerate(rec.span_lines):
        (payloads / f"request-{i}.json").write_text(json.dumps(json.loads(line), indent=2))
    a, b, c = _cases([b64]), _cases([hexed]), _cases([payloads])
    assert [x.row() for x in a.values()] == [x.row() for x in b.values()] == [x.row() for x in c.values()]
    for want in rec.expected:
        _check(a[want.trace_id], want)


def _chat_line(conv, k, history, output, n_in, n_out, trace_id):
    request = {
        "model": conv.model,
        "messages": [otel_agent._openai(m) for m in [{"role": "system", "content": otel_agent.SYSTEM}, *history]],
        "tools": [{"type": "function", "function": t} for t in otel_agent.TOOLS],
    }
    response = {
        "id": f"chatcmpl-{trace_id}-{k}",
        "object": "chat.completion",
        "created": 1_700_000_000 + k,
        "model": conv.model,
        "choices": [{"index": 0, "message": otel_agent._openai(output), "finish_reason": "stop"}],
        "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out},
    }
    return {"trace_id": trace_id, "request": request, "response": response, "latency_ms": 250}


def test_chat_completion_logs_round_trip(tmp_path):
    """An agent's calls logged as {request, response} lines sharing a trace_id: one case,
    whose messages, requested tool calls and tokens are what was sent."""
    convs = otel_agent.conversations(8, seed=5)
    lines, wants = [], {}
    for i, conv in enumerate(convs):
        trace_id = f"session-{i}"
        history: list = []
        trajectory, t_in, t_out, k = [], 0, 0, 0
        for turn in conv.turns:
            history.append({"role": "user", "content": turn.user})
            steps = [turn.calls, []] if turn.calls else [[]]
            for s, calls in enumerate(steps):
                n_in, n_out = turn.usage[s]
                if calls:
                    output = {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {"id": f"c{k}{j}", "name": n, "arguments": a} for j, (n, a, _) in enumerate(calls)
                        ],
                    }
                else:
                    output = {"role": "assistant", "content": turn.answer}
                lines.append(_chat_line(conv, k, list(history), output, n_in, n_out, trace_id))
                history.append(output)
                for j, (name, args, result) in enumerate(calls):
                    trajectory.append({"name": name, "arguments": args})
                    history.append(
                        {
                            "role": "tool",
                            "content": json.dumps(result) if not isinstance(result, str) else result,
                            "tool_call_id": f"c{k}{j}",
                        }
                    )
                t_in, t_out, k = t_in + n_in, t_out + n_out, k + 1
        wants[trace_id] = ([{"role": "system", "content": otel_agent.SYSTEM}, *history], trajectory, t_in, t_out, k)
    import random

    random.Random(2).shuffle(lines)  # the calls of a trace, in any order
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    cases = _cases([path])
    assert set(cases) == set(wants)
    for trace_id, (messages, trajectory, t_in, t_out, calls) in wants.items():
        case = cases[trace_id]
        assert case.messages == messages
        assert case.tool_calls == trajectory
        assert (case.input_tokens, case.output_tokens, case.model_calls) == (t_in, t_out, calls)
        assert case.latency_s == pytest.approx((calls - 1) + 0.25)  # first call's start to the last's end
        assert [t["name"] for t in case.tools] == ["get_weather", "book_hotel"]
        assert case.cost_usd is not None and case.cost_usd > 0  # gpt-4o(-mini) are in the price table
