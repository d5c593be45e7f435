"""What a judge model is: requests in, completions out, and what the model can honour.

Every adapter (OpenAI-compatible HTTP, Anthropic Messages, a Python callable, the scripted
fake, replay-from-cache) implements :class:`JudgeModel`.  The engine only ever calls
``generate``; it never knows which wire format is behind it.

Models are async context managers, like ``httpx.AsyncClient``: entering opens whatever the
adapter needs (an HTTP connection pool), leaving closes it.  Entering is re-entrant and
counted, so the engine can ``async with model`` around a run without closing a model the
caller entered first.  A model used without ``async with`` opens lazily and is closed by
``aclose()``.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, runtime_checkable

from respeval.redact import redact, redact_data

__all__ = [
    "BaseJudgeModel",
    "Capabilities",
    "Completion",
    "JsonSchema",
    "JudgeModel",
    "JudgeRequest",
    "Message",
    "ToolCall",
    "ToolSpec",
    "object_list",
    "strict_object",
]


@dataclass(frozen=True)
class Message:
    """One chat message.  ``role`` is ``"system"``, ``"user"`` or ``"assistant"``."""

    role: str
    content: str


@dataclass(frozen=True)
class JsonSchema:
    """A JSON schema the reply must follow (OpenAI's ``response_format`` json_schema)."""

    name: str
    schema: Mapping[str, Any]
    strict: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "schema": self.schema, "strict": self.strict}

    @functools.cached_property
    def canonical_json(self) -> str:
        """Sorted-keys JSON, computed once per schema object (it is part of every cache key)."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class ToolSpec:
    """A function the model may call (a tool definition, passed through to the provider):
    its ``name``, a ``description`` and the JSON schema of its ``parameters``.  Each
    adapter writes it in its provider's shape (OpenAI ``{"type": "function", "function":
    {...}}``, Anthropic ``{"name", "description", "input_schema"}``)."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = dataclasses.field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": dict(self.parameters)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "tool") -> ToolSpec:
        """A definition in either provider's shape, or respeval's own; ValueError naming
        ``where`` when it is none of them."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{where}: expected an object, got {type(data).__name__}")
        if data.get("type") == "function" and isinstance(data.get("function"), Mapping):
            data = data["function"]
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}: a tool needs a non-empty 'name'")
        description = data.get("description", "")
        if not isinstance(description, str):
            raise ValueError(f"{where}: tool {name!r}: 'description' must be a string")
        parameters = data.get("parameters", data.get("input_schema", {"type": "object", "properties": {}}))
        if not isinstance(parameters, Mapping):
            raise ValueError(f"{where}: tool {name!r}: 'parameters' must be a JSON schema object")
        return cls(name, description, dict(parameters))


class RepeatedKeys(dict[str, Any]):
    """A parsed object some of whose keys (or those of an object inside it) repeat,
    compared case-insensitively; ``repeated`` names them.  Plain JSON readers keep the last
    value of a repeated key; a verdict parser must not guess which one the judge meant."""

    repeated: tuple[str, ...] = ()


def repeated_keys(keys: Sequence[Any]) -> list[str]:
    """The keys of one object that repeat (case-insensitively, spaces stripped)."""
    seen: set[Any] = set()
    out = []
    for key in keys:
        folded = key.strip().lower() if isinstance(key, str) else key
        if folded in seen:
            out.append(str(key))
        seen.add(folded)
    return out


def _marking_pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
    repeated = repeated_keys([k for k, _ in items])
    inner = [k for _, v in items if isinstance(v, RepeatedKeys) for k in v.repeated]
    if not repeated and not inner:
        return dict(items)
    marked = RepeatedKeys(items)
    marked.repeated = tuple(dict.fromkeys([*repeated, *inner]))
    return marked


def loads_response(content: bytes | str) -> Any:
    """A provider's response body as JSON, every object whose keys repeat (or holds one
    that does) a :class:`RepeatedKeys`: a tool-use verdict ``{"verdict": "pass", "verdict":
    "fail"}`` stays visible to the verdict parser instead of silently becoming its last value.

    Only a ``tool_use`` block carries a verdict as a JSON object (elsewhere a verdict is text
    the parser reads with its own check), so other bodies skip the per-object Python hook."""
    has_tool_use = b"tool_use" in content if isinstance(content, bytes) else "tool_use" in content
    if not has_tool_use:
        return json.loads(content)
    return json.loads(content, object_pairs_hook=_marking_pairs)


@dataclass(frozen=True)
class ToolCall:
    """One tool call a model made: the tool's ``name``, its ``arguments`` (decoded JSON;
    the raw text when it was not JSON) and the provider's call ``id``."""

    name: str
    arguments: Any = None
    id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "arguments": self.arguments}
        if self.id is not None:
            out["id"] = self.id
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolCall:
        return cls(str(data.get("name", "")), data.get("arguments"), data.get("id"))


def strict_object(properties: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON schema object for strict structured output: these properties, in this order,
    every one required and no other allowed."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(properties),
        "additionalProperties": False,
    }


def object_list(key: str, item_properties: Mapping[str, Any]) -> dict[str, Any]:
    """A strict object holding one list, ``key``, of strict objects with ``item_properties``
    (``{"verdicts": [{"id": ..., "reasoning": ..., ...}]}``)."""
    return strict_object({key: {"type": "array", "items": strict_object(item_properties)}})


@dataclass(frozen=True)
class JudgeRequest:
    """Everything that determines one judge call, and so its cache key.

    ``template_version``, ``sample_index`` and ``flip`` are never sent to the model: they
    exist so that two calls with identical wire content but different meaning (the 2nd
    sample of a multi-sampled verdict, the swapped order of a pairwise comparison, a
    changed prompt template) get different cache entries.
    """

    messages: tuple[Message, ...]
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    json_schema: JsonSchema | None = None
    logprobs: bool = False
    template_version: str = ""
    sample_index: int = 0
    flip: bool = False
    tools: tuple[ToolSpec, ...] = ()

    @functools.cached_property
    def tools_json(self) -> str | None:
        """The tool definitions as canonical JSON (part of the cache key), None without tools."""
        if not self.tools:
            return None
        return json.dumps([t.to_json() for t in self.tools], sort_keys=True, separators=(",", ":"))

    def to_json(self) -> dict[str, Any]:
        """The request as plain JSON data (for logs and debugging; the cache key covers
        exactly these fields, see :class:`respeval.judge.cache.KeyMaker`)."""
        return {
            "messages": [[m.role, m.content] for m in self.messages],
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "json_schema": self.json_schema.to_json() if self.json_schema is not None else None,
            "logprobs": self.logprobs,
            "template_version": self.template_version,
            "sample_index": self.sample_index,
            "flip": self.flip,
            "tools": [t.to_json() for t in self.tools],
        }

    def prompt_chars(self) -> int:
        return sum(len(m.content) for m in self.messages)


@dataclass(frozen=True)
class Completion:
    """A model's answer.

    Attributes:
        text: the reply text ("" when the model gave none, e.g. on a refusal).
        tokens_in, tokens_out: usage as reported by the provider (0 when it reports none).
        finish_reason: ``"stop"``, ``"length"`` (truncated), ... as reported.
        model: the model name the server says answered.
        structured: an already-parsed structured reply (a mapping), for adapters whose API
            returns one; parsing tries it before the text.
        refusal: the provider's explicit refusal message, if any.
        tool_calls: the tool calls the model made (None: it made none, or was given no tools).
        latency_s: seconds the call took, measured by the engine when the answer arrived
            (kept with the answer in the cache, so a rerun reports the same); None when not
            measured (a batch answer).  Not part of equality.
        structured_repeated: keys that repeated in ``structured`` as the provider sent it
            (its parsed form keeps one value of each): the parser leaves such a verdict
            unscored; kept in the cache, so a rerun decides the same.
    """

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    finish_reason: str | None = None
    model: str | None = None
    structured: Any = None
    refusal: str | None = None
    tool_calls: tuple[ToolCall, ...] | None = None
    latency_s: float | None = dataclasses.field(default=None, compare=False)
    structured_repeated: tuple[str, ...] = ()
    _scrubbed: bool = dataclasses.field(default=False, init=False, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "text": self.text,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "finish_reason": self.finish_reason,
            "model": self.model,
            "structured": self.structured,
            "refusal": self.refusal,
        }
        # only when present: a judge's answers keep the shape they always had in the cache
        if self.tool_calls is not None:
            out["tool_calls"] = [call.to_json() for call in self.tool_calls]
        if self.latency_s is not None:
            out["latency_s"] = self.latency_s
        if self.structured_repeated:
            out["structured_repeated"] = list(self.structured_repeated)
        return out

    def redacted(self) -> Completion:
        """This completion with secrets scrubbed from its texts (a model or a proxy may
        repeat what it was sent); ``self`` when there was nothing to scrub, or it was done."""
        if self._scrubbed:
            return self
        text = redact(self.text)
        model = redact(self.model) if self.model is not None else None
        refusal = redact(self.refusal) if self.refusal is not None else None
        structured = redact_data(self.structured)
        calls = self.tool_calls
        if calls is not None:
            calls = tuple(
                ToolCall(redact(c.name), redact_data(c.arguments), redact(c.id) if c.id is not None else None)
                for c in calls
            )
        clean = self
        if (text, model, refusal, structured, calls) != (
            self.text,
            self.model,
            self.refusal,
            self.structured,
            self.tool_calls,
        ):
            clean = dataclasses.replace(
                self, text=text, model=model, refusal=refusal, structured=structured, tool_calls=calls
            )
        object.__setattr__(clean, "_scrubbed", True)  # the engine and the cache both ask: scrub once
        return clean

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Completion:
        calls = data.get("tool_calls")
        latency = data.get("latency_s")
        return cls(
            text=data["text"],
            tokens_in=int(data.get("tokens_in") or 0),
            tokens_out=int(data.get("tokens_out") or 0),
            finish_reason=data.get("finish_reason"),
            model=data.get("model"),
            structured=data.get("structured"),
            refusal=data.get("refusal"),
            tool_calls=tuple(ToolCall.from_json(c) for c in calls) if isinstance(calls, list) else None,
            latency_s=float(latency) if isinstance(latency, (int, float)) else None,
            structured_repeated=tuple(str(k) for k in data.get("structured_repeated") or ()),
        )


@dataclass(frozen=True)
class Capabilities:
    """Which request parameters a model honours.  Unsupported ones are left out of the call
    (never sent and silently ignored by the server), and methods can adapt to them."""

    temperature: bool = True
    seed: bool = False
    n: bool = False
    logprobs: bool = False
    json_schema: bool = False
    tools: bool = False


@runtime_checkable
class JudgeModel(Protocol):
    """The protocol every judge model implements."""

    @property
    def name(self) -> str:
        """The model's name as the provider knows it (``gpt-4o-mini``); keys prices."""

    @property
    def model_id(self) -> str:
        """``provider:name``, as written on the command line."""

    @property
    def capabilities(self) -> Capabilities: ...

    def identity(self) -> dict[str, Any]:
        """What, besides the request, determines the answer: provider, model, endpoint and
        adapter-level defaults.  Part of every cache key; never holds a secret."""

    async def generate(self, request: JudgeRequest) -> Completion:
        """One call.  Raises :class:`~respeval.judge.errors.TransientError` or
        :class:`~respeval.judge.errors.FatalError` on failure."""

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Any: ...

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class BaseJudgeModel(abc.ABC):
    """Shared plumbing for adapters: identity, counted context management, lazy open."""

    provider: str = "model"

    def __init__(self, name: str, *, capabilities: Capabilities | None = None, endpoint: str = "") -> None:
        self._name = name
        self._capabilities = capabilities or Capabilities()
        self._endpoint = endpoint
        self._depth = 0
        self._opened = False

    @property
    def name(self) -> str:
        return self._name

    @property
    def model_id(self) -> str:
        return f"{self.provider}:{self._name}"

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    @property
    def endpoint(self) -> str:
        return self._endpoint

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self._name, "endpoint": self._endpoint, **self._identity_extra()}

    def _identity_extra(self) -> dict[str, Any]:
        """Adapter settings that change answers (defaults, enabled features)."""
        return {}

    async def _open(self) -> None:
        """Acquire resources (override); called once before the first use."""

    async def _close(self) -> None:
        """Release resources (override)."""

    async def _ensure_open(self) -> None:
        if not self._opened:
            await self._open()
            self._opened = True

    async def aclose(self) -> None:
        if self._opened:
            self._opened = False
            await self._close()

    async def __aenter__(self) -> BaseJudgeModel:
        self._depth += 1
        await self._ensure_open()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._depth -= 1
        if self._depth <= 0:
            self._depth = 0
            await self.aclose()

    @abc.abstractmethod
    async def generate(self, request: JudgeRequest) -> Completion:
        """One call to the model."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.model_id}>"


def estimate_tokens(chars: int) -> int:
    """A provider-independent token estimate (~4 characters per token) for rate limiting
    and the fake models; real accounting always uses the provider's reported usage."""
    return chars // 4 + 1


_TOKENS_PER_MESSAGE = 8  # a chat format's framing of one message (role, separators), generously
_TOKENS_PER_REQUEST = 16  # and of the whole conversation (the reply's priming)


def input_token_bound(request: JudgeRequest) -> int:
    """An upper bound on the input tokens ``request`` can be billed for, on any provider:
    a token of a byte-level tokenizer is at least one byte of UTF-8, so the bytes of every
    message and of the JSON schema sent with it (structured outputs and tool definitions
    are billed as input), plus each message's framing.  What a budget reserves before a
    request is sent; about four times the usual count for English, never below it."""
    size = sum(len(m.content.encode("utf-8")) + _TOKENS_PER_MESSAGE for m in request.messages)
    if request.json_schema is not None:
        size += len(request.json_schema.canonical_json.encode("utf-8")) + len(request.json_schema.name)
    return size + _TOKENS_PER_REQUEST


def messages_as_dicts(messages: Sequence[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]
