"""Replay-from-cache: a model that answers only from a judge cache, never from a provider.

``ReplayModel(cache, like=model)`` answers exactly what ``model`` answered when the cache was
filled (the keys are computed with ``model``'s identity) and raises
:class:`~respeval.judge.errors.CacheMissError` for anything else, which stops the run.  CI
uses it (or the engine's ``replay_only=True``, the same thing) to rerun judged evaluations
deterministically, offline and for free.
"""

from __future__ import annotations

from typing import Any

from respeval.judge.cache import JudgeCache, cache_key
from respeval.judge.errors import CacheMissError
from respeval.judge.models.base import BaseJudgeModel, Completion, JudgeModel, JudgeRequest

__all__ = ["ReplayModel"]


class ReplayModel(BaseJudgeModel):
    """Serves ``like``'s cached answers from ``cache``; a miss stops the run."""

    def __init__(self, cache: JudgeCache, like: JudgeModel) -> None:
        super().__init__(like.name, capabilities=like.capabilities, endpoint=getattr(like, "endpoint", ""))
        self.provider = like.model_id.split(":", 1)[0]
        self._cache = cache
        self._identity = like.identity()

    def identity(self) -> dict[str, Any]:
        return dict(self._identity)

    async def generate(self, request: JudgeRequest) -> Completion:
        completion = self._cache.get(cache_key(self._identity, request))
        if completion is None:
            raise CacheMissError(
                f"replay-only: no cached answer of {self.model_id} for this request "
                f"(template {request.template_version or '-'}, sample {request.sample_index}) "
                f"in {self._cache.path}"
            )
        return completion
