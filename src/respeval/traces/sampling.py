"""Reproducible sampling of traces: membership decided by a seeded hash of the trace id.

**The unit hash.**  Every trace id gets a 64-bit number::

    u = int.from_bytes(blake2b(trace_id.encode("utf-8"), digest_size=8,
                               key=str(seed).encode("ascii")).digest(), "big")

It depends on nothing but the id and the seed, so a trace is in or out the same way on every
run and machine, whatever the order of the input or the files it is split across.  Cases
are handled (and written) in increasing ``(u, trace_id)`` order, which is therefore also a
seeded shuffle that no input order can change.

**Rate.**  ``rate`` P keeps a trace when ``u < floor(P * 2**64)`` (P read as the decimal it
is written as: ``0.1`` is exactly one tenth): each trace independently with probability P,
the same traces for the same seed, and every trace kept at P also kept at any larger P.
It is the per-trace rule a monitor of live traffic can apply window by window (no
strata to count, nothing to remember between windows).

**Every failure plus P of the rest** (``keep_errors``): a trace that recorded an error is
always kept; the others by the rate.

**Stratified** (``stratify`` = a case field: ``service``, ``model``, ``route``, ``error``,
...; a case without the field is in the stratum ``None``): each stratum keeps its own quota
of its traces with the smallest ``u`` (a seeded uniform sample of that size from the
stratum): ``per_stratum`` N keeps ``min(N, n)`` of a stratum's n traces (balanced), else
the rate gives ``max(min_per_stratum, round(P * n))``, never more than n (proportional, with
a floor so that rare strata are represented).  Quotas need each stratum's size, so a
stratified run reads its cases twice (the second time from a temporary file).
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = ["Sampling", "rate_threshold", "unit_hash"]

FULL = 1 << 64


def unit_hash(trace_id: str, seed: int) -> int:
    """The trace's 64-bit unit hash for ``seed`` (see the module docstring)."""
    key = str(int(seed)).encode("ascii")
    return int.from_bytes(
        hashlib.blake2b(trace_id.encode("utf-8", "surrogatepass"), digest_size=8, key=key).digest(), "big"
    )


def rate_threshold(rate: float | str | Fraction) -> int:
    """``floor(rate * 2**64)`` with ``rate`` read as the decimal it is written as."""
    exact = Fraction(rate) if isinstance(rate, (str, Fraction)) else Fraction(repr(float(rate)))
    if not 0 <= exact <= 1:
        raise ValueError(f"a sample rate is a number in [0, 1], got {rate}")
    return math.floor(exact * FULL)


@dataclass(frozen=True)
class Sampling:
    """How cases are sampled (see the module docstring)."""

    rate: float = 1.0
    seed: int = 0
    keep_errors: bool = False
    stratify: str | None = None
    per_stratum: int | None = None
    min_per_stratum: int = 1

    def __post_init__(self) -> None:
        rate_threshold(self.rate)
        if self.per_stratum is not None and self.per_stratum < 0:
            raise ValueError(f"per_stratum must be >= 0, got {self.per_stratum}")
        if self.min_per_stratum < 0:
            raise ValueError(f"min_per_stratum must be >= 0, got {self.min_per_stratum}")
        if self.per_stratum is not None and self.stratify is None:
            raise ValueError("per_stratum needs stratify (the field whose values are the strata)")

    @functools.cached_property
    def threshold(self) -> int:
        return rate_threshold(self.rate)

    @property
    def everything(self) -> bool:
        """Whether every trace is kept (no sampling at all)."""
        return self.stratify is None and self.threshold >= FULL

    @property
    def per_trace(self) -> bool:
        """Whether membership is decided by the trace alone (no strata to count)."""
        return self.stratify is None

    def member(self, u: int, has_error: bool) -> bool:
        """Membership by the rate (and the errors rule): the per-trace decision."""
        return (self.keep_errors and has_error) or u < self.threshold

    def select(self, items: list[tuple[int, dict[str, Any], bool]]) -> list[bool]:
        """Which of ``items`` (``(u, row, has_error)``, in increasing ``u``) are kept: the
        per-trace rule, or each stratum's quota of its smallest ``u`` (a set held in memory,
        such as one window of a monitor)."""
        if self.stratify is None:
            return [self.member(u, error) for u, _, error in items]
        field = self.stratify
        sizes: dict[Hashable, int] = {}
        for _, row, error in items:
            if not (self.keep_errors and error):
                key = stratum_of(row, field)
                sizes[key] = sizes.get(key, 0) + 1
        quotas = {k: self.quota(n) for k, n in sizes.items()}
        taken: dict[Hashable, int] = {}
        out = []
        for _, row, error in items:
            if self.keep_errors and error:
                out.append(True)
                continue
            key = stratum_of(row, field)
            keep = taken.get(key, 0) < quotas[key]
            if keep:
                taken[key] = taken.get(key, 0) + 1
            out.append(keep)
        return out

    def quota(self, size: int) -> int:
        """How many of a stratum of ``size`` traces are kept."""
        if self.per_stratum is not None:
            return min(self.per_stratum, size)
        exact = Fraction(repr(float(self.rate))) * size
        rounded = math.floor(exact + Fraction(1, 2))
        return min(size, max(self.min_per_stratum, rounded))


def stratum_of(row: dict[str, Any], field: str) -> Hashable:
    """A case's stratum: the field's value (lists and objects by their JSON text)."""
    value = row.get(field)
    if isinstance(value, (list, dict)):
        import json

        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return value
