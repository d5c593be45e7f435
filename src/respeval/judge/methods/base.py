"""What a judging method is: to the engine, and to :func:`respeval.judge.run`.

A per-request method (:class:`JudgeMethod`) turns an input record into a request, reads a
verdict out of a completion, and says how to re-ask once after an unusable reply.  The
engine does everything else (concurrency, retries, cache, budget, accounting), so a new
method is only prompt + parser.

A whole-run method (:class:`respeval.judge.run.JudgePlan`) runs the engine as it needs
over a set of records (both orders of each pair, K samples of each item, a rubric per prompt
before the verdicts) and returns its own report (:class:`~respeval.judge.results.JudgeReport`).

:class:`MethodOptions` is one flat set of settings every registered method can be built
from (``from_options``): the command line's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from respeval.judge.models.base import Capabilities, Completion, JsonSchema, JudgeRequest, Message
from respeval.judge.parsing import Parsed, ParseFailure

__all__ = [
    "MAX_ECHO",
    "JudgeMethod",
    "MethodOptions",
    "first_request",
    "reask_for_json",
    "reask_request",
]

MAX_ECHO = 2000
"""Characters of an unusable reply sent back with the re-ask."""


class JudgeMethod(Protocol):
    """The engine's view of a judging method."""

    # Read-only to the engine (properties here, so plain class attributes satisfy them).
    @property
    def name(self) -> str: ...

    @property
    def template_version(self) -> str: ...

    @property
    def fields(self) -> Sequence[str]:
        """Input fields the method reads (``id`` is always read as well)."""

    @property
    def verdict_fields(self) -> Sequence[str]:
        """The output columns of a verdict, in order (see ``row_fields``)."""

    def signature(self) -> str:
        """Everything that identifies how rows were judged (template version, threshold)."""

    def item(self, record: Mapping[str, Any]) -> Any:
        """Validate one record (fields already renamed); raise ValueError naming the field."""

    def build(self, item: Any, capabilities: Capabilities) -> JudgeRequest: ...

    def parse(self, item: Any, completion: Completion) -> Parsed[Any] | ParseFailure: ...

    def reask(
        self, item: Any, request: JudgeRequest, completion: Completion, failure: ParseFailure
    ) -> JudgeRequest: ...

    def row_fields(self, verdict: Any) -> dict[str, Any]:
        """The verdict's output columns; must include ``pass`` (bool) and may include
        ``score`` (a number), which the summary aggregates."""


@dataclass(frozen=True)
class MethodOptions:
    """Every setting a registered method can be built from, in one flat set (the command
    line's); each method's ``from_options`` reads the ones it has and ignores the rest.

    Attributes:
        threshold: the pass threshold (pointwise score, rubric score).
        max_tokens: the verdict's reply limit (pointwise, pairwise).
        seed: sent to models that support one.
        template, system_instruction: the user's prompt template and judge persona.
        samples, aggregate, sample_temperature: K requests per item, how they combine
            (``majority``, ``mean``, ``median``) and their temperature.
        flip: pairwise orders, ``both`` or ``half``.
        criteria: a static rubric's criteria (``rubric``).
        preset, guidelines, rubrics: adaptive rubrics' focus, guidelines and the rubrics
            given per prompt (an edited export).
    """

    threshold: float = 0.5
    max_tokens: int = 512
    seed: int | None = None
    template: str | None = None
    system_instruction: str | None = None
    samples: int = 1
    aggregate: str = "majority"
    sample_temperature: float | None = None
    flip: str = "both"
    criteria: Sequence[Any] | None = None
    preset: str = "GENERAL_QUALITY"
    guidelines: str | None = None
    rubrics: Mapping[str, Sequence[Any]] | None = None

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError(f"samples must be at least 1, got {self.samples}")


def first_request(
    system: str,
    user: str,
    capabilities: Capabilities,
    *,
    seed: int | None,
    max_tokens: int,
    schema: JsonSchema,
    template_version: str,
    flip: bool = False,
    temperature: float | None = 0.0,
) -> JudgeRequest:
    """A method's first request: ``temperature`` (default 0; None: the provider's default)
    and the seed where the model honours them, the JSON schema where it supports structured
    output (the prompt describes it always)."""
    return JudgeRequest(
        messages=(Message("system", system), Message("user", user)),
        temperature=temperature if capabilities.temperature else None,
        seed=seed if capabilities.seed else None,
        max_tokens=max_tokens,
        json_schema=schema if capabilities.json_schema else None,
        template_version=template_version,
        flip=flip,
    )


def reask_request(request: JudgeRequest, completion: Completion, prompt: str) -> JudgeRequest:
    """The one follow-up after an unusable reply: the conversation so far, the reply, and
    ``prompt`` (what was wrong, and the bare JSON object asked for again)."""
    echo = completion.text[:MAX_ECHO] or "(empty reply)"
    return JudgeRequest(
        messages=request.messages + (Message("assistant", echo), Message("user", prompt)),
        temperature=request.temperature,
        seed=request.seed,
        max_tokens=request.max_tokens,
        json_schema=request.json_schema,
        template_version=request.template_version + "+reask",
        sample_index=request.sample_index,
        flip=request.flip,
    )


def reask_for_json(request: JudgeRequest, completion: Completion, failure: ParseFailure, shape: str) -> JudgeRequest:
    """:func:`reask_request` saying why the reply could not be used and asking again for only
    the JSON object ``shape``."""
    prompt = f"Your reply could not be used: {failure.reason}.\nReply again with only the JSON object:\n{shape}"
    return reask_request(request, completion, prompt)
