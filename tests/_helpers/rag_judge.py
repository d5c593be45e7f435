"""A deterministic judge for the RAG and agent-quality steps, by word overlap: the stand-in
model behind the local OpenAI-wire server in the RAG tests (``respond(body)``) and behind
``python:`` judges (``judge(request)``).  It reads the fenced data of each step's prompt and
answers in the step's reply shape:

* claims: every sentence of the answer is a claim;
* verification / attribution / citations: supported when every content word (4+ letters,
  lowercase) of the claim occurs in the evidence;
* chunk usefulness: useful when the chunk shares two content words with the answer;
* questions: ``What about <first content words>?`` per question asked; noncommittal when
  the answer says "not sure";
* conversation rubrics: "yes" for every rubric, "no" for rubric ``X`` when ``[[fail-X]]``
  occurs in the data;
* embeddings (``embed``): a 64-dimensional hashed bag of words.

A ``[[malformed]]`` tag in the data makes it answer every step in a broken shape (a verdict
missing, a label it was not offered), ``[[malformed-verify]]`` only the claims' verification:
for the tests of unscored rows.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

_FENCE = re.compile(r"\[([A-Z_]+) ([0-9a-f]{10})\]\n(.*?)\n\[/\1 \2\]", re.S)
_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 4}


def _data(messages: list[dict[str, Any]]) -> dict[str, str]:
    user = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    return {label: value for label, _, value in _FENCE.findall(user)}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def _supported(claim: str, evidence: str) -> bool:
    words = content_words(re.sub(r"\[[^\]]*\]", " ", claim))
    return bool(words) and words <= content_words(evidence)


def respond_messages(messages: list[dict[str, Any]]) -> str:
    system = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    data = _data(messages)
    broken = any("[[malformed]]" in v for v in data.values())
    broken_verify = broken or any("[[malformed-verify]]" in v for v in data.values())
    if "break an answer into its claims" in system:
        claims = _sentences(data.get("ANSWER", ""))
        return json.dumps({"claims": "not a list" if broken else claims})
    if "check numbered claims" in system:
        claims = re.findall(r"^\((\d+)\) (.*)$", data.get("CLAIMS", ""), re.M)
        verdicts = [
            {"index": int(i), "reason": "word overlap", "verdict": "supported" if _supported(c, data["EVIDENCE"]) else "not_supported"}
            for i, c in claims
        ]  # fmt: skip
        if broken_verify:
            verdicts = verdicts[1:]  # one claim left without a verdict
        return json.dumps({"verdicts": verdicts})
    if "one retrieved chunk" in system:
        answer = data.get("REFERENCE", data.get("RESPONSE", ""))
        useful = len(content_words(data.get("CHUNK", "")) & content_words(answer)) >= 2
        return json.dumps(
            {"reason": "shared words", "verdict": "maybe" if broken else ("useful" if useful else "not_useful")}
        )
    if "statement by statement" in system:
        statements = [
            {"statement": s, "reason": "word overlap", "attributed": _supported(s, data.get("CONTEXT", ""))}
            for s in _sentences(data.get("REFERENCE", ""))
        ]
        return json.dumps({"statements": statements})
    if "write the questions it answers" in system:
        answer = data.get("ANSWER", "")
        n = int(
            re.search(r"Write (\d+) question", " ".join(m["content"] for m in messages if m["role"] == "user")).group(1)
        )
        words = [w for w in _WORD.findall(answer.lower()) if len(w) >= 4]
        questions = [f"What about {' '.join(words[k : k + 3])}?" for k in range(n)]
        return json.dumps({"questions": [] if broken else questions, "noncommittal": "not sure" in answer.lower()})
    if "You check citations" in system:
        items = re.findall(r"^\((\d+)\) sentence: (.*)\n    cites chunk [^:]+: (.*)$", data.get("CITATIONS", ""), re.M)
        verdicts = [
            {"index": int(i), "reason": "word overlap", "verdict": "supports" if _supported(s, c) else "does_not_support"}
            for i, s, c in items
        ]  # fmt: skip
        return json.dumps({"verdicts": verdicts[:-1] if broken else verdicts})
    if "You review what an AI agent did" in system:  # conversation rubrics (tool-use quality)
        ids = re.findall(r"^\[([a-z_]+)\] ", data.get("RUBRICS", ""), re.M)
        shown = " ".join(data.values())
        verdicts = [
            {"id": rid, "reasoning": "scripted", "verdict": "no" if f"[[fail-{rid}]]" in shown else "yes"}
            for rid in ids
        ]
        return json.dumps({"verdicts": "broken" if broken else verdicts})
    return json.dumps({"reasoning": "not a RAG step", "score": 1.0, "pass": True})


def respond(body: Any) -> str:
    """The server's responder: the reply text for a chat-completions body."""
    return respond_messages(body.get("messages") or [])


def judge(request: Any) -> str:
    """A ``python:`` judge over a JudgeRequest."""
    return respond_messages([{"role": m.role, "content": m.content} for m in request.messages])


def embed_one(text: str, dims: int = 64) -> list[float]:
    vector = [0.0] * dims
    for word in _WORD.findall(text.lower()):
        h = int(hashlib.sha256(word.encode()).hexdigest()[:8], 16)
        vector[h % dims] += 1.0 if (h >> 8) & 1 else -1.0
    if not any(vector):
        vector[0] = 1.0
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def embed(texts: list[str]) -> list[list[float]]:
    """A ``python:`` embedding function."""
    return [embed_one(t) for t in texts]
