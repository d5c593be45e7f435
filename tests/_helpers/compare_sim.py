"""Seeded baseline/candidate response sets and a noisy fake pairwise judge, for the tests and
the benchmark of ``respeval compare`` (issue 30, acceptance 3).

Every case has a reference answer.  A *system* knows the answer to 70% of the cases (the same
ones for every draw of that system) and, like a model sampled at a temperature, gets a case
right with probability ``1 - flip`` when it knows it and ``flip`` when it does not.

* ``identical``: the candidate is the same system as the baseline, drawn again: the null
  hypothesis holds exactly, and every difference is noise.
* ``regression``: the same, but on a random ``planted`` share of the cases (8%) the candidate
  answers wrongly where the baseline answers right.

The judge (:func:`noisy_judge`) prefers the correct output when exactly one of the two is
correct (it errs with probability ``judge_error``), picks the output shown first with
probability ``position_bias`` whatever it reads, and otherwise flips a coin between a, b and
tie: a judge that cannot tell two equally good answers apart.  Its answers are a function of
the request and ``seed``, so a rerun is the same run.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

KNOWN = 0.7
FLIP = 0.05
PLANTED = 0.08
_CORRECT = "the answer is"
_OUTPUTS = re.compile(r"\[OUTPUT \((?:a|b)\) \w+\]\n(.*?)\n\[/OUTPUT", re.S)


def reference(i: int) -> str:
    return f"{_CORRECT} {i * 7919 % 1000} {['red', 'green', 'blue', 'amber'][i % 4]}"


def _wrong(i: int, draw: int) -> str:
    return f"perhaps it is {(i * 31 + draw) % 1000} {['grey', 'pink', 'teal'][draw % 3]}"


def responses(n: int, scenario: str, seed: int) -> list[dict[str, Any]]:
    """One ``respeval run``-shaped table: a baseline and a candidate row per case."""
    if scenario not in ("identical", "regression"):
        raise ValueError(scenario)
    rng = random.Random(f"{seed}:{scenario}")
    known = [rng.random() < KNOWN for _ in range(n)]
    planted = set(rng.sample(range(n), round(PLANTED * n))) if scenario == "regression" else set()
    rows = []
    for i in range(n):
        ref = reference(i)
        answers = []
        for draw in range(2):
            correct = (rng.random() >= FLIP) if known[i] else (rng.random() < FLIP)
            if i in planted:
                correct = draw == 0  # the baseline right, the candidate wrong
            answers.append(ref if correct else _wrong(i, draw + 1))
        for system, answer in zip(("baseline", "candidate"), answers):
            rows.append({"id": i, "system": system, "prompt": f"Question {i}?", "expected": ref, "response": answer})
    return rows


def noisy_judge(seed: int = 0, *, judge_error: float = 0.05, position_bias: float = 0.1, tie: float = 0.4) -> Any:
    """A ``FakeModel`` function: a pairwise verdict for a request (see the module docstring)."""

    def answer(request: Any) -> str:
        text = request.messages[-1].content
        first, second = _OUTPUTS.findall(text)[:2]
        digest = hashlib.sha256(f"{seed}:{text}".encode()).digest()
        u = [int.from_bytes(digest[k : k + 4], "little") / 2**32 for k in (0, 4, 8)]
        good_a, good_b = first.startswith(_CORRECT), second.startswith(_CORRECT)
        if u[0] < position_bias:
            winner = "a"
        elif good_a != good_b:
            right = "a" if good_a else "b"
            winner = right if u[1] >= judge_error else ("b" if right == "a" else "a")
        else:
            winner = "tie" if u[1] < tie else ("a" if u[2] < 0.5 else "b")
        return json.dumps({"reasoning": "simulated judge", "winner": winner})

    return answer


judge = noisy_judge(0)
"""The judge with its default dials, for ``--judge python:_helpers.compare_sim:judge``."""
