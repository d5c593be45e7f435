"""What a judging method is, to the engine, and the registry of methods by name.

A method turns an input record into a request, reads a verdict out of a completion, and
says how to re-ask once after an unusable reply.  The engine does everything else
(concurrency, retries, cache, budget, accounting), so a new method is only prompt + parser.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from respeval.judge.models import Capabilities, Completion, JudgeRequest
from respeval.judge.parsing import Parsed, ParseFailure
from respeval.judge.pointwise import Pointwise

__all__ = ["METHODS", "JudgeMethod", "get_method"]


class JudgeMethod(Protocol):
    """The engine's view of a judging method."""

    name: str
    template_version: str
    fields: Sequence[str]
    """Input fields the method reads (``id`` is always read as well)."""
    verdict_fields: Sequence[str]
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


METHODS: dict[str, Callable[..., Any]] = {"pointwise": Pointwise}


def get_method(name: str, **options: Any) -> JudgeMethod:
    """A method by name (``pointwise``), constructed with ``options``."""
    try:
        cls = METHODS[name]
    except KeyError:
        raise ValueError(f"unknown judge method {name!r}; available: {', '.join(sorted(METHODS))}") from None
    method: JudgeMethod = cls(**options)
    return method
