"""Per-row results, the run summary (pass rate with a confidence interval, coverage, calls,
tokens, cost, time), what several runs spent together (:class:`Spend`), and what every
method's report offers (:class:`JudgeReport`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

# the one set of row states and stop kinds (respeval._run_summary), which the judge's modules
# import from here
from respeval._run_summary import SCORED as SCORED
from respeval._run_summary import STOP_BUDGET as STOP_BUDGET
from respeval._run_summary import STOP_CACHE as STOP_CACHE
from respeval._run_summary import STOP_DEFERRED as STOP_DEFERRED
from respeval._run_summary import STOP_ERROR as STOP_ERROR
from respeval._run_summary import STOP_INTERRUPTED as STOP_INTERRUPTED
from respeval._run_summary import STOP_WAITING as STOP_WAITING
from respeval._run_summary import UNSCORED as UNSCORED
from respeval._run_summary import RunSummaryBase
from respeval._spend import Spend, batch_spend
from respeval.redact import redact, redact_data
from respeval.stats.exact import float_numerator, to_float
from respeval.stats.intervals import wilson_interval

__all__ = ["JudgeReport", "JudgeRunSummary", "RowResult", "RunSummary", "Spend", "wilson_interval"]


@dataclass
class RowResult:
    """The outcome of one input row.

    ``tokens_in``/``tokens_out``/``cost``/``attempts`` count what *this run* sent to the
    model for the row (retries and the re-ask included); answers served from the cache
    cost nothing and count no attempt.  ``cache_hit`` is True when every answer the row
    used came from the cache.
    """

    row: int
    id: Any
    status: str
    verdict: dict[str, Any] | None = None
    unscored_reason: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    cache_hit: bool = False
    attempts: int = 0
    reasked: bool = False
    parsed_from: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    """What the judge was asked and answered for this row, call by call (the re-ask too):
    ``{"messages": [{"role", "content"}], "reply": text, "sample": i, "flipped": bool}`` (with
    ``"refusal"`` or ``"structured"`` when the provider gave one); ``respeval view`` shows them."""

    def __post_init__(self) -> None:
        # Every row text that reaches an output starts here: scrub it once, at the root.
        if self.unscored_reason is not None:
            self.unscored_reason = redact(self.unscored_reason)
        if self.verdict is not None:
            self.verdict = redact_data(self.verdict)
        if self.calls:
            self.calls = redact_data(self.calls)

    @property
    def scored(self) -> bool:
        return self.status == SCORED

    def digest_entry(self) -> tuple[int, Any, Any, float | None] | None:
        """What a report's score distribution and worst rows take of this row: (row,
        score, explanation, rank; None: the score ranks it), or None for an unscored row."""
        if not self.scored or self.verdict is None:
            return None
        return self.row, self.verdict.get("score"), self.verdict.get("reasoning"), None

    def to_json(self, verdict_fields: Sequence[str]) -> dict[str, Any]:
        """The output row: ``id``, ``row``, the verdict fields (null when unscored), then
        status and accounting."""
        out: dict[str, Any] = {"id": self.id, "row": self.row}
        for name in verdict_fields:
            out[name] = self.verdict.get(name) if self.verdict is not None else None
        out.update(
            status=self.status,
            unscored_reason=self.unscored_reason,
            parsed_from=self.parsed_from,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            cost=self.cost,
            cache_hit=self.cache_hit,
            attempts=self.attempts,
            reasked=self.reasked,
        )
        return out


@dataclass
class JudgeRunSummary(RunSummaryBase):
    """What a judge run did.  ``total`` counts every input row, including rows not run because the
    run stopped (budget, fatal error, interrupt); ``coverage`` is scored / total.  Calls,
    tokens and cost are everything this run spent, including what rows left not run had
    already spent (a first answer whose re-ask the budget refused)."""

    method: str
    signature: str
    model: str
    total: int = 0
    scored: int = 0
    unscored: int = 0
    passed: int = 0
    score_numerator: int = 0
    """The scores' exact sum, times 2**1126 (``respeval.stats.exact``): the mean is exactly
    rounded however the rows were split into passes."""
    calls: int = 0
    retries: int = 0
    reasks: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    confidence: float = 0.95
    stop_reason: str | None = None
    unscored_reasons: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    """Failed calls by kind: rate_limited, server_error, timeout, connection, malformed_response."""
    batch: Any = None
    """What batch mode did (a :class:`respeval.judge.batch.BatchReport`), or None."""

    def attach_batch(self, report: Any) -> None:
        """Batch mode's report; the run's tokens and cost become everything it spent (the
        batches at batch prices, plus interactive retries), since its rows were answered
        from the cache the batches filled."""
        self.batch = report
        self.tokens_in, self.tokens_out, self.cost = batch_spend(report)
        if report.stop_reason:
            self.stop_reason = report.stop_reason

    @property
    def not_run(self) -> int:
        return self.total - self.scored - self.unscored

    @property
    def coverage(self) -> float | None:
        return self.scored / self.total if self.total else None

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None

    @property
    def pass_interval(self) -> tuple[float, float] | None:
        return wilson_interval(self.passed, self.scored, self.confidence) if self.scored else None

    @property
    def score_sum(self) -> float:
        """The scores' sum, exactly rounded."""
        return to_float(self.score_numerator)

    @property
    def mean_score(self) -> float | None:
        """The exactly rounded sum of the scores over the scored rows (the one rule for a mean)."""
        return self.score_sum / self.scored if self.scored else None

    @property
    def rows_per_second(self) -> float | None:
        done = self.scored + self.unscored
        return done / self.seconds if self.seconds > 0 else None

    def add_spend(self, tokens_in: int, tokens_out: int, cost: float) -> None:
        self.tokens_in += tokens_in
        self.tokens_out += tokens_out
        self.cost += cost

    def merge(self, other: JudgeRunSummary) -> None:
        """Fold in the counts of a run over other rows (a later pass of a batch-mode run)."""
        for name in ("scored", "unscored", "passed", "score_numerator", "calls", "retries", "reasks", "cache_hits"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.add_spend(other.tokens_in, other.tokens_out, other.cost)
        self.unscored_reasons.update(other.unscored_reasons)
        self.errors.update(other.errors)

    def add(self, row: RowResult) -> None:
        """Fold one finished row in."""
        self.add_spend(row.tokens_in, row.tokens_out, row.cost)
        if row.scored and row.verdict is not None:
            self.scored += 1
            self.passed += bool(row.verdict.get("pass"))
            score = row.verdict.get("score")
            if isinstance(score, (int, float)):
                self.score_numerator += float_numerator(score)
        else:
            self.unscored += 1
            reason = row.unscored_reason or "unknown"
            self.unscored_reasons[reason.split(":", 1)[0]] += 1

    def to_json(self) -> dict[str, Any]:
        interval = self.pass_interval
        return {
            "method": self.method,
            "signature": self.signature,
            "model": self.model,
            "rows": self.total,
            "scored": self.scored,
            "unscored": self.unscored,
            "not_run": self.not_run,
            "coverage": self.coverage,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "pass_rate_ci": None
            if interval is None
            else {"low": interval[0], "high": interval[1], "confidence": self.confidence, "method": "wilson"},
            "mean_score": self.mean_score,
            "calls": self.calls,
            "retries": self.retries,
            "reasks": self.reasks,
            "cache_hits": self.cache_hits,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": self.cost,
            "seconds": self.seconds,
            "rows_per_second": self.rows_per_second,
            "stop_reason": redact(self.stop_reason) if self.stop_reason is not None else None,
            "unscored_reasons": dict(self.unscored_reasons),
            "errors": dict(self.errors),
            **({"batch": self.batch.to_json()} if self.batch is not None else {}),
        }

    def format(self) -> str:
        """A human-readable summary (the CLI prints it)."""
        pct = int(round(self.confidence * 100))
        lines = [
            f"{self.scored + self.unscored} of {self.total} rows judged in {self.seconds:.2f}s "
            f"({self.method}, {self.model})"
        ]
        if self.scored:
            low, high = self.pass_interval or (0.0, 0.0)
            lines.append(
                f"pass rate   {self.pass_rate:.4f}  [{low:.4f}, {high:.4f}] {pct}% CI (Wilson), "
                f"{self.passed}/{self.scored} scored rows"
            )
            lines.append(f"mean score  {self.mean_score:.4f}")
        else:
            lines.append("pass rate   - (no scored rows)")
        cov = self.coverage
        lines.append(f"coverage    {self.scored}/{self.total} scored" + (f" ({cov:.1%})" if cov is not None else ""))
        if self.unscored:
            reasons = ", ".join(f"{k}: {v}" for k, v in self.unscored_reasons.most_common())
            lines.append(f"unscored    {self.unscored} ({reasons})")
        lines.append(
            f"calls       {self.calls} ({self.retries} retries, {self.reasks} re-asks), "
            f"{self.cache_hits} answers from the cache"
        )
        if self.errors:
            lines.append("errors      " + ", ".join(f"{k}: {v}" for k, v in self.errors.most_common()))
        lines.append(f"tokens      {self.tokens_in:,} in, {self.tokens_out:,} out; cost ${self.cost:.4f}")
        if self.batch is not None:
            lines.append(self.batch.format())
        if self.stop_reason:
            lines.append(f"STOPPED     {redact(self.stop_reason)}")
            lines.append(
                f"left        {self.not_run} rows not judged; rerun with the same cache to resume "
                "(answers already received are not paid for again)"
            )
        lines.append(f"signature   {self.signature}")
        return "\n".join(lines)


# the name it had before the bulk summary and it shared a base (and needed names of their own)
RunSummary = JudgeRunSummary


class JudgeReport(Protocol):
    """What every judging method's run returns (:func:`respeval.judge.run` and the methods'
    own ``arun_*``): its rows, what it spent, why it stopped early if it did, and the batch
    report when it ran as provider batches; ``to_json()`` is the summary as data, ``format()``
    the summary as text."""

    @property
    def rows(self) -> Sequence[Any]:
        """One result per input record (a pair, a case), in input order."""

    @property
    def spend(self) -> Spend: ...

    @property
    def stop_reason(self) -> str | None:
        """Why the run stopped before every row was judged (None: it did not)."""

    @property
    def stop_kind(self) -> str | None:
        """``budget``, ``error``, ``interrupted``, ``deferred`` (None: not stopped)."""

    @property
    def batch(self) -> Any:
        """What batch mode did (a :class:`~respeval.judge.batch.BatchReport`), or None."""

    def to_json(self) -> dict[str, Any]: ...

    def format(self) -> str: ...


class BatchSettled:
    """The batch side of :class:`JudgeReport` for a report with a ``spend`` and a ``batch``
    field: :meth:`attach_batch` records batch mode's report and settles the spend by it."""

    spend: Spend
    batch: Any

    def attach_batch(self, report: Any) -> None:
        self.batch = report
        self.spend.settle_batch(report)


@dataclass
class MultiStepRow:
    """One record's result of a multi-step metric (RAG, trajectory quality, semantic
    similarity): its score (None when unscored, with the reason), a one-line explanation, and
    the per-claim / per-chunk / per-statement / per-citation details."""

    row: int
    id: Any
    status: str
    score: float | None = None
    passed: bool | None = None
    explanation: str | None = None
    details: list[dict[str, Any]] = field(default_factory=list)
    unscored_reason: str | None = None

    @property
    def scored(self) -> bool:
        return self.status == SCORED

    @property
    def verdict(self) -> dict[str, Any] | None:
        if not self.scored:
            return None
        return {"score": self.score, "pass": self.passed, "reasoning": self.explanation, "details": self.details}

    def digest_entry(self) -> tuple[int, Any, Any, float | None] | None:
        """What a report's score distribution and worst rows take of this row."""
        return (self.row, self.score, self.explanation, None) if self.scored else None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "row": self.row,
            "score": self.score,
            "pass": self.passed,
            "explanation": self.explanation,
            "details": self.details,
            "status": self.status,
            "unscored_reason": self.unscored_reason,
        }
