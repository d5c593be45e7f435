"""Repeated looks: an always-valid sequential test of a paired difference (judge until the
answer is known), and the alpha spending of a monitor that tests every window it sees.

**Alpha spending over looks** (:func:`spent_alpha`, :class:`AlphaSpending`): a stream tested
again and again (a monitor comparing each new window with its reference) gives its ``k``-th
look (k = 1, 2, ...) the level

    alpha_k = alpha / (k (k + 1)),    so that    sum over k of alpha_k = alpha.

By the union bound, when nothing changed the chance that *any* look, ever, raises a false
alarm is at most ``alpha``, whatever the dependence between the looks (every window is
compared with the same reference, so their tests are correlated) and however long the
stream runs: the guarantee is always valid, with no horizon fixed in advance.  The price is
power that falls with ``k`` (the 10th look tests at ``alpha / 110``): start a new reference
(and with it ``k = 1``) when the system changes on purpose.  Within a look several metrics
share its ``alpha_k`` through Holm's correction.

**The sequential test of a paired difference** (:class:`SequentialTest`):

The observations are per-case paired outcomes in ``[-1, 1]``: +1 the candidate won, -1 the
baseline won, 0 a tie (or a pair whose two orders disagreed), and fractions for the vote
margin of several samples.  Their mean ``mu`` is the candidate's net win rate.

:class:`SequentialTest` keeps a **confidence sequence** for ``mu``: a set ``CS_t`` after
every observation such that, when the cases are independent draws,

    P(mu is outside CS_t for some t, ever) <= alpha.

It is built by betting (Waudby-Smith and Ramdas, *Estimating means of bounded random
variables by betting*, JRSS-B 2023, "hedged capital" with the aGRAPA bet): for each candidate
value ``m`` of the mean (a grid of ``1/200`` steps on ``(-1, 1)``) two gamblers bet that the
next outcome falls above, respectively below ``m``, with predictable stakes; their wealth
is a non-negative supermartingale when ``mu = m``, so by Ville's inequality it reaches
``1/alpha`` with probability at most ``alpha``.  ``m`` leaves the set for good once the
averaged wealth of the pair has reached ``1/alpha``.

The decision is read from the set, so every way of being wrong is bounded by ``alpha``,
at whatever moment the test stops:

* ``improved``  once the set lies above 0 (every ``m <= 0`` excluded);
* ``regressed`` once it lies below 0;
* ``no_change`` once it lies inside ``(-margin, margin)``: any change is smaller than
  ``margin``, the smallest net win rate worth detecting.

So P(improved or regressed | mu = 0) <= alpha and P(no_change | |mu| >= margin) <= alpha.
When the observations run out first the test is **undecided** (``decision`` None);
``respeval.compare`` then decides with the fixed-sample test on every case, having kept half
of its error rate for that stage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["SEQUENTIAL_METHOD", "SPENDING_METHOD", "AlphaSpending", "SequentialState", "SequentialTest", "spent_alpha"]

SEQUENTIAL_METHOD = "confidence sequence (hedged betting, aGRAPA; Waudby-Smith & Ramdas 2023)"
SPENDING_METHOD = "alpha spending alpha/(k(k+1)) over looks (union bound), Holm within a look"


def spent_alpha(alpha: float, look: int) -> float:
    """The level of the ``look``-th look (1-based): ``alpha / (look (look + 1))`` (see the
    module docstring); the levels of all looks sum to ``alpha``."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if int(look) != look or look < 1:
        raise ValueError(f"look must be a whole number >= 1, got {look!r}")
    return alpha / (look * (look + 1))


@dataclass(frozen=True)
class AlphaSpending:
    """The family-wise false-alarm rate ``alpha`` of an unbounded series of looks, spent as
    :func:`spent_alpha` says: ``level(k)`` for the ``k``-th look, ``spent(k)`` for the first
    ``k`` together (``alpha * k / (k + 1)``, never more than ``alpha``)."""

    alpha: float = 0.05

    def __post_init__(self) -> None:
        spent_alpha(self.alpha, 1)

    def level(self, look: int) -> float:
        return spent_alpha(self.alpha, look)

    def spent(self, looks: int) -> float:
        if looks < 0:
            raise ValueError(f"looks must be >= 0, got {looks}")
        return self.alpha * looks / (looks + 1)

    @property
    def method(self) -> str:
        return SPENDING_METHOD


_GRID_STEPS = 200  # grid points per unit of the mean
_MAX_BET = 0.5  # the largest fraction of wealth staked (keeps every factor >= 1/2)


@dataclass(frozen=True)
class SequentialState:
    """Where the test stands: the decision (None while undecided), the observations seen,
    the confidence sequence's current ends and the always-valid p-value of ``mu = 0``."""

    decision: str | None
    observations: int
    low: float
    high: float
    mean: float
    p_value: float


class SequentialTest:
    """The sequential test of the module docstring.

    Args:
        alpha: the error rate of every decision (and ``1 - alpha`` the confidence sequence's
            coverage).
        margin: the smallest change worth detecting, as a net win rate in ``(0, 1)``;
            ``no_change`` means the change is smaller than this.

    Feed it with :meth:`update` (one outcome at a time, in the order the cases were drawn);
    it returns the decision once there is one, and ignores nothing: further updates keep
    narrowing the set, the first decision stays the decision.
    """

    def __init__(self, alpha: float = 0.05, margin: float = 0.1) -> None:
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if not 0 < margin < 1:
            raise ValueError(f"margin must be in (0, 1), got {margin}")
        self.alpha = alpha
        self.margin = margin
        steps = _GRID_STEPS
        # the grid holds 0 and +-margin exactly, so the decisions do not depend on rounding
        grid = np.linspace(-1.0, 1.0, 2 * steps + 1)[1:-1]
        self.grid = np.unique(np.concatenate([grid, [0.0, -margin, margin]]))
        self._log_up = np.zeros(self.grid.size)
        self._log_down = np.zeros(self.grid.size)
        self._excluded = np.zeros(self.grid.size, dtype=bool)
        self._max_wealth_at_zero = 1.0
        self._zero = int(np.flatnonzero(self.grid == 0.0)[0])
        self._threshold = math.log(1 / alpha)
        self.n = 0
        self._sum = 0.0
        # the running estimates the bets are made from (regularised towards 0 and variance 1)
        self._mean_hat = 0.0
        self._var_sum = 1.0
        self.decision: str | None = None
        self.decided_at: int | None = None

    def _bets(self) -> tuple[np.ndarray, np.ndarray]:
        """aGRAPA: stake ``(mean - m) / (var + (mean - m)^2)`` on the side the estimate
        favours, capped so that no outcome in [-1, 1] can take more than half the wealth."""
        var = self._var_sum / (self.n + 1)
        gap = self._mean_hat - self.grid
        stake = gap / (var + gap * gap)
        up = np.clip(stake, 0.0, _MAX_BET / (1.0 + self.grid))
        down = np.clip(-stake, 0.0, _MAX_BET / (1.0 - self.grid))
        return up, down

    def update(self, outcome: float) -> str | None:
        """Add one paired outcome in [-1, 1]; the decision, once there is one."""
        x = float(outcome)
        if not -1.0 <= x <= 1.0:
            raise ValueError(f"a paired outcome must be in [-1, 1], got {outcome!r}")
        up, down = self._bets()
        self._log_up += np.log1p(up * (x - self.grid))
        self._log_down += np.log1p(-down * (x - self.grid))
        # the hedged wealth: half with each gambler
        wealth = np.logaddexp(self._log_up, self._log_down) - math.log(2.0)
        self._excluded |= wealth >= self._threshold
        self._max_wealth_at_zero = max(self._max_wealth_at_zero, math.exp(min(wealth[self._zero], 700.0)))
        self._var_sum += (x - self._mean_hat) ** 2
        self.n += 1
        self._sum += x
        self._mean_hat = self._sum / (self.n + 1)
        if self.decision is None:
            self.decision = self._decide()
            if self.decision is not None:
                self.decided_at = self.n
        return self.decision

    def _decide(self) -> str | None:
        inside = ~self._excluded
        if not inside.any():
            # every grid point excluded: the set is narrower than a grid step; it is where
            # the last point left (the mean itself is never far from the observed mean)
            return "improved" if self._sum > 0 else "regressed" if self._sum < 0 else "no_change"
        low, high = self.grid[inside][0], self.grid[inside][-1]
        if low > 0:
            return "improved"
        if high < 0:
            return "regressed"
        if low > -self.margin and high < self.margin:
            return "no_change"
        return None

    def interval(self) -> tuple[float, float]:
        """The confidence sequence's current ends (conservatively: the nearest excluded grid
        points around the set, or -1 / 1)."""
        inside = np.flatnonzero(~self._excluded)
        if inside.size == 0:
            mean = self._sum / self.n if self.n else 0.0
            return (mean, mean)
        lo, hi = inside[0], inside[-1]
        low = float(self.grid[lo - 1]) if lo > 0 else -1.0
        high = float(self.grid[hi + 1]) if hi + 1 < self.grid.size else 1.0
        return (low, high)

    def state(self) -> SequentialState:
        low, high = self.interval()
        return SequentialState(
            decision=self.decision,
            observations=self.n,
            low=low,
            high=high,
            mean=self._sum / self.n if self.n else math.nan,
            p_value=min(1.0, 1.0 / self._max_wealth_at_zero),
        )
