"""No secret leaves respeval (issue 12, point 4): the scrubber, and every output of the
judge against a server that echoes the request's headers (``Authorization``,
``x-api-key``) and path (``?api_key=``) into its error bodies.

On main the key reached ``--out`` (``unscored_reason``), the ``--json`` summary
(``stop_reason``), stderr and exception messages; the tests below fail there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers.judge_server import JudgeServer
from respeval import judge, redact
from respeval.cli import main as respeval_main
from respeval.judge import AnthropicModel, OpenAIChatModel, TransientError

KEY = "sk-live-Q8vT2mXc91LpZr7w"  # the key in use: sent, and echoed back by the server
QUERY_KEY = "qk-7Hn2Vb9Lm4"  # a secret in the base URL's query string
FAST = {"backoff_base": 0.001, "backoff_max": 0.002, "max_retries": 1}


def leaked(*texts: str | bytes) -> list[str]:
    """Which secrets occur in any of ``texts`` (their plain, URL- and JSON-escaped forms)."""
    found = []
    for secret in (KEY, QUERY_KEY):
        forms = {secret, urllib.parse.quote(secret), json.dumps(secret)[1:-1]}
        for text in texts:
            data = text.encode() if isinstance(text, str) else text
            if any(form.encode() in data for form in forms):
                found.append(secret)
    return found


def items(n: int) -> list[dict]:
    return [
        {"id": f"r{i}", "prompt": f"question {i}", "reference": f"ref {i}", "response": f"cand {i}"} for i in range(n)
    ]


def every_file(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file())


# --------------------------------------------------------------------------- the scrubber


@pytest.mark.parametrize(
    "text, secret",
    [
        ("{'authorization': 'Bearer tok-0123456789'}", "tok-0123456789"),
        ('{"Authorization": "Bearer tok-0123456789"}', "tok-0123456789"),
        ("Authorization: Bearer tok-0123456789\r\nHost: x", "tok-0123456789"),
        ("proxy-authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
        ('{"x-api-key": "anthropic-key-42"}', "anthropic-key-42"),
        ("x-api-key: anthropic-key-42", "anthropic-key-42"),
        ("'api-key': 'azure-key-42'", "azure-key-42"),
        ("x-goog-api-key=goog-key-42", "goog-key-42"),
        ("request to https://h/v1/chat/completions?api_key=qk-12345&api-version=2 failed", "qk-12345"),
        ("GET /v1/models?key=AIzaNotReal12 HTTP/1.1", "AIzaNotReal12"),
        ("https://h/v1?access_token=at-99999: refused", "at-99999"),
        ("https://alice:pw-s3cret@proxy.example/v1", "pw-s3cret"),
        ("https://ghp_tokenasuser@github.com/x", "ghp_tokenasuser"),
        ("upstream said: bearer abc.def.ghi-123", "abc.def.ghi-123"),
        ("the key sk-proj-abcdefghijklmnopqrstuvwx was rejected", "sk-proj-abcdefghijklmnopqrstuvwx"),
        ('password="hunter2-x"', "hunter2-x"),
    ],
)
def test_redact_removes_every_shape_of_a_credential(text, secret):
    out = redact.redact(text)
    assert secret not in out and redact.REDACTED in out
    assert redact.redact(out) == out  # idempotent: scrubbing twice changes nothing


@pytest.mark.parametrize(
    "text",
    [
        '{"reasoning": "The candidate states the key facts.", "score": 1.0, "pass": true}',
        "tokens_in: 120, tokens_out: 7, max_tokens=512, pass: true, score: 0.5",
        "Bearer bonds were common. The key: Paris is the capital.",
        "HTTP 503 from http://127.0.0.1:8000/v1: injected 503",
        "https://api.openai.com/v1?api-version=2024-02-01",
        "",
    ],
)
def test_redact_leaves_ordinary_text_alone(text):
    assert redact.redact(text) == text


def test_registered_values_are_removed_in_every_encoding():
    secret = "reg-Secret/With+Chars=="
    redact.register_secret(secret)
    for form in (secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret)):
        assert redact.redact(f"echo: {form} !") == f"echo: {redact.REDACTED} !"
    redact.register_secret("abc")  # too short to scrub by value: "abc" in reasoning stays
    assert redact.redact("abc is fine") == "abc is fine"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60), st.sampled_from(["", "Bearer ", "x-api-key: ", "?api_key="]))
def test_a_registered_secret_never_survives(before, after, prefix):
    secret = "prop-SECRET-5c2e9a"
    redact.register_secret(secret)
    assert secret not in redact.redact(before + prefix + secret + after)


def test_a_secret_registered_after_a_text_was_scrubbed_is_removed_from_it_next_time():
    # long texts are remembered once scrubbed (a judge's system prompt, every row): the
    # memory must not outlive the secrets it was made with
    secret = "late-Secret-91f3c0aa"
    text = "The reply quotes a value the user pasted earlier in the session: " + secret + "." * 40
    assert redact.redact(text) == text and redact.redact(text) == text  # not a secret yet
    redact.register_secret(secret)
    assert secret not in redact.redact(text) and redact.REDACTED in redact.redact(text)


def test_redact_url_and_its_secrets():
    url = "https://bob:pw-77x@host.example:8443/v1/?api-version=2&api_key=qk-77x#frag"
    assert redact.redact_url(url) == "https://host.example:8443/v1/?api-version=2&api_key=[REDACTED]#frag"
    assert sorted(redact.url_secrets(url)) == ["bob", "pw-77x", "qk-77x"]
    assert redact.redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


def test_redact_data_scrubs_nested_strings_only():
    data = {"reasoning": f"echo Bearer {KEY}", "score": 1.0, "criteria": {"a": True}, "list": [f"x-api-key: {KEY}"]}
    clean = redact.redact_data(data)
    assert not leaked(json.dumps(clean)) and clean["score"] == 1.0 and clean["criteria"] == {"a": True}


def test_secret_environment_variables_are_known_without_being_sent():
    # A process that never sent the key (respeval report, validate) still scrubs it.
    code = "import sys; from respeval.redact import redact; print(redact(sys.argv[1]))"
    env = {**os.environ, "MY_SERVICE_API_KEY": "envkey-0x5f3759df", "NOT_SECRET_NAME": "visible-value-1"}
    out = subprocess.run(
        [sys.executable, "-c", code, "a envkey-0x5f3759df b visible-value-1"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    assert out.strip() == "a [REDACTED] b visible-value-1"


# --------------------------------------------------------------------------- the judge, as a library


def test_errors_are_scrubbed_when_made_and_carry_no_httpx_request(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused {request.url} with {dict(request.headers)}", request=request)

    model = OpenAIChatModel(
        "m", base_url=f"http://judge.invalid/v1?api_key={QUERY_KEY}", transport=httpx.MockTransport(handler)
    )
    result = judge.run(items(2), model, **FAST)
    assert result.stop_reason is not None and "connection error" in result.stop_reason
    assert not leaked(result.stop_reason, repr(result.summary), result.summary.format())

    async def one_call() -> BaseException:
        try:
            await model.generate(judge.Pointwise().build(judge.Pointwise().item(items(1)[0]), model.capabilities))
        except TransientError as exc:
            return exc
        raise AssertionError("no error")

    import asyncio

    error = asyncio.run(one_call())
    assert not leaked(str(error), repr(error), repr(error.args))
    assert error.__cause__ is None and error.__context__ is None  # the httpx request is not kept


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_echoed_headers_reach_no_row_summary_or_cache(tmp_path, monkeypatch, provider):
    monkeypatch.setenv("ECHO_TEST_KEY", KEY)

    def script(info):
        text = json.dumps(info.body)
        if "cand 1" in text:
            return "503"  # retried, then unscored: the reason quotes the echoed headers
        if "cand 2" in text:
            return "502-proxy"  # a proxy's HTML page with the headers in it
        if "cand 4" in text:
            return "401"  # fatal: the stop reason quotes them
        return None

    with JudgeServer(script=script, api_key=KEY, echo_headers=True) as server:
        base = f"{server.url}?api_key={QUERY_KEY}"
        cls = OpenAIChatModel if provider == "openai" else AnthropicModel
        model = cls("m", base_url=base, api_key_env="ECHO_TEST_KEY")
        cache = tmp_path / "cache.sqlite"
        result = judge.run(items(6), model, cache=cache, concurrency=1, **FAST)
        sent = [r.headers for r in server.records]
    header, value = ("authorization", f"Bearer {KEY}") if provider == "openai" else ("x-api-key", KEY)
    assert all(h[header] == value for h in sent)  # the key went out, and came back in the errors
    reasons = {r.id: r.unscored_reason for r in result.rows}
    assert "HTTP 503" in reasons["r1"] and "[REDACTED]" in reasons["r1"]
    assert "HTTP 502" in reasons["r2"]
    assert "HTTP 401" in result.stop_reason and "[REDACTED]" in result.stop_reason
    rows = [json.dumps(r.to_json(["score", "pass", "reasoning"])) for r in result.rows]
    texts = [*rows, json.dumps(result.summary.to_json()), result.summary.format(), repr(result), model.endpoint]
    assert not leaked(*texts, every_file(tmp_path))


def test_a_model_that_repeats_the_key_is_scrubbed_before_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def handler(request: httpx.Request) -> httpx.Response:
        said = request.headers["authorization"]
        content = json.dumps({"reasoning": f"you sent {said}", "score": 1.0, "pass": True})
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}], "model": f"m {said}"})

    model = OpenAIChatModel("m", base_url="http://judge.invalid/v1", transport=httpx.MockTransport(handler))
    result = judge.run(items(1), model, cache=tmp_path / "c.sqlite")
    row = result.rows[0]
    assert row.status == "scored" and row.verdict["reasoning"] == "you sent Bearer [REDACTED]"
    assert not leaked(every_file(tmp_path))


# --------------------------------------------------------------------------- the commands


def write_items(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items(n)), encoding="utf-8")
    return path


def cli(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = respeval_main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def echo_script(info):
    text = json.dumps(info.body)
    return "503" if "cand 1" in text else "400" if "cand 3" in text else None


@pytest.mark.parametrize("method", ["pointwise", "pairwise"])
def test_judge_command_writes_no_secret_anywhere(tmp_path, monkeypatch, capsys, method):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rows = items(5)
    for row in rows:
        row["baseline_model_response"] = "baseline " + row["response"]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    with JudgeServer(script=echo_script, api_key=KEY, echo_headers=True) as server:
        code, stdout, stderr = cli(
            capsys,
            "judge",
            "--method",
            method,
            "--input",
            str(path),
            "--model",
            "openai:m",
            "--base-url",
            f"{server.url}?api_key={QUERY_KEY}",
            "--out",
            str(out),
            "--concurrency",
            "1",
            "--max-retries",
            "1",
            "--backoff-base",
            "0.001",
            "--json",
            "--quiet",
        )
    assert code == 3  # the 400 is fatal
    summary = json.loads(stdout)
    assert "HTTP 400" in summary["stop_reason"] and "[REDACTED]" in summary["stop_reason"]
    assert "HTTP 400" in stderr
    assert not leaked(stdout, stderr, every_file(tmp_path))


def test_gate_junit_and_messages_carry_no_secret(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    path = write_items(tmp_path / "rows.jsonl", 4)
    junit = tmp_path / "gate.xml"
    with JudgeServer(script=lambda info: "401", api_key=KEY, echo_headers=True) as server:
        code, stdout, stderr = cli(
            capsys,
            "gate",
            "--input",
            str(path),
            "--model",
            "openai:m",
            "--base-url",
            f"{server.url}?api_key={QUERY_KEY}",
            "--junit",
            str(junit),
        )
    assert junit.exists() and "HTTP 401" in stderr and "[REDACTED]" in stderr
    assert not leaked(stdout, stderr, every_file(tmp_path))


def test_html_report_is_scrubbed(tmp_path):
    from respeval import report

    redact.register_secret(KEY)
    summary = report.new_summary("judge run", meta={"stop_reason": f"HTTP 401: Authorization: Bearer {KEY}"})
    summary["disagreements"] = [
        {"metric": "m", "row": 1, "judge": 1, "human": 0, "gap": 1, "texts": {"response": f"x-api-key: {KEY}"}}
    ]
    out = report.write_report(summary, tmp_path / "r.html")
    html = out.read_text(encoding="utf-8")
    assert "Authorization: Bearer [REDACTED]" in html and not leaked(html)
