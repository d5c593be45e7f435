"""What a judging method is, to the engine.

A method turns an input record into a request, reads a verdict out of a completion, and
says how to re-ask once after an unusable reply.  The engine does everything else
(concurrency, retries, cache, budget, accounting), so a new method is only prompt + parser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from respeval.judge.models.base import Capabilities, Completion, JsonSchema, JudgeRequest, Message
from respeval.judge.parsing import Parsed, ParseFailure

__all__ = ["MAX_ECHO", "JudgeMethod", "first_request", "reask_for_json", "reask_request"]

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
) -> JudgeRequest:
    """A method's first request: temperature 0 and the seed where the model honours them,
    the JSON schema where it supports structured output (the prompt describes it always)."""
    return JudgeRequest(
        messages=(Message("system", system), Message("user", user)),
        temperature=0.0 if capabilities.temperature else None,
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
