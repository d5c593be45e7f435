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
import os
from typing import TYPE_CHECKING, Any

import httpx

from respeval.judge.errors import JudgeError, TransientError
from respeval.judge.models._http import api_url, default_transport, post_json, token_count
from respeval.judge.models.base import BaseJudgeModel, Capabilities, Completion, JudgeRequest
from respeval.redact import redact_url, register_headers, register_secret, register_url_secrets

if TYPE_CHECKING:
    from respeval.judge.models.anthropic_batch import AnthropicBatchClient

__all__ = ["STRUCTURED_MODES", "AnthropicModel"]

STRUCTURED_MODES = ("tool", "none")

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "stop"}


class AnthropicModel(BaseJudgeModel):
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
        base = base_url.rstrip("/")
        if structured not in STRUCTURED_MODES:
            raise ValueError(f"structured must be one of {', '.join(STRUCTURED_MODES)}, got {structured!r}")
        super().__init__(
            model,
            endpoint=redact_url(base),
            capabilities=Capabilities(
                temperature=supports_temperature, seed=False, n=False, logprobs=False, json_schema=structured == "tool"
            ),
        )
        self._structured = structured
        self._base = base
        register_url_secrets(base)
        register_headers(headers or {})
        self._url = api_url(base, "/v1/messages", unless_endswith="/v1")
        self._api_key_env = api_key_env
        self._max_tokens = max_tokens
        self._injected = transport
        self._transport: httpx.AsyncBaseTransport | None = None
        self._timeout = timeout
        self._extra_headers = dict(headers or {})

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

    @property
    def structured(self) -> str:
        return self._structured

    @property
    def base_url(self) -> str:
        """The API root as given (it may hold credentials: never print it)."""
        return self._base

    @property
    def transport(self) -> httpx.AsyncBaseTransport:
        """The open transport (for the batch client, which shares it)."""
        if self._transport is None:
            raise JudgeError(f"{self.model_id} is not open: use it inside 'async with model'")
        return self._transport

    def batch_client(self, **options: Any) -> AnthropicBatchClient:
        """The provider's batch API behind this model (:mod:`respeval.judge.batch` drives it)."""
        from respeval.judge.models.anthropic_batch import AnthropicBatchClient

        return AnthropicBatchClient(self, **options)

    def request_headers(self) -> dict[str, str]:
        """Headers for a call: content type, API version, extra headers, the key when set."""
        headers = {"content-type": "application/json", "anthropic-version": API_VERSION, **self._extra_headers}
        key = os.environ.get(self._api_key_env)
        if key:
            register_secret(key)
            headers["x-api-key"] = key
        return headers

    def auth_hint(self) -> str:
        if os.environ.get(self._api_key_env):
            return f"check the key in ${self._api_key_env}"
        return f"no API key was sent: ${self._api_key_env} is not set"

    async def _open(self) -> None:
        self._transport = self._injected or default_transport(str(self._url))

    async def _close(self) -> None:
        if self._transport is not None and self._transport is not self._injected:
            await self._transport.aclose()
        self._transport = None

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
        return body

    async def generate(self, request: JudgeRequest) -> Completion:
        await self._ensure_open()
        assert self._transport is not None
        data = await post_json(
            self._transport,
            self._url,
            self.request_headers(),
            json.dumps(self.build_body(request)).encode(),
            timeout=self._timeout,
            where=self.endpoint,
            auth_hint=self.auth_hint(),
        )
        return self.parse_response(data)

    def parse_response(self, data: Any) -> Completion:
        """A Messages response body (a call's, or a batch result's ``message``) as a
        Completion: text blocks joined; a ``tool_use`` block's input as the structured
        verdict (and, as JSON, the text, when there is no other text)."""
        try:
            blocks = data["content"]
            text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
            tools = [b.get("input") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        except (KeyError, TypeError, AttributeError) as exc:
            raise TransientError(
                f"malformed response from {self.endpoint}: no content blocks", kind="malformed_response"
            ) from exc
        structured = tools[0] if len(tools) == 1 and isinstance(tools[0], dict) else None
        if structured is not None and not text.strip():
            text = json.dumps(structured)
        usage = data.get("usage") or {}
        stop = data.get("stop_reason")
        return Completion(
            text=text,
            structured=structured,
            tokens_in=token_count(usage.get("input_tokens")),
            tokens_out=token_count(usage.get("output_tokens")),
            finish_reason=_FINISH.get(stop, stop),
            model=data.get("model"),
            refusal="the model stopped with stop_reason=refusal" if stop == "refusal" else None,
        )
