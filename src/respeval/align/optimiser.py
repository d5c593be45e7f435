"""The optimiser: which judge prompt to freeze, chosen on the train split alone.

No model is trained; only the prompt changes.  The search (documented in docs/aligning.md):

1. **Candidate 0** is the judge as given (its spec's own examples and guidelines, if any).
2. **Few-shot sets**: candidates 1..N each show ``shots`` examples drawn from the train
   rows, stratified (labels in turn, each label's rows in an order drawn from
   ``numpy.random.default_rng([seed, i])``), so every set covers the labels evenly.
3. **Scoring**: every candidate judges every train row except its own examples (a judge is
   never scored on a row it was shown).  The score is balanced accuracy against the human
   labels (an unscored verdict counts as wrong), then Cohen's kappa, to break ties.
4. **Choice**: the best score; ties go to fewer examples, then the earlier candidate, so the
   judge as given stays unless something beats it.
5. **Guideline rewriting** (optional, with a rewriter model): the chosen candidate's train
   disagreements (at most ``max_disagreements``, each row's values, the human's and the judge's
   answer and the judge's reasoning) go to the rewriter, which answers new guidelines; the
   candidate with them is scored like the others and kept only if it scores higher.  Repeated
   ``rewrite_rounds`` times.

Everything it reads is the :class:`~respeval.align.split.LabelledRow` s it is given: the
caller hands it the train split and nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from respeval.align.split import LabelledRow
from respeval.errors import RespevalError
from respeval.judge.cache import JudgeCache
from respeval.judge.data import InsertedData
from respeval.judge.engine import EngineOptions, budget_left
from respeval.judge.methods.base import first_request, reask_for_json
from respeval.judge.methods.prompts import DATA_RULE, text_value
from respeval.judge.methods.templates import Example, LabelSet, PointwiseMetric
from respeval.judge.models.base import Capabilities, Completion, JsonSchema, JudgeModel, JudgeRequest, strict_object
from respeval.judge.parsing import Parsed, ParseFailure, extract_verdict
from respeval.judge.run import arun
from respeval.validate.agreement import agreement

__all__ = [
    "UNSCORED",
    "AlignmentStopped",
    "Candidate",
    "GuidelineRewrite",
    "JudgeSession",
    "OptimiserOptions",
    "TrainScore",
    "judge_answers",
    "optimise",
    "with_prompt",
]

UNSCORED = "<unscored>"
"""The answer recorded for a row the judge left unscored (it matches no human label)."""


class AlignmentStopped(RespevalError, RuntimeError):
    """The judge stopped before every row was judged (the budget, an interrupt, a model
    error): no number is reported from a part of the rows.  ``stop_kind`` is the engine's;
    the answers received are in the cache, so a rerun with the same cache resumes."""

    def __init__(self, reason: str, stop_kind: str | None) -> None:
        super().__init__(reason)
        self.stop_kind = stop_kind


@dataclass(frozen=True)
class OptimiserOptions:
    """The search's settings (see the module docstring).

    Attributes:
        candidates: few-shot sets tried besides the judge as given (0: none).
        shots: examples per few-shot set.
        rewrite_rounds: guideline rewrites tried (needs a rewriter model).
        max_disagreements: train disagreements shown to the rewriter per round.
        seed: seeds the draws of the few-shot sets.
    """

    candidates: int = 8
    shots: int = 4
    rewrite_rounds: int = 1
    max_disagreements: int = 8
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("candidates", "rewrite_rounds", "max_disagreements"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be 0 or more, got {getattr(self, name)}")
        if self.shots < 1:
            raise ValueError(f"shots must be at least 1, got {self.shots}")


@dataclass(frozen=True)
class TrainScore:
    """A candidate's agreement with the human labels on the train rows it judged."""

    rows: int
    unscored: int
    balanced_accuracy: float
    macro_f1: float
    cohen_kappa: float

    def key(self) -> tuple[float, float]:
        kappa = self.cohen_kappa
        return (self.balanced_accuracy, -math.inf if math.isnan(kappa) else kappa)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "unscored": self.unscored,
            "balanced_accuracy": self.balanced_accuracy,
            "balanced_f1": self.macro_f1,
            "cohen_kappa": None if math.isnan(self.cohen_kappa) else self.cohen_kappa,
        }


@dataclass
class Candidate:
    """One prompt the optimiser tried: where it came from, its examples (with the train rows
    they came from) and guidelines, and its train score."""

    index: int
    origin: str  # "spec", "few-shot" or "rewrite"
    metric: PointwiseMetric
    example_rows: tuple[int, ...]
    score: TrainScore | None = None
    disagreements: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "origin": self.origin,
            "examples": [e.id for e in self.metric.examples],
            "example_rows": list(self.example_rows),
            "guidelines": self.metric.guidelines,
            "train": self.score.to_dict() if self.score else None,
        }


def with_prompt(
    metric: PointwiseMetric, *, examples: Sequence[Example] | None = None, guidelines: str | None = None
) -> PointwiseMetric:
    """``metric`` with other examples and/or guidelines (everything else the same)."""
    contract = metric.contract
    kwargs: dict[str, Any] = {}
    if isinstance(contract, LabelSet):
        kwargs["labels"] = list(contract.labels)
        kwargs["passing"] = list(contract.passing) or None
    else:
        kwargs["score_range"] = contract
    return PointwiseMetric(
        metric.name,
        metric.template,
        system_instruction=metric.system_instruction,
        criteria=metric.criteria,
        rating_rubric=metric.rating_rubric,
        threshold=metric.threshold,
        pass_when=metric.pass_when,
        max_tokens=metric.max_tokens,
        seed=metric.seed,
        description=metric.description,
        examples=metric.examples if examples is None else examples,
        guidelines=metric.guidelines if guidelines is None else guidelines,
        **kwargs,
    )


def example_of(metric: PointwiseMetric, row: LabelledRow) -> Example:
    """A train row as an example of ``metric``'s prompt."""
    return Example(metric.template.values(row.record), row.label, row.record.get("id", row.row))


def answer_of(metric: PointwiseMetric, verdict: Mapping[str, Any] | None) -> Any:
    """The judge's answer in a verdict (its label, or its score), or :data:`UNSCORED`."""
    if verdict is None:
        return UNSCORED
    value = verdict.get(metric.answer_key)
    if value is None:
        return UNSCORED
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class JudgeSession:
    """The engine runs of one alignment: one cache, and one budget shared by every run (each
    run may spend only what the earlier ones left)."""

    def __init__(self, cache: JudgeCache | None, options: EngineOptions | None) -> None:
        self.cache = cache
        self.options = options

    async def run(self, records: Sequence[Mapping[str, Any]], model: JudgeModel, method: Any) -> Any:
        result = await arun(records, model, method=method, cache=self.cache, options=self.options)
        self.options = budget_left(self.options, result.spend)
        return result


async def judge_answers(
    metric: PointwiseMetric, rows: Sequence[Any], model: JudgeModel, session: JudgeSession
) -> tuple[list[Any], list[str]]:
    """The judge's answers (:data:`UNSCORED` where it gave none) and reasonings for
    ``rows`` (each with a ``record``), in order.  Raises :class:`AlignmentStopped` when the
    judge stopped before every row was judged."""
    if not rows:
        return [], []
    result = await session.run([r.record for r in rows], model, metric)
    if not result.completed:
        done = len(rows) - len(result.not_run)
        raise AlignmentStopped(
            f"the judge stopped after {done} of {len(rows)} rows ({result.stop_reason or 'stopped'}); no number is "
            "reported from part of the rows: rerun with the same --cache to resume (answers received are not paid "
            "for again)",
            result.stop_kind,
        )
    by_row = {r.row: r for r in result.rows}
    answers, reasons = [], []
    for i in range(len(rows)):
        got = by_row.get(i)
        verdict = got.verdict if got is not None and got.scored else None
        answers.append(answer_of(metric, verdict))
        reasons.append(
            str((verdict or {}).get("reasoning") or "")
            if verdict
            else (got.unscored_reason or "" if got else "not judged")
        )
    return answers, reasons


def _train_score(answers: Sequence[Any], labels: Sequence[Any]) -> TrainScore:
    judged = [str(a) for a in answers]
    human = [str(h) for h in labels]
    a = agreement(judged, human, labels=sorted(set(judged) | set(human)))
    return TrainScore(
        rows=len(answers),
        unscored=sum(x == UNSCORED for x in answers),
        balanced_accuracy=a.balanced_accuracy,
        macro_f1=_macro_f1_over_human_labels(a, set(human)),
        cohen_kappa=a.cohen_kappa,
    )


def _macro_f1_over_human_labels(a: Any, human: set[str]) -> float:
    """Macro F1 over the labels humans used (an unscored answer is not a class)."""
    f1s = [c.f1 for label, c in a.per_class.items() if label in human]
    return float(np.mean(f1s)) if f1s else math.nan


def _few_shot_rows(train: Sequence[LabelledRow], shots: int, seed: int, index: int) -> list[int]:
    """Positions in ``train`` of one stratified few-shot set (see the module docstring)."""
    rng = np.random.default_rng([seed, index])
    classes = sorted({str(r.label) for r in train})
    queues = {}
    for label in classes:
        members = [i for i, r in enumerate(train) if str(r.label) == label]
        queues[label] = [members[j] for j in rng.permutation(len(members))]
    picked: list[int] = []
    while len(picked) < min(shots, len(train) - 1):
        progressed = False
        for label in classes:
            if queues[label] and len(picked) < shots:
                picked.append(queues[label].pop(0))
                progressed = True
        if not progressed:
            break
    return picked


async def _score(
    candidate: Candidate, train: Sequence[LabelledRow], model: JudgeModel, session: JudgeSession, max_disagreements: int
) -> None:
    shown = set(candidate.example_rows)
    rows = [r for r in train if r.row not in shown]
    answers, reasons = await judge_answers(candidate.metric, rows, model, session)
    labels = [r.label for r in rows]
    candidate.score = _train_score(answers, labels)
    candidate.disagreements = [
        {"values": dict(candidate.metric.template.values(r.record)), "human": h, "judge": a, "reasoning": why}
        for r, a, h, why in zip(rows, answers, labels, reasons)
        if str(a) != str(h)
    ][:max_disagreements]


async def optimise(
    metric: PointwiseMetric,
    train: Sequence[LabelledRow],
    model: JudgeModel,
    *,
    options: OptimiserOptions = OptimiserOptions(),
    rewriter: JudgeModel | None = None,
    session: JudgeSession | None = None,
) -> tuple[Candidate, list[Candidate]]:
    """The chosen candidate and every candidate tried, scored on ``train`` only (see the
    module docstring); ``session``: the cache and engine options (default: none)."""
    session = session or JudgeSession(None, None)
    if len(train) < 2:
        raise ValueError(f"the optimiser needs at least 2 train rows, got {len(train)}")
    candidates = [Candidate(0, "spec", metric, ())]
    seen: set[tuple[int, ...]] = set()
    for i in range(1, options.candidates + 1):
        picked = _few_shot_rows(train, options.shots, options.seed, i)
        rows = tuple(train[j].row for j in picked)
        if tuple(sorted(rows)) in seen:  # the same set drawn twice: judge it once
            continue
        seen.add(tuple(sorted(rows)))
        examples = [example_of(metric, train[j]) for j in picked]
        candidates.append(Candidate(len(candidates), "few-shot", with_prompt(metric, examples=examples), rows))
    for c in candidates:
        await _score(c, train, model, session, options.max_disagreements)
    best = _best(candidates)
    if rewriter is not None:
        for _ in range(options.rewrite_rounds):
            if not best.disagreements:
                break
            guidelines = await _rewrite(best, rewriter, session)
            if guidelines is None:
                break
            c = Candidate(
                len(candidates), "rewrite", with_prompt(best.metric, guidelines=guidelines), best.example_rows
            )
            await _score(c, train, model, session, options.max_disagreements)
            candidates.append(c)
            best = _best(candidates)
    return best, candidates


def _best(candidates: Sequence[Candidate]) -> Candidate:
    def key(c: Candidate) -> tuple[float, float, int, int]:
        assert c.score is not None
        ba, kappa = c.score.key()
        return (ba, kappa, -len(c.metric.examples), -c.index)

    return max(candidates, key=key)


# --------------------------------------------------------------------------- rewriting

_REWRITE_SYSTEM = f"""\
You improve the guidelines of an LLM judge. The judge grades data against the task below; on \
the rows shown it disagreed with the people who graded them. Write guidelines that would make \
the judge grade as the people did: general rules, not notes about these rows, in at most ten \
short bullet points. Keep what the current guidelines get right.

{DATA_RULE}

Reply with one JSON object and nothing else:
{{"reasoning": "<one or two sentences>", "guidelines": "<the new guidelines>"}}"""

_REWRITE_SHAPE = '{"reasoning": "<one or two sentences>", "guidelines": "<the new guidelines>"}'
_REWRITE_SCHEMA = JsonSchema(
    "guidelines", strict_object({"reasoning": {"type": "string"}, "guidelines": {"type": "string"}})
)


@dataclass(frozen=True)
class RewriteItem:
    task: str
    guidelines: str
    disagreements: tuple[tuple[str, str], ...]  # (label, text) of each fenced block


@dataclass(frozen=True)
class RewriteVerdict:
    guidelines: str


class GuidelineRewrite:
    """The rewriter's method: the judge's task, its guidelines and its train disagreements
    in, ``{"guidelines": ...}`` out (one request, through the one engine)."""

    name = "guideline-rewrite"
    template_version = "align-guideline-rewrite/v1"
    fields = ("task", "guidelines", "disagreements")
    verdict_fields = ("guidelines", "pass")

    def signature(self) -> str:
        return self.template_version

    def item(self, record: Mapping[str, Any]) -> RewriteItem:
        return RewriteItem(str(record["task"]), str(record["guidelines"]), tuple(record["disagreements"]))

    def data(self, item: RewriteItem) -> InsertedData:
        return InsertedData.of(list(item.disagreements))

    def build(self, item: RewriteItem, capabilities: Capabilities) -> JudgeRequest:
        data = self.data(item)
        user = "\n\n".join(
            [
                f"The judge's task:\n{item.task}",
                f"The current guidelines:\n{item.guidelines or '(none)'}",
                "The rows it got wrong:",
                *data.blocks(),
                "Reply with the JSON object only.",
            ]
        )
        return first_request(
            _REWRITE_SYSTEM,
            user,
            capabilities,
            seed=None,
            max_tokens=1024,
            schema=_REWRITE_SCHEMA,
            template_version=self.template_version,
        )

    def parse(self, item: RewriteItem, completion: Completion) -> Parsed[RewriteVerdict] | ParseFailure:
        return extract_verdict(
            completion,
            looks_like=lambda obj: "guidelines" in obj,
            validate=_guidelines,
            same=lambda a, b: a == b,
            data=self.data(item),
        )

    def reask(
        self, item: RewriteItem, request: JudgeRequest, completion: Completion, failure: ParseFailure
    ) -> JudgeRequest:
        return reask_for_json(request, completion, failure, _REWRITE_SHAPE)

    def row_fields(self, verdict: RewriteVerdict) -> dict[str, Any]:
        return {"guidelines": verdict.guidelines, "pass": True}


def _guidelines(obj: Mapping[str, Any]) -> RewriteVerdict | str:
    value = obj.get("guidelines")
    if not isinstance(value, str) or not value.strip():
        return "guidelines must be non-empty text"
    return RewriteVerdict(value.strip())


async def _rewrite(best: Candidate, rewriter: JudgeModel, session: JudgeSession) -> str | None:
    metric = best.metric
    task = metric.template.text
    if metric.criteria:
        task += "\n\nCriteria:\n" + "\n".join(f"- {k}: {v}" for k, v in metric.criteria.items())
    blocks = []
    for i, d in enumerate(best.disagreements, 1):
        shown = {
            **d["values"],
            "person's grade": d["human"],
            "judge's grade": d["judge"],
            "judge's reasoning": d["reasoning"],
        }
        blocks.append((f"ROW {i}", text_value(shown)))
    record = {"task": task, "guidelines": metric.guidelines or "", "disagreements": blocks}
    result = await session.run([record], rewriter, GuidelineRewrite())
    if not result.completed:
        raise AlignmentStopped(
            f"the rewriter stopped ({result.stop_reason or 'stopped'}): rerun with the same --cache to resume",
            result.stop_kind,
        )
    row = result.rows[0] if result.rows else None
    if row is None or not row.scored or not row.verdict:
        return None
    text = row.verdict.get("guidelines")
    return text if isinstance(text, str) and text.strip() else None
