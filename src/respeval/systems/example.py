"""The deterministic toy model of ``respeval run --example``: a system under test that ships
with respeval and needs no network.

:func:`toy_model` follows the agent contract (:mod:`respeval.systems.base`): it reads the
question out of the prompt (the ``{question}`` value, fenced as data, or the whole prompt)
and answers from its "knowledge", the answers of the shipped dataset
(``respeval/data/run_example.jsonl``), with two deterministic flaws a better prompt should
fix or expose:

* asked plainly, it wraps about half of its answers in a sentence ("The answer is Paris."),
  chosen by a hash of the question, so an exact-match metric misses them;
* told to give only the answer (the system instruction or the prompt says "only the
  answer"), it answers with the bare answer, but cuts answers of three words or more to
  their last word ("Leonardo da Vinci" becomes "Vinci"): the new prompt fixes many cases
  and breaks a few;
* either way, it gets a fixed twelfth of the questions wrong (another question's answer).

So the candidate prompt of the example improves exact match overall, regresses a few cases,
and leaves a few wrong under both prompts: a comparison with a clear decision and some noise.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from importlib import resources
from typing import Any

__all__ = ["BASELINE_INSTRUCTION", "CANDIDATE_INSTRUCTION", "EXAMPLE_TEMPLATE", "dataset_path", "toy_model", "toy_user"]

EXAMPLE_TEMPLATE = "Q: {question}"
BASELINE_INSTRUCTION = "You are a helpful assistant. Answer the question."
CANDIDATE_INSTRUCTION = "You are a helpful assistant. Reply with only the answer: no sentence, no full stop."

_FENCED = re.compile(r"\[QUESTION ([0-9a-f]+)\]\n(.*?)\n\[/QUESTION \1\]", re.S)


def dataset_path() -> str:
    """The shipped questions (``id``, ``question``, ``expected``)."""
    return str(resources.files("respeval.data").joinpath("run_example.jsonl"))


@functools.lru_cache(maxsize=1)
def _knowledge() -> tuple[dict[str, str], tuple[str, ...]]:
    with open(dataset_path(), encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    facts = {row["question"].strip().lower(): row["expected"] for row in rows}
    return facts, tuple(row["expected"] for row in rows)


def _draw(text: str, salt: str) -> int:
    return int(hashlib.sha256(f"{salt}:{text}".encode()).hexdigest()[:8], 16)


def _tokens(text: str) -> int:
    return len(text) // 4 + 1


def toy_model(request: dict[str, Any]) -> dict[str, Any]:
    """One answer (see the module docstring), with usage estimated at 4 characters a token."""
    prompt = str(request.get("prompt") or "")
    instruction = str(request.get("system_instruction") or "")
    found = _FENCED.search(prompt)
    question = (found.group(2) if found else prompt).strip()
    facts, answers = _knowledge()
    key = question.lower()
    answer = facts.get(key)
    if answer is None:
        text = "I do not know."
    else:
        if _draw(key, "wrong") % 12 == 0:  # a fixed twelfth answered wrong, whatever the prompt
            answer = answers[(_draw(key, "other") % (len(answers) - 1) + answers.index(answer) + 1) % len(answers)]
        terse = "only the answer" in (instruction + "\n" + prompt).lower()
        if terse:
            words = answer.split()
            text = words[-1] if len(words) >= 3 else answer
        else:
            text = answer if _draw(key, "style") % 2 else f"The answer is {answer}."
    sent = instruction + prompt
    return {"response": text, "usage": {"tokens_in": _tokens(sent), "tokens_out": _tokens(text)}}


_STOP_RULE = re.compile(r"reply with exactly (.+?) and nothing else")
_SCENARIO = re.compile(r"Your scenario \(what you want\):\n(.*?)\n\nWhen your goal", re.S)
_ANY_FENCE = re.compile(r"\n?\[([A-Z0-9_]+) [0-9a-f]+\]\n(.*?)\n\[/\1 [0-9a-f]+\]\n?", re.S)


def toy_user(request: dict[str, Any]) -> dict[str, Any]:
    """A deterministic user simulator for ``respeval run --simulator`` (no network): its
    scenario lists questions, one per line starting ``- `` (fenced template values are
    read too); it asks them one at a time, then replies with the stop phrase."""
    instruction = str(request.get("system_instruction") or "")
    found = _SCENARIO.search(instruction)
    scenario = _ANY_FENCE.sub(lambda m: m.group(2), found.group(1) if found else "")
    questions = [line[2:].strip() for line in scenario.splitlines() if line.startswith("- ") and line[2:].strip()]
    stop = _STOP_RULE.search(instruction)
    asked = sum(1 for m in request.get("messages") or [] if m.get("role") == "assistant")
    text = questions[asked] if asked < len(questions) else (stop.group(1) if stop else "###STOP###")
    return {"response": text, "usage": {"tokens_in": _tokens(instruction), "tokens_out": _tokens(text)}}
