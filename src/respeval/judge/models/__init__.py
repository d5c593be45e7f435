"""Judge models: the protocol every adapter implements, and the adapters.

:mod:`~respeval.judge.models.base` says what a model is (requests in, completions out,
capabilities); one module per adapter: :mod:`~respeval.judge.models.openai`
(OpenAI-compatible chat completions), :mod:`~respeval.judge.models.anthropic` (Messages),
:mod:`~respeval.judge.models.callables` (a Python function), :mod:`~respeval.judge.models.fake`
(scripted, with fault dials) and :mod:`~respeval.judge.models.replay` (answers from a cache).
The HTTP adapters share the plumbing in ``_http`` and the transports in ``_transports``
(one module each).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from respeval.judge.models.base import (
    BaseJudgeModel,
    Capabilities,
    Completion,
    JsonSchema,
    JudgeModel,
    JudgeRequest,
    Message,
    estimate_tokens,
    messages_as_dicts,
)

if TYPE_CHECKING:
    from respeval.judge.models._http import HttpJudgeModel
    from respeval.judge.models._transports import LoopbackTransport, ShardedTransport
    from respeval.judge.models.anthropic import AnthropicModel
    from respeval.judge.models.callables import CallableModel
    from respeval.judge.models.fake import FakeModel
    from respeval.judge.models.openai import OpenAIChatModel
    from respeval.judge.models.replay import ReplayModel

# The adapters load on first use: the fake and replay models sit above the cache, which
# itself imports the base types from this package, so importing them here would be a cycle.
_ADAPTERS = {
    "AnthropicModel": "anthropic",
    "CallableModel": "callables",
    "FakeModel": "fake",
    "HttpJudgeModel": "_http",
    "LoopbackTransport": "_transports",
    "OpenAIChatModel": "openai",
    "ReplayModel": "replay",
    "ShardedTransport": "_transports",
}


def __getattr__(name: str) -> Any:
    module = _ADAPTERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "AnthropicModel",
    "BaseJudgeModel",
    "CallableModel",
    "Capabilities",
    "Completion",
    "FakeModel",
    "HttpJudgeModel",
    "JsonSchema",
    "JudgeModel",
    "JudgeRequest",
    "LoopbackTransport",
    "Message",
    "OpenAIChatModel",
    "ReplayModel",
    "ShardedTransport",
    "estimate_tokens",
    "messages_as_dicts",
]


def __dir__() -> list[str]:
    return sorted(__all__)
