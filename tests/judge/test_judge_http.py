"""The HTTP adapters: wire formats (httpx.MockTransport), and the engine against a real
OpenAI-compatible server on 127.0.0.1 that injects every fault, through both transports."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest

from _helpers.judge_server import FAULTS, FaultPlan, JudgeServer
from respeval import judge
from respeval.judge import AnthropicModel, FatalError, OpenAIChatModel, Pointwise, TransientError
from respeval.judge.models._transports import LoopbackTransport, ShardedTransport, default_transport

FAST = {"backoff_base": 0.001, "backoff_max": 0.005}
OK_BODY = {
    "choices": [
        {
            "message": {"role": "assistant", "content": '{"reasoning": "r", "score": 1, "pass": true}'},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 11, "completion_tokens": 7},
    "model": "served-m",
}


def items(n: int) -> list[dict]:
    return [{"id": i, "prompt": f"q{i}", "reference": f"ref {i}", "response": f"cand {i}"} for i in range(n)]


def mock_model(handler, **kwargs) -> OpenAIChatModel:
    return OpenAIChatModel("m", base_url="http://judge.invalid/v1", transport=httpx.MockTransport(handler), **kwargs)


# ------------------------------------------------------------------------- OpenAI wire format


def test_openai_request_wire_format(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc")
    seen: list[httpx.Request] = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, json=OK_BODY)

    result = judge.run(items(1), mock_model(handler), method=Pointwise(seed=42))
    row = result.rows[0]
    assert row.status == "scored" and (row.tokens_in, row.tokens_out) == (11, 7)
    request = seen[0]
    assert request.method == "POST" and str(request.url) == "http://judge.invalid/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-abc"
    assert request.headers["content-type"] == "application/json"
    body = json.loads(request.content)
    assert body["model"] == "m" and body["temperature"] == 0.0 and body["seed"] == 42 and body["max_tokens"] == 512
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["required"] == ["reasoning", "score", "pass"]


def test_openai_without_key_json_schema_or_seed(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, json=OK_BODY)

    model = mock_model(handler, json_schema=False, supports_seed=False, max_tokens_field="max_completion_tokens")
    judge.run(items(1), model, method=Pointwise(seed=42))
    body = json.loads(seen[0].content)
    assert "authorization" not in seen[0].headers  # local servers need none
    assert "response_format" not in body and "seed" not in body
    assert body["max_completion_tokens"] == 512 and "max_tokens" not in body


def test_openai_response_forms():
    async def one(body, status=200):
        model = mock_model(
            lambda request: (
                httpx.Response(status, json=body) if isinstance(body, dict) else httpx.Response(status, content=body)
            )
        )
        request = Pointwise().build(Pointwise().item({"reference": "r", "response": "c"}), model.capabilities)
        async with model:
            return await model.generate(request)

    refusal = {"choices": [{"message": {"content": None, "refusal": "I won't grade this."}, "finish_reason": "stop"}]}
    completion = asyncio.run(one(refusal))
    assert completion.text == "" and completion.refusal == "I won't grade this." and completion.tokens_in == 0
    with pytest.raises(TransientError, match="no choices"):
        asyncio.run(one({"object": "error"}))
    with pytest.raises(TransientError, match="malformed response body"):
        asyncio.run(one(b'{"choices": [{"mess'))
    with pytest.raises(FatalError, match="HTTP 400.*context length"):
        asyncio.run(one({"error": {"message": "context length exceeded"}}, status=400))
    with pytest.raises(TransientError, match="HTTP 503") as info:
        asyncio.run(one({"error": {"message": "busy"}}, status=503))
    assert info.value.kind == "server_error"


def test_a_refusal_is_unscored_with_the_message():
    refusal = {"choices": [{"message": {"content": None, "refusal": "No."}, "finish_reason": "stop"}]}
    row = judge.run(items(1), mock_model(lambda r: httpx.Response(200, json=refusal)), reask=False).rows[0]
    assert row.status == "unscored" and row.unscored_reason == "unparseable: the judge refused: No."


# ------------------------------------------------------------------------- Anthropic wire format


def test_anthropic_wire_format(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-key")
    seen = []
    reply = {
        "content": [
            {"type": "text", "text": '{"reasoning": "r", "score": 0.5, '},
            {"type": "text", "text": '"pass": false}'},
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 21, "output_tokens": 9},
        "model": "claude-x",
    }
    statuses = iter([529, 200])

    def handler(request):
        seen.append(request)
        status = next(statuses)
        return httpx.Response(
            status,
            json=reply
            if status == 200
            else {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )

    model = AnthropicModel("claude-x", transport=httpx.MockTransport(handler))
    row = judge.run(items(1), model, **FAST).rows[0]
    assert row.status == "scored" and row.verdict["score"] == 0.5 and row.attempts == 2  # 529 was retried
    assert (row.tokens_in, row.tokens_out) == (21, 9)
    request = seen[-1]
    assert str(request.url) == "https://api.anthropic.com/v1/messages"
    assert request.headers["x-api-key"] == "ant-key" and request.headers["anthropic-version"] == "2023-06-01"
    body = json.loads(request.content)
    assert "temperature" not in body and "seed" not in body and "response_format" not in body
    assert body["system"].startswith("You are a strict, impartial grader")
    assert [m["role"] for m in body["messages"]] == ["user"] and body["max_tokens"] == 512


def test_anthropic_401_names_the_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    model = AnthropicModel(
        "claude-x",
        base_url="http://judge.invalid/v1",
        transport=httpx.MockTransport(
            lambda r: httpx.Response(401, json={"type": "error", "error": {"message": "invalid x-api-key"}})
        ),
    )
    result = judge.run(items(3), model)
    assert result.stop_kind == "error" and "$ANTHROPIC_API_KEY is not set" in result.stop_reason
    assert "invalid x-api-key" in result.stop_reason


def test_transport_choice():
    assert isinstance(default_transport("http://127.0.0.1:8000/v1"), LoopbackTransport)
    assert isinstance(default_transport("http://localhost:11434/v1"), LoopbackTransport)
    remote = default_transport("https://api.openai.com/v1", max_connections=20)
    assert isinstance(remote, ShardedTransport) and remote.pool_count == 3
    assert isinstance(default_transport("http://10.1.2.3:8000/v1"), ShardedTransport)


class _BytesOnly(httpx.AsyncBaseTransport):
    """A transport of the user's that answers a POST on bytes (``PostTransport``) and
    refuses httpx objects: the adapters' POST must take its ``post``, whatever its class."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, bytes]] = []

    async def post(self, url, headers, body, timeout):
        self.posts.append((str(url), body))
        return 200, [(b"content-type", b"application/json")], json.dumps(OK_BODY).encode()

    async def handle_async_request(self, request):
        raise AssertionError("a PostTransport's POST went through httpx objects")


def test_post_goes_through_the_transport_protocol():
    from respeval.judge.models._transports import HttpxPost, PostTransport, post_transport

    own = _BytesOnly()
    assert post_transport(own) is own and isinstance(LoopbackTransport(), PostTransport)
    mock = httpx.MockTransport(lambda request: httpx.Response(200, json=OK_BODY))
    assert isinstance(post_transport(mock), HttpxPost)
    result = judge.run(items(2), OpenAIChatModel("m", base_url="http://judge.invalid/v1", transport=own))
    assert [r.status for r in result.rows] == ["scored", "scored"]
    assert [url for url, _ in own.posts] == ["http://judge.invalid/v1/chat/completions"] * 2


def test_an_error_status_is_decoded_the_same_through_either_path():
    body = {"error": {"message": "slow down"}}
    headers = {"retry-after": "7"}
    mock = httpx.MockTransport(lambda request: httpx.Response(429, json=body, headers=headers))

    class Raw(_BytesOnly):
        async def post(self, url, headers_, body_, timeout):
            return 429, [(b"retry-after", b"7")], json.dumps(body).encode()

    for transport in (mock, Raw()):
        result = judge.run(
            items(1),
            OpenAIChatModel("m", base_url="http://judge.invalid/v1", transport=transport),
            max_retries=0,
            **FAST,
        )
        assert result.summary.errors == {"rate_limited": 1}, transport
        assert "HTTP 429" in result.stop_reason and "slow down" in result.stop_reason


# ------------------------------------------------------------------------- against the server

TRANSPORTS = ["loopback", "httpx"]  # respeval's own, and httpx's pools (ShardedTransport)


def server_model(server: JudgeServer, transport: str, **kwargs) -> OpenAIChatModel:
    chosen = LoopbackTransport() if transport == "loopback" else ShardedTransport(max_connections=16, per_pool=4)
    return OpenAIChatModel("m", base_url=server.url, transport=chosen, **kwargs)


def first_time(fault: str):
    """A script: each first ask (not a re-ask) gets ``fault`` the first time it is sent."""
    return lambda info: fault if info.nth == 0 and len(info.body["messages"]) == 2 else None


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("fault", FAULTS)
def test_every_fault_is_survived(fault, transport):
    plan = FaultPlan(slow_seconds=1.5, retry_after=0.05)
    with JudgeServer(plan, script=first_time(fault)) as server:
        # only the slow answers must time out: a short timeout for every fault made the test
        # flaky on a loaded machine (an ordinary answer late by 0.2 s is one attempt more)
        timeout = 0.2 if fault == "slow" else 10.0
        result = judge.run(items(3), server_model(server, transport), concurrency=3, timeout=timeout, **FAST)
        stats = server.stats()
    assert [r.status for r in result.rows] == ["scored"] * 3
    assert all(r.attempts == 2 for r in result.rows)
    assert stats["requests"] == 6 and stats["faults"] == {fault: 3, "ok": 3}
    if fault == "bad-judge-json":  # a 200 whose text is not a verdict: re-asked, not retried
        assert all(r.reasked for r in result.rows) and result.summary.retries == 0
    else:
        assert result.summary.retries == 3 and not any(r.reasked for r in result.rows)
    if fault == "slow":  # the 0.2 s timeout cut the 1.5 s answers short: three timeouts, then retries
        assert result.summary.errors == {"timeout": 3}
    # tokens: exactly the usage of the answers the engine accepted
    assert result.summary.tokens_in == stats["delivered_prompt_tokens"] > 0
    assert result.summary.tokens_out == stats["delivered_completion_tokens"] > 0


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_retry_after_is_honoured(transport):
    plan = FaultPlan(retry_after=0.3)
    with JudgeServer(plan, script=first_time("429-retry-after")) as server:
        result = judge.run(items(1), server_model(server, transport), **FAST)
        first, second = server.records
    assert result.rows[0].status == "scored" and result.rows[0].attempts == 2
    assert second.started - first.finished >= 0.29  # not the 1-5 ms backoff


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_429_without_retry_after_backs_off_exponentially(transport):
    with JudgeServer(script=lambda info: "429" if info.nth < 3 else None) as server:
        result = judge.run(items(1), server_model(server, transport), backoff_base=0.04, backoff_max=10)
        starts = [r.started for r in server.records]
    assert result.rows[0].attempts == 4
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    # equal jitter: retry n waits between 0.5 and 1.0 times 0.04 * 2**n
    for n, gap in enumerate(gaps):
        assert 0.5 * 0.04 * 2**n - 0.005 <= gap <= 0.04 * 2**n + 0.5


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_401_stops_the_run_without_retrying(transport, monkeypatch):
    monkeypatch.setenv("JUDGE_TEST_KEY", "wrong-key")
    with JudgeServer(api_key="right-key") as server:
        result = judge.run(items(10), server_model(server, transport, api_key_env="JUDGE_TEST_KEY"), concurrency=1)
        requests = server.stats()["requests"]
    assert requests == 1
    assert result.stop_kind == "error" and result.stop_reason.startswith("HTTP 401 from http://127.0.0.1")
    assert "check the key in $JUDGE_TEST_KEY" in result.stop_reason and "wrong-key" not in result.stop_reason
    assert result.not_run == list(range(10))


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_400_stops_the_run_with_the_server_message(transport):
    with JudgeServer(script=lambda info: "400" if info.index == 2 else None) as server:
        result = judge.run(items(10), server_model(server, transport), concurrency=1)
        requests = server.stats()["requests"]
    assert requests == 3 and result.summary.scored == 2
    assert result.stop_reason == "HTTP 400 from " + server.url + ": injected 400"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_persistent_server_error_exhausts_retries(transport):
    with JudgeServer(script=lambda info: "500" if "cand 1" in json.dumps(info.body) else None) as server:
        result = judge.run(items(3), server_model(server, transport), concurrency=1, max_retries=3, **FAST)
        requests = server.stats()["requests"]
    assert requests == 2 + 4
    assert result.rows[1].unscored_reason.startswith("retries exhausted: 4 attempts, last: HTTP 500 from")


@pytest.mark.parametrize("fault", ["drop", "malformed-body", "slow"])
def test_a_plain_httpx_transport_works_too(fault):
    async def run_on_a_plain_transport(url: str):
        # a transport of the user's own keeps connections on the loop of the run: the user
        # closes it on that loop (respeval's transports close theirs as a loop shuts down)
        async with httpx.AsyncHTTPTransport(retries=0) as plain:
            model = OpenAIChatModel("m", base_url=url, transport=plain)
            return await judge.arun(items(3), model, concurrency=3, timeout=0.2 if fault == "slow" else 10.0, **FAST)

    with JudgeServer(FaultPlan(slow_seconds=0.6), script=first_time(fault)) as server:
        result = asyncio.run(run_on_a_plain_transport(server.url))
        requests = server.stats()["requests"]
    assert all(r.status == "scored" and r.attempts == 2 for r in result.rows) and requests == 6


def test_keep_alive_connections_are_reused():
    with JudgeServer() as server:
        judge.run(items(40), server_model(server, "loopback"), concurrency=4)
        assert server.stats()["connections"] <= 4
        judge.run(
            items(40),
            server_model(
                server,
                "loopback",
            ),
            concurrency=1,
        )
        assert server.stats()["connections"] <= 5


def test_one_loopback_transport_serves_runs_on_different_event_loops():
    transport = LoopbackTransport()
    with JudgeServer() as server:
        model = OpenAIChatModel("m", base_url=server.url, transport=transport)
        first = judge.run(items(4), model, concurrency=2)
        second = judge.run(items(5)[1:], model, concurrency=2)  # another asyncio.run: another loop
        requests = server.stats()["requests"]
    assert first.summary.errors == {} and second.summary.errors == {}  # no stale connection was used
    assert first.summary.calls + second.summary.calls == requests == 8


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_injected_transport_keeps_no_connection_after_a_sync_run(transport):
    # the run's own event loop ends with the run: the connections opened on it are closed
    # then, by the transport the caller still owns (nobody could close them afterwards)
    with JudgeServer() as server:
        model = server_model(server, transport)
        first = judge.run(items(8), model, concurrency=4)
        server.wait_idle(timeout=10)
        second = judge.run(items(8), model, concurrency=4)  # and the transport still works
        server.wait_idle(timeout=10)
    assert first.summary.scored == second.summary.scored == 8


def test_connection_refused_is_transient_and_a_dead_endpoint_stops_the_run():
    with JudgeServer() as server:
        url = server.url
    model = OpenAIChatModel("m", base_url=url)  # the server is gone: nothing listens there now
    result = judge.run(items(5), model, max_retries=1, concurrency=1, **FAST)
    assert result.stop_kind == "error" and "connection error" in result.stop_reason
    assert "no call has succeeded yet" in result.stop_reason


# ------------------------------------------------------------------------- LoopbackTransport details


class RawServer:
    """Answers each request with the next canned byte string (then closes, if told)."""

    def __init__(self, replies: list[tuple[bytes, bool]]) -> None:
        self.replies = list(replies)
        self.connections = 0
        self.ready = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self.stop_event: asyncio.Event | None = None

    async def _handle(self, reader, writer):
        self.connections += 1
        try:
            while True:  # until the client closes, or a reply says to close
                head = await reader.readuntil(b"\r\n\r\n")
                if not self.replies:
                    break
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    ),
                    0,
                )
                await reader.readexactly(length)
                reply, close = self.replies.pop(0)
                writer.write(reply)
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    async def _main(self):
        self.stop_event = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self.loop = asyncio.get_running_loop()
        self.ready.set()
        await self.stop_event.wait()
        server.close()

    def __enter__(self):
        self.thread.start()
        self.ready.wait(5)
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(5)


def _fetch(port: int, n: int, timeout: float = 2.0) -> list[httpx.Response]:
    async def go():
        transport = LoopbackTransport()
        out = []
        for _ in range(n):
            request = httpx.Request(
                "POST",
                f"http://127.0.0.1:{port}/v1/x",
                content=b"{}",
                extensions={"timeout": httpx.Timeout(timeout).as_dict()},
            )
            out.append(await transport.handle_async_request(request))
        await transport.aclose()
        return out

    return asyncio.run(go())


def test_loopback_transport_reads_every_body_framing():
    replies = [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", False),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;ext=1\r\ndefg\r\n0\r\nX-T: 1\r\n\r\n",
            False,
        ),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", False),
        (b"HTTP/1.1 204 No Content\r\n\r\n", False),
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close", True),
    ]
    with RawServer(replies) as server:
        responses = _fetch(server.port, 5)
        connections = server.connections
    assert [(r.status_code, r.content) for r in responses] == [
        (200, b"hello"),
        (200, b"abcdefg"),
        (201, b"ok"),
        (204, b""),
        (200, b"until close"),
    ]
    assert connections == 1  # all on one keep-alive connection


def test_loopback_transport_does_not_reuse_a_closed_connection():
    replies = [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\na", True),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb", False),
    ]
    with RawServer(replies) as server:
        responses = _fetch(server.port, 2)
        connections = server.connections
    assert [r.content for r in responses] == [b"a", b"b"] and connections == 2


@pytest.mark.parametrize(
    "reply, error",
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", httpx.RemoteProtocolError),
        (b"", httpx.RemoteProtocolError),
        (b"NONSENSE\r\n\r\n", httpx.RemoteProtocolError),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", httpx.RemoteProtocolError),
    ],
)
def test_loopback_transport_errors_are_httpx_errors(reply, error):
    with RawServer([(reply, True)]) as server:
        with pytest.raises(error):
            _fetch(server.port, 1)


def test_loopback_transport_read_timeout():
    with RawServer([(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe", False)]) as server:
        # the server holds the connection open: only the read timeout can end the wait (a
        # close would be a RemoteProtocolError)
        with pytest.raises(httpx.ReadTimeout):
            _fetch(server.port, 1, timeout=0.1)


def test_loopback_transport_connect_error():
    with RawServer([]) as server:
        port = server.port
    with pytest.raises(httpx.ConnectError):
        _fetch(port, 1)
