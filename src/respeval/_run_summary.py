"""What every run summary shares: the row states, why a run stopped early, and the base class.

The bulk scorer's :class:`~respeval.bulk.summary.ScoringRunSummary` and the judge's
:class:`~respeval.judge.results.JudgeRunSummary` derive from :class:`RunSummaryBase`; the
evaluate, gate, batch and CLI code read the same state names from here.

A leaf: imports nothing from respeval, so scoring (below the judge) and the judge share it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = [
    "ROW_STATES",
    "SCORED",
    "STOP_BUDGET",
    "STOP_CACHE",
    "STOP_DEFERRED",
    "STOP_ERROR",
    "STOP_INTERRUPTED",
    "STOP_KINDS",
    "STOP_WAITING",
    "UNSCORED",
    "RunSummaryBase",
]

# A row's state in every output (a judge's rows, evaluate's ``{metric}/status`` columns).
SCORED = "scored"
UNSCORED = "unscored"
ROW_STATES = (SCORED, UNSCORED)

# Why a run stopped before its last row (a judge summary's ``stop_kind``): one set for the live
# engine, batch mode and the CLI's exit statuses.
STOP_BUDGET = "budget"
STOP_ERROR = "error"
STOP_INTERRUPTED = "interrupted"
STOP_DEFERRED = "deferred"  # some answers wait for a provider batch (see respeval.judge.batch)
STOP_CACHE = "cache"  # the cache file cannot be read or written (a damaged page): fix it, then rerun
STOP_WAITING = "waiting"  # batch mode: submitted batches not finished yet
STOP_KINDS = (STOP_BUDGET, STOP_ERROR, STOP_INTERRUPTED, STOP_DEFERRED, STOP_CACHE, STOP_WAITING)


class RunSummaryBase(ABC):
    """What a run did, as data (``to_json()``, what ``--json`` and summary files hold) and as
    text (``format()``, what the command prints), with how long it took and the confidence
    level of its intervals."""

    seconds: float
    confidence: float

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The summary as JSON-ready data."""

    @abstractmethod
    def format(self) -> str:
        """The summary as the command prints it."""
