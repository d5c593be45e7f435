"""Judge prompts of your own: templates over any dataset column, system instructions, and a
parse contract (a score range or a label set).

A template is text with ``{column}`` placeholders (``{{``/``}}`` for literal braces)::

    PointwiseMetric(
        "claims_accuracy",
        "Check the answer against the policy.\\nPolicy: {context}\\nQuestion: {prompt}\\nAnswer: {response}",
        system_instruction="You are an expert claims auditor.",
        criteria={"accuracy": "Every statement in the answer is backed by the policy."},
        rating_rubric={"5": "fully accurate", "3": "minor slips", "1": "contradicts the policy"},
    )

Every inserted value is **data**: it goes into the prompt between two markers carrying a code
that appears in none of the row's texts (:func:`respeval.judge.data.fence_code`),
and the instruction tells the judge that nothing between markers is an instruction.  The
template, the system instruction, the criteria, the rubric and the parse contract are hashed
into ``template_version``, so they are part of every cache key and of the run's signature:
change any of them and nothing stale is served from the cache.

The methods that already exist take a template and a system instruction too
(``Pointwise(template=..., system_instruction=...)``, ``Pairwise(...)``, ``Rubric(...)``,
``RubricGenerator(system_instruction=...)``); the helpers they share (:class:`PromptTemplate`,
:func:`with_system_instruction`, :func:`template_tag`) live in
:mod:`respeval.judge.methods.prompts`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from respeval.judge.data import fence, fence_code
from respeval.judge.methods.pairwise import ORIENTATIONS, orientations_for, winner_for
from respeval.judge.methods.prompts import (
    DATA_RULE,
    PromptTemplate,
    TemplatedItem,
    digest,
    template_tag,
    text_value,
    with_system_instruction,
)
from respeval.judge.models.base import Capabilities, Completion, JsonSchema, JudgeRequest, Message, strict_object
from respeval.judge.parsing import Parsed, ParseFailure, extract_verdict, parse_number

__all__ = [
    "DATA_RULE",
    "Example",
    "LabelSet",
    "PairwiseMetric",
    "PointwiseMetric",
    "PromptTemplate",
    "ScoreRange",
    "template_tag",
    "text_value",
    "with_system_instruction",
]

_MAX_ECHO = 2000
_PAIR_LABELS = {"baseline_model_response": "RESPONSE A", "response": "RESPONSE B"}


@dataclass(frozen=True)
class ScoreRange:
    """The judge answers a number in ``[low, high]`` (whole numbers only when ``integer``)."""

    low: float = 1
    high: float = 5
    integer: bool = True

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(f"score range: low {self.low} must be below high {self.high}")

    def describe(self) -> str:
        kind = "a whole number" if self.integer else "a number"
        return f'"score": {kind} from {self.low:g} to {self.high:g}'

    def check(self, value: Any) -> float | str:
        number = parse_number(value)
        if isinstance(number, str):
            return f"score {number}"
        if not self.low <= number <= self.high:
            return f"score {number:g} is outside [{self.low:g}, {self.high:g}]"
        if self.integer and number != int(number):
            return f"score {number:g} is not a whole number"
        return number


@dataclass(frozen=True)
class LabelSet:
    """The judge answers one of ``labels``; ``scores`` maps labels to numbers (default: the
    first label scores highest, evenly down to 0); ``passing`` are the labels that pass
    (default: the first)."""

    labels: tuple[str, ...]
    passing: tuple[str, ...] = ()
    scores: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        if len(self.labels) < 2 or len(set(self.labels)) != len(self.labels):
            raise ValueError("a label set needs at least two distinct labels")
        unknown = [p for p in self.passing if p not in self.labels]
        if unknown:
            raise ValueError(f"passing labels {unknown} are not in {list(self.labels)}")

    def score_of(self, label: str) -> float:
        given = dict(self.scores)
        if label in given:
            return float(given[label])
        n = len(self.labels) - 1
        return (n - self.labels.index(label)) / n

    def is_pass(self, label: str) -> bool:
        return label in (self.passing or self.labels[:1])

    def describe(self) -> str:
        return '"label": one of ' + ", ".join(json.dumps(label) for label in self.labels)

    def check(self, value: Any) -> str | tuple[str]:
        if not isinstance(value, str):
            return f"label must be one of {list(self.labels)}, got {value!r}"
        lowered = {label.lower(): label for label in self.labels}
        label = lowered.get(value.strip().strip("*_`.\"'").lower())
        if label is None:
            return f"label must be one of {list(self.labels)}, got {value[:40]!r}"
        return (label,)


Contract = ScoreRange | LabelSet


def _contract_json(contract: Contract) -> dict[str, Any]:
    return {"type": type(contract).__name__, **dataclasses.asdict(contract)}


@dataclass(frozen=True)
class TemplateVerdict:
    score: float
    judge_pass: bool
    reasoning: str
    label: str | None = None


@dataclass(frozen=True)
class Example:
    """A graded example shown to the judge (few-shot): the template's column ``values`` of one
    row and the ``answer`` a person gave it (a label of the metric's label set, or a score in
    its range); ``id`` names the row it came from (not shown to the judge)."""

    values: tuple[tuple[str, str], ...]
    answer: str | float
    id: Any = None

    @classmethod
    def of(cls, data: Mapping[str, Any] | Example) -> Example:
        """An example from ``{"values": {column: text}, "answer": ..., "id": ...}`` (a spec
        file's form) or an Example."""
        if isinstance(data, Example):
            return data
        if not isinstance(data, Mapping) or not isinstance(data.get("values"), Mapping) or "answer" not in data:
            raise ValueError(f"an example is {{'values': {{column: text}}, 'answer': ...}}, got {data!r:.80}")
        answer = data["answer"]
        if isinstance(answer, bool) or not isinstance(answer, (str, int, float)):
            raise ValueError(f"an example's answer is a label or a number, got {answer!r:.40}")
        values = tuple((str(k), text_value(v)) for k, v in data["values"].items())
        return cls(values, answer if isinstance(answer, str) else float(answer), data.get("id"))

    def to_dict(self) -> dict[str, Any]:
        """The spec file's form."""
        answer: Any = self.answer
        if isinstance(answer, float) and answer.is_integer():
            answer = int(answer)
        return {"id": self.id, "values": dict(self.values), "answer": answer}


EXAMPLES_INTRO = (
    "Examples graded by people. Each example is data, between two markers that carry the same "
    "code; the grade after it is the one a person gave. Grade the new data as these people would."
)


def examples_text(examples: Sequence[Example], answer_key: str) -> str:
    """The examples block of a system message: each example's values as one JSON object
    between ``[EXAMPLE i code]`` markers, then ``Grade: {"label": ...}`` (the person's)."""
    bodies = [json.dumps(dict(e.values), ensure_ascii=False) for e in examples]
    code = fence_code(bodies)
    parts = [EXAMPLES_INTRO]
    for i, (example, body) in enumerate(zip(examples, bodies), 1):
        answer = example.answer
        if isinstance(answer, float) and answer.is_integer():
            answer = int(answer)
        parts.append(fence(f"EXAMPLE {i}", code, body) + "\nGrade: " + json.dumps({answer_key: answer}))
    return "\n\n".join(parts)


def _rubric_text(criteria: Mapping[str, str] | None, rubric: Mapping[str, str] | None) -> str:
    parts = []
    if criteria:
        parts.append("Criteria:\n" + "\n".join(f"- {k}: {v}" for k, v in criteria.items()))
    if rubric:
        parts.append("Rating rubric:\n" + "\n".join(f"- {k}: {v}" for k, v in rubric.items()))
    return "\n\n".join(parts)


def _system_message(metric: PointwiseMetric | PairwiseMetric) -> str:
    """A metric's system message, built once (a metric is not changed after it is made)."""
    cached: str | None = metric.__dict__.get("_system_text")
    if cached is None:
        cached = metric.__dict__["_system_text"] = metric.system_prompt()
    return cached


def _reask(request: JudgeRequest, completion: Completion, failure: ParseFailure, shape: str) -> JudgeRequest:
    echo = completion.text[:_MAX_ECHO] or "(empty reply)"
    prompt = f"Your reply could not be used: {failure.reason}.\nReply again with only the JSON object:\n{shape}"
    return dataclasses.replace(
        request,
        messages=request.messages + (Message("assistant", echo), Message("user", prompt)),
        template_version=request.template_version + "+reask",
    )


class PointwiseMetric:
    """A judged metric with your own prompt: one request per row, a score (or a label) back.

    Args:
        name: the metric's name (output columns ``{name}/score``, ``{name}/explanation``).
        template: the user message, naming columns as ``{column}`` (see the module docstring);
            None builds one from ``{prompt}`` and ``{response}``.
        system_instruction: who the judge is ("You are an expert claims auditor"); put before
            respeval's grading contract, which it cannot remove.
        criteria: name -> what to check; rating_rubric: score (or label) -> what it means.
        score_range: the answer's range (default 1-5, whole numbers), or ``labels``: the
            allowed labels (then ``passing`` are the labels that pass).
        threshold: a row passes when its score reaches it (default: the range's midpoint);
            with ``pass_when="equal"`` only when it equals it (VERBOSITY: 3 is right).
        required: columns the template may name but a row may lack (else a missing value
            leaves the row unscored).
        examples: graded examples shown in the system message (few-shot), each
            ``{"values": {column: text}, "answer": label or score}`` or an :class:`Example`;
            each value fenced as data.  guidelines: grading guidelines shown after the
            criteria.  Both are hashed into ``template_version`` (only when given, so the keys
            of a metric without them are unchanged).
        spec_hash: the hash of the frozen spec this judge was loaded from (``respeval
            align``); it is in ``template_version`` (so in every cache key) and the signature.
    """

    kind = "pointwise"
    verdict_fields = ("score", "pass", "reasoning", "label")

    def __init__(
        self,
        name: str,
        template: str | PromptTemplate | None = None,
        *,
        system_instruction: str | None = None,
        criteria: Mapping[str, str] | None = None,
        rating_rubric: Mapping[Any, str] | None = None,
        score_range: tuple[float, float] | ScoreRange | None = None,
        labels: Sequence[str] | None = None,
        passing: Sequence[str] | None = None,
        threshold: float | None = None,
        pass_when: str = "at_least",
        max_tokens: int = 512,
        seed: int | None = None,
        description: str | None = None,
        examples: Sequence[Mapping[str, Any] | Example] | None = None,
        guidelines: str | None = None,
        spec_hash: str | None = None,
    ) -> None:
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"a metric name must be a non-empty string without '/', got {name!r}")
        if pass_when not in ("at_least", "equal"):
            raise ValueError(f"{name}: pass_when must be 'at_least' or 'equal', got {pass_when!r}")
        self.pass_when = pass_when
        self.name = name
        if template is None:
            template = "The prompt:\n{prompt}\n\nThe response to grade:\n{response}"
        self.template = template if isinstance(template, PromptTemplate) else PromptTemplate(template)
        self.system_instruction = system_instruction
        self.criteria = {str(k): str(v) for k, v in (criteria or {}).items()}
        self.rating_rubric = {str(k): str(v) for k, v in (rating_rubric or {}).items()}
        if labels is not None and score_range is not None:
            raise ValueError(f"{name}: give score_range or labels, not both")
        self.contract: Contract
        if labels is not None:
            self.contract = LabelSet(tuple(labels), tuple(passing or ()))
        elif isinstance(score_range, ScoreRange):
            self.contract = score_range
        elif score_range is not None:
            low, high = score_range
            self.contract = ScoreRange(low, high, integer=float(low).is_integer() and float(high).is_integer())
        else:
            self.contract = ScoreRange()
        if isinstance(self.contract, ScoreRange):
            self.threshold = threshold if threshold is not None else (self.contract.low + self.contract.high) / 2
        else:
            self.threshold = threshold if threshold is not None else 0.0
        self.max_tokens = max_tokens
        self.seed = seed
        self.description = description or f"judge: {name}"
        self.fields = self.template.fields
        self.examples = tuple(Example.of(e) for e in (examples or ()))
        for i, example in enumerate(self.examples, 1):
            checked = self.contract.check(example.answer)
            if isinstance(checked, str):
                raise ValueError(f"{name}: example {i} (id {example.id!r}): {checked}")
        self.guidelines = guidelines.strip() if isinstance(guidelines, str) and guidelines.strip() else None
        self.spec_hash = spec_hash or None
        self.template_version = f"pointwise-template/{name}/" + digest(
            self.template.text,
            system_instruction,
            self.criteria,
            self.rating_rubric,
            _contract_json(self.contract),
        )
        if self.examples or self.guidelines:  # only then: every key of a metric without them stays what it was
            self.template_version += "+shots:" + digest("shots", [e.to_dict() for e in self.examples], self.guidelines)
        if self.spec_hash:
            self.template_version += f"+spec:{self.spec_hash}"
        shape: dict[str, dict[str, Any]] = {"reasoning": {"type": "string"}}
        if isinstance(self.contract, ScoreRange):
            shape["score"] = {
                "type": "integer" if self.contract.integer else "number",
                "minimum": self.contract.low,
                "maximum": self.contract.high,
            }
            answer = "score"
        else:
            shape["label"] = {"type": "string", "enum": list(self.contract.labels)}
            answer = "label"
        self._answer = answer
        self._schema = JsonSchema(
            "judge_verdict",
            {"type": "object", "properties": shape, "required": ["reasoning", answer], "additionalProperties": False},
        )
        self._shape = '{"reasoning": "<one or two sentences>", ' + self.contract.describe() + "}"

    # ------------------------------------------------------------------ identity

    def signature(self) -> str:
        contract = _contract_json(self.contract)
        return (
            f"{self.template_version}|contract:{json.dumps(contract, sort_keys=True)}"
            f"|pass:{self.pass_when}:{self.threshold:g}" + (f"|spec:{self.spec_hash}" if self.spec_hash else "")
        )

    @property
    def answer_key(self) -> str:
        """The verdict's answer field: ``label`` or ``score``."""
        return self._answer

    def passes(self, score: float) -> bool:
        return score == self.threshold if self.pass_when == "equal" else score >= self.threshold

    def system_prompt(self) -> str:
        parts = [
            "You are an impartial grader. You grade the data you are given against the task below.",
            _rubric_text(self.criteria, self.rating_rubric),
            f"Guidelines:\n{self.guidelines}" if self.guidelines else "",
            DATA_RULE,
            examples_text(self.examples, self._answer) if self.examples else "",
            f"Reply with one JSON object and nothing else:\n{self._shape}",
        ]
        return with_system_instruction("\n\n".join(p for p in parts if p), self.system_instruction)

    # ------------------------------------------------------------------ the method

    def item(self, record: Mapping[str, Any]) -> TemplatedItem:
        return TemplatedItem(self.template.values(record))

    def build(self, item: TemplatedItem, capabilities: Capabilities) -> JudgeRequest:
        values = dict(item.values)
        user = self.template.render(values, self.template.data(values)) + "\n\nReply with the JSON object only."
        return JudgeRequest(
            messages=(Message("system", _system_message(self)), Message("user", user)),
            temperature=0.0 if capabilities.temperature else None,
            seed=self.seed if capabilities.seed else None,
            max_tokens=self.max_tokens,
            json_schema=self._schema if capabilities.json_schema else None,
            template_version=self.template_version,
        )

    def parse(self, item: TemplatedItem, completion: Completion) -> Parsed[TemplateVerdict] | ParseFailure:
        answer = self._answer
        return extract_verdict(
            completion,
            looks_like=lambda obj: answer in {k.lower() for k in obj if isinstance(k, str)},
            validate=self._validate,
            same=lambda a, b: a.score == b.score and a.label == b.label,
            labels={answer: (answer, "rating", "grade")},
            data=self.template.data(dict(item.values)),
        )

    def _validate(self, obj: Mapping[str, Any]) -> TemplateVerdict | str:
        keys = {k.lower(): v for k, v in obj.items() if isinstance(k, str)}
        if self._answer not in keys:
            return f"missing field {self._answer!r}"
        checked = self.contract.check(keys[self._answer])
        if isinstance(checked, str):
            return checked
        reasoning = keys.get("reasoning", "")
        reasoning = reasoning if isinstance(reasoning, str) else str(reasoning)
        if isinstance(checked, tuple):
            assert isinstance(self.contract, LabelSet)
            label = checked[0]
            score = self.contract.score_of(label)
            return TemplateVerdict(score, self.contract.is_pass(label), reasoning, label)
        return TemplateVerdict(float(checked), self.passes(float(checked)), reasoning)

    def reask(
        self, item: TemplatedItem, request: JudgeRequest, completion: Completion, failure: ParseFailure
    ) -> JudgeRequest:
        return _reask(request, completion, failure, self._shape)

    def row_fields(self, verdict: TemplateVerdict) -> dict[str, Any]:
        return {
            "score": verdict.score,
            "pass": verdict.judge_pass,
            "reasoning": verdict.reasoning,
            "label": verdict.label,
        }

    def __repr__(self) -> str:
        return f"PointwiseMetric({self.name!r}, fields={self.fields}, contract={self.contract})"


_PAIR_SHAPE = '{"reasoning": "<one or two sentences>", "winner": "A" | "B" | "TIE"}'
_PAIR_SCHEMA = JsonSchema(
    "pairwise_verdict",
    strict_object({"reasoning": {"type": "string"}, "winner": {"type": "string", "enum": ["A", "B", "TIE"]}}),
)
_WINNERS = {"a": "first", "b": "second", "tie": "tie", "response a": "first", "response b": "second"}


@dataclass(frozen=True)
class PairVerdict:
    position: str  # first (slot A), second (slot B) or tie
    reasoning: str
    orientation: str

    @property
    def winner(self) -> str:
        return winner_for(self.position, self.orientation)


class PairwiseMetric:
    """A judged comparison with your own prompt: the candidate (``{response}``) against the
    baseline (``{baseline_model_response}``), by default asked in both orders.

    In the template, ``{baseline_model_response}`` marks slot A and ``{response}`` slot B.  In
    the ``ab`` order slot A holds the baseline; in the ``ba`` order the two texts trade slots,
    so the judge never knows which is the candidate, and each order's positional answer is
    mapped back (see :mod:`respeval.judge.methods.pairwise` for outcomes and ``flip``).
    """

    kind = "pairwise"
    verdict_fields = ("winner", "position", "pass", "reasoning")

    def __init__(
        self,
        name: str,
        template: str | PromptTemplate | None = None,
        *,
        system_instruction: str | None = None,
        criteria: Mapping[str, str] | None = None,
        rating_rubric: Mapping[Any, str] | None = None,
        flip: str = "both",
        allow_tie: bool = True,
        max_tokens: int = 512,
        seed: int | None = None,
        description: str | None = None,
    ) -> None:
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"a metric name must be a non-empty string without '/', got {name!r}")
        self.name = name
        if template is None:
            template = (
                "The prompt:\n{prompt}\n\nResponse A:\n{baseline_model_response}\n\nResponse B:\n{response}\n\n"
                "Which response is better?"
            )
        self.template = template if isinstance(template, PromptTemplate) else PromptTemplate(template)
        missing = [f for f in ("response", "baseline_model_response") if f not in self.template.fields]
        if missing:
            raise ValueError(f"{name}: a pairwise template must name {{response}} and {{baseline_model_response}}")
        orientations_for(0, flip)  # checks the mode
        self.flip = flip
        self.allow_tie = allow_tie
        self.system_instruction = system_instruction
        self.criteria = {str(k): str(v) for k, v in (criteria or {}).items()}
        self.rating_rubric = {str(k): str(v) for k, v in (rating_rubric or {}).items()}
        self.max_tokens = max_tokens
        self.seed = seed
        self.description = description or f"pairwise judge: {name}"
        self.fields = (*self.template.fields, "orientation")
        self.template_version = f"pairwise-template/{name}/" + digest(
            self.template.text, system_instruction, self.criteria, self.rating_rubric, allow_tie
        )

    def signature(self) -> str:
        return f"{self.template_version}|flip:{self.flip}|tie:{'yes' if self.allow_tie else 'no'}"

    def orientations(self, index: int) -> tuple[str, ...]:
        return orientations_for(index, self.flip)

    def system_prompt(self) -> str:
        tie = "or TIE when neither is better" if self.allow_tie else "(no ties)"
        parts = [
            "You are an impartial judge. You compare two responses, A and B, for the task below and "
            f"decide which is better {tie}. Their order, length and style must not influence you.",
            _rubric_text(self.criteria, self.rating_rubric),
            DATA_RULE,
            f"Reply with one JSON object and nothing else:\n{_PAIR_SHAPE}",
        ]
        return with_system_instruction("\n\n".join(p for p in parts if p), self.system_instruction)

    def item(self, record: Mapping[str, Any]) -> TemplatedItem:
        orientation = record.get("orientation", "ab")
        if orientation not in ORIENTATIONS:
            raise ValueError(f"field 'orientation': expected ab or ba, got {orientation!r}")
        return TemplatedItem(self.template.values(record), orientation)

    def _shown(self, item: TemplatedItem) -> dict[str, str]:
        """The values as shown: in the ``ba`` orientation the two responses trade places."""
        values = dict(item.values)
        if item.orientation == "ba":
            values["response"], values["baseline_model_response"] = (
                values["baseline_model_response"],
                values["response"],
            )
        return values

    def build(self, item: TemplatedItem, capabilities: Capabilities) -> JudgeRequest:
        values = self._shown(item)
        data = self.template.data(values, _PAIR_LABELS)
        user = self.template.render(values, data, _PAIR_LABELS) + "\n\nReply with the JSON object only."
        return JudgeRequest(
            messages=(Message("system", _system_message(self)), Message("user", user)),
            temperature=0.0 if capabilities.temperature else None,
            seed=self.seed if capabilities.seed else None,
            max_tokens=self.max_tokens,
            json_schema=_PAIR_SCHEMA if capabilities.json_schema else None,
            template_version=self.template_version,
            flip=item.orientation == "ba",
        )

    def parse(self, item: TemplatedItem, completion: Completion) -> Parsed[PairVerdict] | ParseFailure:
        outcome = extract_verdict(
            completion,
            looks_like=lambda obj: "winner" in {k.lower() for k in obj if isinstance(k, str)},
            validate=self._validate,
            same=lambda a, b: a.position == b.position,
            labels={"winner": ("winner", "better response")},
            data=self.template.data(self._shown(item), _PAIR_LABELS),
        )
        if isinstance(outcome, ParseFailure):
            return outcome
        return Parsed(dataclasses.replace(outcome.verdict, orientation=item.orientation), outcome.stage)

    def _validate(self, obj: Mapping[str, Any]) -> PairVerdict | str:
        keys = {k.lower(): v for k, v in obj.items() if isinstance(k, str)}
        raw = keys.get("winner")
        if not isinstance(raw, str):
            return f"winner must be 'A', 'B' or 'TIE', got {raw!r}"
        position = _WINNERS.get(" ".join(raw.strip().strip("*_`.\"'").lower().split()))
        if position is None:
            return f"winner must be 'A', 'B' or 'TIE', got {raw[:40]!r}"
        if position == "tie" and not self.allow_tie:
            return "the judge answered TIE, but ties were not allowed"
        reasoning = keys.get("reasoning", "")
        return PairVerdict(position, reasoning if isinstance(reasoning, str) else str(reasoning), "ab")

    def reask(
        self, item: TemplatedItem, request: JudgeRequest, completion: Completion, failure: ParseFailure
    ) -> JudgeRequest:
        return _reask(request, completion, failure, _PAIR_SHAPE)

    def row_fields(self, verdict: PairVerdict) -> dict[str, Any]:
        winner = verdict.winner
        return {"winner": winner, "position": verdict.position, "pass": winner == "B", "reasoning": verdict.reasoning}

    def __repr__(self) -> str:
        return f"PairwiseMetric({self.name!r}, fields={self.template.fields}, flip={self.flip!r})"
