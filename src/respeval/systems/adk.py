"""An ADK agent as a system under test: ``adk:module:agent`` (needs ``google-adk``).

Each case is one new session of ADK's own runner (:class:`google.adk.runners.InMemoryRunner`)
with the prompt as the user's message.  The response is the text of the runner's final
response event; ``tool_calls`` are the function calls of the events, in order, as ADK
records them (``name``, ``arguments``, ``id``): the agent's tool trajectory; usage is the sum
of the events' ``usage_metadata``.  The agent keeps its own instruction, model settings and
tools: a system instruction, temperature, seed or tools given to the system are refused.

Answers are cached by the agent's identity: its name, model, instruction and tool names,
the source of the module that defines it and the code fingerprint of each function tool
(:mod:`respeval.fingerprint`), and the installed ADK version; ``adk:module:agent@VERSION``
keys them by the version instead (give one when the agent depends on code respeval cannot
see: a helper module its tools import is covered, a prompt read from a file is not).
"""

from __future__ import annotations

import hashlib
import inspect
import sys
from typing import Any

from respeval.fingerprint import CodeFingerprint, code_fingerprint
from respeval.judge.errors import FatalError, RequestFailedError
from respeval.judge.models.base import BaseJudgeModel, Capabilities, Completion, JudgeRequest, ToolCall

__all__ = ["AdkAgent"]

_APP = "respeval"
_USER = "respeval"


def _adk_version() -> str:
    try:
        import google.adk

        return str(getattr(google.adk, "__version__", "?"))
    except ImportError:
        raise ValueError("adk: systems need google-adk (pip install google-adk)") from None


def _fingerprint(agent: Any, target: str, version: str) -> CodeFingerprint:
    if version:
        return code_fingerprint(_fingerprint, version=version)
    h = hashlib.sha256(b"respeval-adk-agent/1\x00")
    h.update(_adk_version().encode())
    for name in ("name", "instruction", "description", "global_instruction"):
        value = getattr(agent, name, None)
        h.update(f"\x00{name}={value if isinstance(value, str) else type(value).__name__}".encode())
    model = getattr(agent, "model", None)
    h.update(f"\x00model={model if isinstance(model, str) else type(model).__qualname__}".encode())
    source_module = None
    for mod in list(sys.modules.values()):
        if getattr(mod, "__dict__", None) is not None and any(v is agent for v in vars(mod).values()):
            source_module = mod
            break
    files = 0
    if source_module is not None:
        try:
            h.update(inspect.getsource(source_module).encode())
            files += 1
        except (OSError, TypeError):
            return CodeFingerprint(target, None, reason="the source of the agent's module cannot be read")
    for tool in getattr(agent, "tools", None) or []:
        fn = getattr(tool, "func", tool)
        if not callable(fn):
            h.update(f"\x00tool={type(tool).__qualname__}".encode())
            continue
        code = code_fingerprint(fn)
        if not code.proven:
            return CodeFingerprint(target, None, reason=f"tool {code.target}: {code.reason}")
        h.update(f"\x00tool={code.target}:{code.digest}".encode())
        files += code.files
    return CodeFingerprint(target, h.hexdigest(), files=files)


class AdkAgent(BaseJudgeModel):
    """``agent`` (an ADK ``BaseAgent``) run by ADK's runner, one session per case."""

    provider = "adk"

    def __init__(self, agent: Any, *, name: str | None = None, version: str = "") -> None:
        _adk_version()
        from google.adk.agents import BaseAgent

        if not isinstance(agent, BaseAgent):
            raise ValueError(f"adk:{name}: expected an ADK agent object, got {type(agent).__name__}")
        label = str(name or getattr(agent, "name", None) or "agent")
        super().__init__(label, capabilities=Capabilities(temperature=False, seed=False, tools=False))
        self._agent = agent
        self._version = version
        self.code = _fingerprint(agent, f"adk:{label}", version)
        self._runner: Any = None

    def _identity_extra(self) -> dict[str, Any]:
        code = self.code.digest if self.code.proven else f"this-process-only:{id(self._agent)}"
        return {"adapter": "adk-runner/1", "version": self._version, "code": code}

    async def _open(self) -> None:
        from google.adk.runners import InMemoryRunner

        self._runner = InMemoryRunner(agent=self._agent, app_name=_APP)

    async def _close(self) -> None:
        runner, self._runner = self._runner, None
        close = getattr(runner, "close", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result

    async def generate(self, request: JudgeRequest) -> Completion:
        from google.genai import types

        if any(m.role == "system" for m in request.messages):
            raise FatalError(f"adk:{self.name}: an ADK agent keeps its own instruction; give no system instruction")
        await self._ensure_open()
        runner = self._runner
        prompt = request.messages[-1].content
        session = await runner.session_service.create_session(app_name=_APP, user_id=_USER)
        message = types.Content(role="user", parts=[types.Part(text=prompt)])
        calls: list[ToolCall] = []
        text = ""
        tokens_in = tokens_out = 0
        finish = None
        try:
            async for event in runner.run_async(user_id=_USER, session_id=session.id, new_message=message):
                for call in event.get_function_calls() or []:
                    calls.append(ToolCall(str(call.name), dict(call.args or {}), call.id))
                usage = getattr(event, "usage_metadata", None)
                if usage is not None:
                    tokens_in += int(getattr(usage, "prompt_token_count", 0) or 0)
                    tokens_out += int(getattr(usage, "candidates_token_count", 0) or 0)
                if getattr(event, "error_message", None):
                    raise RequestFailedError(f"adk:{self.name}: the agent stopped: {event.error_message}")
                if event.is_final_response() and event.content is not None:
                    text = "".join(p.text or "" for p in event.content.parts or [] if not getattr(p, "thought", False))
                    reason = getattr(event, "finish_reason", None)
                    finish = str(getattr(reason, "value", reason)).lower() if reason is not None else "stop"
        except RequestFailedError:
            raise
        except Exception as exc:  # noqa: BLE001 - the agent's own failure fails its row
            raise RequestFailedError(f"adk:{self.name}: the agent raised {type(exc).__name__}: {exc}") from None
        return Completion(
            text=text,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            finish_reason=finish or "stop",
            model=str(getattr(self._agent, "model", "") or "") or None,
            tool_calls=tuple(calls) or None,
        )
