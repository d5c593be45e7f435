"""Rate limiters, backoff, budgets, prices, Retry-After, status mapping and the Wilson
interval: the engine's pure logic, tested with a fake clock (no waiting)."""

from __future__ import annotations

import asyncio
import email.utils

import httpx
import pytest

from respeval.judge import Budget, FatalError, Price, RateLimiter, TransientError, wilson_interval
from respeval.judge.limits import BudgetTracker, backoff_delay, jitter_unit, price_for
from respeval.judge.models._http import error_for_status, parse_retry_after
from respeval.judge.models._transports import is_loopback_host


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def _times(limiter: RateLimiter, clock: FakeClock, amounts: list[float]) -> list[float]:
    async def go() -> list[float]:
        out = []
        for amount in amounts:
            await limiter.acquire(amount)
            out.append(round(clock.now, 6))
        return out

    return asyncio.run(go())


def test_requests_per_minute_spaces_calls_evenly():
    clock = FakeClock()
    limiter = RateLimiter(60, clock=clock, sleep=clock.sleep)  # 1 per second, burst of 1
    assert _times(limiter, clock, [1] * 5) == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_burst_then_steady_rate():
    clock = FakeClock()
    limiter = RateLimiter(600, clock=clock, sleep=clock.sleep)  # 10/s, bucket of 10
    times = _times(limiter, clock, [1] * 15)
    assert times[:10] == [0.0] * 10
    assert times[10:] == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5])


def test_a_request_larger_than_the_bucket_goes_into_debt():
    clock = FakeClock()
    limiter = RateLimiter(600, clock=clock, sleep=clock.sleep)  # 10 tokens/s, bucket of 10
    times = _times(limiter, clock, [25, 1])
    # 25 tokens: bucket full at t=0, go 15 into debt; the next token waits until level 1: 1.6 s
    assert times == pytest.approx([0.0, 1.6])


def test_adjust_refunds_an_overestimate():
    clock = FakeClock()
    limiter = RateLimiter(600, clock=clock, sleep=clock.sleep)
    times = []

    async def go():
        await limiter.acquire(10)  # estimated 10 tokens
        limiter.adjust(2 - 10)  # really used 2: refund 8
        await limiter.acquire(8)
        times.append(clock.now)

    asyncio.run(go())
    assert times == [0.0]


def test_waiters_are_served_in_arrival_order():
    clock = FakeClock()
    limiter = RateLimiter(60, clock=clock, sleep=clock.sleep)
    order: list[int] = []

    async def one(i: int) -> None:
        await limiter.acquire(1)
        order.append(i)

    async def go() -> None:
        await asyncio.gather(*(one(i) for i in range(6)))

    asyncio.run(go())
    assert order == list(range(6))
    assert clock.now == pytest.approx(5.0)


def test_rate_limiter_rejects_nonsense():
    with pytest.raises(ValueError):
        RateLimiter(0)


def test_backoff_is_exponential_capped_and_jittered():
    delays = [backoff_delay(n, base=1.0, cap=8.0, unit=0.0) for n in range(6)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]  # equal jitter: half fixed at unit=0
    delays = [backoff_delay(n, base=1.0, cap=8.0, unit=1.0) for n in range(6)]
    assert delays == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_backoff_honours_retry_after_within_its_cap():
    assert backoff_delay(0, base=0.01, cap=1.0, unit=0.5, retry_after=3.0) == 3.0
    assert backoff_delay(0, base=0.01, cap=1.0, unit=0.5, retry_after=900.0, max_retry_after=60.0) == 60.0
    assert backoff_delay(3, base=1.0, cap=10.0, unit=1.0, retry_after=0.1) == 8.0  # never sooner than backoff


def test_jitter_is_seeded_per_request_and_attempt():
    assert jitter_unit(0, "row-1", 0) == jitter_unit(0, "row-1", 0)
    values = {jitter_unit(0, f"row-{i}", a) for i in range(50) for a in range(3)}
    assert len(values) == 150 and all(0.0 <= v < 1.0 for v in values)
    assert jitter_unit(1, "row-1", 0) != jitter_unit(0, "row-1", 0)


def test_budget_reserves_calls_and_stops_on_tokens_and_cost():
    tracker = BudgetTracker(Budget(max_calls=2))
    assert tracker.reserve_call() is None and tracker.reserve_call() is None
    assert "2 of max 2 calls" in tracker.reserve_call()
    tracker = BudgetTracker(Budget(max_tokens=100))
    held = tracker.reserve(60, 0.0)
    assert not isinstance(held, str) and isinstance(tracker.reserve(60, 0.0), str)  # 60 held + 60 > 100
    tracker.settle(held, 100, 0.0)
    assert "100 of max 100 tokens" in tracker.reserve(1, 0.0) and not tracker.fits_alone(1)
    tracker = BudgetTracker(Budget(max_cost=0.01))
    tracker.spend(10, 0.02)
    assert "$0.0200 of max $0.0100" in tracker.reserve(0, 0.001)
    # a budget shared with earlier runs starts from what they spent
    shared = BudgetTracker(Budget(max_calls=5).after(4, 0, 0.0))
    assert shared.reserve_call() is None and "5 of max 5 calls" in shared.reserve_call()
    with pytest.raises(ValueError):
        Budget(max_calls=-1)


def test_prices():
    price = Price(input_per_million=2.5, output_per_million=10.0)
    assert price.cost(1_000_000, 100_000) == pytest.approx(3.5)
    table = {"openai:gpt-x": price}
    assert price_for(table, "gpt-x", "openai:gpt-x") is price
    assert price_for({"gpt-x": price}, "gpt-x", "openai:gpt-x") is price
    assert price_for(table, "other", "openai:other") is None
    with pytest.raises(ValueError):
        Price(-1, 0)


@pytest.mark.parametrize(
    "successes, n, low, high",
    [
        (8, 10, 0.4901625, 0.9433178),  # reference values: statsmodels proportion_confint(method="wilson")
        (0, 10, 0.0, 0.2775328),
        (10, 10, 0.7224672, 1.0),
        (50, 100, 0.4038315, 0.5961685),
    ],
)
def test_wilson_interval(successes, n, low, high):
    got = wilson_interval(successes, n, 0.95)
    assert got == pytest.approx((low, high), abs=1e-6)


def test_wilson_interval_rejects_nonsense():
    with pytest.raises(ValueError):
        wilson_interval(1, 0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


# ------------------------------------------------------------------------- HTTP helpers


def test_retry_after_forms():
    h = httpx.Headers
    assert parse_retry_after(h({"retry-after": "2"})) == 2.0
    assert parse_retry_after(h({"retry-after": "0.05"})) == 0.05
    assert parse_retry_after(h({"retry-after-ms": "150", "retry-after": "9"})) == 0.15
    date = email.utils.formatdate(1_000_010.0, usegmt=True)
    assert parse_retry_after(h({"retry-after": date}), now=1_000_000.0) == pytest.approx(10.0)
    assert parse_retry_after(h({"retry-after": email.utils.formatdate(5.0, usegmt=True)}), now=100.0) == 0.0
    for garbage in ("soon", "-3", "nan", ""):
        assert parse_retry_after(h({"retry-after": garbage})) is None
    assert parse_retry_after(h({})) is None


def test_status_mapping():
    headers = httpx.Headers({"retry-after": "1.5"})
    err = error_for_status(429, b'{"error": {"message": "slow down"}}', headers, where="api")
    assert isinstance(err, TransientError) and err.kind == "rate_limited" and err.retry_after == 1.5
    assert "slow down" in str(err)
    for status in (500, 502, 503, 504, 529, 408):
        assert isinstance(error_for_status(status, b"", httpx.Headers(), where="api"), TransientError)
    err = error_for_status(
        401,
        b'{"error": {"message": "bad key"}}',
        httpx.Headers(),
        where="api",
        auth_hint="check the key in $OPENAI_API_KEY",
    )
    assert isinstance(err, FatalError) and err.status == 401
    assert "bad key" in str(err) and "$OPENAI_API_KEY" in str(err)
    err = error_for_status(400, b'{"error": {"message": "context length exceeded"}}', httpx.Headers(), where="api")
    assert isinstance(err, FatalError) and "context length exceeded" in str(err)
    assert "model name" in str(error_for_status(404, b"", httpx.Headers(), where="api"))


def test_loopback_hosts():
    assert all(is_loopback_host(h) for h in ("127.0.0.1", "127.8.9.1", "localhost", "::1", "[::1]"))
    assert not any(is_loopback_host(h) for h in ("api.openai.com", "10.0.0.1", "192.168.1.2", "8.8.8.8"))
