"""Model strings, as written on the command line, to model objects.

=============================  ==========================================================
``openai:MODEL``               OpenAI-compatible chat completions (``base_url`` for vLLM,
                               Ollama, llama.cpp, LiteLLM); key from ``OPENAI_API_KEY``
``anthropic:MODEL``            Anthropic Messages; key from ``ANTHROPIC_API_KEY``
``python:module:function``     a Python callable ``request -> str | dict | Completion``;
                               its answers are cached by its code's fingerprint, or by
                               ``python:module:function@VERSION`` (bump it to re-ask)
``fake:[k=v,...]``             the scripted fake: ``score=0.5``, ``text=...``,
                               ``latency=0.01``, ``error_rate=0.1``, ``error_status=429``,
                               ``retry_after=1``, ``fatal_rate=0``, ``malformed_rate=0.05``,
                               ``seed=0``, ``name=fake``
=============================  ==========================================================
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from respeval._targets import load_target
from respeval.fingerprint import split_version
from respeval.judge.models.anthropic import AnthropicModel
from respeval.judge.models.base import JudgeModel
from respeval.judge.models.callables import CallableModel
from respeval.judge.models.fake import FakeModel
from respeval.judge.models.openai import OpenAIChatModel

__all__ = ["PROVIDERS", "load_model"]

PROVIDERS = ("openai", "anthropic", "python", "fake")

_FAKE_FLOATS = {"latency", "error_rate", "retry_after", "fatal_rate", "malformed_rate"}
_FAKE_INTS = {"error_status", "seed"}


def load_model(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    json_schema: bool = True,
    structured: str | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout: float | None = 60.0,
) -> JudgeModel:
    """The model a model string names (see the module docstring).  Raises ValueError for a
    malformed string, with the accepted forms.

    ``structured`` picks how the verdict schema is sent (``openai:``: response_format,
    guided_json, structured_outputs, detect, none; ``anthropic:``: tool, none); None is the
    adapter's default, and ``json_schema=False`` means none."""
    provider, sep, rest = spec.partition(":")
    if not sep:
        raise ValueError(f"model {spec!r}: expected PROVIDER:NAME with provider one of {', '.join(PROVIDERS)}")
    if provider in ("openai", "anthropic") and not rest:
        raise ValueError(f"model {spec!r}: the model name is missing ({provider}:MODEL)")
    if provider != "openai" and provider != "anthropic" and base_url is not None:
        raise ValueError(f"--base-url applies to openai: and anthropic: models, not {provider}:")
    if structured is not None and provider not in ("openai", "anthropic"):
        raise ValueError(f"--structured applies to openai: and anthropic: models, not {provider}:")
    if not json_schema:
        structured = "none"
    if provider == "openai":
        kwargs: dict[str, Any] = {
            "api_key_env": api_key_env or "OPENAI_API_KEY",
            "structured": structured or "response_format",
            "transport": transport,
            "timeout": timeout,
        }
        if base_url:
            kwargs["base_url"] = base_url
        return OpenAIChatModel(rest, **kwargs)
    if provider == "anthropic":
        kwargs = {
            "api_key_env": api_key_env or "ANTHROPIC_API_KEY",
            "structured": structured or "tool",
            "transport": transport,
            "timeout": timeout,
        }
        if base_url:
            kwargs["base_url"] = base_url
        return AnthropicModel(rest, **kwargs)
    if provider == "python":
        return _python_model(spec, rest)
    if provider == "fake":
        return _fake_model(spec, rest)
    raise ValueError(f"model {spec!r}: unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")


def _python_model(spec: str, target: str) -> CallableModel:
    try:
        target, version = split_version(target)
    except ValueError:
        raise ValueError(f"model {spec!r}: expected python:module:function or python:module:function@VERSION") from None
    obj = load_target(target, f"model {spec!r}", expected="python:module:function")
    module_name, _, attr = target.rpartition(":")
    return CallableModel(obj, name=f"{module_name}:{attr}", version=version or "")


def _fake_model(spec: str, options: str) -> FakeModel:
    kwargs: dict[str, Any] = {}
    outputs: str | None = None
    for part in filter(None, (p.strip() for p in options.split(","))):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"model {spec!r}: expected key=value, got {part!r}")
        try:
            if key in _FAKE_FLOATS:
                kwargs[key] = float(value)
            elif key in _FAKE_INTS:
                kwargs[key] = int(value)
            elif key == "name":
                kwargs["name"] = value
            elif key == "score":
                score = float(value)
                outputs = json.dumps({"reasoning": "fake judge", "score": score, "pass": score >= 0.5})
            elif key == "text":
                outputs = value
            else:
                known = sorted(_FAKE_FLOATS | _FAKE_INTS | {"name", "score", "text"})
                raise ValueError(f"model {spec!r}: unknown option {key!r}; known: {', '.join(known)}")
        except ValueError as exc:
            if "unknown option" in str(exc):
                raise
            raise ValueError(f"model {spec!r}: bad value for {key}: {value!r}") from exc
    return FakeModel(outputs, **kwargs)
