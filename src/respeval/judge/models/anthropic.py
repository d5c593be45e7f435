"""Anthropic's Messages API over httpx.

Current Claude models reject or deprecate sampling parameters, so by default this adapter
declares ``temperature=False`` in its capabilities and never sends one (nor a seed, which
the API has never had).

Structured verdicts (``structured="tool"``, the default): the verdict's JSON schema is sent
as the one tool the model must call, ``tools: [{"name", "description", "input_schema"}]``
with ``tool_choice: {"type": "tool", "name": ...}``, and the ``tool_use`` block's ``input``
comes back as the completion's ``structured`` verdict (its JSON is the text).  With
``structured="none"`` no schema is sent: the prompt describes the reply and the tolerant
parser reads it, as it also does when a reply has no ``tool_use`` block.  The mode is part
of the model's identity, so of every cache key.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx

from respeval.judge.errors import TransientError
from respeval.judge.models._http import HttpJudgeModel, token_count
from respeval.judge.models.base import Capabilities, Completion, JudgeRequest, RepeatedKeys, ToolCall

if TYPE_CHECKING:
    from respeval.judge.models.anthropic_batch import AnthropicBatchClient

__all__ = ["STRUCTURED_MODES", "AnthropicModel"]

STRUCTURED_MODES = ("tool", "none")

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "stop"}


class AnthropicModel(HttpJudgeModel):
    """A Claude model behind the Messages API.

    Args:
        model: the model name (``claude-sonnet-4-5``, ...).
        base_url: the API root (with or without ``/v1``).
        api_key_env: environment variable with the key, read at the first call.
        max_tokens: the reply limit the API requires (requests may override it).
        supports_temperature: send ``temperature`` when a request sets one (older models).
        structured: ``tool`` (the verdict schema as a forced tool call; default) or ``none``.
        transport, timeout, headers: as for :class:`~respeval.judge.models.openai.OpenAIChatModel`.
    """

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key_env: str = "ANTHROPIC_API_KEY",
        max_tokens: int = 1024,
        supports_temperature: bool = False,
        structured: str = "tool",
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | None = 60.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        if structured not in STRUCTURED_MODES:
            raise ValueError(f"structured must be one of {', '.join(STRUCTURED_MODES)}, got {structured!r}")
        super().__init__(
            model,
            base_url=base_url,
            path="/v1/messages",
            unless_endswith="/v1",
            api_key_env=api_key_env,
            capabilities=Capabilities(
                temperature=supports_temperature,
                seed=False,
                n=False,
                logprobs=False,
                json_schema=structured == "tool",
                tools=True,
            ),
            transport=transport,
            timeout=timeout,
            headers=headers,
        )
        self._max_tokens = max_tokens
        self._structured = structured

    default_headers = {"content-type": "application/json", "anthropic-version": API_VERSION}

    def auth_headers(self) -> dict[str, str]:
        key = self.api_key()
        return {"x-api-key": key} if key else {}

    @property
    def structured(self) -> str:
        return self._structured

    def _identity_extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {
            "adapter": "anthropic-messages/1",
            "api_version": API_VERSION,
            "max_tokens": self._max_tokens,
            "temperature": self.capabilities.temperature,
        }
        if self._structured != "none":
            extra["structured"] = self._structured  # "none" keeps the keys of the text-only adapter
        return extra

    def batch_client(self, **options: Any) -> AnthropicBatchClient:
        """The provider's batch API behind this model (:mod:`respeval.judge.batch` drives it)."""
        from respeval.judge.models.anthropic_batch import AnthropicBatchClient

        return AnthropicBatchClient(self, **options)

    def build_body(self, request: JudgeRequest) -> dict[str, Any]:
        """System messages become the top-level ``system`` field, as the API wants."""
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        body: dict[str, Any] = {
            "model": self.name,
            "max_tokens": request.max_tokens if request.max_tokens is not None else self._max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"],
        }
        if system:
            body["system"] = system
        if request.temperature is not None and self.capabilities.temperature:
            body["temperature"] = request.temperature
        if request.json_schema is not None and self._structured == "tool":
            name = request.json_schema.name
            body["tools"] = [
                {
                    "name": name,
                    "description": "Record your verdict. Call this tool once, with the verdict as its input.",
                    "input_schema": dict(request.json_schema.schema),
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": name}
        elif request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
                for t in request.tools
            ]
        return body

    async def generate(self, request: JudgeRequest) -> Completion:
        data = await self.post(self.build_body(request), defaults=self.default_headers, auth=self.auth_headers())
        return self.parse_response(data, tools=bool(request.tools) and request.json_schema is None)

    def parse_response(self, data: Any, *, tools: bool | None = None) -> Completion:
        """A Messages response body (a call's, or a batch result's ``message``) as a
        Completion: text blocks joined; a ``tool_use`` block's input as the structured
        verdict (and, as JSON, the text, when there is no other text).  ``tools``: True when
        the request offered the caller's tools (``tool_use`` blocks are the model's tool
        calls, not a verdict), False when it did not, None when unknown (a batch result
        line: both readings are kept)."""
        try:
            blocks = data["content"]
            text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
            uses = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        except (KeyError, TypeError, AttributeError) as exc:
            raise TransientError(
                f"malformed response from {self.endpoint}: no content blocks", kind="malformed_response"
            ) from exc
        structured = None
        calls = None
        if tools is not False:
            calls = (
                tuple(
                    ToolCall(
                        str(b.get("name", "")), b.get("input"), b.get("id") if isinstance(b.get("id"), str) else None
                    )
                    for b in uses
                )
                or None
            )
        repeated: tuple[str, ...] = ()
        if not tools:
            inputs = [b.get("input") for b in uses]
            structured = inputs[0] if len(inputs) == 1 and isinstance(inputs[0], dict) else None
            if isinstance(structured, RepeatedKeys):  # a key twice in the tool input: kept visible
                repeated, structured = structured.repeated, dict(structured)
            if structured is not None and not text.strip():
                text = json.dumps(structured)
        usage = data.get("usage") or {}
        stop = data.get("stop_reason")
        return Completion(
            text=text,
            structured=structured,
            tokens_in=token_count(usage.get("input_tokens")),
            tokens_out=token_count(usage.get("output_tokens")),
            finish_reason="tool_calls" if tools and calls and stop == "tool_use" else _FINISH.get(stop, stop),
            model=data.get("model"),
            refusal="the model stopped with stop_reason=refusal" if stop == "refusal" else None,
            tool_calls=calls,
            structured_repeated=repeated,
        )
