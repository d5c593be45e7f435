"""System specs, as written on the command line (``--system NAME=SPEC``), to systems.

===============================  ==========================================================
``openai:MODEL``                 OpenAI-compatible chat completions: OpenAI, or with
                                 ``base_url`` vLLM, Ollama, llama.cpp, LiteLLM, any server
                                 speaking ``/chat/completions``; key ``$OPENAI_API_KEY``
``anthropic:MODEL``              Anthropic Messages; key ``$ANTHROPIC_API_KEY``
``http://URL``, ``https://URL``  an agent endpoint speaking the JSON contract
                                 (:mod:`respeval.systems.base`)
``python:module:function[@V]``   a Python function taking the contract's request
                                 (sync or async); ``isolation="process"`` runs it in the
                                 custom-metric sandbox
``adk:module:agent``             an ADK agent (``google-adk``), run by ADK's own runner
``fake:[k=v,...]``               the judge's scripted fake (tests, dry runs)
===============================  ==========================================================

The provider models are the judge's adapters (:func:`respeval.judge.load_model`): the same
transports, retries, batch APIs and secret handling.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from respeval._targets import load_target
from respeval.fingerprint import split_version
from respeval.judge.models.base import JudgeModel, ToolSpec
from respeval.systems.base import System

__all__ = ["KINDS", "load_system", "parse_system_option"]

KINDS = ("openai", "anthropic", "http", "https", "python", "adk", "fake")
ISOLATION = ("none", "process")


def parse_system_option(value: str) -> tuple[str, str]:
    """``NAME=SPEC`` -> (name, spec); ValueError saying the form otherwise."""
    name, sep, spec = value.partition("=")
    if not sep or not name or not spec:
        raise ValueError(f"--system {value!r}: expected NAME=SPEC, e.g. baseline=openai:gpt-4o-mini")
    return name.strip(), spec.strip()


def _import(spec: str, target: str, what: str) -> Any:
    return load_target(target, f"system {spec!r}", expected=what, callable_only=False)


def _model(
    spec: str,
    *,
    base_url: str | None,
    api_key_env: str | None,
    isolation: str,
    network: bool,
    transport: httpx.AsyncBaseTransport | None,
    timeout: float | None,
    workers: int,
) -> tuple[JudgeModel, str]:
    provider, sep, rest = spec.partition(":")
    if not sep:
        raise ValueError(
            f"system {spec!r}: expected KIND:..., with KIND one of openai, anthropic, http(s) (an agent URL), "
            "python, adk, fake"
        )
    if isolation != "none" and provider != "python":
        raise ValueError(f"system {spec!r}: isolation applies to python: systems only")
    if base_url is not None and provider not in ("openai", "anthropic"):
        base_url = None  # --base-url is for the provider systems of a run
    if provider in ("openai", "anthropic", "fake"):
        from respeval.judge.specs import load_model

        if provider == "fake":
            return load_model(spec), "fake"
        return (
            load_model(spec, base_url=base_url, api_key_env=api_key_env, json_schema=False, transport=transport,
                       timeout=timeout),
            "provider",
        )  # fmt: skip
    if provider in ("http", "https"):
        from respeval.systems.endpoint import AgentEndpoint

        if not rest.startswith("//"):
            raise ValueError(f"system {spec!r}: expected an agent URL, http://HOST/PATH")
        kwargs: dict[str, Any] = {"transport": transport, "timeout": timeout}
        if api_key_env:
            kwargs["api_key_env"] = api_key_env
        return AgentEndpoint(spec, **kwargs), "endpoint"
    if provider == "python":
        try:
            target, version = split_version(rest)
        except ValueError:
            raise ValueError(
                f"system {spec!r}: expected python:module:function or python:module:function@VERSION"
            ) from None
        fn = _import(spec, target, "python:module:function")
        if not callable(fn):
            raise ValueError(f"system {spec!r}: {target} is not callable")
        from respeval.systems.functions import IsolatedFunction, SystemFunction

        if isolation == "process":
            return (
                IsolatedFunction(fn, name=target, version=version or "", network=network, timeout=timeout,
                                 workers=workers),
                "isolated",
            )  # fmt: skip
        return SystemFunction(fn, name=target, version=version or ""), "python"
    if provider == "adk":
        from respeval.systems.adk import AdkAgent

        try:
            target, version = split_version(rest)
        except ValueError:
            raise ValueError(f"system {spec!r}: expected adk:module:agent or adk:module:agent@VERSION") from None
        agent = _import(spec, target, "adk:module:agent (a module-level ADK agent object)")
        return AdkAgent(agent, name=target, version=version or ""), "adk"
    raise ValueError(f"system {spec!r}: unknown kind {provider!r}; expected one of {', '.join(KINDS)}")


def load_system(
    name: str,
    spec: str | JudgeModel,
    *,
    system_instruction: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    seed: int | None = None,
    tools: Sequence[ToolSpec] = (),
    base_url: str | None = None,
    api_key_env: str | None = None,
    isolation: str = "none",
    network: bool = False,
    workers: int = 2,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout: float | None = 60.0,
) -> System:
    """The system ``spec`` names (see the module docstring), or a model object as it is.

    ``base_url`` and ``api_key_env`` apply to provider models (``api_key_env`` also to an
    agent endpoint: its key goes as ``Authorization: Bearer``); ``isolation``, ``network``
    and ``workers`` to ``python:`` functions."""
    if isolation not in ISOLATION:
        raise ValueError(f"system {name!r}: isolation must be one of {', '.join(ISOLATION)}, got {isolation!r}")
    if isinstance(spec, str):
        model, kind = _model(
            spec.strip(),
            base_url=base_url,
            api_key_env=api_key_env,
            isolation=isolation,
            network=network,
            transport=transport,
            timeout=timeout,
            workers=workers,
        )
        label = spec.strip()
    else:
        model, kind, label = spec, "model", spec.model_id
    if kind == "adk" and (system_instruction or tools or temperature is not None or seed is not None):
        raise ValueError(
            f"system {name!r}: an ADK agent keeps its own instruction, model settings and tools; "
            "give them to the agent, not to the system"
        )
    return System(
        name=name,
        model=model,
        spec=label,
        kind=kind,
        system_instruction=system_instruction,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        tools=tuple(tools),
    )
