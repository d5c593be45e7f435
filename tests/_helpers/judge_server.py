"""An OpenAI- and Anthropic-compatible server on 127.0.0.1 that injects faults and counts
every request: the judge engine's test double for a real provider.  ``POST .../chat/completions``
speaks OpenAI's wire format, ``POST .../messages`` Anthropic's (``x-api-key``, content blocks),
``POST .../embeddings`` OpenAI's embeddings (``embedder(texts) -> vectors``, default a
hashed bag of words; faults apply to it as to chat requests).

Two ways to run it, same behaviour:

* in a thread of the test process: ``with JudgeServer(FaultPlan(rate=0.1)) as server: ...``
  (records every request, with its decoded body, in ``server.records``);
* in a subprocess, for load tests and benchmarks that need the second core::

      with spawn_server(rate=0.1) as server: ...         # server.stats() over HTTP
      python tests/judge_server.py --rate 0.1 --seed 0   # prints "PORT <n>", serves until killed

Faults (chosen per request, deterministically from the seed, the request body and how often
that body was seen before, so a retried request can succeed):

==================  =====================================================================
``429``             429 without Retry-After
``429-retry-after`` 429 with ``Retry-After: <retry_after>`` (fractional seconds)
``500``, ``503``    server errors
``slow``            a valid answer after ``slow_seconds`` (longer than the client timeout)
``malformed-body``  200 with a truncated JSON body
``drop``            the connection is closed without a response
``bad-judge-json``  200, valid wire format, but the judge's text is not JSON
``502-proxy``       502 with a plain-text body, as a proxy in front of the provider sends
``401``, ``400``..  any other status code, with an OpenAI-style error body (scripts only)
==================  =====================================================================

A request whose messages carry a ``[[fault=KIND]]`` tag gets that fault every time it is
sent, whatever the plan says (a row that fails for good, for tests of what is reported).

With ``echo_headers=True`` the server misbehaves as some servers and proxies do: every
error body repeats the request line and headers (``Authorization: Bearer <key>``,
``x-api-key``) and the path with its query string.  That is what the secret-scrubbing
tests need: the key arrives back inside an error message.

Systems under test (``respeval run``): ``system_responder`` answers a ``[[answer=X]]`` tag
of the prompt (``no idea`` from a model whose name contains ``bad``); ``tool_caller(body)``
may return tool calls (``[{"name", "arguments"}]``) to put in the reply, in each wire
format; and ``agent(body)`` answers ``POST .../agent`` (the agent contract of
:mod:`respeval.systems.base`): a JSON-able object, or ``bytes`` sent as the raw body (garbage).

The default judge answers ``{"reasoning": ..., "score": S, "pass": S >= 0.5}`` with S taken
from a ``[[score=S]]`` tag in the user message (1.0 when there is none), and reports usage
as ``chars // 4 + 1`` tokens; a reply longer than the request's ``max_tokens`` is cut there
(``finish_reason: length``), as providers cut it.  The server only ever binds 127.0.0.1 and stops by itself
when its parent goes away (subprocess mode reads stdin until EOF).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

FAULTS = ("429", "429-retry-after", "500", "503", "slow", "malformed-body", "drop", "bad-judge-json", "502-proxy")
# Faults after which the client holds a valid answer with usage (the others never deliver one).
DELIVERING = (None, "bad-judge-json")
BAD_JUDGE_TEXT = "I think the candidate is basically right, but I would rather not commit to a number."
_SCORE_TAG = re.compile(r"\[\[score=([0-9.]+)\]\]")
_FAULT_TAG = re.compile(r"\[\[fault=([0-9a-z-]+)\]\]")


@dataclass(frozen=True)
class FaultPlan:
    """Which faults to inject, how often, and their parameters."""

    rate: float = 0.0
    kinds: tuple[str, ...] = FAULTS
    seed: int = 0
    retry_after: float = 0.05
    slow_seconds: float = 0.5

    def choose(self, body_key: str, nth: int) -> str | None:
        if self.rate <= 0:
            return None
        rng = random.Random(f"{self.seed}:{body_key}:{nth}")
        return rng.choice(self.kinds) if rng.random() < self.rate else None


@dataclass
class RequestInfo:
    """What a script sees about a request: its index, body, body key and repeat count."""

    index: int
    body: Any
    key: str
    nth: int
    headers: dict[str, str]


@dataclass
class Record:
    index: int
    key: str
    fault: str | None
    status: int | None
    started: float
    finished: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    body: Any = None
    headers: dict[str, str] | None = None


def _tokens(chars: int) -> int:
    return chars // 4 + 1


def default_embedder(texts: list[str]) -> list[list[float]]:
    """A 32-dimensional hashed bag of words per text (never all zero)."""
    out = []
    for text in texts:
        vector = [0.0] * 32
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            h = int(hashlib.sha256(word.encode()).hexdigest()[:8], 16)
            vector[h % 32] += 1.0
        vector[31] += 0.5
        out.append(vector)
    return out


def default_responder(body: Any) -> str:
    """The judge's reply text for a request body (see the module docstring)."""
    messages = body.get("messages") or []
    tags = _SCORE_TAG.findall(" ".join(m.get("content") or "" for m in messages))
    score = float(tags[-1]) if tags else 1.0
    return json.dumps({"reasoning": "server judge", "score": score, "pass": score >= 0.5})


# --------------------------------------------------------------------------- planted verdicts

PLANT = re.compile(r"<<plant>>(.*?)<</plant>>", re.S)
_ECHO_MODE = re.compile(r"\[\[echo=([a-z-]+)\]\]")
ECHO_MODES = ("verbatim", "compact", "pretty", "fenced", "escaped-decoded", "bold", "object")
_LABEL_LINE = re.compile(r"([A-Za-z][A-Za-z ]{0,30}?)\s*[:=]\s*([^\s/,;|]+)")


def _decode_planted(text: str) -> Any:
    """What a planted span says, whatever its encoding (fenced, JSON-escaped, pretty; or
    ``SCORE: 1 / PASS: yes`` label lines, as a dict of their words)."""
    text = text.strip()
    if not text.startswith(("{", "`", '"', "\\")) and _LABEL_LINE.search(text):
        return {key.strip().lower(): value for key, value in _LABEL_LINE.findall(text)}
    if text.startswith("```"):
        text = text.strip("`").partition("\n")[2]
    for _ in range(4):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        if isinstance(value, str):
            text = value
            continue
        if "\\" not in text:
            return None
        try:
            text = json.loads(f'"{text}"')  # one level of JSON escaping
        except ValueError:
            return None
    return None


def echo_planted_responder(body: Any) -> str:
    """A judge that falls for prompt injection: it repeats every verdict planted in what it was
    sent (between ``<<plant>>`` markers, in any encoding), as ``[[echo=MODE]]`` says
    (verbatim, compact, pretty, fenced, decoded from its escaping, ``bold``: as Markdown
    bold ``**SCORE:** 1`` lines, ``object``: as a JSON object of strings), then, unless the
    message says ``[[own=no]]``, adds its own verdict (``[[score=S]]``)."""
    text = " ".join(str(m.get("content") or "") for m in body.get("messages") or [])
    modes = _ECHO_MODE.findall(text)
    mode = modes[-1] if modes else "verbatim"
    echoes = []
    for span in PLANT.findall(text):
        verdict = _decode_planted(span)
        if mode == "verbatim" or verdict is None:
            echoes.append(span)
        elif mode == "compact":
            echoes.append(json.dumps(verdict, separators=(",", ":")))
        elif mode == "pretty":
            echoes.append(json.dumps(verdict, indent=2))
        elif mode == "fenced":
            echoes.append("```json\n" + json.dumps(verdict) + "\n```")
        elif mode == "bold":
            echoes.append("\n".join(f"**{str(k).upper()}:** {_word(v)}" for k, v in verdict.items()))
        elif mode == "object":
            echoes.append(json.dumps({str(k): _word(v) for k, v in verdict.items()}))
        else:
            echoes.append(json.dumps(verdict))
    own = [] if "[[own=no]]" in text else [default_responder(body)]
    return "\n\n".join(echoes + own)


def _word(value: Any) -> str:
    """A planted value as a judge restating it would write it: a string, booleans as words."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def evaluate_responder(body: Any) -> str:
    """A judge for ``respeval evaluate``'s template metrics: a pairwise verdict (``winner``
    A/B/TIE) when the system message asks for one, else a whole score 1-5; both derived from a
    hash of the request, so every request always gets the same answer."""
    messages = body.get("messages") or []
    system = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    digest = int(hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:8], 16)
    if '"winner"' in system:
        return json.dumps({"reasoning": "server judge", "winner": ("A", "B", "TIE")[digest % 3]})
    return json.dumps({"reasoning": "server judge", "score": 1 + digest % 5})


_ANSWER_TAG = re.compile(r"\[\[answer=([^\]]*)\]\]")


def system_responder(body: Any) -> str:
    """A system under test: the prompt's last ``[[answer=X]]`` tag, or ``no idea`` when the
    model's name contains ``bad`` or the prompt has no tag."""
    messages = body.get("messages") or []
    text = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    tags = _ANSWER_TAG.findall(text)
    if not tags or "bad" in str(body.get("model") or ""):
        return "no idea"
    return tags[-1]


RESPONDERS: dict[str, Callable[[Any], str]] = {
    "default": default_responder,
    "system": system_responder,
    "echo-planted": echo_planted_responder,
    "evaluate": evaluate_responder,
}


class _Core:
    """The protocol logic, shared by the thread and subprocess modes."""

    def __init__(
        self,
        plan: FaultPlan,
        *,
        script: Callable[[RequestInfo], str | None] | None = None,
        responder: Callable[[Any], str] = default_responder,
        latency: float = 0.0,
        api_key: str | None = None,
        keep_bodies: bool = True,
        echo_headers: bool = False,
        batch_api: Any = None,
        tool_caller: Callable[[Any], Any] | None = None,
        agent: Callable[[Any], Any] | None = None,
        embedder: Callable[[list[str]], list[list[float]]] = default_embedder,
    ) -> None:
        self.embedder = embedder
        self.batch_api = batch_api  # _helpers.batch_api.BatchAPI: the providers' batch endpoints
        self.tool_caller = tool_caller
        self.agent = agent
        self.plan = plan
        self.script = script
        self.responder = responder
        self.latency = latency
        self.api_key = api_key
        self.keep_bodies = keep_bodies
        self.echo_headers = echo_headers
        self.records: list[Record] = []
        self.seen: Counter[str] = Counter()
        self.connections = 0
        self.open_connections = 0  # handlers still running (an exchange in flight, or a kept-alive socket)
        self.lock = threading.Lock()

    def stats(self, with_records: bool = False) -> dict[str, Any]:
        with self.lock:
            records = list(self.records)
        faults = Counter(r.fault or "ok" for r in records)
        delivered = [r for r in records if r.fault in DELIVERING and r.status == 200]
        out: dict[str, Any] = {
            "requests": len(records),
            "distinct_requests": len({r.key for r in records}),  # a retried request counted once
            "faults": dict(faults),
            "connections": self.connections,
            "delivered": len(delivered),
            "delivered_prompt_tokens": sum(r.prompt_tokens for r in delivered),
            "delivered_completion_tokens": sum(r.completion_tokens for r in delivered),
        }
        if self.batch_api is not None:
            out["batch_api"] = self.batch_api.stats()
        if with_records:
            out["records"] = [{k: v for k, v in asdict(r).items() if k not in ("body", "headers")} for r in records]
        return out

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with self.lock:
            self.connections += 1
            self.open_connections += 1
        try:
            await self._serve_connection(reader, writer)
        except asyncio.CancelledError:
            pass  # shutting down: end quietly (a cancelled handler task is logged as an error)
        finally:
            writer.close()
            with self.lock:
                self.open_connections -= 1

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                raw = await reader.readexactly(int(headers.get("content-length", "0")))
                if path.startswith("/_stats"):
                    payload = json.dumps(self.stats(with_records="records=1" in path)).encode()
                    writer.write(_response(200, payload))
                    await writer.drain()
                    continue
                if self.batch_api is not None and self.batch_api.handles(path):
                    status, payload, kind = await self.batch_api.handle(method, path, headers, raw)
                    if status == 0:  # dropped in transit
                        return
                    writer.write(_response(status, payload, content_type=kind))
                    await writer.drain()
                    continue
                keep = await self._chat(method, path, headers, raw, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return

    async def _chat(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; False when the connection must be closed."""
        key = hashlib.sha256(raw).hexdigest()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with self.lock:
            nth = self.seen[key]
            self.seen[key] += 1
            record = Record(
                index=len(self.records),
                key=key,
                fault=None,
                status=None,
                started=time.monotonic(),
                body=body if self.keep_bodies else None,
                headers=headers if self.keep_bodies else None,
            )
            self.records.append(record)
        info = RequestInfo(record.index, body, key, nth, headers)
        fault = self.script(info) if self.script is not None else self.plan.choose(key, nth)
        tagged = _FAULT_TAG.search(raw.decode("utf-8", "replace"))
        if tagged is not None:
            fault = tagged.group(1)
        record.fault = fault
        if self.latency:
            await asyncio.sleep(self.latency)
        anthropic = path.split("?", 1)[0].endswith("/messages")
        echo = f"{method} {path}; request headers: {headers}" if self.echo_headers else ""

        def error(status: int, message: str, retry_after: float | None = None) -> bytes:
            message = f"{message} ({echo})" if echo else message
            return _error(status, message, retry_after, anthropic=anthropic)

        try:
            if self.api_key is not None:
                sent = headers.get("x-api-key") if anthropic else headers.get("authorization")
                if sent != (self.api_key if anthropic else f"Bearer {self.api_key}"):
                    record.fault = fault = "401"
            route = path.split("?", 1)[0]
            agent_call = self.agent is not None and route.endswith("/agent")
            embeddings = route.endswith("/embeddings")
            known = anthropic or agent_call or embeddings or route.endswith("/chat/completions")
            if method != "POST" or not known or not isinstance(body, dict):
                record.status = 404 if method == "POST" and isinstance(body, dict) else 400
                writer.write(error(record.status, "not a chat-completions or messages request"))
                return True
            if fault == "drop":
                return False
            if fault == "502-proxy":
                record.status = 502
                page = f"<html><body>502 Bad Gateway: the upstream refused {echo or 'the request'}</body></html>"
                writer.write(_response(502, page.encode(), content_type="text/html"))
                return True
            if fault in ("429", "500", "503") or (fault and fault.isdigit()):
                record.status = int(fault)
                writer.write(error(record.status, f"injected {fault}"))
                return True
            if fault == "429-retry-after":
                record.status = 429
                writer.write(error(429, "injected 429", retry_after=self.plan.retry_after))
                return True
            if fault == "slow":
                await asyncio.sleep(self.plan.slow_seconds)
            if agent_call or embeddings:
                if agent_call:
                    assert self.agent is not None
                    answer = self.agent(body)
                    payload = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                else:
                    texts = body.get("input")
                    texts = [texts] if isinstance(texts, str) else list(texts or [])
                    vectors = self.embedder(texts)
                    if fault == "bad-judge-json":
                        vectors = vectors[:-1]  # one vector short: a malformed reply
                    record.prompt_tokens = sum(_tokens(len(t)) for t in texts)
                    payload = json.dumps(
                        {
                            "object": "list",
                            "model": body.get("model"),
                            "data": [
                                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
                            ],
                            "usage": {"prompt_tokens": record.prompt_tokens, "total_tokens": record.prompt_tokens},
                        }
                    ).encode()
                if fault == "malformed-body":
                    payload = payload[: len(payload) // 2]
                record.status = 200
                writer.write(_response(200, payload))
                await writer.drain()
                return True
            content = BAD_JUDGE_TEXT if fault == "bad-judge-json" else self.responder(body)
            prompt_chars = sum(len(m.get("content") or "") for m in body.get("messages") or [])
            prompt_chars += len(body.get("system") or "") if anthropic else 0
            limit = body.get("max_tokens", body.get("max_completion_tokens"))
            truncated = isinstance(limit, int) and _tokens(len(content)) > limit
            if truncated:  # as providers do: the reply stops at max tokens
                content = content[: max(0, (limit - 1) * 4)]
            record.prompt_tokens, record.completion_tokens = _tokens(prompt_chars), _tokens(len(content))
            calls = self.tool_caller(body) if self.tool_caller is not None else None
            reply = (
                _anthropic_reply(record, body, content, calls)
                if anthropic
                else _openai_reply(record, body, content, calls)
            )
            if truncated:
                if anthropic:
                    reply["stop_reason"] = "max_tokens"
                else:
                    reply["choices"][0]["finish_reason"] = "length"
            payload = json.dumps(reply).encode()
            if fault == "malformed-body":
                payload = payload[: len(payload) // 2]
            record.status = 200
            writer.write(_response(200, payload))
            await writer.drain()
            return True
        finally:
            record.finished = time.monotonic()


def _openai_reply(record: Record, body: Any, content: str, calls: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    finish = "stop"
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{record.index}_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))},
            }
            for i, c in enumerate(calls)
        ]
        message["content"] = content or None
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-{record.index}",
        "object": "chat.completion",
        "model": body.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": record.prompt_tokens,
            "completion_tokens": record.completion_tokens,
            "total_tokens": record.prompt_tokens + record.completion_tokens,
        },
    }


def _anthropic_reply(record: Record, body: Any, content: str, calls: Any = None) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": content}] if content or not calls else []
    for i, c in enumerate(calls or []):
        blocks.append(
            {"type": "tool_use", "id": f"toolu_{record.index}_{i}", "name": c["name"], "input": c.get("arguments", {})}
        )
    return {
        "id": f"msg_{record.index}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": blocks,
        "stop_reason": "tool_use" if calls else "end_turn",
        "usage": {"input_tokens": record.prompt_tokens, "output_tokens": record.completion_tokens},
    }


def _response(status: int, payload: bytes, extra: str = "", content_type: str = "application/json") -> bytes:
    reason = {
        200: "OK",
        400: "Bad Request",
        401: "Unauthorized",
        404: "Not Found",
        429: "Too Many Requests",
        500: "Internal Server Error",
        502: "Bad Gateway",
        503: "Service Unavailable",
    }.get(status, "Status")
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(payload)}\r\n{extra}\r\n"
    ).encode("latin-1") + payload


def _error(status: int, message: str, retry_after: float | None = None, *, anthropic: bool = False) -> bytes:
    if anthropic:
        error = {"type": "error", "error": {"type": "injected_error", "message": message}}
    else:
        error = {"error": {"message": message, "type": "injected", "code": status}}
    payload = json.dumps(error).encode()
    extra = f"Retry-After: {retry_after:g}\r\n" if retry_after is not None else ""
    return _response(status, payload, extra)


class JudgeServer:
    """The server in a background thread of this process (see the module docstring).

    Args:
        plan: random fault injection; ``script(info) -> fault | None`` overrides it.
        responder: ``body -> reply text`` (default: :func:`default_responder`).
        latency: seconds before every answer.
        api_key: when set, requests without ``Authorization: Bearer <api_key>`` (OpenAI) or
            ``x-api-key: <api_key>`` (Anthropic) get 401.
        echo_headers: error bodies repeat the request's path and headers (a leaky proxy).
        tool_caller: ``body -> tool calls | None`` put into chat replies (a system under test's).
        agent: ``body -> object | bytes`` answers ``POST .../agent`` (the agent contract).
    """

    def __init__(
        self,
        plan: FaultPlan | None = None,
        *,
        script: Callable[[RequestInfo], str | None] | None = None,
        responder: Callable[[Any], str] = default_responder,
        latency: float = 0.0,
        api_key: str | None = None,
        echo_headers: bool = False,
        batch_api: Any = None,
        tool_caller: Callable[[Any], Any] | None = None,
        agent: Callable[[Any], Any] | None = None,
        embedder: Callable[[list[str]], list[list[float]]] = default_embedder,
    ) -> None:
        self.core = _Core(
            plan or FaultPlan(),
            script=script,
            responder=responder,
            latency=latency,
            api_key=api_key,
            echo_headers=echo_headers,
            batch_api=batch_api,
            tool_caller=tool_caller,
            agent=agent,
            embedder=embedder,
        )
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._server: asyncio.base_events.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def records(self) -> list[Record]:
        return self.core.records

    def stats(self) -> dict[str, Any]:
        return self.core.stats()

    def wait_idle(self, timeout: float = 30) -> None:
        """Until every connection has ended (a killed client's exchanges in flight finished)."""
        deadline = time.monotonic() + timeout
        while self.core.open_connections:
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.core.open_connections} connection(s) still open after {timeout}s")
            time.sleep(0.005)

    def start(self) -> JudgeServer:
        self._thread = threading.Thread(target=self._serve, name="judge-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("judge server did not start")
        return self

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop

        async def main() -> None:
            self._server = await asyncio.start_server(self.core.handle, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()
            await self._server.serve_forever()

        try:
            loop.run_until_complete(main())
        except asyncio.CancelledError:
            pass
        finally:
            loop.close()

    def stop(self) -> None:
        loop = self._loop
        if loop is not None and self._server is not None:

            def shutdown() -> None:
                self._server.close()  # type: ignore[union-attr]
                for task in asyncio.all_tasks(loop):
                    task.cancel()

            loop.call_soon_threadsafe(shutdown)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> JudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SpawnedServer:
    """The server in a subprocess; ``stats()`` asks it over HTTP."""

    def __init__(
        self,
        plan: FaultPlan,
        latency: float = 0.0,
        keep_bodies: bool = False,
        *,
        responder: str = "default",
        api_key: str | None = None,
        echo_headers: bool = False,
        batch_api: dict[str, Any] | None = None,
    ) -> None:
        args = [
            sys.executable,
            __file__,
            "--rate",
            str(plan.rate),
            "--seed",
            str(plan.seed),
            "--retry-after",
            str(plan.retry_after),
            "--slow",
            str(plan.slow_seconds),
            "--kinds",
            ",".join(plan.kinds),
            "--latency",
            str(latency),
            "--responder",
            responder,
            *(["--echo-headers"] if echo_headers else []),
            *(["--batch-api", json.dumps(batch_api)] if batch_api is not None else []),
        ]
        # The key goes through the environment, as a provider's would: never on a command line.
        env = {**os.environ, "JUDGE_SERVER_API_KEY": api_key} if api_key is not None else None
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not line.startswith("PORT "):
            with self.proc:  # closes the pipes and reaps the process
                self.proc.kill()
            raise RuntimeError(f"judge server did not start: {line!r}")
        self.port = int(line.split()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self, with_records: bool = False) -> dict[str, Any]:
        url = f"http://127.0.0.1:{self.port}/_stats" + ("?records=1" if with_records else "")
        with urllib.request.urlopen(url, timeout=30) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        with self.proc:  # closes the pipes and reaps the process
            self.proc.stdin.close()  # type: ignore[union-attr]  # the server serves until its stdin closes
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def __enter__(self) -> SpawnedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def spawn_server(
    rate: float = 0.0,
    *,
    seed: int = 0,
    latency: float = 0.0,
    responder: str = "default",
    api_key: str | None = None,
    echo_headers: bool = False,
    batch_api: dict[str, Any] | None = None,
    **plan: Any,
) -> SpawnedServer:
    return SpawnedServer(
        FaultPlan(rate=rate, seed=seed, **plan),
        latency=latency,
        responder=responder,
        api_key=api_key,
        echo_headers=echo_headers,
        batch_api=batch_api,
    )


async def _serve_subprocess(core: _Core) -> None:
    server = await asyncio.start_server(core.handle, "127.0.0.1", 0)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    loop = asyncio.get_running_loop()
    # Serve until the parent closes our stdin (or dies): never outlive the test run.
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=0.0, help="probability of a fault per request")
    parser.add_argument("--kinds", default=",".join(FAULTS), help="comma-separated fault kinds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--retry-after", type=float, default=0.05)
    parser.add_argument("--slow", type=float, default=0.5, help="delay of 'slow' responses, seconds")
    parser.add_argument("--latency", type=float, default=0.0, help="delay before every answer, seconds")
    parser.add_argument("--responder", choices=sorted(RESPONDERS), default="default", help="the judge's behaviour")
    parser.add_argument("--echo-headers", action="store_true", help="error bodies repeat the request headers")
    parser.add_argument("--batch-api", metavar="JSON", help="serve the batch APIs with these BatchPlan dials")
    args = parser.parse_args(argv)
    plan = FaultPlan(
        rate=args.rate,
        kinds=tuple(k for k in args.kinds.split(",") if k),
        seed=args.seed,
        retry_after=args.retry_after,
        slow_seconds=args.slow,
    )
    core = _Core(
        plan,
        latency=args.latency,
        keep_bodies=False,
        responder=RESPONDERS[args.responder],
        api_key=os.environ.get("JUDGE_SERVER_API_KEY"),
        echo_headers=args.echo_headers,
    )
    if args.batch_api is not None:
        from batch_api import BatchAPI, BatchPlan  # a sibling: this file runs as a script here

        core.batch_api = BatchAPI(
            BatchPlan(**json.loads(args.batch_api)), responder=core.responder, api_key=core.api_key
        )
    asyncio.run(_serve_subprocess(core))


if __name__ == "__main__":
    main()
