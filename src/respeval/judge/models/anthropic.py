"""Anthropic's Messages API over httpx.

Current Claude models reject or deprecate sampling parameters, so by default this adapter
declares ``temperature=False`` in its capabilities and never sends one (nor a seed, which
the API has never had).  Nor does it send a JSON schema: the prompt describes the reply and
the tolerant parser reads it.
"""

from __future__ import annotations

from typing import Any

import httpx

from respeval.judge.errors import TransientError
from respeval.judge.models._http import HttpJudgeModel, token_count
from respeval.judge.models.base import Capabilities, Completion, JudgeRequest

__all__ = ["AnthropicModel"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


class AnthropicModel(HttpJudgeModel):
    """A Claude model behind the Messages API.

    Args:
        model: the model name (``claude-sonnet-4-5``, ...).
        base_url: the API root (with or without ``/v1``).
        api_key_env: environment variable with the key, read at the first call.
        max_tokens: the reply limit the API requires (requests may override it).
        supports_temperature: send ``temperature`` when a request sets one (older models).
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
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | None = 60.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(
            model,
            base_url=base_url,
            path="/v1/messages",
            unless_endswith="/v1",
            api_key_env=api_key_env,
            capabilities=Capabilities(
                temperature=supports_temperature, seed=False, n=False, logprobs=False, json_schema=False
            ),
            transport=transport,
            timeout=timeout,
            headers=headers,
        )
        self._max_tokens = max_tokens

    def _identity_extra(self) -> dict[str, Any]:
        return {
            "adapter": "anthropic-messages/1",
            "api_version": API_VERSION,
            "max_tokens": self._max_tokens,
            "temperature": self.capabilities.temperature,
        }

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
        return body

    async def generate(self, request: JudgeRequest) -> Completion:
        key = self.api_key()
        data = await self.post(
            self.build_body(request),
            defaults={"content-type": "application/json", "anthropic-version": API_VERSION},
            auth={"x-api-key": key} if key else {},
        )
        try:
            blocks = data["content"]
            text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        except (KeyError, TypeError, AttributeError) as exc:
            raise TransientError(
                f"malformed response from {self.endpoint}: no content blocks", kind="malformed_response"
            ) from exc
        usage = data.get("usage") or {}
        stop = data.get("stop_reason")
        return Completion(
            text=text,
            tokens_in=token_count(usage.get("input_tokens")),
            tokens_out=token_count(usage.get("output_tokens")),
            finish_reason=_FINISH.get(stop, stop),
            model=data.get("model"),
            refusal="the model stopped with stop_reason=refusal" if stop == "refusal" else None,
        )
