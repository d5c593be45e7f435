"""Agent-quality metrics judged over a whole trajectory, per record (a trace case, a run's
row): the hallucination check and tool-use quality, registered in
:data:`respeval.judge.methods.METHODS` and accepted by ``respeval evaluate``.

Input per record: ``messages``, the conversation as chat messages (OpenAI-style ``user`` /
``assistant`` with ``tool_calls`` / ``tool``, or respeval's ``tool_call`` / ``tool_result``
turns: :meth:`respeval.agents.conversation.Conversation.from_messages`), as a list or its JSON
text: what ``respeval dataset from-traces`` writes as a case's ``messages``.

``trajectory_hallucination``
    The claims of each final response (extracted as for ``faithfulness``, with the user's
    turn as the question) verified against **the tool outputs of the trajectory** up to that
    response: a claim no tool output supports is a hallucination.  ADK's aggregation of
    ``hallucinations_v1`` (higher is better: the share supported): an exchange's score is its
    supported claims / its claims, the record's value the mean over the exchanges that have
    claims and a tool output before them.  What differs from ADK's ``hallucinations_v1``
    (which ``respeval agent --judge-metrics hallucinations_v1`` computes with ADK's rules):
    claims rather than sentences, two labels rather than five, and only tool outputs count as
    evidence (ADK also reads the instructions and the user's words).  A record whose agent
    called no tool (nothing to check against) is unscored with that reason.
``trajectory_tool_use_quality``
    respeval's conversation-level ``tool_use_quality`` (the right tools, the right
    arguments, the results used: :data:`respeval.agents.multiturn.CONVERSATION_RUBRICS`)
    with ADK's rubric rules (a rubric passes when met or not applicable; ``samples`` judge
    calls, strict majority per rubric, ties fail; value = the mean of the rubric scores), per
    record.  A record without tool calls is unscored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from respeval.agents.conversation import Conversation
from respeval.agents.multiturn import CONVERSATION_RUBRICS, JudgeCase
from respeval.judge.methods.rag import (
    ClaimExtraction,
    ClaimsItem,
    ClaimVerification,
    RagInput,
    RagMetric,
    RagRow,
    StepRunner,
    VerifyItem,
    step_failure,
)

__all__ = ["TrajectoryHallucination", "TrajectoryToolUseQuality", "conversation_of"]

_MAX_RESULT = 8000  # characters of one tool output shown (the rest is cut, and says so)


def conversation_of(value: Any, what: str = "messages") -> Conversation:
    """A record's conversation (a list of messages or its JSON text); ValueError naming the
    field otherwise."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError(f"field {what!r}: not JSON text of a list of messages") from None
    if not isinstance(value, list) or not value:
        raise ValueError(f"field {what!r}: expected a non-empty list of messages")
    try:
        return Conversation.from_messages(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"field {what!r}: {exc}") from None


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) > _MAX_RESULT:
        text = text[:_MAX_RESULT] + f" ... [{len(text) - _MAX_RESULT} more characters not shown]"
    return text


class _TrajectoryMetric(RagMetric):
    needs: tuple[str, ...] = ("messages",)
    optional = ()

    def __init__(self, *, messages_field: str = "messages", **kwargs: Any) -> None:
        self.messages_field = messages_field
        super().__init__(**kwargs)

    def _record(self, raw: Mapping[str, Any], fields: Mapping[str, str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in (*self.input_fields, "id"):
            column = fields.get(name, self.messages_field if name == "messages" else name)
            if column in raw:
                out[name] = raw[column]
        return out


class TrajectoryHallucination(_TrajectoryMetric):
    """Response claims checked against the trajectory's tool outputs (see the module docstring)."""

    metric = "trajectory_hallucination"
    steps = (ClaimExtraction, ClaimVerification)

    async def _run(self, inputs: Sequence[RagInput], run: StepRunner) -> list[RagRow]:
        parsed, rows = self._valid(inputs, lambda r: conversation_of(r.get("messages")))
        # units: (input k, exchange i, the user's turn, the response, the tool outputs so far)
        units: list[tuple[int, int, str, str, str]] = []
        for k, conv in enumerate(parsed):
            if conv is None:
                continue
            outputs: list[str] = []
            calls: dict[str, Any] = {}
            for i, ex in enumerate(conv.exchanges):
                for step in ex.steps:
                    if step.kind == "call":
                        calls[step.name] = step.args
                    elif step.kind == "result":
                        args = calls.get(step.name)
                        head = f"[output of {step.name}" + (f"({_show(args)})" if args is not None else "") + "]"
                        outputs.append(f"{head}\n{_show(step.content)}")
                if ex.response.strip() and outputs:
                    units.append((k, i, ex.user, ex.response, "\n\n".join(outputs)))
            if rows[k] is None and not any(u[0] == k for u in units):
                has_outputs = bool(outputs)
                rows[k] = self._unscored(
                    inputs[k],
                    "no final response after a tool output"
                    if has_outputs
                    else "no tool output in the trajectory (nothing to check the response against)",
                )
        extracted = await run.step(self._step(ClaimExtraction), [ClaimsItem(u[2] or None, u[3]) for u in units])
        verify: list[int] = []
        items = []
        claims_of: dict[int, tuple[str, ...]] = {}
        failures: dict[int, list[str]] = {}
        for n, (unit, got) in enumerate(zip(units, extracted)):
            k = unit[0]
            if got is None or not got.scored or got.verdict is None:
                failures.setdefault(k, []).append(f"exchange {unit[1] + 1}: " + step_failure("claim extraction", got))
                continue
            claims = tuple(got.verdict["result"])
            if claims:
                claims_of[n] = claims
                verify.append(n)
                items.append(VerifyItem(claims, unit[4], "the outputs of the tools the agent called"))
        verified = await run.step(self._step(ClaimVerification), items)
        per_row: dict[int, list[tuple[int, float, list[dict[str, Any]]]]] = {}
        for n, got in zip(verify, verified):
            k, i = units[n][0], units[n][1]
            if got is None or not got.scored or got.verdict is None:
                failures.setdefault(k, []).append(f"exchange {i + 1}: " + step_failure("claim verification", got))
                continue
            details = [
                {"exchange": i + 1, "claim": c, "supported": ok, "reason": why}
                for c, (ok, why) in zip(claims_of[n], got.verdict["result"])
            ]
            per_row.setdefault(k, []).append((i, sum(bool(d["supported"]) for d in details) / len(details), details))
        for k in {u[0] for u in units}:
            if k in failures:
                got_details = [d for _, _, ds in per_row.get(k, []) for d in ds]
                rows[k] = self._unscored(inputs[k], "; ".join(failures[k]), got_details)
                continue
            scored = per_row.get(k, [])
            if not scored:
                rows[k] = self._unscored(inputs[k], "no claims in the responses (nothing to verify)")
                continue
            details = [d for _, _, ds in scored for d in ds]
            value = sum(s for _, s, _ in scored) / len(scored)
            bad = [d["claim"][:120] for d in details if not d["supported"]]
            explanation = f"{len(details) - len(bad)} of {len(details)} claims supported by a tool output" + (
                "; not: " + " | ".join(bad[:5]) if bad else ""
            )
            rows[k] = self._row(inputs[k], value, explanation, details)
        return [r if r is not None else self._unscored(inputs[k], "not run") for k, r in enumerate(rows)]


class TrajectoryToolUseQuality(_TrajectoryMetric):
    """respeval's ``tool_use_quality`` rubrics over each record's conversation (see the
    module docstring)."""

    metric = "trajectory_tool_use_quality"

    def __init__(self, *, samples: int = 1, **kwargs: Any) -> None:
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be a whole number, at least 1, got {samples!r}")
        self.samples = samples
        super().__init__(**kwargs)

    def signature(self) -> str:
        from respeval.judge.methods.conversations import ConversationRubrics

        return (
            f"{self.metric}|steps:{ConversationRubrics.template_version}|rubrics:tool_use_quality"
            f"|samples:{self.samples}|threshold:{self.threshold:g}"
        )

    async def _run(self, inputs: Sequence[RagInput], run: StepRunner) -> list[RagRow]:
        from respeval.judge.methods.multiturn import arun_multiturn

        parsed, rows = self._valid(inputs, lambda r: conversation_of(r.get("messages")))
        cases: list[JudgeCase] = []
        at: list[int] = []
        for k, conv in enumerate(parsed):
            if conv is None:
                continue
            if not any(ex.calls for ex in conv.exchanges):
                rows[k] = self._unscored(inputs[k], "no tool calls in the trajectory")
                continue
            cases.append(JudgeCase(str(k), conv))
            at.append(k)
        if cases:
            report = await arun_multiturn(
                cases,
                run.model,
                metrics=["tool_use_quality"],
                samples=self.samples,
                thresholds={"tool_use_quality": self.threshold},
                cache=run.cache,
                options=run.options,
            )
            run.spend.add(report.spend)
            if run.stop_reason is None and report.stop_reason:
                run.stop_reason, run.stop_kind = report.stop_reason, report.stop_kind
            texts = {r.id: r.text for r in CONVERSATION_RUBRICS["tool_use_quality"]}
            for k, case in zip(at, report.cases):
                (m,) = case.metrics
                details: list[dict[str, Any]] = [
                    {"rubric": rid, "text": texts.get(rid, ""), "score": v} for rid, v in m.per_rubric.items()
                ]
                if m.value is None:
                    why = "; ".join(sorted({r for r in m.reasons if r})) or "no rubric verdict"
                    rows[k] = self._unscored(inputs[k], why, details)
                    continue
                unmet = [str(d["rubric"]) for d in details if d["score"] is not None and d["score"] < 1.0]
                explanation = f"{len(details) - len(unmet)} of {len(details)} rubrics met" + (
                    f"; not: {', '.join(unmet)}" if unmet else ""
                )
                rows[k] = self._row(inputs[k], m.value, explanation, details)
        return [r if r is not None else self._unscored(inputs[k], "not run") for k, r in enumerate(rows)]
