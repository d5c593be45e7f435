"""Small real runs written by the commands themselves, for the viewer's tests: a score run
(one system named by a hostile file stem), evaluate runs with a judge and a pairwise metric
(one metric with a hostile name, one response with a script payload), an agent run."""

from __future__ import annotations

import asyncio
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from _helpers.judge_server import JudgeServer, evaluate_responder
from respeval.cli import main

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2;alert(2)">'
HOSTILE_NAME = '<img src=x onerror="window.__pwned=3;alert(3)">'  # a system and a metric name (no "/")
SPEC = (
    "metrics:\n"
    "  - exact_match\n  - bleu\n"
    "  - GROUNDING\n"
    "  - {pairwise: preference, flip: both}\n"
    f"  - {{metric: json_valid, name: {json.dumps(HOSTILE_NAME)}}}\n"
)


def write_rows(path: Path, n: int, style: str) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            answer = f"city {i % 9}"
            response = f"It is {answer}." if style == "a" else f"The answer is {answer}, I believe."
            if i == 1:
                response += " " + PAYLOAD
            fh.write(
                json.dumps(
                    {
                        "id": f"q{i}",
                        "prompt": f"Which city is number {i % 9}?",
                        "response": response,
                        "reference": answer,
                        "context": f"Policy {i % 4}: city number {i % 9} is {answer}.",
                        "baseline_model_response": f"Maybe {answer}.",
                    }
                )
                + "\n"
            )


def evaluate_run(root: Path, name: str, style: str, n: int = 30) -> Path:
    folder = root / name
    folder.mkdir()
    write_rows(folder / "rows.jsonl", n, style)
    (folder / "spec.yaml").write_text(SPEC)
    with JudgeServer(responder=evaluate_responder) as server:
        args = ["evaluate", "--input", str(folder / "rows.jsonl"), "--spec", str(folder / "spec.yaml")]
        args += ["--model", "openai:judge", "--base-url", server.url, "--id-field", "id", "--quiet"]
        args += [
            "--bootstrap",
            "50",
            "--out",
            str(folder / "rows.parquet"),
            "--summary-out",
            str(folder / "summary.json"),
        ]
        assert main(args) == 0
    return folder


def score_run(root: Path) -> Path:
    """Two systems, one named by a hostile file stem, scored with BLEU and TER."""
    folder = root / "score"
    folder.mkdir()
    refs = folder / "refs.txt"
    refs.write_text("".join(f"the cat number {i} sat on the mat\n" for i in range(20)))
    (folder / "plain.txt").write_text("".join(f"the cat number {i} sat on a mat\n" for i in range(20)))
    (folder / f"{HOSTILE_NAME}.txt").write_text("".join(f"a dog {i} ran off {PAYLOAD}\n" for i in range(20)))
    args = ["score", "--pred", str(folder / "plain.txt"), "--pred", str(folder / f"{HOSTILE_NAME}.txt")]
    args += ["--ref", str(refs), "--metrics", "bleu,ter", "--bootstrap", "50", "--quiet"]
    args += ["--out", str(folder / "rows.parquet"), "--summary-out", str(folder / "summary.json")]
    assert main(args) == 0
    return folder


def agent_run(root: Path) -> Path:
    folder = root / "agent"
    folder.mkdir()
    main(["agent", "--example", "--out", str(folder / "results.json"), "--summary-out", str(folder / "summary.json")])
    return folder


# --- calling the viewer's ASGI app directly


def get(app: Any, path: str, query: str = "", method: str = "GET", host: str | None = None):
    """(status, headers, body) of one request, through the ASGI interface."""
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query.encode(),
        "headers": [(b"host", (host or "127.0.0.1:8000").encode())],
    }
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start, body = sent
    return start["status"], dict(start["headers"]), body["body"].decode("utf-8")


class _Active(HTMLParser):
    """Script elements and event-handler attributes: what could run in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "object", "embed", "base"):
            self.found.append(tag)
        self.found += [
            f"{tag} {k}" for k, v in attrs if k.startswith("on") or (v or "").lower().startswith("javascript:")
        ]


def active_content(page: str) -> list[str]:
    parser = _Active()
    parser.feed(page)
    return parser.found


def visible(page: str) -> str:
    """The page's text, tags removed and entities decoded (what a reader sees)."""
    return html.unescape(re.sub(r"<[^>]+>", " ", page))
