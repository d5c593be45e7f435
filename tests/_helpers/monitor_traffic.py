"""Seeded synthetic traffic for the monitor, made with the real OpenTelemetry SDK.

Each trace is one question to an assistant: an ``invoke_agent`` root span and a ``chat``
span (GenAI semantic conventions 1.37+: ``gen_ai.input.messages`` / ``output.messages`` as
JSON, usage, model) with explicit start and end times, so that every trace falls in the
time window the script chose.  The SDK's ids come from a seeded generator, so the same seed
gives the same traffic (and the same sampling) on every run; spans are encoded with the
SDK's own OTLP encoder and protobuf's JSON mapping, several export requests per file, the
spans of a window's traces interleaved across them (an exporter sends spans as they end).

Answers are one of three kinds, drawn per trace: the reference itself (the gate's exact
stage accepts it), a longer answer that states the key fact (not an exact match, close
enough lexically not to be rejected: only the judge can tell; :func:`judge` is the scripted
judge, a ``python:`` model), or a wrong answer (the lexical stage rejects it).  ``drop_at`` window on, fewer answers are right.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

T0 = 1_746_100_800 * 10**9  # 2025-05-01T12:00:00Z, on an hour boundary
HOUR = 3600 * 10**9

FACTS = [
    ("What is the capital of France?", "Paris is the capital of France.", "Paris"),
    ("How many legs does a spider have?", "A spider has eight legs.", "eight"),
    ("What gas do plants absorb?", "Plants absorb carbon dioxide.", "carbon"),
    ("Which planet is known as the red planet?", "Mars is known as the red planet.", "Mars"),
    ("What is the boiling point of water at sea level?", "Water boils at 100 degrees Celsius at sea level.", "100"),
    ("Who wrote Hamlet?", "William Shakespeare wrote Hamlet.", "Shakespeare"),
    ("What is the largest ocean?", "The Pacific is the largest ocean.", "Pacific"),
    ("How many continents are there?", "There are seven continents.", "seven"),
    ("What is the chemical symbol for gold?", "The chemical symbol for gold is Au.", "Au"),
    ("What is the fastest land animal?", "The cheetah is the fastest land animal.", "cheetah"),
    ("Which metal is liquid at room temperature?", "Mercury is liquid at room temperature.", "Mercury"),
    ("What is the square root of 81?", "The square root of 81 is 9.", "9"),
    ("What language is spoken in Brazil?", "Portuguese is spoken in Brazil.", "Portuguese"),
    ("What is the tallest mountain?", "Mount Everest is the tallest mountain.", "Everest"),
    ("How many days are in a leap year?", "A leap year has 366 days.", "366"),
    ("What is the hardest natural substance?", "Diamond is the hardest natural substance.", "Diamond"),
]
WRONG = [
    "I am not sure, please ask customer support.",
    "Our opening hours are nine to five on weekdays.",
    "Sorry, the weather service is unavailable right now.",
    "Please try again later.",
]

# P(exact reference), P(paraphrase), else wrong
GOOD = (0.55, 0.30)
DROPPED = (0.35, 0.25)


@dataclass
class Traffic:
    files: list[Path] = field(default_factory=list)
    traces: dict[int, list[str]] = field(default_factory=dict)  # window index (0-based) -> trace ids
    passes: dict[int, float] = field(default_factory=dict)  # the share of right answers planted


def references(path: Path) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for question, answer, _ in FACTS:
            fh.write(json.dumps({"prompt": question, "reference": answer}) + "\n")
    return path


def _ids(rng: random.Random) -> Any:
    """A seeded id generator for the SDK (the default one is random)."""
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    class Ids(IdGenerator):
        def generate_span_id(self) -> int:
            return rng.getrandbits(64) or 1

        def generate_trace_id(self) -> int:
            return rng.getrandbits(128) or 1

    return Ids()


def _answer(rng: random.Random, answer: str, key: str, probs: tuple[float, float]) -> tuple[str, bool]:
    x = rng.random()
    if x < probs[0]:
        return answer, True
    if x < probs[0] + probs[1]:
        return f"{answer} I am quite sure about {key}.", True
    return rng.choice(WRONG), False


def write(
    directory: Path,
    *,
    windows: int = 12,
    per_window: int = 300,
    drop_at: int | None = None,
    seed: int = 0,
    files_per_window: int = 2,
    requests_per_file: int = 3,
    window_ns: int = HOUR,
    t0: int = T0,
) -> Traffic:
    """Write ``windows`` windows of traffic into ``directory`` (``window-XX-N.jsonl``);
    ``drop_at`` (0-based) and later windows get fewer right answers."""
    from google.protobuf import json_format
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import set_span_in_context

    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": "assistant"}), id_generator=_ids(random.Random(seed + 1))
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("monitor-traffic", "1.0")
    traffic = Traffic()
    for w in range(windows):
        probs = DROPPED if drop_at is not None and w >= drop_at else GOOD
        traffic.passes[w] = probs[0] + probs[1]
        ids = traffic.traces.setdefault(w, [])
        start_w = t0 + w * window_ns
        for _ in range(per_window):
            question, answer, key = rng.choice(FACTS)
            text, _ = _answer(rng, answer, key, probs)
            start = start_w + rng.randrange(0, window_ns - 10**10)
            chat_start = start + rng.randrange(10**6, 10**8)
            chat_end = chat_start + rng.randrange(10**8, 3 * 10**9)
            end = chat_end + rng.randrange(10**6, 10**8)
            root = tracer.start_span("invoke_agent assistant", start_time=start)
            root.set_attribute("gen_ai.operation.name", "invoke_agent")
            chat = tracer.start_span("chat gpt-4o-mini", context=set_span_in_context(root), start_time=chat_start)
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            chat.set_attribute("gen_ai.usage.input_tokens", rng.randint(20, 200))
            chat.set_attribute("gen_ai.usage.output_tokens", rng.randint(5, 60))
            chat.set_attribute(
                "gen_ai.input.messages",
                json.dumps([{"role": "user", "parts": [{"type": "text", "content": question}]}]),
            )
            chat.set_attribute(
                "gen_ai.output.messages",
                json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": "stop"}]
                ),
            )
            chat.end(end_time=chat_end)
            root.end(end_time=end)
            ids.append(format(root.get_span_context().trace_id, "032x"))
        spans = list(exporter.get_finished_spans())
        exporter.clear()
        rng.shuffle(spans)
        chunks = [spans[i :: files_per_window * requests_per_file] for i in range(files_per_window * requests_per_file)]
        for f in range(files_per_window):
            path = directory / f"window-{w:02d}-{f}.jsonl"
            with open(path, "w", encoding="utf-8") as fh:
                for r in range(requests_per_file):
                    chunk = chunks[f * requests_per_file + r]
                    if chunk:
                        fh.write(json.dumps(json_format.MessageToDict(encode_spans(chunk))) + "\n")
            traffic.files.append(path)
    return traffic


_BLOCK = re.compile(r"\[(REFERENCE|CANDIDATE) \w+\]\n(.*?)\n\[/\1 \w+\]", re.S)
_KEYS = {answer: key for _, answer, key in FACTS}


def judge(request: Any) -> str:
    """The scripted judge (``python:_helpers.monitor_traffic:judge``): the candidate passes
    when it states the reference's key fact."""
    blocks = dict(_BLOCK.findall(request.messages[-1].content))
    reference, candidate = blocks.get("REFERENCE", ""), blocks.get("CANDIDATE", "")
    key = _KEYS.get(reference.strip())
    ok = key is not None and re.search(rf"\b{re.escape(key)}\b", candidate) is not None
    return json.dumps({"reasoning": "scripted: the key fact", "score": 1.0 if ok else 0.0, "pass": ok})


SPEC = """\
metrics:
  - rougeL
model: python:_helpers.monitor_traffic:judge
monitor:
  window: 1h
  lateness: 5m
  references: {file: refs.jsonl}
  gate:
    lexical_metric: rouge1
    lexical: {reject_below: 0.25}
  judge_budget: 150
  min_rows: 20
"""


def spec(directory: Path, text: str = SPEC) -> Path:
    references(directory / "refs.jsonl")
    path = directory / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def window_statuses(windows: Sequence[dict[str, Any]]) -> list[str]:
    return [w["status"] for w in windows]
