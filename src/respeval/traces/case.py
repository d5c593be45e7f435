"""The one case schema every trace format becomes, and how a trace's parts make a case.

A case is one trace (one agent run, one request)::

    trace_id       lowercase hex (OTLP), or the log's / session's own id
    start_time     ISO 8601 UTC of the trace's first span ("2025-05-01T12:00:00.123456Z")
    service        the resource's service.name (of the root span)
    route          http.route of the request, when a span recorded one
    model          the model of the last model call (the one that gave the response)
    prompt         the text of the first user message
    messages       the whole conversation (respeval.traces.messages: OpenAI-style messages)
    response       the text of the last assistant message that has text
    tool_calls     the tool trajectory, in order: [{"name": str, "arguments": object | None}]
    tools          the tools offered to the model: [{"name", "description", "parameters"}]
    input_tokens   summed over the trace's model calls (None when none reported usage)
    output_tokens  likewise
    model_calls    how many model calls the trace recorded (None when it recorded none: a
                   trace of agent spans only)
    cost_usd       what the model calls cost: recorded by the instrumentation, else tokens
                   times respeval.judge.prices (None when a call's model has no known price)
    latency_s      last span end - first span start, in seconds
    error          the root span's error, else the first error recorded (None: no error)
    feedback       user feedback attributes ({name: value}; OpenInference annotations as
                   {name: {label, score, explanation, annotator_kind}}), or None

**The conversation.**  Model calls are taken in start-time order; each call's input messages
(after its system instructions) extend the conversation with what it does not already end
with (a call that resends the whole history adds only its new messages), then the call's
first output message (choice 0) is appended.  When no model call recorded messages, the
agent spans' are used; when none did either, the root agent or chain span's input and
output text make a user and an assistant message.

**The tool trajectory.**  The tools that ran (``execute_tool`` / ``TOOL`` spans), in start
order; a run whose span did not record its arguments (they are opt-in) takes them from the
model's request with the same call id.  A trace without tool spans has the tool calls the
model requested (the assistant messages' ``tool_calls``), in order.  Arguments are decoded
JSON objects; :func:`trajectory_problem` says when the trajectory metrics could not read
them (respeval._tool_calls).

**Tokens.**  Summed over model calls (``chat``, ``generate_content``, ``text_completion``;
OpenInference ``LLM``); agent spans' usage counts only when no model call reported any
(an agent span's usage is the sum of its calls': counting both would double it).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval._tool_calls import canonical_args, read_trajectory
from respeval.traces import genai, openinference
from respeval.traces.otlp import Span, SpanEvent
from respeval.traces.steps import AgentStep, ModelCall, ToolRun, span_error

__all__ = [
    "CASE_FIELDS",
    "DEFAULT_FEEDBACK_ATTRIBUTES",
    "Case",
    "TraceParts",
    "case_from_parts",
    "iso_time",
    "merge_parts",
    "merge_conversation",
    "parts_from_spans",
    "trajectory_problem",
]

CASE_FIELDS = (
    "trace_id",
    "start_time",
    "service",
    "route",
    "model",
    "prompt",
    "messages",
    "response",
    "tool_calls",
    "tools",
    "input_tokens",
    "output_tokens",
    "model_calls",
    "cost_usd",
    "latency_s",
    "error",
    "feedback",
)

# span attributes read as user feedback (add more with feedback_attributes= / --feedback-attribute)
DEFAULT_FEEDBACK_ATTRIBUTES = (
    "user.feedback",
    "user_feedback",
    "feedback",
    "feedback.score",
    "feedback.label",
    "feedback.comment",
    "user.rating",
    "gen_ai.user.feedback",
)
_ANNOTATION_PREFIXES = (
    ("annotations", "annotation"),
    ("trace.annotations", "annotation"),
    ("evaluations", "evaluation"),
    ("trace.evaluations", "evaluation"),
)

_ANNOTATION_HEADS = tuple(prefix + "." for prefix, _ in _ANNOTATION_PREFIXES)


@dataclass
class Case:
    """One trace as a case (see the module docstring); :meth:`row` is what is written."""

    trace_id: str
    start_time: str | None = None
    service: str | None = None
    route: str | None = None
    model: str | None = None
    prompt: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    response: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    model_calls: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    error: str | None = None
    feedback: dict[str, Any] | None = None
    # not written: what filters and sampling read
    models: tuple[str, ...] = ()
    start_ns: int | None = None

    def row(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in CASE_FIELDS}

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Case:
        case = cls(**{name: row.get(name) for name in CASE_FIELDS})  # type: ignore[arg-type]
        case.models = (case.model,) if case.model else ()
        return case


@dataclass
class TraceParts:
    """What a trace's records said, before they become a case."""

    trace_id: str
    calls: list[ModelCall] = field(default_factory=list)
    runs: list[ToolRun] = field(default_factory=list)
    agents: list[AgentStep] = field(default_factory=list)  # root-most first
    start_ns: int | None = None
    end_ns: int | None = None
    service: str | None = None
    route: str | None = None
    root_error: str | None = None
    errors: list[str] = field(default_factory=list)  # in start order
    feedback: dict[str, Any] = field(default_factory=dict)
    latency_s: float | None = None  # when the source says it directly (chat logs)


def iso_time(ns: int | None) -> str | None:
    if not ns:
        return None
    seconds, rest = divmod(ns, 1_000_000_000)
    moment = _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc).replace(microsecond=rest // 1000)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _annotations(attrs: Mapping[str, Any], feedback: dict[str, Any]) -> None:
    from respeval.traces.steps import unflatten

    if not any(k.startswith(_ANNOTATION_HEADS) for k in attrs):
        return
    for prefix, inner in _ANNOTATION_PREFIXES:
        if not any(k.startswith(prefix + ".") for k in attrs):
            continue
        items = unflatten(attrs, prefix)
        for item in items if isinstance(items, list) else ():
            entry = item.get(inner) if isinstance(item, Mapping) else None
            if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
                continue
            value = {k: entry[k] for k in ("label", "score", "explanation", "annotator_kind") if k in entry}
            feedback.setdefault(entry["name"], value)


def parts_from_spans(
    trace_id: str,
    spans: Sequence[Span],
    logs: Iterable[tuple[str, SpanEvent]] = (),
    *,
    feedback_attributes: Sequence[str] = DEFAULT_FEEDBACK_ATTRIBUTES,
) -> TraceParts:
    """The parts of one trace from its spans and the GenAI log events that name them
    (``(span_id, event)``; an event whose span is not among ``spans`` stands for a span of
    its own)."""
    by_span: dict[str, list[SpanEvent]] = {}
    for span_id, event in logs:
        by_span.setdefault(span_id, []).append(event)
    spans = list(spans)
    known = {s.span_id for s in spans}
    for span_id, events in by_span.items():
        if span_id not in known:
            t = min(e.time_ns for e in events)
            spans.append(Span(trace_id, span_id, "", "", 0, t, t, 0, "", {}))
    spans.sort(key=lambda s: (s.start_ns, s.end_ns, s.span_id))
    parts = TraceParts(trace_id)
    ids = {s.span_id for s in spans}
    parent_of = {s.span_id: s.parent_id for s in spans}
    roots = [s for s in spans if not s.parent_id or s.parent_id not in ids]
    root = roots[0] if roots else None
    starts = [s.start_ns for s in spans if s.start_ns]
    ends = [s.end_ns for s in spans if s.end_ns]
    parts.start_ns = min(starts) if starts else None
    parts.end_ns = max(ends) if ends else None
    ordered = ([root] if root is not None else []) + [s for s in spans if s is not root]
    for s in ordered:
        if parts.service is None and s.service:
            parts.service = s.service
        route = s.attributes.get("http.route")
        if parts.route is None and isinstance(route, str) and route:
            parts.route = route
    if root is not None:
        parts.root_error = span_error(root)
    names = set(feedback_attributes)
    agent_ids: set[str] = set()
    for s in spans:
        step = interpret(s, by_span.get(s.span_id, ()))
        if isinstance(step, ModelCall):
            parts.calls.append(step)
        elif isinstance(step, ToolRun):
            parts.runs.append(step)
        elif isinstance(step, AgentStep):
            agent_ids.add(s.span_id)
            parts.agents.append(step)
        error = span_error(s)
        if error is not None:
            parts.errors.append(error)
        attrs = s.attributes
        for name in names.intersection(attrs):
            parts.feedback.setdefault(name, attrs[name])
        _annotations(attrs, parts.feedback)

    def depth(span_id: str) -> int:
        d, seen, at = 0, set(), parent_of.get(span_id, "")
        while at and at in parent_of and at not in seen:
            seen.add(at)
            d += at in agent_ids
            at = parent_of[at]
        return d

    parts.agents.sort(key=lambda a: (depth(a.span_id), a.start_ns))
    return parts


def _common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    k = 0
    for x, y in zip(a, b):
        if x != y:
            break
        k += 1
    return k


def merge_conversation(calls: Sequence[ModelCall]) -> list[dict[str, Any]]:
    """The conversation the calls make (see the module docstring)."""
    conversation: list[dict[str, Any]] = []
    for call in calls:
        inputs = list(call.inputs or ())
        if call.system and not (inputs and inputs[0].get("role") == "system"):
            inputs = [{"role": "system", "content": text} for text in call.system] + inputs
        k = _common_prefix(conversation, inputs)
        if k == len(conversation):
            conversation.extend(inputs[k:])
        else:
            j = min(len(conversation), len(inputs))
            while j > 0 and conversation[-j:] != inputs[:j]:
                j -= 1
            conversation.extend(inputs[j:])
        if call.outputs:
            conversation.append(call.outputs[0])
    return conversation


def _trajectory(parts: TraceParts, conversation: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    requested = [c for m in conversation if m.get("role") == "assistant" for c in m.get("tool_calls") or ()]
    if not parts.runs:
        return [{"name": c["name"], "arguments": c.get("arguments")} for c in requested]
    by_id = {c["id"]: c for c in requested if c.get("id")}
    out = []
    for run in sorted(parts.runs, key=lambda r: (r.start_ns, r.end_ns, r.span_id)):
        arguments = run.arguments
        if not run.has_arguments and run.call_id in by_id:
            arguments = by_id[run.call_id].get("arguments")
        out.append({"name": run.name, "arguments": arguments})
    return out


def trajectory_problem(tool_calls: Any) -> str | None:
    """Why respeval's trajectory metrics could not read a case's ``tool_calls`` (arguments
    that are not a JSON object, ...), or None."""
    try:
        for i, name, args in read_trajectory(tool_calls, "name", "arguments", False):
            canonical_args(args, None, f"call {i} ({name}) arguments")
    except (TypeError, ValueError) as exc:
        return str(exc)
    except RecursionError:
        return "arguments nested too deeply"
    return None


def _sum(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _price(model: str | None, tokens_in: int, tokens_out: int) -> float | None:
    if not model:
        return None
    from respeval.judge.prices import model_price

    price = model_price(model, model.rpartition("/")[2])
    return None if price is None else price.interactive.cost(tokens_in, tokens_out)


def _cost(calls: Sequence[ModelCall]) -> float | None:
    total = 0.0
    counted = False
    for call in calls:
        if call.cost_usd is not None:
            total += call.cost_usd
            counted = True
            continue
        if call.input_tokens is None and call.output_tokens is None:
            continue
        cost = _price(call.model, call.input_tokens or 0, call.output_tokens or 0)
        if cost is None:
            return None  # one call of unknown price: the trace's cost is unknown
        total += cost
        counted = True
    return total if counted else None


def merge_parts(parts: Sequence[TraceParts]) -> TraceParts:
    """One trace's parts recorded in several places (chat-log lines of one ``trace_id``;
    spans and log lines of one trace) as one."""
    if len(parts) == 1:
        return parts[0]

    def order(p: TraceParts) -> tuple[int, int, str]:
        # a later call of a conversation carries a longer history: the order when times are missing
        call = p.calls[0] if p.calls else None
        history = len(call.inputs or ()) if call is not None else 0
        content = json.dumps([call.inputs, call.outputs] if call is not None else None, sort_keys=True, default=str)
        return (p.start_ns or 0, history, content)

    ordered = sorted(parts, key=order)
    merged = TraceParts(ordered[0].trace_id)
    latencies = [p.latency_s for p in ordered if p.latency_s is not None]
    for p in ordered:
        merged.calls.extend(p.calls)
        merged.runs.extend(p.runs)
        merged.agents.extend(p.agents)
        merged.errors.extend(p.errors)
        for k, v in p.feedback.items():
            merged.feedback.setdefault(k, v)
        merged.service = merged.service or p.service
        merged.route = merged.route or p.route
        merged.root_error = merged.root_error or p.root_error
    starts = [p.start_ns for p in ordered if p.start_ns]
    ends = [p.end_ns for p in ordered if p.end_ns]
    merged.start_ns = min(starts) if starts else None
    merged.end_ns = max(ends) if ends else None
    if not (merged.start_ns and merged.end_ns) and latencies:
        merged.latency_s = sum(latencies)
    return merged


def case_from_parts(parts: TraceParts) -> Case:
    """The case of one trace (see the module docstring)."""
    calls = sorted(parts.calls, key=lambda c: (c.start_ns, c.end_ns, c.span_id))
    with_messages = [c for c in calls if c.inputs or c.outputs or c.system]
    agent_calls = [a.call for a in parts.agents if a.call is not None]
    conversation = merge_conversation(with_messages or [c for c in agent_calls if c.inputs or c.outputs])
    if not conversation:
        for agent in parts.agents:
            if agent.input_text or agent.output_text:
                if agent.input_text:
                    conversation.append({"role": "user", "content": agent.input_text})
                if agent.output_text:
                    conversation.append({"role": "assistant", "content": agent.output_text})
                break
    prompt = next((m.get("content") or "" for m in conversation if m.get("role") == "user"), "")
    response = next(
        (m["content"] for m in reversed(conversation) if m.get("role") == "assistant" and m.get("content")), ""
    )
    usage_calls = calls if any(c.input_tokens is not None or c.output_tokens is not None for c in calls) else []
    if not usage_calls and agent_calls:
        usage_calls = [agent_calls[0]]  # the root-most agent's usage covers its calls
    tools: list[dict[str, Any]] = []
    seen: set[str] = set()
    for call in calls:
        for tool in call.tools:
            if tool["name"] not in seen:
                seen.add(tool["name"])
                tools.append(tool)
    models = [c.model for c in calls if c.model] or [c.model for c in agent_calls if c.model]
    latency = parts.latency_s
    if latency is None and parts.start_ns and parts.end_ns:
        latency = (parts.end_ns - parts.start_ns) / 1e9
    return Case(
        trace_id=parts.trace_id,
        start_time=iso_time(parts.start_ns),
        service=parts.service,
        route=parts.route,
        model=models[-1] if models else None,
        prompt=prompt,
        messages=conversation,
        response=response,
        tool_calls=_trajectory(parts, conversation),
        tools=tools,
        input_tokens=_sum(c.input_tokens for c in usage_calls),
        output_tokens=_sum(c.output_tokens for c in usage_calls),
        model_calls=len(calls) if calls else None,
        cost_usd=_cost(usage_calls),
        latency_s=latency,
        error=parts.root_error or (parts.errors[0] if parts.errors else None),
        feedback=parts.feedback or None,
        models=tuple(dict.fromkeys(models)),
        start_ns=parts.start_ns,
    )


def interpret(span: Span, events: Sequence[SpanEvent] = ()) -> ModelCall | ToolRun | AgentStep | None:
    """What ``span`` did, read by the conventions it follows (OpenInference when it says
    ``openinference.span.kind``, else the GenAI semantic conventions); ``events`` are the log
    records of GenAI events that name it (the span's own events are read too)."""
    if "openinference.span.kind" in span.attributes:
        return openinference.interpret(span)
    return genai.interpret(span, events)
