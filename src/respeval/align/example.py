"""A deterministic toy judge that learns only from its prompt's examples, and the shipped
example of ``respeval align --example``.

:func:`nearest_example_judge` (``python:respeval.align.example:nearest_example_judge``) is a
1-nearest-neighbour classifier over the few-shot examples in its system message: it reads the
examples a :class:`~respeval.judge.methods.templates.PointwiseMetric` shows (``[EXAMPLE i
code]`` blocks, each followed by the person's ``Grade: {...}``) and the row's values fenced in
the user message, describes each by a few numbers, and answers the grade of the nearest
example.  Without examples it answers the first label (or the lowest score) every time.  So
what it answers depends on which examples its prompt holds, and nothing else: the judge for
testing and demonstrating an optimiser of few-shot examples, with no network and no model.

The numbers describing a row (or an example): for each of its values after the first (all of
them when there is only one), ``log(1 + words)`` and the share of its words found in the
first value (the instruction).  Distance is Euclidean; ties go to the earlier example.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

__all__ = ["EXAMPLE_LABEL_FIELD", "dataset_path", "nearest_example_judge", "nearest_example_reply", "spec_path"]

EXAMPLE_LABEL_FIELD = "label"

_EXAMPLE = re.compile(r"\[EXAMPLE (\d+) ([0-9a-f]+)\]\n(.*?)\n\[/EXAMPLE \1 \2\]\nGrade: (\{[^\n]*\})", re.S)
_FENCE = re.compile(r"\[([A-Z0-9_ ()/.-]+) ([0-9a-f]{10})\]\n(.*?)\n\[/\1 \2\]", re.S)
_LABELS = re.compile(r'"label": one of ((?:"(?:[^"\\]|\\.)*"(?:, )?)+)')
_SCORE = re.compile(r'"score": (?:a whole number|a number) from (-?[0-9.]+) to')
_WORD = re.compile(r"\w+")


def spec_path() -> str:
    """The shipped judge spec of the example (LLMBar: which output follows the instruction)."""
    return str(resources.files("respeval.data").joinpath("align_example.json"))


def dataset_path() -> str:
    """The shipped human-labelled rows of the example (40 LLMBar Natural pairs)."""
    return str(resources.files("respeval.data").joinpath("llmbar_example.jsonl"))


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _features(values: Sequence[str]) -> list[float]:
    first = set(_words(values[0])) if values else set()
    rest = values[1:] if len(values) > 1 else values
    out: list[float] = []
    for value in rest:
        words = _words(value)
        out.append(math.log1p(len(words)))
        out.append(sum(w in first for w in words) / len(words) if words else 0.0)
    return out


def _distance(a: Sequence[float], b: Sequence[float]) -> float:
    n = max(len(a), len(b))
    a = list(a) + [0.0] * (n - len(a))
    b = list(b) + [0.0] * (n - len(b))
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))


def _default(system: str) -> dict[str, Any]:
    labels = _LABELS.search(system)
    if labels:
        return {"label": json.loads("[" + labels.group(1) + "]")[0]}
    score = _SCORE.search(system)
    if score:
        low = float(score.group(1))
        return {"score": int(low) if low.is_integer() else low}
    return {"score": 0}


def nearest_example_reply(system: str, user: str) -> dict[str, Any]:
    """The toy judge's verdict for one request, from its system and user messages."""
    examples = []
    for match in _EXAMPLE.finditer(system):
        values = json.loads(match.group(3))
        grade = json.loads(match.group(4))
        examples.append((int(match.group(1)), _features([str(v) for v in values.values()]), grade))
    row = _features([m.group(3) for m in _FENCE.finditer(user)])
    if not examples:
        return {"reasoning": "no examples to compare with: the first answer", **_default(system)}
    best = min(examples, key=lambda e: (_distance(row, e[1]), e[0]))
    return {"reasoning": f"closest to example {best[0]}", **best[2]}


def nearest_example_judge(request: Any) -> dict[str, Any]:
    """The toy judge as a ``python:`` judge model: a
    :class:`~respeval.judge.models.base.JudgeRequest` in, a verdict mapping out."""
    messages: Sequence[Any] = request.messages
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    user = next((m.content for m in reversed(messages) if m.role == "user"), "")
    return nearest_example_reply(system, user)


def openai_body_reply(body: Mapping[str, Any]) -> str:
    """The toy judge's reply text to an OpenAI chat-completions request body (for a local
    server speaking OpenAI's wire format)."""
    messages = body.get("messages") or []
    system = "\n\n".join(str(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((str(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    return json.dumps(nearest_example_reply(system, user))
