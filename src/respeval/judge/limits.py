"""Limits: rate limiters, retry backoff, budgets and prices.

Pure logic with an injectable clock, so that it is tested without waiting.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Union

__all__ = [
    "Budget",
    "BudgetTracker",
    "Price",
    "Prices",
    "RateLimiter",
    "Reservation",
    "backoff_delay",
    "jitter_unit",
]


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
    spent: tuple[int, int, float] = (0, 0, 0.0)
    """(calls, tokens, cost) that earlier runs sharing this budget already spent (see
    :meth:`after`): a run starts from there, and reports the totals."""

    def __post_init__(self) -> None:
        for name in ("max_calls", "max_tokens", "max_cost"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"Budget.{name} must be non-negative, got {value}")
        if len(self.spent) != 3 or any(v < 0 for v in self.spent):
            raise ValueError(f"Budget.spent must be (calls, tokens, cost), non-negative, got {self.spent}")

    @property
    def unlimited(self) -> bool:
        return self.max_calls is None and self.max_tokens is None and self.max_cost is None

    def after(self, calls: int, tokens: int, cost: float) -> Budget:
        """This budget once ``calls``, ``tokens`` and ``cost`` more are spent: for the next
        of several runs that share it (passes, phases, metrics, chunks), which may spend
        only what is left, and reports what all of them spent against the caps."""
        if self.unlimited:
            return self
        c, t, d = self.spent
        return dataclasses.replace(self, spent=(c + calls, t + tokens, d + cost))


@dataclass(frozen=True)
class Reservation:
    """What one request about to be sent holds of the budget: its worst case."""

    tokens: int
    cost: float


class BudgetTracker:
    """Counts spending against a Budget, so that it is never overrun.

    Every request reserves its worst case before it is sent (:meth:`reserve`: one call,
    its input bounded from above plus its whole max_tokens as output, and their price) and
    settles on the usage the provider reports (:meth:`settle`).  A request is started only
    when everything spent, plus every reservation still in flight, plus its own worst case
    fits in the budget; one that does not fit waits for the calls in flight to settle
    (their replies usually cost far less than reserved) and, when even alone it would not
    fit, is not started: the run stops there.  So the spend stays within the budget however
    many calls run at once (unless a provider bills more than max_tokens allow), and
    :meth:`stop_reason` reports what was really spent.
    """

    def __init__(self, budget: Budget | None) -> None:
        self.budget = budget or Budget()
        self.calls, self.tokens, self.cost = self.budget.spent  # what earlier runs sharing it spent
        self.reserved_tokens = 0
        self.reserved_cost = 0.0
        self.in_flight = 0
        self.refused: Reservation | None = None
        """The worst case of the request the budget could not cover, if one."""
        self._changed: asyncio.Event | None = None

    # ----------------------------------------------------------------- reserving

    def reserve(self, tokens: int = 0, cost: float = 0.0) -> Reservation | str:
        """Hold the worst case of one request about to be sent (one call, ``tokens``,
        ``cost``), or say why the budget cannot cover it (see :meth:`fits_alone`)."""
        b = self.budget
        if b.max_calls is not None and self.calls >= b.max_calls:
            return f"budget reached: {self.calls} of max {b.max_calls} calls"
        if (b.max_tokens is not None and self.tokens + self.reserved_tokens + tokens > b.max_tokens) or (
            b.max_cost is not None and self.cost + self.reserved_cost + cost > b.max_cost
        ):
            self.refused = Reservation(tokens, cost)
            return self.stop_reason()
        self.calls += 1
        self.in_flight += 1
        self.reserved_tokens += tokens
        self.reserved_cost += cost
        return Reservation(tokens, cost)

    def fits_alone(self, tokens: int = 0, cost: float = 0.0) -> bool:
        """Whether a request of this worst case would fit once nothing is in flight (if not,
        waiting for the calls in flight cannot help)."""
        b = self.budget
        return (
            (b.max_calls is None or self.calls < b.max_calls)
            and (b.max_tokens is None or self.tokens + tokens <= b.max_tokens)
            and (b.max_cost is None or self.cost + cost <= b.max_cost)
        )

    def settle(self, reservation: Reservation, tokens: int, cost: float) -> None:
        """The reply to a reserved request came (``tokens`` and ``cost`` it really took; 0
        for a call that failed without a bill): its reservation is released."""
        self.in_flight -= 1
        self.reserved_tokens -= reservation.tokens
        self.reserved_cost -= reservation.cost
        if self.in_flight == 0:
            self.reserved_tokens, self.reserved_cost = 0, 0.0  # no rounding left behind
        self.tokens += tokens
        self.cost += cost
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def settled(self) -> None:
        """Wait until a request in flight settles."""
        if self._changed is None:
            self._changed = asyncio.Event()
        await self._changed.wait()

    # ----------------------------------------------------------------- the old interface

    def reserve_call(self) -> str | None:
        """Count one call about to be made with no worst case of its own (settled by
        :meth:`spend`), or return why the budget forbids it."""
        got = self.reserve()
        if isinstance(got, str):
            return got
        self.in_flight -= 1  # nothing held: spend() adds what it cost
        return None

    def spend(self, tokens: int, cost: float) -> None:
        self.tokens += tokens
        self.cost += cost

    # ----------------------------------------------------------------- reporting

    def stop_reason(self) -> str:
        """Why the budget stopped the run, with what was really spent (the calls in flight
        when it stopped included, once they have settled)."""
        b = self.budget
        if b.max_calls is not None and self.calls >= b.max_calls:
            return f"budget reached: {self.calls} of max {b.max_calls} calls"
        worst = self.refused or Reservation(0, 0.0)
        tokens_out = b.max_tokens is not None and self.tokens + worst.tokens > b.max_tokens
        cost_out = b.max_cost is not None and self.cost + worst.cost > b.max_cost
        if b.max_cost is not None and (cost_out or not tokens_out):
            return (
                f"budget reached: ${self.cost:.4f} of max ${b.max_cost:.4f} spent; the next request's worst case "
                f"(${worst.cost:.4f}: its input bounded from above, all of its max tokens as output) does not fit"
            )
        if b.max_tokens is not None:
            return (
                f"budget reached: {self.tokens:,} of max {b.max_tokens:,} tokens spent; the next request's worst "
                f"case ({worst.tokens:,} tokens: its input bounded from above, all of its max tokens) does not fit"
            )
        return "budget reached"


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
