"""Seeded synthetic OTLP JSON traffic, fast enough for a million spans.

Each trace is an agent run of the GenAI conventions: an ``invoke_agent`` root, a ``chat``
call that asks for a tool, the ``execute_tool`` span, and a ``chat`` call that answers (and
sometimes a second tool round), with input/output messages, usage and the resource's
``service.name``.  Spans are written as the SDK's encoder and protobuf's JSON mapping write
them (base64 ids, 64-bit integers as strings, enum names), or with ``hex_ids`` as the
collector's file exporter writes them; one export request per line, ``spans_per_request``
spans each, the spans of a trace spread over neighbouring requests.

``write(path, n_spans, seed)`` streams the file and returns what it wrote (traces, spans).
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterator
from typing import Any

SERVICES = ("checkout", "search", "support")
MODELS = ("gpt-4o-mini", "gpt-4o", "claude-3-5-haiku")
WORDS = (
    "please find a flight hotel weather booking refund order status city tomorrow cheapest options near "
    "station museum restaurant vegetarian quiet room late checkout invoice warranty delivery address"
).split()


def _s(value: str) -> dict[str, Any]:
    return {"stringValue": value}


def _i(value: int) -> dict[str, Any]:
    return {"intValue": str(value)}


def _attrs(**kv: Any) -> list[dict[str, Any]]:
    out = []
    for k, v in kv.items():
        value = _i(v) if isinstance(v, int) else _s(v)
        out.append({"key": k.replace("__", "."), "value": value})
    return out


class _Ids:
    def __init__(self, rng: random.Random, hex_ids: bool) -> None:
        self.rng, self.hex = rng, hex_ids

    def make(self, n: int) -> str:
        raw = self.rng.getrandbits(8 * n).to_bytes(n, "big")
        return raw.hex() if self.hex else base64.b64encode(raw).decode("ascii")


def trace_spans(rng: random.Random, ids: _Ids, t0: int, error_rate: float = 0.05) -> list[dict[str, Any]]:
    """The spans of one agent run."""
    trace = ids.make(16)
    root = ids.make(8)
    model = rng.choice(MODELS)
    words = rng.sample(WORDS, 12)
    question = " ".join(words[:8]) + f" #{rng.randint(0, 10**6)}?"
    rounds = rng.choice((1, 1, 2))
    spans: list[dict[str, Any]] = []
    t = t0
    history = [{"role": "user", "parts": [{"type": "text", "content": question}]}]
    for _ in range(rounds):
        call_id = f"call_{rng.getrandbits(40):x}"
        args = {"query": " ".join(words[8:]), "limit": rng.randint(1, 20)}
        out = [
            {
                "role": "assistant",
                "parts": [{"type": "tool_call", "id": call_id, "name": "search", "arguments": args}],
                "finish_reason": "tool_call",
            }
        ]
        n_in, n_out = rng.randint(50, 900), rng.randint(5, 60)
        spans.append(_span(trace, ids.make(8), root, f"chat {model}", t, t + 400_000_000, _attrs(
            gen_ai__operation__name="chat", gen_ai__request__model=model, gen_ai__usage__input_tokens=n_in,
            gen_ai__usage__output_tokens=n_out, gen_ai__input__messages=json.dumps(history),
            gen_ai__output__messages=json.dumps(out))))  # fmt: skip
        history = history + out
        t += 400_000_000
        result = {"hits": [f"item-{rng.randint(0, 999)}" for _ in range(3)]}
        spans.append(_span(trace, ids.make(8), root, "execute_tool search", t, t + 50_000_000, _attrs(
            gen_ai__operation__name="execute_tool", gen_ai__tool__name="search", gen_ai__tool__call__id=call_id,
            gen_ai__tool__call__arguments=json.dumps(args), gen_ai__tool__call__result=json.dumps(result))))  # fmt: skip
        history = history + [
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": result}]}
        ]
        t += 50_000_000
    answer = [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Found: " + " ".join(words[2:10])}],
            "finish_reason": "stop",
        }
    ]
    n_in, n_out = rng.randint(50, 900), rng.randint(20, 200)
    spans.append(_span(trace, ids.make(8), root, f"chat {model}", t, t + 600_000_000, _attrs(
        gen_ai__operation__name="chat", gen_ai__request__model=model, gen_ai__usage__input_tokens=n_in,
        gen_ai__usage__output_tokens=n_out, gen_ai__input__messages=json.dumps(history),
        gen_ai__output__messages=json.dumps(answer))))  # fmt: skip
    t += 600_000_000
    root_span = _span(trace, root, "", "invoke_agent assistant", t0, t, _attrs(gen_ai__operation__name="invoke_agent"))
    if rng.random() < error_rate:
        root_span["status"] = {"code": "STATUS_CODE_ERROR", "message": "upstream timed out"}
    spans.append(root_span)  # a span is exported when it ends: the root last
    return spans


def _span(trace: str, span: str, parent: str, name: str, start: int, end: int, attrs: list) -> dict[str, Any]:
    out = {
        "traceId": trace,
        "spanId": span,
        "name": name,
        "kind": "SPAN_KIND_INTERNAL" if "chat" not in name else "SPAN_KIND_CLIENT",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": attrs,
        "status": {},
    }
    if parent:
        out["parentSpanId"] = parent
    return out


def requests(
    n_spans: int, seed: int, *, spans_per_request: int = 100, hex_ids: bool = False
) -> Iterator[tuple[dict[str, Any], int, int]]:
    """``(export request, traces started, spans)`` until ``n_spans`` spans are out."""
    rng = random.Random(seed)
    ids = _Ids(rng, hex_ids)
    pending: dict[str, list[dict[str, Any]]] = {s: [] for s in SERVICES}
    made = 0
    t0 = 1_746_000_000_000_000_000
    while made < n_spans:
        batch: list[tuple[str, dict[str, Any]]] = []
        traces = 0
        while len(batch) < spans_per_request and made + len(batch) < n_spans:
            service = rng.choice(SERVICES)
            spans = trace_spans(rng, ids, t0)
            t0 += rng.randint(1, 3) * 1_000_000_000
            traces += 1
            take = rng.randint(1, len(spans))  # part of the trace now, the rest in the next request
            batch.extend((service, s) for s in spans[:take])
            pending[service].extend(spans[take:])
            for svc in SERVICES:
                if pending[svc] and rng.random() < 0.5:
                    batch.extend((svc, s) for s in pending[svc])
                    pending[svc] = []
        if made + len(batch) >= n_spans:
            for svc in SERVICES:
                batch.extend((svc, s) for s in pending[svc])
                pending[svc] = []
        by_service: dict[str, list[dict[str, Any]]] = {}
        for svc, s in batch:
            by_service.setdefault(svc, []).append(s)
        request = {
            "resourceSpans": [
                {
                    "resource": {"attributes": _attrs(service__name=svc, telemetry__sdk__language="python")},
                    "scopeSpans": [{"scope": {"name": "agent", "version": "1.0"}, "spans": spans}],
                }
                for svc, spans in by_service.items()
            ]
        }
        made += len(batch)
        yield request, traces, len(batch)


def write(path: Any, n_spans: int, seed: int = 0, **options: Any) -> dict[str, int]:
    """Stream ``n_spans`` spans (at least) to ``path`` as JSON lines; returns the counts."""
    traces = spans = lines = 0
    with open(path, "w", encoding="utf-8") as fh:
        for request, t, n in requests(n_spans, seed, **options):
            fh.write(json.dumps(request, separators=(",", ":")) + "\n")
            traces += t
            spans += n
            lines += 1
    return {"traces": traces, "spans": spans, "lines": lines}
