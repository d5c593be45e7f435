"""ADK's informational efficiency metrics over agent invocations, with ADK 2.13's numbers.

ADK 2.13 (``google/adk/evaluation/_efficiency_evaluators.py``) reports four metrics on every
eval, per invocation (one user turn) and, for the eval case, as the mean over its
invocations; they never pass or fail.  respeval computes the same values, under the same
names without ADK's ``_v1`` version suffix:

===========================  ===============================================================
``tool_call_count``          the invocation's tool calls (ADK's ``get_all_tool_calls``: the
                             eval set's ``tool_uses``, or the calls in the events), a float
``inference_call_count``     the invocation's events that were model calls (an event with
                             usage metadata or a model version); None (n/a) when the
                             intermediate data is not a list of events
``token_usage``              tokens summed over the model calls' usage metadata, with ADK's
                             breakdown (:data:`TOKEN_FIELDS`): ``input_tokens`` = prompt +
                             tool-use prompt tokens, ``output_tokens`` = candidates +
                             thoughts tokens, ``total_tokens`` = input + output; a count no
                             call reported is None, never 0
``invocation_duration``      the seconds the invocation took (``duration``) and its parts
                             (:data:`DURATION_FIELDS`), only when the run timed it (a stored
                             session carries no timing: None)
===========================  ===============================================================

Case values follow ADK's rules exactly: the counts are ``sum(values) / len(values)`` over
the invocations with a value (added left to right, as ADK does); each token count is the sum
over the invocations that reported it divided by **all** the invocations (a backend omits a
count a call did not spend), None when none reported it; each duration part is the mean
over the invocations that have it, rounded to milliseconds, and ``framework_seconds`` is
``round(max(total - model - tool, 0), 3)``.  A case without invocations has None everywhere.

respeval adds per-case totals (ADK's values are per-turn means): ``tool_calls``,
``model_calls``, ``tokens_in``, ``tokens_out``, ``tokens_total`` (sums over the
invocations; None when no invocation reported the count) and ``latency_s`` (the sum of the
invocations' durations when every invocation was timed, else None).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.agents.loaders import Invocation, ModelCall

__all__ = [
    "ADK_EFFICIENCY_METRICS",
    "DURATION_FIELDS",
    "TOKEN_FIELDS",
    "CaseEfficiency",
    "InvocationEfficiency",
    "case_efficiency",
    "invocation_efficiency",
]

ADK_EFFICIENCY_METRICS = ("tool_call_count", "inference_call_count", "token_usage", "invocation_duration")
"""respeval's names of ADK 2.13's ``tool_call_count_v1``, ``inference_call_count_v1``,
``token_usage_v1`` and ``invocation_duration_v1``."""

TOKEN_FIELDS = (
    "total_tokens",
    "input_tokens",
    "prompt_tokens",
    "cached_tokens",
    "tool_use_tokens",
    "output_tokens",
    "candidates_tokens",
    "reasoning_tokens",
)
"""ADK's ``TokenUsageDetails``: total = input + output; input = prompt + tool use (cached is
part of prompt); output = candidates + reasoning."""

DURATION_FIELDS = ("total_seconds", "model_seconds", "tool_seconds", "framework_seconds")
"""ADK's ``DurationDetails``: the parts partition the total."""


def _add(total: float | None, count: int | None) -> float | None:
    """One call's count added to a running total; a count not reported leaves it as it is."""
    if count is None:
        return total
    return (total or 0) + count


def _either(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


def call_tokens(call: ModelCall) -> dict[str, int | None]:
    """One model call's counts in ADK's breakdown (:data:`TOKEN_FIELDS` but the total)."""
    u: Mapping[str, int | None] = call.usage or {}
    prompt, tool = u.get("prompt_token_count"), u.get("tool_use_prompt_token_count")
    candidates, thoughts = u.get("candidates_token_count"), u.get("thoughts_token_count")
    return {
        "input_tokens": _either(prompt, tool),
        "prompt_tokens": prompt,
        "cached_tokens": u.get("cached_content_token_count"),
        "tool_use_tokens": tool,
        "output_tokens": _either(candidates, thoughts),
        "candidates_tokens": candidates,
        "reasoning_tokens": thoughts,
    }


def token_usage(calls: Iterable[ModelCall]) -> dict[str, float | None]:
    """ADK's token breakdown of one invocation's model calls (calls without usage metadata
    count no tokens)."""
    totals: dict[str, float | None] = dict.fromkeys(TOKEN_FIELDS)
    for call in calls:
        if call.usage is None:
            continue
        for name, count in call_tokens(call).items():
            totals[name] = _add(totals[name], count)
    if totals["input_tokens"] is not None or totals["output_tokens"] is not None:
        totals["total_tokens"] = (totals["input_tokens"] or 0) + (totals["output_tokens"] or 0)
    return totals


def duration_details(inv: Invocation) -> dict[str, float | None]:
    """ADK's duration breakdown of one invocation (all None when it was not timed)."""
    if inv.duration is None:
        return dict.fromkeys(DURATION_FIELDS)
    model, tool = inv.model_duration, inv.tool_duration
    framework = None if model is None or tool is None else round(max(inv.duration - model - tool, 0.0), 3)
    return {"total_seconds": inv.duration, "model_seconds": model, "tool_seconds": tool, "framework_seconds": framework}


@dataclass
class InvocationEfficiency:
    """ADK's four values for one invocation."""

    invocation_id: str
    tool_call_count: float
    inference_call_count: float | None
    token_usage: dict[str, float | None]
    invocation_duration: dict[str, float | None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "invocation_id": self.invocation_id,
            "tool_call_count": self.tool_call_count,
            "inference_call_count": self.inference_call_count,
            "token_usage": dict(self.token_usage),
            "invocation_duration": dict(self.invocation_duration),
        }


def invocation_efficiency(inv: Invocation) -> InvocationEfficiency:
    """ADK's four values for ``inv`` (see the module docstring)."""
    return InvocationEfficiency(
        inv.invocation_id,
        float(len(inv.calls)),
        None if inv.model_calls is None else float(len(inv.model_calls)),
        token_usage(inv.model_calls or ()),
        duration_details(inv),
    )


def _mean_of_present(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


@dataclass
class CaseEfficiency:
    """One case: ADK's case values (per-invocation means), respeval's totals, and the
    invocations' own values.  ``cost_usd`` is filled by :mod:`respeval.efficiency` (it
    needs prices)."""

    case_id: str
    invocations: list[InvocationEfficiency] = field(default_factory=list)
    tool_call_count: float | None = None
    inference_call_count: float | None = None
    token_usage: dict[str, float | None] = field(default_factory=lambda: dict.fromkeys(TOKEN_FIELDS))
    invocation_duration: dict[str, float | None] = field(default_factory=lambda: dict.fromkeys(DURATION_FIELDS))
    tool_calls: int | None = None
    model_calls: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_total: int | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    source: str = "adk"
    models: tuple[str, ...] = ()

    def to_dict(self, *, invocations: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "case_id": self.case_id,
            "source": self.source,
            "tool_calls": self.tool_calls,
            "model_calls": self.model_calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "tokens_total": self.tokens_total,
            "latency_s": self.latency_s,
            "cost_usd": self.cost_usd,
            "tool_call_count": self.tool_call_count,
            "inference_call_count": self.inference_call_count,
            "token_usage": dict(self.token_usage),
            "invocation_duration": dict(self.invocation_duration),
        }
        if invocations:
            out["invocations"] = [i.to_dict() for i in self.invocations]
        return out


def _sum_ints(values: Iterable[float | None]) -> int | None:
    known = [v for v in values if v is not None]
    return int(sum(known)) if known else None


def case_efficiency(case_id: str, invocations: Sequence[Invocation]) -> CaseEfficiency:
    """ADK's case values and respeval's totals for the invocations of one case."""
    per = [invocation_efficiency(inv) for inv in invocations]
    out = CaseEfficiency(case_id, per)
    if not per:
        return out
    out.tool_call_count = _mean_of_present([p.tool_call_count for p in per])
    out.inference_call_count = _mean_of_present([p.inference_call_count for p in per])
    for name in TOKEN_FIELDS:
        values = [p.token_usage[name] for p in per]
        present = [v for v in values if v is not None]
        out.token_usage[name] = sum(present) / len(values) if present else None
    for name in DURATION_FIELDS:
        present = [v for v in (p.invocation_duration[name] for p in per) if v is not None]
        out.invocation_duration[name] = round(sum(present) / len(present), 3) if present else None
    out.tool_calls = sum(len(inv.calls) for inv in invocations)
    out.model_calls = _sum_ints([p.inference_call_count for p in per])
    out.tokens_in = _sum_ints([p.token_usage["input_tokens"] for p in per])
    out.tokens_out = _sum_ints([p.token_usage["output_tokens"] for p in per])
    out.tokens_total = _sum_ints([p.token_usage["total_tokens"] for p in per])
    durations = [inv.duration for inv in invocations]
    out.latency_s = sum(d for d in durations if d is not None) if all(d is not None for d in durations) else None
    out.models = tuple(dict.fromkeys(c.model for inv in invocations for c in inv.model_calls or () if c.model))
    return out
