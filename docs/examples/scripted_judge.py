"""A deterministic stand-in judge for the examples in docs/judging.md (no network, no key).

Use it as ``--model python:docs.examples.scripted_judge:judge`` from the project root.  It
answers every respeval method in its reply format, from simple rules on the fenced texts,
so the commands show real output; swap in ``openai:MODEL`` for a real judge.
"""

from __future__ import annotations

import re
from typing import Any

_BLOCK = re.compile(r"\[(?P<label>[A-Z ()ab]+) (?P<code>[0-9a-f]{10})\]\n(?P<text>.*?)\n\[/(?P=label) (?P=code)\]",
                    re.S)


def blocks(request: Any) -> dict[str, str]:
    """The fenced data blocks of the last user message, by label."""
    user = request.messages[-1].content if request.messages[-1].role == "user" else request.messages[1].content
    return {m.group("label"): m.group("text") for m in _BLOCK.finditer(user)}


def judge(request: Any) -> dict[str, Any]:
    data = blocks(request)
    version = request.template_version
    if version.startswith("pairwise"):
        first, second = data.get("OUTPUT (a)", ""), data.get("OUTPUT (b)", "")
        # prefers the more specific answer: more distinct words, ties when equal
        a, b = len(set(first.lower().split())), len(set(second.lower().split()))
        return {"reasoning": "the more specific output", "winner": "a" if a > b else "b" if b > a else "tie"}
    if version.startswith("rubric-generation"):
        return {"criteria": [
            {"id": "answers_question", "description": "The response answers the question asked.", "importance": "HIGH"},
            {"id": "concise", "description": "The response is at most two sentences long.", "importance": "LOW"}]}
    if version.startswith("rubric-verdicts"):
        response = data.get("RESPONSE", "")
        ids = re.findall(r"^- (\S+) \[", request.messages[1].content, re.M)
        return {"verdicts": [{"id": cid, "reasoning": "rule", "pass": bool(response.strip()) and
                              (cid != "concise" or response.count(".") <= 2)} for cid in ids]}
    reference = data.get("REFERENCE", "").lower()
    candidate = data.get("CANDIDATE", "").lower()
    ok = bool(reference) and reference.strip(" .") in candidate
    return {"reasoning": "reference contained" if ok else "reference missing", "score": 1.0 if ok else 0.0, "pass": ok}
