"""Multi-sampling: ask the judge K separate times per item and aggregate the verdicts.

The engine judges one request per record, so K samples become K engine records that
differ only in their sample index, which goes into the request (``sample_index``, part of
the cache key): a rerun pays for no sample twice, and sample 2 is never served sample 1's
answer.  Every method in respeval (pointwise, pairwise, rubrics) runs through
:func:`arun_sampled`; with ``samples=1`` it is a plain run.

Aggregations:

``majority``
    Strict: a label wins only with *more than half of all K samples*.  Unscored samples
    count in the denominator (they are votes for nobody), so ``pass, fail, unscored`` is
    ``undecided``, as is a 2-2 tie.  An undecided item is unscored with reason
    ``undecided``, never resolved by a default.  Sampling stops early for an item once its
    majority cannot change: ``floor(K/2) + 1`` samples go out first, then one more per
    round only for items still open.
``mean`` / ``median``
    Of the scored samples' ``score`` (all K are asked; no early stop).  The item passes
    when the aggregate reaches ``threshold``.  An item with no scored sample is unscored.

Each aggregated row reports its votes, the samples used, and ``unanimous`` (every sample
asked was scored and they all agree): the per-item stability flag.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from respeval.judge.cache import JudgeCache
from respeval.judge.engine import EngineOptions, JudgeEngine, budget_left
from respeval.judge.methods.base import JudgeMethod, MethodOptions
from respeval.judge.models.base import Capabilities, Completion, JudgeModel, JudgeRequest
from respeval.judge.parsing import Parsed, ParseFailure
from respeval.judge.results import SCORED, UNSCORED, BatchSettled, RowResult, Spend, wilson_interval
from respeval.stats.exact import mean_of

__all__ = [
    "AGGREGATIONS",
    "SampledMethod",
    "SampledResult",
    "SampledRow",
    "SampledRun",
    "Spend",
    "arun_sampled",
    "majority_vote",
]

AGGREGATIONS = ("majority", "mean", "median")
UNDECIDED = "undecided"


class SampledMethod:
    """Wraps a method so that each engine record carries a ``sample_index`` that goes into
    the request (and so into the cache key).  Optionally overrides the temperature (samples
    at temperature 0 from a deterministic model are all the same answer) and offsets the
    seed per sample."""

    def __init__(self, base: JudgeMethod, *, temperature: float | None = None) -> None:
        self.base = base
        self.temperature = temperature
        self.name = base.name
        self.template_version = base.template_version
        self.fields = (*base.fields, "sample_index")
        self.verdict_fields = base.verdict_fields

    def signature(self) -> str:
        extra = "" if self.temperature is None else f"|sample_temperature:{self.temperature:g}"
        return f"{self.base.signature()}{extra}"

    def item(self, record: Mapping[str, Any]) -> tuple[Any, int]:
        rest = {k: v for k, v in record.items() if k != "sample_index"}
        index = record.get("sample_index", 0)
        if not isinstance(index, int) or index < 0:
            raise ValueError(f"field 'sample_index': expected a non-negative integer, got {index!r}")
        return self.base.item(rest), index

    def _sampled(self, request: JudgeRequest, index: int, capabilities: Capabilities) -> JudgeRequest:
        changes: dict[str, Any] = {"sample_index": index}
        if self.temperature is not None and capabilities.temperature:
            changes["temperature"] = self.temperature
        if request.seed is not None:
            changes["seed"] = request.seed + index
        return dataclasses.replace(request, **changes)

    def build(self, item: tuple[Any, int], capabilities: Capabilities) -> JudgeRequest:
        base_item, index = item
        self._capabilities = capabilities
        return self._sampled(self.base.build(base_item, capabilities), index, capabilities)

    def parse(self, item: tuple[Any, int], completion: Completion) -> Parsed[Any] | ParseFailure:
        return self.base.parse(item[0], completion)

    def reask(
        self, item: tuple[Any, int], request: JudgeRequest, completion: Completion, failure: ParseFailure
    ) -> JudgeRequest:
        follow_up = self.base.reask(item[0], request, completion, failure)
        return dataclasses.replace(follow_up, sample_index=item[1], flip=request.flip)

    def row_fields(self, verdict: Any) -> dict[str, Any]:
        return self.base.row_fields(verdict)


@dataclass
class SampledRow:
    """One input record after K samples: ``verdict`` is the aggregated verdict (None when
    unscored), ``samples`` the engine rows of the samples actually asked, in index order."""

    row: int
    id: Any
    status: str
    verdict: dict[str, Any] | None = None
    unscored_reason: str | None = None
    samples: list[RowResult] = field(default_factory=list)

    @property
    def scored(self) -> bool:
        return self.status == SCORED

    def digest_entry(self) -> tuple[int, float, str | None, None] | None:
        """What a report's score distribution and worst rows take of this row: (row,
        score, explanation, None), or None for a row without a score (a rubric's
        explanation is its verdict and reason per criterion)."""
        if self.status != SCORED:
            return None
        verdict = self.verdict or {}
        score, reasoning = verdict.get("score"), verdict.get("reasoning")
        if isinstance(reasoning, dict):  # rubrics: a verdict and its reason per criterion
            passed = verdict.get("criteria") or {}
            reasoning = "\n".join(
                f"{cid}: {'pass' if passed.get(cid) else 'FAIL'}. {why}" for cid, why in reasoning.items()
            )
        if not isinstance(score, (int, float)):
            return None
        return self.row, float(score), reasoning if isinstance(reasoning, str) else None, None

    def to_json(self) -> dict[str, Any]:
        """The output row: ``id``, ``row``, the aggregated verdict's fields, status and reason."""
        return {
            "id": self.id,
            "row": self.row,
            **(self.verdict or {}),
            "status": self.status,
            "unscored_reason": self.unscored_reason,
        }


@dataclass
class SampledResult(BatchSettled):
    """Every record's aggregated row, what the run spent, and why it stopped early if it
    did; :meth:`to_json` and :meth:`format` summarise it (pass rate, unanimous rows)."""

    rows: list[SampledRow]
    spend: Spend
    stop_reason: str | None = None
    stop_kind: str | None = None
    not_run: list[int] = field(default_factory=list)
    method: str = "pointwise"
    model: str | None = None
    samples: int = 1
    confidence: float = 0.95
    batch: Any = None
    """What batch mode did (a :class:`respeval.judge.batch.BatchReport`), or None."""

    def to_json(self) -> dict[str, Any]:
        scored = [r for r in self.rows if r.scored and r.verdict is not None]
        passed = sum(bool(r.verdict["pass"]) for r in scored if r.verdict is not None)
        stable = sum(bool(r.verdict.get("unanimous")) for r in scored if r.verdict is not None)
        interval = wilson_interval(passed, len(scored), self.confidence) if scored else None
        reasons: dict[str, int] = {}
        for r in self.rows:
            if not r.scored:
                key = (r.unscored_reason or "unknown").split(":", 1)[0]
                reasons[key] = reasons.get(key, 0) + 1
        numbers = [float(v["score"]) for r in scored if isinstance((v := r.verdict or {}).get("score"), (int, float))]
        return {
            "method": self.method,
            "rows": len(self.rows),
            "scored": len(scored),
            "coverage": len(scored) / len(self.rows) if self.rows else None,
            "passed": passed,
            "pass_rate": passed / len(scored) if scored else None,
            "pass_rate_ci": None if interval is None else {"low": interval[0], "high": interval[1]},
            "mean_score": mean_of(numbers),
            "unanimous": stable,
            "unscored_reasons": reasons,
            "stop_reason": self.stop_reason,
            **self.spend.to_json(),
            **({"model": self.model} if self.model is not None else {}),
            "samples": self.samples,
            **({"batch": self.batch.to_json()} if self.batch is not None else {}),
        }

    def format(self) -> str:
        data = self.to_json()
        rate = data["pass_rate"]
        lines = [
            f"{data['rows']} rows, {data['scored']} scored ({self.method}, multi-sampled)",
            f"pass rate   {rate if rate is None else round(rate, 4)} ({data['passed']}/{data['scored']}); "
            f"{data['unanimous']} of {data['scored']} unanimous",
            self.spend.format(),
        ]
        if self.batch is not None:
            lines.append(self.batch.format())
        return "\n".join(lines)


def majority_vote(votes: Sequence[Any], asked: int, k: int) -> tuple[Any, bool]:
    """The strict-majority label of ``k`` planned samples and whether it is final.

    ``votes`` are the labels of the scored samples so far, out of ``asked`` samples asked
    (unscored ones are votes for nobody but count in ``k``).  A label with more than
    ``k/2`` votes wins; once no label can get there with the samples left (or all ``k``
    are in), the result is :data:`UNDECIDED`."""
    counts = Counter(votes)
    for label, n in counts.most_common():
        if 2 * n > k:
            return label, True
    best = max(counts.values(), default=0)
    if 2 * (best + (k - asked)) <= k:
        return UNDECIDED, True
    return UNDECIDED, asked >= k


@dataclass
class _ItemState:
    record: Mapping[str, Any]
    samples: dict[int, RowResult] = field(default_factory=dict)
    done: bool = False


def _vote(row: RowResult, vote_field: str) -> Any:
    assert row.verdict is not None
    return row.verdict.get(vote_field)


def _majority_state(state: _ItemState, k: int, vote_field: str) -> tuple[Any, bool]:
    votes = [_vote(r, vote_field) for r in state.samples.values() if r.scored]
    return majority_vote(votes, len(state.samples), k)


async def arun_sampled(
    records: Sequence[Mapping[str, Any]],
    model: JudgeModel,
    method: JudgeMethod,
    *,
    samples: int = 1,
    aggregate: str = "majority",
    vote_field: str = "pass",
    threshold: float = 0.5,
    temperature: float | None = None,
    early_stop: bool = True,
    cache: JudgeCache | None = None,
    options: EngineOptions | None = None,
    fields: Mapping[str, str] | None = None,
    on_row: Callable[[SampledRow], None] | None = None,
) -> SampledResult:
    """Judge every record ``samples`` times and aggregate (see the module docstring).

    The caller owns ``model`` and ``cache``; the model is entered here for the whole run.
    ``vote_field`` is the verdict column the majority votes on (``pass`` for pointwise
    and rubrics, ``winner`` for pairwise).  ``on_row`` sees each record's aggregated row as
    soon as it is final (its vote decided, or its last sample in), before the run ends:
    the same row the result will hold.
    """
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    if aggregate not in AGGREGATIONS:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATIONS)}, got {aggregate!r}")
    wrapped = SampledMethod(method, temperature=temperature)
    states = [_ItemState(record) for record in records]
    spend = Spend()
    stop_reason: str | None = None
    stop_kind: str | None = None
    first = samples // 2 + 1 if (aggregate == "majority" and early_stop) else samples
    async with model:
        next_index = 0
        batch_size = first
        while next_index < samples:
            open_items = [i for i, s in enumerate(states) if not s.done]
            if not open_items:
                break
            indices = range(next_index, min(samples, next_index + batch_size))
            jobs = [(i, s) for i in open_items for s in indices]
            # the passes share the run's budget: each gets what the earlier ones left
            engine = JudgeEngine(model, wrapped, budget_left(options, spend), cache=cache, fields=fields)
            finished = None
            if on_row is not None:
                finished = _FinalRows(
                    states,
                    jobs,
                    len(indices),
                    indices.stop >= samples,
                    on_row,
                    (samples, aggregate, vote_field, threshold),
                )
            result = await engine.run(_engine_records(states, jobs), on_row=finished)
            spend.add(result.summary)
            for row in result.rows:
                item, sample = jobs[row.row]
                states[item].samples[sample] = dataclasses.replace(row, row=sample)
            if result.stop_kind is not None:
                stop_reason, stop_kind = result.summary.stop_reason, result.stop_kind
                break
            next_index = indices.stop
            batch_size = 1
            for state in states:
                if aggregate == "majority" and not state.done:
                    state.done = _majority_state(state, samples, vote_field)[1]
    rows = [
        _aggregate(i, s, samples, aggregate, vote_field, threshold, stopped=stop_kind is not None)
        for i, s in enumerate(states)
    ]
    not_run = [r.row for r in rows if r.status == "not_run"]
    return SampledResult(
        rows=rows,
        spend=spend,
        stop_reason=stop_reason,
        stop_kind=stop_kind,
        not_run=not_run,
        method=method.name,
        model=model.model_id,
        samples=samples,
        confidence=(options or EngineOptions()).confidence,
    )


class SampledRun:
    """K samples per record of a per-request method, aggregated (see the module docstring):
    the ``sampled`` method of :func:`respeval.judge.run`.

    ``method``: the per-request method, or its registry name (default ``pointwise``); the
    other arguments are :func:`arun_sampled`'s."""

    name = "sampled"

    def __init__(
        self,
        method: JudgeMethod | str = "pointwise",
        *,
        samples: int = 1,
        aggregate: str = "majority",
        vote_field: str = "pass",
        threshold: float = 0.5,
        temperature: float | None = None,
        early_stop: bool = True,
    ) -> None:
        if samples < 1:
            raise ValueError(f"samples must be at least 1, got {samples}")
        if aggregate not in AGGREGATIONS:
            raise ValueError(f"aggregate must be one of {', '.join(AGGREGATIONS)}, got {aggregate!r}")
        if isinstance(method, str):
            from respeval.judge.methods import get_method

            self.method: JudgeMethod = get_method(method)
        else:
            self.method = method
        self.samples, self.aggregate, self.vote_field = samples, aggregate, vote_field
        self.threshold, self.temperature, self.early_stop = threshold, temperature, early_stop

    @classmethod
    def from_options(cls, options: MethodOptions) -> SampledRun:
        """Pointwise, K samples per row, as the command line builds it."""
        from respeval.judge.methods import get_method  # the registry: pointwise imports this module

        pointwise = get_method(
            "pointwise",
            threshold=options.threshold,
            max_tokens=options.max_tokens,
            seed=options.seed,
            template=options.template,
            system_instruction=options.system_instruction,
        )
        return cls(
            pointwise,
            samples=options.samples,
            aggregate=options.aggregate,
            threshold=options.threshold,
            temperature=options.sample_temperature,
        )

    async def arun(
        self,
        records: Sequence[Mapping[str, Any]],
        model: JudgeModel,
        *,
        cache: JudgeCache | None = None,
        options: EngineOptions | None = None,
        fields: Mapping[str, str] | None = None,
        on_row: Callable[[SampledRow], None] | None = None,
    ) -> SampledResult:
        return await arun_sampled(
            records,
            model,
            self.method,
            samples=self.samples,
            aggregate=self.aggregate,
            vote_field=self.vote_field,
            threshold=self.threshold,
            temperature=self.temperature,
            early_stop=self.early_stop,
            cache=cache,
            options=options,
            fields=fields,
            on_row=on_row,
        )


class _FinalRows:
    """``JudgeEngine.run``'s ``on_row`` for one round: records each sample as it finishes and
    hands a record's aggregated row on once it is final -- its round's samples all in, and
    either the last round or its majority already decided (what the round's end would
    conclude)."""

    def __init__(
        self,
        states: Sequence[_ItemState],
        jobs: Sequence[tuple[int, int]],
        per_item: int,
        last_round: bool,
        on_row: Callable[[SampledRow], None],
        rule: tuple[int, str, str, float],
    ) -> None:
        self.states, self.jobs, self.last_round, self.on_row, self.rule = states, jobs, last_round, on_row, rule
        self.left = Counter({item: per_item for item, _ in jobs})

    def __call__(self, row: RowResult) -> None:
        item, sample = self.jobs[row.row]
        state = self.states[item]
        state.samples[sample] = dataclasses.replace(row, row=sample)
        self.left[item] -= 1
        if self.left[item]:
            return
        k, aggregate, vote_field, threshold = self.rule
        if self.last_round or (aggregate == "majority" and _majority_state(state, k, vote_field)[1]):
            self.on_row(_aggregate(item, state, k, aggregate, vote_field, threshold, stopped=False))


def _engine_records(states: Sequence[_ItemState], jobs: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
    out = []
    for item, sample in jobs:
        record = dict(states[item].record)
        record["sample_index"] = sample
        out.append(record)
    return out


def _row_id(state: _ItemState, row: int) -> Any:
    return state.record.get("id", row)


def _aggregate(
    row: int, state: _ItemState, k: int, aggregate: str, vote_field: str, threshold: float, *, stopped: bool
) -> SampledRow:
    ordered = [state.samples[i] for i in sorted(state.samples)]
    out = SampledRow(row=row, id=_row_id(state, row), status=UNSCORED, samples=ordered)
    if k == 1:
        return _single(out, ordered)
    if aggregate == "majority":
        decision, final = _majority_state(state, k, vote_field)
        if not final:
            out.status = "not_run"
            out.unscored_reason = "not run: the run stopped before the vote was decided"
            return out
        return _majority_row(out, ordered, decision, vote_field)
    if stopped and len(ordered) < k:
        out.status = "not_run"
        out.unscored_reason = f"not run: {len(ordered)} of {k} samples before the run stopped"
        return out
    return _central_row(out, ordered, aggregate, threshold)


def _single(out: SampledRow, ordered: list[RowResult]) -> SampledRow:
    if not ordered:
        out.status = "not_run"
        out.unscored_reason = "not run: the run stopped first"
        return out
    only = ordered[0]
    out.status, out.unscored_reason = only.status, only.unscored_reason
    if only.verdict is not None:
        out.verdict = {**only.verdict, "samples": 1, "unanimous": True}
    return out


def _stability(ordered: list[RowResult], vote_field: str) -> bool:
    votes = {repr(r.verdict.get(vote_field)) for r in ordered if r.verdict is not None}
    return bool(ordered) and all(r.scored for r in ordered) and len(votes) == 1


def _majority_row(out: SampledRow, ordered: list[RowResult], decision: Any, vote_field: str) -> SampledRow:
    votes = Counter(repr(_vote(r, vote_field)) if r.scored else "unscored" for r in ordered)
    described = ", ".join(f"{label}: {n}" for label, n in sorted(votes.items()))
    if decision == UNDECIDED:
        out.unscored_reason = f"undecided: no strict majority of {len(ordered)} samples ({described})"
        return out
    winner = next(r for r in ordered if r.scored and _vote(r, vote_field) == decision)
    out.status = SCORED
    out.verdict = {
        **(winner.verdict or {}),
        vote_field: decision,
        "votes": dict(votes),
        "samples": len(ordered),
        "unanimous": _stability(ordered, vote_field),
    }
    return out


def _central_row(out: SampledRow, ordered: list[RowResult], aggregate: str, threshold: float) -> SampledRow:
    scores = [
        float(r.verdict["score"])
        for r in ordered
        if r.scored and r.verdict is not None and isinstance(r.verdict.get("score"), (int, float))
    ]
    if not scores:
        reasons = "; ".join(sorted({r.unscored_reason or "no score" for r in ordered}))
        out.unscored_reason = f"unscored: no sample had a score ({reasons})"
        return out
    value = statistics.fmean(scores) if aggregate == "mean" else statistics.median(scores)
    out.status = SCORED
    out.verdict = {
        "score": value,
        "pass": value >= threshold,
        "scores": scores,
        "samples": len(ordered),
        "scored_samples": len(scores),
        "unanimous": _stability(ordered, "score"),
    }
    return out
