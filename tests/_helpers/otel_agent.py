"""A scripted agent instrumented with the real OpenTelemetry SDK, and what it sent.

:func:`run` plays conversations (user turns, tool calls with arguments and results, answers,
token usage) through ``opentelemetry-sdk`` tracers (and loggers, for the event-based form),
recording them in one of the conventions respeval reads, and returns the OTLP JSON the SDK's
own encoder writes (``opentelemetry-exporter-otlp-proto-common`` + protobuf's
``json_format``), plus the cases the script expects: the messages, tool calls and token counts
it sent.

Styles: ``semconv`` (1.37+: ``gen_ai.input.messages`` / ``output.messages`` /
``system_instructions`` / ``tool.definitions`` as JSON text), ``log-events`` (1.28-1.36:
``gen_ai.*.message`` / ``gen_ai.choice`` log records with bodies, in the span's context),
``span-events`` (the same events as span events), ``content-events`` (1.27:
``gen_ai.content.prompt`` / ``completion`` events with ``gen_ai.prompt`` / ``completion``
JSON), ``flat`` (``gen_ai.prompt.N.*`` attributes), ``openinference``.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

STYLES = ("semconv", "log-events", "span-events", "content-events", "flat", "openinference")
SYSTEM = "You are a travel assistant. Use the tools."
TOOLS = [
    {"type": "function", "name": "get_weather", "description": "Weather in a city", "parameters": {"type": "object"}},
    {"type": "function", "name": "book_hotel", "description": "Book a hotel", "parameters": {"type": "object"}},
]


@dataclass
class Turn:
    user: str
    calls: list[tuple[str, dict[str, Any], Any]]  # (name, arguments, result)
    answer: str
    usage: list[tuple[int, int]]  # (input, output) tokens per model call of the turn


@dataclass
class Conversation:
    turns: list[Turn]
    model: str = "gpt-4o-mini"
    error: str | None = None  # the root span ends with this error
    feedback: Any = None  # user.feedback on the root span


@dataclass
class Expected:
    trace_id: str
    messages: list[dict[str, Any]]
    tool_calls: list[dict[str, Any]]
    input_tokens: int
    output_tokens: int
    model_calls: int
    model: str
    error: str | None
    feedback: Any
    prompt: str
    response: str


@dataclass
class Recording:
    span_lines: list[str]
    log_lines: list[str]
    expected: list[Expected] = field(default_factory=list)


def conversations(n: int, seed: int) -> list[Conversation]:
    """``n`` seeded conversations with one or two turns and zero to three tool calls each."""
    rng = random.Random(seed)
    cities = ["Paris", "Lisbon", "Kyoto", "Lima", "Oslo", "Cairo", "Quito", "Hanoi"]
    out = []
    for i in range(n):
        turns = []
        for t in range(rng.choice([1, 1, 2])):
            city = rng.choice(cities)
            calls = []
            for k in range(rng.choice([0, 1, 1, 2, 3])):
                if k % 2 == 0:
                    calls.append(
                        ("get_weather", {"city": city, "unit": rng.choice(["C", "F"])}, {"temp": rng.randint(-5, 35)})
                    )
                else:
                    calls.append(
                        (
                            "book_hotel",
                            {"city": city, "nights": rng.randint(1, 9), "tags": ["quiet"]},
                            "booked #%d" % rng.randint(1, 999),
                        )
                    )
            usage = [(rng.randint(20, 400), rng.randint(5, 80)) for _ in range(2 if calls else 1)]
            turns.append(
                Turn(
                    f"Conversation {i} turn {t}: plan a trip to {city}?",
                    calls,
                    f"Here is your plan for {city} ({i}.{t}).",
                    usage,
                )
            )
        error = "TimeoutError" if rng.random() < 0.15 else None
        feedback = rng.choice([None, "thumbs_up", "thumbs_down"])
        out.append(Conversation(turns, rng.choice(["gpt-4o-mini", "gpt-4o"]), error, feedback))
    return out


def _parts(msg: dict[str, Any]) -> dict[str, Any]:
    """A case message as a semantic-conventions ChatMessage (parts)."""
    if msg["role"] == "tool":
        return {
            "role": "tool",
            "parts": [
                {
                    "type": "tool_call_response",
                    "id": msg["tool_call_id"],
                    "response": json.loads(msg["content"]) if msg["content"][:1] in "{[" else msg["content"],
                }
            ],
        }
    parts: list[dict[str, Any]] = []
    if msg["content"]:
        parts.append({"type": "text", "content": msg["content"]})
    for c in msg.get("tool_calls", ()):
        parts.append({"type": "tool_call", "id": c["id"], "name": c["name"], "arguments": c["arguments"]})
    return {"role": msg["role"], "parts": parts}


def _openai(msg: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": msg["role"], "content": msg["content"]}
    if msg.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for c in msg["tool_calls"]
        ]
    if msg["role"] == "tool":
        out["tool_call_id"] = msg["tool_call_id"]
    return out


def _b64_to_hex(value: str) -> str:
    return base64.b64decode(value).hex()


def to_collector_json(request: dict[str, Any]) -> dict[str, Any]:
    """protobuf's JSON mapping (base64 ids) turned into OTLP/JSON as the collector writes it (hex ids)."""

    def fix(obj: Any) -> Any:
        if isinstance(obj, dict):
            return {
                k: (
                    _b64_to_hex(v)
                    if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str) and v
                    else fix(v)
                )
                for k, v in obj.items()
            }
        if isinstance(obj, list):
            return [fix(x) for x in obj]
        return obj

    return fix(request)


def _set_messages(
    span: Any, logger: Any, style: str, inputs: list[dict[str, Any]], output: dict[str, Any], system: str
) -> None:
    from opentelemetry._logs import LogRecord

    if style == "semconv":
        span.set_attribute("gen_ai.system_instructions", json.dumps([{"type": "text", "content": system}]))
        span.set_attribute("gen_ai.input.messages", json.dumps([_parts(m) for m in inputs]))
        span.set_attribute("gen_ai.output.messages", json.dumps([{**_parts(output), "finish_reason": "stop"}]))
        span.set_attribute("gen_ai.tool.definitions", json.dumps(TOOLS))
    elif style in ("log-events", "span-events"):
        events: list[tuple[str, dict[str, Any]]] = [("gen_ai.system.message", {"content": system})]
        for m in inputs:
            body: dict[str, Any] = {"content": m["content"]}
            if m.get("tool_calls"):
                body["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                    }
                    for c in m["tool_calls"]
                ]
            if m["role"] == "tool":
                body["id"] = m["tool_call_id"]
            events.append((f"gen_ai.{m['role']}.message", body))
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "message": {"content": output["content"]}}
        if output.get("tool_calls"):
            choice["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }
                for c in output["tool_calls"]
            ]
        events.append(("gen_ai.choice", choice))
        for name, body in events:
            if style == "log-events":
                from opentelemetry import trace

                logger.emit(LogRecord(event_name=name, body=body, context=trace.set_span_in_context(span)))
            else:  # span events: the body's fields as attributes (structures as JSON text)
                span.add_event(name, {k: v if isinstance(v, (str, int)) else json.dumps(v) for k, v in body.items()})
    elif style == "content-events":
        prompt = [{"role": "system", "content": system}] + [_openai(m) for m in inputs]
        span.add_event("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps(prompt)})
        span.add_event("gen_ai.content.completion", {"gen_ai.completion": json.dumps([_openai(output)])})
    elif style == "flat":
        for i, m in enumerate([{"role": "system", "content": system}, *inputs]):
            span.set_attribute(f"gen_ai.prompt.{i}.role", m["role"])
            span.set_attribute(f"gen_ai.prompt.{i}.content", m["content"])
            for k, c in enumerate(m.get("tool_calls", ())):
                span.set_attribute(f"gen_ai.prompt.{i}.tool_calls.{k}.id", c["id"])
                span.set_attribute(f"gen_ai.prompt.{i}.tool_calls.{k}.name", c["name"])
                span.set_attribute(f"gen_ai.prompt.{i}.tool_calls.{k}.arguments", json.dumps(c["arguments"]))
            if m["role"] == "tool":
                span.set_attribute(f"gen_ai.prompt.{i}.tool_call_id", m["tool_call_id"])
        span.set_attribute("gen_ai.completion.0.role", "assistant")
        span.set_attribute("gen_ai.completion.0.content", output["content"])
        for k, c in enumerate(output.get("tool_calls", ())):
            span.set_attribute(f"gen_ai.completion.0.tool_calls.{k}.id", c["id"])
            span.set_attribute(f"gen_ai.completion.0.tool_calls.{k}.name", c["name"])
            span.set_attribute(f"gen_ai.completion.0.tool_calls.{k}.arguments", json.dumps(c["arguments"]))
    elif style == "openinference":
        for i, m in enumerate([{"role": "system", "content": system}, *inputs]):
            span.set_attribute(f"llm.input_messages.{i}.message.role", m["role"])
            span.set_attribute(f"llm.input_messages.{i}.message.content", m["content"])
            for k, c in enumerate(m.get("tool_calls", ())):
                p = f"llm.input_messages.{i}.message.tool_calls.{k}.tool_call"
                span.set_attribute(f"{p}.id", c["id"])
                span.set_attribute(f"{p}.function.name", c["name"])
                span.set_attribute(f"{p}.function.arguments", json.dumps(c["arguments"]))
            if m["role"] == "tool":
                span.set_attribute(f"llm.input_messages.{i}.message.tool_call_id", m["tool_call_id"])
        span.set_attribute("llm.output_messages.0.message.role", "assistant")
        span.set_attribute("llm.output_messages.0.message.content", output["content"])
        for k, c in enumerate(output.get("tool_calls", ())):
            p = f"llm.output_messages.0.message.tool_calls.{k}.tool_call"
            span.set_attribute(f"{p}.id", c["id"])
            span.set_attribute(f"{p}.function.name", c["name"])
            span.set_attribute(f"{p}.function.arguments", json.dumps(c["arguments"]))
        for i, tool in enumerate(TOOLS):
            span.set_attribute(f"llm.tools.{i}.tool.json_schema", json.dumps({"type": "function", "function": tool}))


def run(
    convs: Sequence[Conversation], style: str, *, service: str = "travel-agent", requests: int = 3, seed: int = 0
) -> Recording:
    """Play ``convs`` through the SDK in ``style``; the spans come back as ``requests``
    export requests (JSON lines) with the traces' spans interleaved across them."""
    from google.protobuf import json_format
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode

    resource = Resource.create({"service.name": service})
    span_exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    tracer = provider.get_tracer("scripted-agent", "1.0")
    log_exporter = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    logger = logger_provider.get_logger("scripted-agent")
    oi = style == "openinference"
    recording = Recording([], [])
    for conv in convs:
        history: list[dict[str, Any]] = []
        trajectory: list[dict[str, Any]] = []
        tokens_in = tokens_out = 0
        model_calls = 0
        call_no = 0
        with tracer.start_as_current_span("invoke_agent travel") as root:
            root.set_attribute(
                "openinference.span.kind" if oi else "gen_ai.operation.name", "AGENT" if oi else "invoke_agent"
            )
            root.set_attribute("http.route", "/v1/agent")
            if conv.feedback is not None:
                root.set_attribute("user.feedback", conv.feedback)
            trace_id = format(root.get_span_context().trace_id, "032x")
            for turn in conv.turns:
                history.append({"role": "user", "content": turn.user})
                steps = [turn.calls, []] if turn.calls else [[]]
                for k, calls in enumerate(steps):
                    n_in, n_out = turn.usage[k]
                    tokens_in, tokens_out = tokens_in + n_in, tokens_out + n_out
                    model_calls += 1
                    if calls:
                        output: dict[str, Any] = {
                            "role": "assistant",
                            "content": "",
                            "tool_calls": [
                                {"id": f"call_{call_no}_{j}", "name": name, "arguments": args}
                                for j, (name, args, _) in enumerate(calls)
                            ],
                        }
                    else:
                        output = {"role": "assistant", "content": turn.answer}
                    with tracer.start_as_current_span(f"chat {conv.model}") as span:
                        if oi:
                            span.set_attribute("openinference.span.kind", "LLM")
                            span.set_attribute("llm.model_name", conv.model)
                            span.set_attribute("llm.token_count.prompt", n_in)
                            span.set_attribute("llm.token_count.completion", n_out)
                        else:
                            span.set_attribute("gen_ai.operation.name", "chat")
                            span.set_attribute("gen_ai.provider.name", "openai")
                            span.set_attribute("gen_ai.request.model", conv.model)
                            span.set_attribute("gen_ai.response.model", conv.model)
                            span.set_attribute("gen_ai.usage.input_tokens", n_in)
                            span.set_attribute("gen_ai.usage.output_tokens", n_out)
                        _set_messages(span, logger, style, list(history), output, SYSTEM)
                    history.append(output)
                    for j, (name, args, result) in enumerate(calls):
                        call_id = f"call_{call_no}_{j}"
                        with tracer.start_as_current_span(f"execute_tool {name}") as tool:
                            if oi:
                                tool.set_attribute("openinference.span.kind", "TOOL")
                                tool.set_attribute("tool.name", name)
                                tool.set_attribute("tool_call.id", call_id)
                                tool.set_attribute("input.value", json.dumps(args))
                                tool.set_attribute("output.value", json.dumps(result))
                            else:
                                tool.set_attribute("gen_ai.operation.name", "execute_tool")
                                tool.set_attribute("gen_ai.tool.name", name)
                                tool.set_attribute("gen_ai.tool.call.id", call_id)
                                tool.set_attribute("gen_ai.tool.call.arguments", json.dumps(args))
                                tool.set_attribute("gen_ai.tool.call.result", json.dumps(result))
                        trajectory.append({"name": name, "arguments": args})
                        content = json.dumps(result) if not isinstance(result, str) else result
                        history.append({"role": "tool", "content": content, "tool_call_id": call_id})
                    call_no += 1
            if conv.error:
                root.set_attribute("error.type", conv.error)
                root.set_status(Status(StatusCode.ERROR, "the model did not answer in time"))
        system = [{"role": "system", "content": SYSTEM}]
        messages = system + [_expected_message(m, style) for m in history]
        recording.expected.append(
            Expected(
                trace_id=trace_id,
                messages=messages,
                tool_calls=trajectory,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                model_calls=model_calls,
                model=conv.model,
                error=f"invoke_agent travel: {conv.error}: the model did not answer in time" if conv.error else None,
                feedback=conv.feedback,
                prompt=conv.turns[0].user,
                response=conv.turns[-1].answer,
            )
        )
    spans = list(span_exporter.get_finished_spans())
    random.Random(seed).shuffle(spans)  # an exporter sends spans as they end, batches mixing traces
    chunks = [spans[i::requests] for i in range(requests)]
    for chunk in chunks:
        if chunk:
            recording.span_lines.append(json.dumps(json_format.MessageToDict(encode_spans(chunk))))
    logs = list(log_exporter.get_finished_logs())
    if logs:
        recording.log_lines.append(json.dumps(json_format.MessageToDict(encode_logs(logs))))
    return recording


def _expected_message(m: dict[str, Any], style: str) -> dict[str, Any]:
    out = dict(m)
    if "tool_calls" in out:
        out["tool_calls"] = [dict(c) for c in out["tool_calls"]]
    return out


def write_lines(path: Any, lines: Iterable[str]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line + "\n")
