"""Acceptance 5: a seeded corpus with planted emails, phones, card numbers, IP addresses and
keys: none survives in any output (dataset as JSONL and Parquet, ADK eval set, labelling
sheet, report, errors file, the command's own output), the report counts each kind, and the
placeholders are stable across files (and across runs with the same key)."""

from __future__ import annotations

import json
import random
import re
import string

import pytest

from respeval import traces
from respeval.cli import main
from respeval.traces.pii import KINDS, Scrubber, luhn_valid


def _card(rng: random.Random) -> str:
    while True:
        digits = "4" + "".join(rng.choice(string.digits) for _ in range(15))
        if luhn_valid(digits):
            return digits


def plant(seed: int) -> dict[str, list[str]]:
    """Seeded PII values of every kind, in the shapes people write them."""
    rng = random.Random(seed)
    word = lambda n: "".join(rng.choice(string.ascii_lowercase) for _ in range(n))  # noqa: E731
    alnum = lambda n: "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))  # noqa: E731
    cards = []
    for sep in ("", " ", "-"):
        d = _card(rng)
        cards.append(sep.join(d[i : i + 4] for i in range(0, 16, 4)) if sep else d)
    return {
        "email": [f"{word(5)}.{word(4)}@{word(6)}.com" for _ in range(3)],
        "phone": [
            f"+1 {rng.randint(200, 999)} {rng.randint(200, 999)} {rng.randint(1000, 9999)}",
            f"({rng.randint(200, 999)}) {rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
            f"+44 20 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
        ],
        "card": cards,
        "ipv4": [
            f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        ],
        "ipv6": [
            f"2001:db8:{rng.randint(1, 0xFFFF):x}::{rng.randint(1, 0xFFFF):x}",
            f"fe80::{rng.randint(1, 0xFFFF):x}:{rng.randint(1, 0xFFFF):x}",
        ],
        "api_key": [
            f"sk-proj-{alnum(32)}",
            f"ghp_{alnum(36)}",
            f"AKIA{''.join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))}",
        ],
        "bearer_token": [f"{alnum(24)}.{alnum(12)}"],
    }


def _chat_lines(values: dict[str, list[str]]) -> list[dict]:
    e, p, c, v4, v6, k, b = (values[x] for x in ("email", "phone", "card", "ipv4", "ipv6", "api_key", "bearer_token"))
    return [
        {
            "trace_id": "chat-1",
            "request": {
                "model": "gpt-4o-mini",
                "messages": [
                    {"role": "system", "content": f"Support bot. Escalate to {e[0]}."},
                    {
                        "role": "user",
                        "content": f"I am {e[1]}, call me at {p[0]} or {p[1]}. My card {c[0]} was charged twice.",
                    },
                ],
            },
            "response": {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "content": "",
                            "tool_calls": [
                                {
                                    "id": "c1",
                                    "function": {
                                        "name": "lookup",
                                        "arguments": json.dumps(
                                            {"card": c[1], "ip": v4[0], "contact": {"email": e[1], "phones": [p[2]]}}
                                        ),
                                    },
                                }
                            ],
                        }
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 3},
            },
            "feedback": f"reply went to {e[2]} from {v6[0]}",
        },
        {
            "trace_id": "chat-1",
            "request": {
                "model": "gpt-4o-mini",
                "messages": [
                    {"role": "system", "content": f"Support bot. Escalate to {e[0]}."},
                    {
                        "role": "user",
                        "content": f"I am {e[1]}, call me at {p[0]} or {p[1]}. My card {c[0]} was charged twice.",
                    },
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": "c1",
                                "function": {
                                    "name": "lookup",
                                    "arguments": json.dumps(
                                        {"card": c[1], "ip": v4[0], "contact": {"email": e[1], "phones": [p[2]]}}
                                    ),
                                },
                            }
                        ],
                    },
                    {
                        "role": "tool",
                        "tool_call_id": "c1",
                        "content": f"found; key {k[0]} and header Authorization: Bearer {b[0]}",
                    },
                ],
            },
            "response": {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "content": f"Refunded {c[2]}; the login from {v4[1]} / {v6[1]} used {k[1]} and {k[2]}.",
                        }
                    }
                ],
                "usage": {"prompt_tokens": 30, "completion_tokens": 9},
            },
            "error": {"type": "partial", "message": f"could not notify {e[0]}"},
        },
    ]


def _span_line(values: dict[str, list[str]], *, bad: bool = False) -> dict:
    e = values["email"]

    def attr(k, v):
        return {"key": k, "value": {"stringValue": v}}

    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "chat gpt-4o",
        "startTimeUnixNano": "1746000000000000000",
        "endTimeUnixNano": "1746000001000000000",
        "status": {"code": 2, "message": f"rate limited for {e[1]} at {values['ipv4'][0]}"},
        "attributes": [
            attr("gen_ai.operation.name", "chat"),
            attr(
                "gen_ai.input.messages",
                json.dumps(
                    [
                        {
                            "role": "user",
                            "parts": [{"type": "text", "content": f"this is {e[0]} again, {values['phone'][0]}"}],
                        }
                    ]
                ),
            ),
            attr(
                "gen_ai.output.messages",
                json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": f"Noted, {e[1]}."}]}]),
            ),
            attr("user.feedback", f"bad; mail {e[2]}"),
        ],
    }
    lines = {
        "resourceSpans": [
            {"resource": {"attributes": [attr("service.name", "support")]}, "scopeSpans": [{"spans": [span]}]}
        ]
    }
    if bad:  # a bad record whose reason quotes the bad value
        lines["resourceSpans"][0]["scopeSpans"][0]["spans"].append(dict(span, traceId=e[0]))
    return lines


@pytest.fixture()
def corpus(tmp_path):
    values = plant(17)
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a-chat.jsonl").write_text("".join(json.dumps(x) + "\n" for x in _chat_lines(values)))
    (inputs / "b-spans.jsonl").write_text(json.dumps(_span_line(values, bad=True)) + "\n")
    key = tmp_path / "pii.key"
    key.write_bytes(b"0123456789abcdef0123456789abcdef")
    return values, inputs, key


def _run(tmp_path, inputs, key, name, capsys, extra=()):
    out = tmp_path / name
    out.mkdir(exist_ok=True)
    args = [
        "dataset", "from-traces", "--input", str(inputs), "--scrub-pii", "--pii-key-file", str(key),
        "--out", str(out / "cases.jsonl"), "--adk-evalset", str(out / "review.evalset.json"),
        "--label-sheet", str(out / "label.csv"), "--report", str(out / "report.json"),
        "--on-error", "record", "--errors", str(out / "bad.jsonl"), "--json", "--quiet", *extra,
    ]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr()
    parquet = ["dataset", "from-traces", "--input", str(inputs), "--scrub-pii", "--pii-key-file", str(key)]
    assert main([*parquet, "--out", str(out / "cases.parquet"), "--on-error", "skip", "--quiet", *extra]) == 0
    printed2 = capsys.readouterr()
    return out, printed.out + printed.err + printed2.out + printed2.err


def _parquet_text(path) -> str:
    import pyarrow.parquet as pq

    return json.dumps(pq.read_table(path).to_pylist(), ensure_ascii=False)


def _occurrences(text: str, values: dict[str, list[str]]) -> dict[str, int]:
    return {kind: sum(text.count(v) for v in vs) for kind, vs in values.items()}


def test_nothing_planted_survives_and_every_kind_is_counted(tmp_path, corpus, capsys):
    values, inputs, key = corpus
    out, printed = _run(tmp_path, inputs, key, "run", capsys)
    texts = {
        "jsonl": (out / "cases.jsonl").read_text(),
        "parquet": _parquet_text(out / "cases.parquet"),
        "parquet bytes": (out / "cases.parquet").read_bytes().decode("latin-1"),
        "adk": (out / "review.evalset.json").read_text(),
        "sheet": (out / "label.csv").read_text(encoding="utf-8-sig"),
        "report": (out / "report.json").read_text(),
        "errors": (out / "bad.jsonl").read_text(),
        "printed": printed,
    }
    every = [v for vs in values.values() for v in vs]
    for where, text in texts.items():
        survivors = [v for v in every if v in text or v.replace(" ", "") in text.replace(" ", "")]
        assert survivors == [], where
        assert not re.search(r"(?<![\d.])\d{4}[ -]?\d{4}[ -]?\d{4}[ -]?\d{4}(?!\d)", text), where
    assert (out / "bad.jsonl").read_text().count("\n") == 1  # the bad span, its reason scrubbed
    report = json.loads(texts["report"])
    # every occurrence of a planted value in the unscrubbed cases (and the bad record's reason) was replaced
    raw = json.dumps([c.row() for c in traces.read_cases([str(inputs)], on_error="skip")], ensure_ascii=False)
    want = _occurrences(raw, values)
    want["email"] += 1  # the bad record's reason quoted an email
    assert report["pii"] == {k: want.get(k, 0) for k in KINDS}
    assert all(report["pii"][k] > 0 for k in KINDS)
    assert report["pii_key"] == "given"


def test_placeholders_are_stable_across_files_and_runs(tmp_path, corpus, capsys):
    values, inputs, key = corpus
    out1, _ = _run(tmp_path, inputs, key, "one", capsys)
    out2, _ = _run(tmp_path, inputs, key, "two", capsys)
    assert (out1 / "cases.jsonl").read_bytes() == (out2 / "cases.jsonl").read_bytes()
    rows = {json.loads(x)["trace_id"]: json.loads(x) for x in (out1 / "cases.jsonl").read_text().splitlines()}
    assert set(rows) == {"chat-1", "0af7651916cd43dd8448eb211c80319c"}
    placeholder = Scrubber(key.read_bytes()).placeholder("email", values["email"][1].lower())
    # the same email, in a chat log and in a span of another file: one placeholder
    assert placeholder in json.dumps(rows["chat-1"]) and placeholder in json.dumps(
        rows["0af7651916cd43dd8448eb211c80319c"]
    )
    other = tmp_path / "other.key"
    other.write_bytes(b"another key of enough length....")
    out3, _ = _run(tmp_path, inputs, other, "three", capsys)
    assert placeholder not in (out3 / "cases.jsonl").read_text()


def test_structured_credentials_and_false_friends():
    s = Scrubber(b"k" * 32)
    args = {
        "password": "hunter2!",
        "api_key": "abcdef123456",
        "max_tokens": 100,
        "query": "order 2024-01-15 at 12:30:45",
    }
    scrubbed = s.value(args)
    assert scrubbed["max_tokens"] == 100 and scrubbed["query"] == "order 2024-01-15 at 12:30:45"
    assert "hunter2" not in json.dumps(scrubbed) and "abcdef123456" not in json.dumps(scrubbed)
    text = "version 1.2.3.4.5, 13 digits 1234567890123, ratio 3:4:5, std::vector, gen_ai.usage.input_tokens: 12"
    assert s.text(text) == text
    assert s.report() == {**dict.fromkeys(KINDS, 0), "api_key": 2}
