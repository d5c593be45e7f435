"""Real recorded judgments, replayed: LLMBar's pairwise instances and its judges' verdicts.

LLMBar (Zeng et al., 2023, https://github.com/princeton-nlp/LLMBar, MIT licence) publishes,
per judge and prompting strategy, ``result.json``: every instance ``{input, output_1,
output_2, label}`` with the judge's reply in both orders (``swap = False``: output_1 shown
as Output (a); ``swap = True``: output_2 shown first), and ``statistics.json`` with the
accuracy and agreement it computed from them.

:func:`replay_model` turns those records into a judge: for each instance and order, the
request respeval's :class:`~respeval.judge.methods.pairwise.Pairwise` method builds is stored with
the recorded reply in an in-memory :class:`~respeval.judge.cache.JudgeCache`, and a
:class:`~respeval.judge.models.replay.ReplayModel` answers from it.  Running the pairwise method
end to end on that model (``output_1`` as the baseline A, ``output_2`` as the candidate
B) goes through the real prompt building, engine, parsing and pair logic, and
:func:`llmbar_statistics` recomputes LLMBar's figures from respeval's per-order verdicts.

LLMBar's conventions, reproduced by :func:`llmbar_statistics`: an unparseable reply
(winner ``None``) counts as wrong; ``equal`` counts two unparseable orders as equal;
``kappa_agreement`` is Cohen's kappa between the orders *after mapping every winner other
than "1" (including None) to one class*, as LLMBar's code does.  respeval's own
:class:`~respeval.judge.methods.pairwise.PairwiseReport` is stricter (a pair with an unparseable
order is unscored, and consistency is over pairs with both orders scored).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from respeval.judge.cache import JudgeCache, cache_key
from respeval.judge.errors import FatalError
from respeval.judge.methods.pairwise import Pairwise, PairwiseReport
from respeval.judge.models.base import BaseJudgeModel, Capabilities, Completion, JudgeRequest
from respeval.judge.models.replay import ReplayModel

__all__ = [
    "EXAMPLE_EVALUATOR",
    "LLMBarInstance",
    "RecordedJudge",
    "example_instances",
    "llmbar_statistics",
    "load_instances",
    "load_statistics",
    "replay_model",
    "to_pairs",
]

SWAP = {"ab": "swap = False", "ba": "swap = True"}
EXAMPLE_EVALUATOR = "LLMBar/Natural GPT-4/Vanilla"
EXAMPLE_PATH = Path(__file__).resolve().parents[2] / "data" / "llmbar_example.jsonl"
_CAPABILITIES = Capabilities(temperature=True, seed=False, n=False, logprobs=False, json_schema=False)


@dataclass(frozen=True)
class LLMBarInstance:
    """One LLMBar instance with its judge's recorded reply per order (``ab``/``ba``) and the
    winner LLMBar parsed from it (``"1"``, ``"2"`` or None)."""

    id: Any
    input: str
    output_1: str
    output_2: str
    label: int
    replies: Mapping[str, Completion]
    winners: Mapping[str, str | None]


def _instance(i: int, raw: Mapping[str, Any]) -> LLMBarInstance:
    if len(raw.get("results") or []) != 1:
        raise ValueError(f"instance {i}: expected one entry in 'results', got {len(raw.get('results') or [])}")
    result = raw["results"][0]
    replies, winners = {}, {}
    for orientation, key in SWAP.items():
        if key not in result:
            raise ValueError(f"instance {i}: no {key!r} record")
        text, finish = result[key]["completion"]
        replies[orientation] = Completion(text=text, finish_reason=finish)
        winners[orientation] = result[key]["winner"]
    if raw["label"] not in (1, 2):
        raise ValueError(f"instance {i}: label must be 1 or 2, got {raw['label']!r}")
    return LLMBarInstance(
        raw.get("id", i), raw["input"], raw["output_1"], raw["output_2"], raw["label"], replies, winners
    )


def load_instances(path: str | os.PathLike[str]) -> list[LLMBarInstance]:
    """An LLMBar ``result.json`` (a JSON list), or the JSONL sample shipped with respeval."""
    text = Path(path).read_text(encoding="utf-8")
    raws = (
        json.loads(text)
        if text.lstrip().startswith("[")
        else [json.loads(line) for line in text.splitlines() if line.strip()]
    )
    return [_instance(i, raw) for i, raw in enumerate(raws)]


def load_statistics(path: str | os.PathLike[str]) -> dict[str, Any]:
    """LLMBar's published ``statistics.json``."""
    data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return data


def example_instances() -> list[LLMBarInstance]:
    """The sample shipped with respeval: 40 instances of LLMBar's Natural set with GPT-4's
    recorded replies (Vanilla prompt), under LLMBar's MIT licence (``data/LICENSE.LLMBar``)."""
    return load_instances(EXAMPLE_PATH)


def to_pairs(instances: Iterable[LLMBarInstance]) -> list[dict[str, Any]]:
    """Pairwise records: ``baseline_model_response`` = output_1 (A), ``response`` =
    output_2 (B), and the human ``label`` as ``A``/``B``."""
    return [
        {
            "id": inst.id,
            "prompt": inst.input,
            "baseline_model_response": inst.output_1,
            "response": inst.output_2,
            "label": "A" if inst.label == 1 else "B",
        }
        for inst in instances
    ]


class RecordedJudge(BaseJudgeModel):
    """Stands for the judge whose replies were recorded (its identity keys the replay
    cache); it cannot be called."""

    provider = "llmbar"

    def __init__(self, evaluator: str) -> None:
        super().__init__(evaluator, capabilities=_CAPABILITIES)

    async def generate(self, request: JudgeRequest) -> Completion:
        raise FatalError(f"{self.model_id} is a recorded judge: it answers only through replay_model()")


def replay_model(
    instances: Sequence[LLMBarInstance],
    evaluator: str,
    *,
    method: Pairwise | None = None,
    cache: JudgeCache | None = None,
) -> ReplayModel:
    """A model answering each order of each instance with the recorded reply (see the
    module docstring).  Run it with ``EngineOptions(reask=False)``: there is one recorded
    reply per order, so a re-ask after an unparseable one could only miss."""
    judge = RecordedJudge(evaluator)
    method = method or Pairwise()
    store = cache if cache is not None else JudgeCache(":memory:")
    identity = judge.identity()
    for record, inst in zip(to_pairs(instances), instances):
        for orientation in SWAP:
            item = method.item(
                {
                    "prompt": record["prompt"],
                    "response_a": record["baseline_model_response"],
                    "response_b": record["response"],
                    "orientation": orientation,
                }
            )
            request = method.build(item, judge.capabilities)
            store.put(
                cache_key(identity, request),
                inst.replies[orientation],
                model=judge.model_id,
                endpoint="",
                template_version=request.template_version,
            )
    return ReplayModel(store, like=judge)


# --------------------------------------------------------------------------- LLMBar's figures


def _as_llmbar(winner: str | None) -> str | None:
    return {"A": "1", "B": "2"}.get(winner or "")


def _kappa(a: Sequence[int], b: Sequence[int]) -> float:
    """Cohen's kappa, computed as scikit-learn's ``cohen_kappa_score`` does (same float
    operations, so the published values are matched to the last bit)."""
    labels = sorted(set(a) | set(b))
    pos = {label: i for i, label in enumerate(labels)}
    confusion = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for x, y in zip(a, b):
        confusion[pos[x], pos[y]] += 1
    sum0 = np.sum(confusion, axis=0)
    sum1 = np.sum(confusion, axis=1)
    expected = np.outer(sum0, sum1) / np.sum(sum0)
    weights = np.ones([len(labels), len(labels)], dtype=int)
    weights.flat[:: len(labels) + 1] = 0
    return float(1 - np.sum(weights * confusion) / np.sum(weights * expected))


def _ratio(k: int, n: int) -> str:
    return f"{k} / {n} = {k / n * 100}%"


def llmbar_statistics(report: PairwiseReport, labels: Sequence[str]) -> dict[str, Any]:
    """LLMBar's ``statistics.json`` figures (accuracy per order, average, both, ``equal``
    and ``kappa_agreement``), recomputed from respeval's per-order verdicts; ``labels``
    are ``A``/``B`` per pair.  Needs ``flip="both"``."""
    if report.flip != "both":
        raise ValueError("LLMBar's statistics need both orders (flip='both')")
    n = len(report.pairs)
    if n == 0 or len(labels) != n:
        raise ValueError(f"expected one label per pair ({n} pairs), got {len(labels)}")
    ab = [_as_llmbar(p.winners.get("ab")) for p in report.pairs]
    ba = [_as_llmbar(p.winners.get("ba")) for p in report.pairs]
    gold = [_as_llmbar(label) for label in labels]
    correct_ab = sum(w == g for w, g in zip(ab, gold))
    correct_ba = sum(w == g for w, g in zip(ba, gold))
    both = sum(x == g and y == g for x, y, g in zip(ab, ba, gold))
    equal = sum(x == y for x, y in zip(ab, ba))
    return {
        "correct_False": _ratio(correct_ab, n),
        "correct_True": _ratio(correct_ba, n),
        "correct_average": f"{(correct_ab + correct_ba) / (2 * n) * 100}%",
        "correct_both": _ratio(both, n),
        "equal": _ratio(equal, n),
        "kappa_agreement": _kappa([int(x == "1") for x in ab], [int(y == "1") for y in ba]),
    }
