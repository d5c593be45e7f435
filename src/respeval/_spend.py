"""What model calls spent (calls, retries, re-asks, cache hits, tokens, cost, seconds,
errors by kind): the one ``Spend`` of the judge, evaluate, monitor and the systems under test.

A leaf: imports nothing from respeval, so every layer that counts model calls can hold one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Spend", "batch_spend"]

_SUMMED = ("calls", "retries", "reasks", "cache_hits", "tokens_in", "tokens_out", "cost", "seconds")


def batch_spend(report: Any) -> tuple[int, int, float]:
    """Tokens in, tokens out and cost of a batch-mode run (a
    :class:`~respeval.judge.batch.BatchReport`): the batches at batch prices, plus interactive
    retries.  Its rows were answered from the cache the batches filled, so this is what it spent."""
    return (
        report.tokens_in + report.live_tokens_in,
        report.tokens_out + report.live_tokens_out,
        report.total_cost,
    )


@dataclass
class Spend:
    """What several engine runs spent together."""

    calls: int = 0
    retries: int = 0
    reasks: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)

    def add(self, spent: Any) -> None:
        """Add what a run (a judge ``JudgeRunSummary``, or anything with these fields) or another
        Spend spent."""
        for name in _SUMMED:
            setattr(self, name, getattr(self, name) + getattr(spent, name))
        self.errors.update(spent.errors)

    merge = add

    @classmethod
    def of(cls, summary: Any) -> Spend:
        """What one run spent."""
        spend = cls()
        spend.add(summary)
        return spend

    def settle_batch(self, report: Any) -> None:
        """Tokens and cost become everything a batch-mode run spent (:func:`batch_spend`)."""
        self.tokens_in, self.tokens_out, self.cost = batch_spend(report)

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "retries": self.retries,
            "reasks": self.reasks,
            "cache_hits": self.cache_hits,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": self.cost,
            "seconds": self.seconds,
            "errors": dict(self.errors),
        }

    def format(self) -> str:
        return (
            f"calls       {self.calls} ({self.retries} retries, {self.reasks} re-asks), "
            f"{self.cache_hits} answers from the cache\n"
            f"tokens      {self.tokens_in:,} in, {self.tokens_out:,} out; cost ${self.cost:.4f}"
        )
