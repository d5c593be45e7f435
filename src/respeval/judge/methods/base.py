"""What a judging method is, to the engine.

A method turns an input record into a request, reads a verdict out of a completion, and
says how to re-ask once after an unusable reply.  The engine does everything else
(concurrency, retries, cache, budget, accounting), so a new method is only prompt + parser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from respeval.judge.models.base import Capabilities, Completion, JudgeRequest
from respeval.judge.parsing import Parsed, ParseFailure

__all__ = ["JudgeMethod"]


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
