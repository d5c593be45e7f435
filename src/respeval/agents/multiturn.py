"""ADK's multi-turn (LLM-judged) agent metrics: their names, their rules, and what a case's
result holds.  The judge calls themselves are :mod:`respeval.judge.methods.multiturn`'s;
this module is what those calls are combined by (``agent_semantics.md`` §2.6-2.9).

Metrics (:data:`JUDGED_METRICS`):

``task_success``, ``trajectory_quality``, ``tool_use_quality``
    respeval's conversation-level rubrics (:data:`CONVERSATION_RUBRICS`): the judge reads the
    whole conversation once per sample and gives a verdict per rubric.
``rubric_based_final_response_quality_v1``, ``rubric_based_tool_use_quality_v1``
    ADK's rubric metrics, per invocation, with the rubrics of the eval set (criterion, case
    and invocation rubrics of type ``FINAL_RESPONSE_QUALITY`` / ``TOOL_USE_QUALITY``).
``final_response_match_v2``
    per invocation, whether the agent's final response is equivalent to the expected one.
``hallucinations_v1``
    per invocation, each sentence of the final response (and, optionally, of intermediate
    texts) is labelled against the context seen so far (:data:`HALLUCINATION_LABELS`).

Rules:

* every unit (an invocation, or the conversation for respeval's rubrics) is asked
  ``samples`` times; if any sample fails (transport error, retries exhausted) the unit's
  score is None (NOT_EVALUATED); a sample whose reply cannot be read does not vote;
* ``final_response_match_v2``: strict majority of 1.0 over 0.0 among the samples that
  voted (:func:`majority`), ties 0.0, no votes None; case value = units with 1.0 / units
  with a score;
* rubric metrics: per rubric a strict majority (ties 0.0, no votes None); a rubric passes
  when fulfilled or not applicable; unit score = mean of its rubric scores; case value =
  mean over all (unit, rubric) scores pooled; per-rubric means are reported too;
* ``hallucinations_v1``: step score = share of labelled sentences supported or not
  applicable (:func:`support_fraction`); unit = mean of steps; case = mean of units with a
  score;
* a value of None is NOT_EVALUATED; otherwise PASSED iff value >= threshold (:func:`status_of`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.agents.adk import FAILED, NOT_EVALUATED, PASSED
from respeval.agents.conversation import Conversation

__all__ = [
    "ADK_JUDGED_METRICS",
    "CONVERSATION_RUBRICS",
    "FINAL_RESPONSE_MATCH",
    "HALLUCINATIONS",
    "HALLUCINATION_LABELS",
    "JUDGED_METRICS",
    "RUBRIC_RESPONSE",
    "RUBRIC_TOOLS",
    "RUBRIC_TYPES",
    "CaseResult",
    "ConversationRubric",
    "JudgeCase",
    "JudgedMetric",
    "majority",
    "mean_of",
    "rubrics_for",
    "split_sentences",
    "status_of",
    "support_fraction",
]

FINAL_RESPONSE_MATCH = "final_response_match_v2"
RUBRIC_RESPONSE = "rubric_based_final_response_quality_v1"
RUBRIC_TOOLS = "rubric_based_tool_use_quality_v1"
HALLUCINATIONS = "hallucinations_v1"
ADK_JUDGED_METRICS = (FINAL_RESPONSE_MATCH, RUBRIC_RESPONSE, RUBRIC_TOOLS, HALLUCINATIONS)
HALLUCINATION_LABELS = ("supported", "unsupported", "contradictory", "disputed", "not_applicable")
RUBRIC_TYPES = {RUBRIC_RESPONSE: "FINAL_RESPONSE_QUALITY", RUBRIC_TOOLS: "TOOL_USE_QUALITY"}
"""ADK's rubric metric -> the ``type`` of the eval set's rubrics it reads."""


@dataclass(frozen=True)
class ConversationRubric:
    """One property the agent's conversation should have (``text``), with an id, and ADK's
    rubric ``type`` when it comes from an eval set."""

    id: str
    text: str
    type: str | None = None

    @classmethod
    def from_adk(cls, data: Mapping[str, Any]) -> ConversationRubric:
        """From ADK's ``{rubric_id, rubric_content: {text_property}, type?}`` (or camelCase)."""
        rid = data.get("rubric_id", data.get("rubricId"))
        content = data.get("rubric_content", data.get("rubricContent")) or {}
        text = content.get("text_property", content.get("textProperty")) if isinstance(content, Mapping) else None
        if not isinstance(rid, str) or not rid:
            raise ValueError(f"a rubric needs a rubric_id: {dict(data)!r}"[:200])
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"rubric {rid!r} has no rubric_content.text_property")
        return cls(rid, text, data.get("type"))


CONVERSATION_RUBRICS: dict[str, tuple[ConversationRubric, ...]] = {
    "task_success": (
        ConversationRubric("goal_met", "By the end of the conversation, the agent has done what the user asked for."),
        ConversationRubric(
            "answer_grounded", "What the agent tells the user agrees with the tool results it received."
        ),
        ConversationRubric(
            "no_false_claims", "The agent never claims an action succeeded when no tool call shows that it did."
        ),
    ),
    "trajectory_quality": (
        ConversationRubric("sensible_order", "The agent takes its steps in an order that makes sense for the task."),
        ConversationRubric("no_wasted_steps", "The agent makes no unnecessary or repeated tool calls."),
        ConversationRubric(
            "no_missing_steps", "The agent does not skip a step the task needs (a lookup, a confirmation)."
        ),
    ),
    "tool_use_quality": (
        ConversationRubric("right_tools", "Each tool the agent calls fits what it is trying to do at that point."),
        ConversationRubric(
            "right_arguments",
            "The arguments of each call are correct and come from the conversation or from earlier tool results.",
        ),
        ConversationRubric("results_used", "The agent uses what the tools return, and handles tool errors sensibly."),
    ),
}
"""respeval's conversation-level metrics and their built-in rubrics."""

JUDGED_METRICS = (*CONVERSATION_RUBRICS, *ADK_JUDGED_METRICS)


@dataclass
class JudgeCase:
    """One eval case to judge: the agent's conversation, the expected final responses (one
    per exchange; ``final_response_match_v2`` needs them), and ADK rubrics of the case and
    per exchange."""

    case_id: str
    conversation: Conversation
    expected_responses: Sequence[str] | None = None
    rubrics: Sequence[ConversationRubric] = ()
    exchange_rubrics: Sequence[Sequence[ConversationRubric]] = ()


@dataclass
class JudgedMetric:
    """One judged metric of one case: the case value and status, each unit's score (an
    exchange, or the conversation for respeval's rubric metrics) with why it has none,
    per-rubric means, and the samples' votes."""

    metric: str
    threshold: float
    value: float | None
    status: str
    per_unit: list[float | None] = field(default_factory=list)
    reasons: list[str | None] = field(default_factory=list)
    per_rubric: dict[str, float | None] = field(default_factory=dict)
    votes: list[list[Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "threshold": self.threshold,
            "value": self.value,
            "status": self.status,
            "per_unit": self.per_unit,
            "reasons": self.reasons,
            "per_rubric": self.per_rubric,
            "votes": self.votes,
        }


@dataclass
class CaseResult:
    """Every judged metric of one case, in the order asked."""

    case_id: str
    metrics: list[JudgedMetric]

    def to_dict(self) -> dict[str, Any]:
        return {"case_id": self.case_id, "metrics": [m.to_dict() for m in self.metrics]}

    to_json = to_dict


def rubrics_for(
    metric: str, case: JudgeCase, given: Mapping[str, Sequence[ConversationRubric]]
) -> list[list[ConversationRubric]]:
    """The rubrics of each unit of ``case`` for ``metric``: respeval's built-in ones plus
    ``given`` (one unit: the conversation), or ADK's per-exchange rubrics of the metric's
    type (given, then the case's, then the exchange's own)."""
    extra = list(given.get(metric, ()))
    if metric in CONVERSATION_RUBRICS:
        return [list(CONVERSATION_RUBRICS[metric]) + extra]
    kind = RUBRIC_TYPES[metric]
    per_case = [r for r in case.rubrics if r.type == kind]
    out = []
    for i in range(len(case.conversation.exchanges)):
        own = case.exchange_rubrics[i] if i < len(case.exchange_rubrics) else ()
        rubrics = extra + per_case + [r for r in own if r.type == kind]
        ids = [r.id for r in rubrics]
        duplicates = sorted({x for x in ids if ids.count(x) > 1})
        if duplicates:
            raise ValueError(f"eval case {case.case_id!r}: duplicate rubric ids {', '.join(duplicates)} for {metric}")
        out.append(rubrics)
    return out


def majority(votes: Sequence[float | None]) -> float | None:
    """ADK's vote over samples: 1.0 if more samples say 1.0 than 0.0, else 0.0 (ties too);
    None samples do not vote; None when nobody voted."""
    ones = sum(v == 1.0 for v in votes if v is not None)
    zeros = sum(v == 0.0 for v in votes if v is not None)
    if ones + zeros == 0:
        return None
    return 1.0 if ones > zeros else 0.0


def mean_of(values: Sequence[float | None]) -> float | None:
    """The mean of the values that exist, added left to right and divided once (ADK's
    order); None when none does."""
    known = [v for v in values if v is not None]
    if not known:
        return None
    total = 0.0
    for v in known:
        total += v
    return total / len(known)


def status_of(value: float | None, threshold: float) -> str:
    """NOT_EVALUATED without a value, else PASSED iff ``value >= threshold``."""
    if value is None:
        return NOT_EVALUATED
    return PASSED if value >= threshold else FAILED


def support_fraction(labels: Sequence[str | None]) -> float | None:
    """Share of labelled sentences that are supported or not applicable (None: none labelled)."""
    known = [lab for lab in labels if lab is not None]
    if not known:
        return None
    return sum(lab in ("supported", "not_applicable") for lab in known) / len(known)


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"')\]]*\s+|\n+")


def split_sentences(text: str) -> tuple[str, ...]:
    """A rule-based sentence split (``segmenter="rule"``): after ``.``, ``!``, ``?`` (and
    their CJK forms) followed by space, and at line breaks."""
    return tuple(s.strip() for s in _SENTENCE_END.split(text) if s and s.strip())
