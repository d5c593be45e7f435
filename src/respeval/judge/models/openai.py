"""OpenAI-compatible chat completions over httpx.

One adapter serves OpenAI, vLLM, Ollama (``/v1``), llama.cpp's server and a LiteLLM proxy:
they all speak ``POST {base_url}/chat/completions``.
"""

from __future__ import annotations

from typing import Any

import httpx

from respeval.judge.errors import TransientError
from respeval.judge.models._http import HttpJudgeModel, token_count
from respeval.judge.models.base import Capabilities, Completion, JudgeRequest, messages_as_dicts

__all__ = ["OpenAIChatModel"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIChatModel(HttpJudgeModel):
    """A chat-completions model behind an OpenAI-compatible HTTP API.

    Args:
        model: the model name sent in the request (``gpt-4o-mini``, ``Qwen/Qwen2.5-7B``).
        base_url: the API root, up to and including ``/v1``.
        api_key_env: the environment variable holding the API key, read at the first call
            (so replay-only runs need no key).  When it is unset no ``Authorization`` header
            is sent, which is what local servers expect; a server that needs a key answers
            401 and the run stops with a message naming the variable.
        temperature, seed, max_tokens: defaults for requests that leave them unset.
        json_schema: whether the server supports ``response_format`` with a JSON schema
            (OpenAI, vLLM, llama.cpp and recent Ollama do).  When False the schema is only
            described in the prompt and parsing does the rest.
        supports_seed: whether to send ``seed``.
        max_tokens_field: ``"max_tokens"`` (most servers) or ``"max_completion_tokens"``
            (OpenAI's reasoning models).
        transport: an ``httpx.AsyncBaseTransport`` (tests inject ``httpx.MockTransport``);
            default: see :func:`respeval.judge.models._http.default_transport`.
        timeout: seconds per HTTP call (the engine also enforces its own per-call timeout).
        headers: extra headers (never part of the cache key: keep secrets here, not in the URL).

    Secrets (the key, credential headers, ``user:password@`` or ``?api_key=`` in
    ``base_url``) are registered with :mod:`respeval.redact` and never appear in the
    endpoint, the cache, messages or outputs.
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float | None = None,
        seed: int | None = None,
        max_tokens: int | None = None,
        json_schema: bool = True,
        supports_seed: bool = True,
        max_tokens_field: str = "max_tokens",
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | None = 60.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(
            model,
            base_url=base_url,
            path="/chat/completions",
            api_key_env=api_key_env,
            capabilities=Capabilities(
                temperature=True, seed=supports_seed, n=True, logprobs=True, json_schema=json_schema
            ),
            transport=transport,
            timeout=timeout,
            headers=headers,
        )
        self._defaults = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens}
        self._max_tokens_field = max_tokens_field

    def _identity_extra(self) -> dict[str, Any]:
        return {
            "adapter": "openai-chat/1",
            "defaults": self._defaults,
            "json_schema": self.capabilities.json_schema,
            "seed": self.capabilities.seed,
            "max_tokens_field": self._max_tokens_field,
        }

    def build_body(self, request: JudgeRequest) -> dict[str, Any]:
        """The JSON body for ``request``: unsupported parameters are left out, not ignored."""
        caps = self.capabilities
        body: dict[str, Any] = {"model": self.name, "messages": messages_as_dicts(request.messages)}
        temperature = request.temperature if request.temperature is not None else self._defaults["temperature"]
        if temperature is not None and caps.temperature:
            body["temperature"] = temperature
        seed = request.seed if request.seed is not None else self._defaults["seed"]
        if seed is not None and caps.seed:
            body["seed"] = seed
        max_tokens = request.max_tokens if request.max_tokens is not None else self._defaults["max_tokens"]
        if max_tokens is not None:
            body[self._max_tokens_field] = max_tokens
        if request.json_schema is not None and caps.json_schema:
            body["response_format"] = {"type": "json_schema", "json_schema": request.json_schema.to_json()}
        if request.logprobs and caps.logprobs:
            body["logprobs"] = True
        return body

    async def generate(self, request: JudgeRequest) -> Completion:
        key = self.api_key()
        data = await self.post(
            self.build_body(request),
            defaults={"content-type": "application/json", "accept": "application/json"},
            auth={"authorization": f"Bearer {key}"} if key else {},
        )
        return self._completion(data)

    def _completion(self, data: Any) -> Completion:
        try:
            choice = data["choices"][0]
            message = choice["message"]
            content = message.get("content")
            if content is not None and not isinstance(content, str):
                raise TypeError("content is not a string")
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise TransientError(
                f"malformed response from {self.endpoint}: no choices[0].message.content ({type(exc).__name__}: {exc})",
                kind="malformed_response",
            ) from exc
        usage = data.get("usage") or {}
        return Completion(
            text=content or "",
            tokens_in=token_count(usage.get("prompt_tokens")),
            tokens_out=token_count(usage.get("completion_tokens")),
            finish_reason=choice.get("finish_reason"),
            model=data.get("model"),
            refusal=message.get("refusal") or None,
        )
