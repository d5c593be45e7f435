"""OpenAI-compatible chat completions over httpx.

One adapter serves OpenAI, vLLM, Ollama (``/v1``), llama.cpp's server and a LiteLLM proxy:
they all speak ``POST {base_url}/chat/completions``.

Structured verdicts (``structured=``): the verdict's JSON schema goes out as

``response_format``     ``{"type": "json_schema", "json_schema": {"name", "schema", "strict": true}}``
                        (OpenAI; vLLM, llama.cpp and recent Ollama accept it too; the default)
``guided_json``         vLLM's extra parameter ``"guided_json": SCHEMA`` (vLLM before 0.12)
``structured_outputs``  vLLM's ``"structured_outputs": {"json": SCHEMA}`` (vLLM 0.11 and later)
``none``                not at all: the prompt describes the reply and the text parser reads it
``detect``              asks the server once, when the model is opened: a vLLM server
                        (``/models`` entries ``owned_by: vllm``) gets ``structured_outputs`` or
                        ``guided_json`` by its ``/version``, any other ``response_format``

The mode is part of the model's identity, so of every cache key: answers produced under
one mode are never served for another.  Whatever the mode, the text parser stays the
fallback: a server that ignores the schema still gets its replies read honestly.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx

from respeval.judge.errors import JudgeError, TransientError
from respeval.judge.models._http import HttpJudgeModel, api_url, decode_json, send, token_count
from respeval.judge.models.base import Capabilities, Completion, JudgeRequest, ToolCall, messages_as_dicts

if TYPE_CHECKING:
    from respeval.judge.models.openai_batch import OpenAIBatchClient

__all__ = ["STRUCTURED_MODES", "OpenAIChatModel"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
STRUCTURED_MODES = ("response_format", "guided_json", "structured_outputs", "none", "detect")
_VLLM_STRUCTURED_OUTPUTS = (0, 11)  # vLLM versions from which structured_outputs replaces guided_json


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
        json_schema: False is ``structured="none"`` (kept for older callers).
        structured: how the verdict's JSON schema is sent (see the module docstring):
            ``response_format`` (default), ``guided_json``, ``structured_outputs``, ``none``
            or ``detect``.
        supports_seed: whether to send ``seed``.
        max_tokens_field: ``"max_tokens"`` (most servers) or ``"max_completion_tokens"``
            (OpenAI's reasoning models).
        transport: an ``httpx.AsyncBaseTransport`` (tests inject ``httpx.MockTransport``);
            default: see :func:`respeval.judge.models._transports.default_transport`.
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
        structured: str = "response_format",
        supports_seed: bool = True,
        max_tokens_field: str = "max_tokens",
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | None = 60.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        if structured not in STRUCTURED_MODES:
            raise ValueError(f"structured must be one of {', '.join(STRUCTURED_MODES)}, got {structured!r}")
        if not json_schema:
            structured = "none"
        super().__init__(
            model,
            base_url=base_url,
            path="/chat/completions",
            api_key_env=api_key_env,
            capabilities=Capabilities(
                temperature=True,
                seed=supports_seed,
                n=True,
                logprobs=True,
                json_schema=structured != "none",
                tools=True,
            ),
            transport=transport,
            timeout=timeout,
            headers=headers,
        )
        self._defaults = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens}
        self._max_tokens_field = max_tokens_field
        self._structured = structured

    default_headers = {"content-type": "application/json", "accept": "application/json"}

    def auth_headers(self) -> dict[str, str]:
        key = self.api_key()
        return {"authorization": f"Bearer {key}"} if key else {}

    @property
    def structured(self) -> str:
        """The structured-output mode in use (``detect`` until the model has been opened)."""
        return self._structured

    def _identity_extra(self) -> dict[str, Any]:
        if self._structured == "detect":
            raise JudgeError(
                f"{self.model_id}: structured='detect' is settled when the model is opened "
                "(async with model) and is part of the cache key: open the model first"
            )
        extra = {
            "adapter": "openai-chat/1",
            "defaults": self._defaults,
            "json_schema": self.capabilities.json_schema,
            "seed": self.capabilities.seed,
            "max_tokens_field": self._max_tokens_field,
        }
        if self._structured not in ("response_format", "none"):
            extra["structured"] = self._structured  # response_format and none keep their old keys
        return extra

    async def _open(self) -> None:
        await super()._open()
        if self._structured == "detect":
            self._structured = await self._detect_structured()

    async def _get(self, url: httpx.URL) -> Any:
        body = await send(
            self.transport, "GET", url, self.request_headers(), timeout=self._timeout, where=self.endpoint
        )
        return decode_json(body, self.endpoint)

    async def _detect_structured(self) -> str:
        """vLLM (by its ``/models`` ``owned_by``) gets its own structured-output option, by
        version; every other server ``response_format``.  A failed probe means the latter."""
        try:
            models = await self._get(api_url(self.base_url, "/models"))
            owners = {m.get("owned_by") for m in models.get("data", []) if isinstance(m, dict)}
        except (JudgeError, AttributeError):
            return "response_format"
        if "vllm" not in owners:
            return "response_format"
        try:
            info = await self._get(httpx.URL(self.base_url).copy_with(path="/version", query=None))
            version = tuple(int(p) for p in str(info.get("version", "")).split(".")[:2])
        except (JudgeError, AttributeError, ValueError):
            return "guided_json"
        return "structured_outputs" if version >= _VLLM_STRUCTURED_OUTPUTS else "guided_json"

    def batch_client(self, **options: Any) -> OpenAIBatchClient:
        """The provider's batch API behind this model (:mod:`respeval.judge.batch` drives it)."""
        from respeval.judge.models.openai_batch import OpenAIBatchClient

        return OpenAIBatchClient(self, **options)

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
            if self._structured == "guided_json":
                body["guided_json"] = dict(request.json_schema.schema)
            elif self._structured == "structured_outputs":
                body["structured_outputs"] = {"json": dict(request.json_schema.schema)}
            else:
                body["response_format"] = {"type": "json_schema", "json_schema": request.json_schema.to_json()}
        if request.logprobs and caps.logprobs:
            body["logprobs"] = True
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters)},
                }
                for t in request.tools
            ]
        return body

    async def generate(self, request: JudgeRequest) -> Completion:
        data = await self.post(self.build_body(request), defaults=self.default_headers, auth=self.auth_headers())
        return self.parse_response(data)

    def parse_response(self, data: Any) -> Completion:
        """A chat-completions response body (a call's, or a batch result line's) as a
        Completion; TransientError when it has no ``choices[0].message.content``."""
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
            tool_calls=self._tool_calls(message.get("tool_calls")),
        )

    def _tool_calls(self, raw: Any) -> tuple[ToolCall, ...] | None:
        """``message.tool_calls`` (``[{"id", "type": "function", "function": {"name",
        "arguments": JSON text}}]``) as ToolCalls, arguments decoded; None when there are none."""
        if not raw:
            return None
        if not isinstance(raw, list):
            raise TransientError(
                f"malformed response from {self.endpoint}: tool_calls is not a list", kind="malformed_response"
            )
        calls = []
        for item in raw:
            function = item.get("function") if isinstance(item, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise TransientError(
                    f"malformed response from {self.endpoint}: a tool call without function.name",
                    kind="malformed_response",
                )
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments) if arguments.strip() else {}
                except ValueError:
                    pass  # kept as the text the model wrote
            call_id = item.get("id")
            calls.append(ToolCall(function["name"], arguments, call_id if isinstance(call_id, str) else None))
        return tuple(calls)
