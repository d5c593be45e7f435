"""Limits: rate limiters, retry backoff, budgets and prices.

Pure logic with an injectable clock, so that it is tested without waiting.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Union

__all__ = ["Budget", "BudgetTracker", "Price", "Prices", "RateLimiter", "backoff_delay", "jitter_unit"]


# --------------------------------------------------------------------------- prices


@dataclass(frozen=True)
class Price:
    """USD per million tokens, as providers publish them."""

    input_per_million: float
    output_per_million: float

    def __post_init__(self) -> None:
        if self.input_per_million < 0 or self.output_per_million < 0:
            raise ValueError(f"prices must be non-negative, got {self}")

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input_per_million + tokens_out * self.output_per_million) / 1e6


Prices = Union[Price, Mapping[str, Price]]


def price_for(prices: Prices | None, model_name: str, model_id: str) -> Price | None:
    """One Price for every model, or a mapping looked up by ``model_id`` then ``name``."""
    if prices is None or isinstance(prices, Price):
        return prices
    return prices.get(model_id) or prices.get(model_name)


# --------------------------------------------------------------------------- budget


@dataclass(frozen=True)
class Budget:
    """Caps for one run; None means no cap.  Calls include retries and re-asks; tokens are
    input plus output as the provider reports them; cost needs a :class:`Price`."""

    max_calls: int | None = None
    max_tokens: int | None = None
    max_cost: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_calls", "max_tokens", "max_cost"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"Budget.{name} must be non-negative, got {value}")

    @property
    def unlimited(self) -> bool:
        return self.max_calls is None and self.max_tokens is None and self.max_cost is None


class BudgetTracker:
    """Counts spending against a Budget.

    Calls are reserved *before* they are made, so ``max_calls`` is never exceeded.  Tokens
    and cost are only known afterwards: once spent reaches the cap no new call starts, but
    calls already in flight finish (their answers are paid for, so they are kept); the
    overshoot is at most the in-flight calls' usage.
    """

    def __init__(self, budget: Budget | None) -> None:
        self.budget = budget or Budget()
        self.calls = 0
        self.tokens = 0
        self.cost = 0.0

    def reserve_call(self) -> str | None:
        """Count one call about to be made, or return why the budget forbids it."""
        b = self.budget
        if b.max_calls is not None and self.calls >= b.max_calls:
            return f"budget reached: {self.calls} of max {b.max_calls} calls"
        if b.max_tokens is not None and self.tokens >= b.max_tokens:
            return f"budget reached: {self.tokens:,} of max {b.max_tokens:,} tokens"
        if b.max_cost is not None and self.cost >= b.max_cost:
            return f"budget reached: ${self.cost:.4f} of max ${b.max_cost:.4f}"
        self.calls += 1
        return None

    def spend(self, tokens: int, cost: float) -> None:
        self.tokens += tokens
        self.cost += cost


# --------------------------------------------------------------------------- rate limits


class RateLimiter:
    """A token bucket refilled at ``per_minute / 60`` units a second.

    The bucket holds ``burst_seconds`` worth of units (at least one request's worth), so the
    limit holds over any window, not only on average per minute.  A request larger than the
    bucket (a long prompt under a tokens-per-minute limit) waits for a full bucket and then
    goes into debt, which later requests pay off; :meth:`adjust` settles an estimate against
    the provider's real usage.  Waiters are served in arrival order.
    """

    def __init__(
        self,
        per_minute: float,
        *,
        burst_seconds: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if per_minute <= 0:
            raise ValueError(f"a rate limit must be positive, got {per_minute}")
        self.rate = per_minute / 60.0
        self.capacity = max(self.rate * burst_seconds, 1.0)
        self._level = self.capacity
        self._clock = clock
        self._sleep = sleep
        self._stamp = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def acquire(self, amount: float = 1.0) -> None:
        async with self._lock:
            need = min(amount, self.capacity)
            self._refill()
            while self._level < need:
                await self._sleep((need - self._level) / self.rate)
                self._refill()
            self._level -= amount

    def adjust(self, delta: float) -> None:
        """Charge ``delta`` more units (negative: refund), e.g. actual minus estimated tokens."""
        self._refill()
        self._level = min(self.capacity, self._level - delta)


# --------------------------------------------------------------------------- backoff


def jitter_unit(seed: int, key: str, attempt: int) -> float:
    """A uniform number in [0, 1) fixed by (seed, request, attempt): jitter that spreads
    retries apart yet is reproducible whatever order concurrent calls happen in."""
    digest = hashlib.blake2b(f"{seed}:{key}:{attempt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def backoff_delay(
    attempt: int,
    *,
    base: float,
    cap: float,
    unit: float,
    retry_after: float | None = None,
    max_retry_after: float = 300.0,
) -> float:
    """Seconds before retry number ``attempt + 1``: exponential (``base * 2**attempt``,
    at most ``cap``) with "equal jitter" (half fixed, half random), and never sooner than
    the server's ``Retry-After`` (itself capped by ``max_retry_after``)."""
    delay = min(cap, base * (2.0**attempt))
    delay = delay / 2.0 + delay / 2.0 * unit
    if retry_after is not None:
        delay = max(delay, min(retry_after, max_retry_after))
    return delay
