"""sacreBLEU 2.6's score arithmetic: BLEU, chrF and TER from (summed) statistics.

Scores are pure functions of per-row integer statistics summed over rows, so a corpus
score, a bootstrap replicate and a distributed reduce are all the same call.  Each
function follows sacreBLEU's operations statement for statement, so the floats are
bit-identical to sacreBLEU's, also on numpy float32 sums (sacreBLEU's bootstrap).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

__all__ = [
    "EPS",
    "LOG_ZERO",
    "MAX_ORDER",
    "SMOOTH_DEFAULTS",
    "BETA",
    "CHAR_ORDER",
    "WORD_ORDER",
    "BLEUScoreParts",
    "TERScoreParts",
    "brevity_penalty",
    "chrf_score",
    "compute_bleu",
    "compute_ter",
    "my_log",
]

Number = Union[int, float]

# --- BLEU ------------------------------------------------------------------------------------

MAX_ORDER = 4

#: Default smoothing values (Chen & Cherry 2014); ``None`` = the method takes no value.
SMOOTH_DEFAULTS = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}

#: log(0) replacement used by sacreBLEU; keeps the geometric mean finite but ~0.
LOG_ZERO = -9999999999


@dataclass
class BLEUScoreParts:
    """A BLEU score and the numbers it was computed from.

    Attributes
    ----------
    score : float
        BLEU on the 0-100 scale.
    counts : list
        Matched n-grams per order (after ``add-k`` smoothing, if used).
    totals : list
        Hypothesis n-grams per order (after ``add-k`` smoothing, if used).
    precisions : list of float
        Smoothed n-gram precisions on the 0-100 scale.
    bp : float
        Brevity penalty.
    sys_len : int
        Hypothesis length (tokens).
    ref_len : int
        Effective reference length (tokens).
    """

    score: float
    counts: list[Number]
    totals: list[Number]
    precisions: list[float]
    bp: float
    sys_len: int
    ref_len: int

    @property
    def ratio(self) -> float:
        """Hypothesis / reference length ratio (0 if the reference length is 0)."""
        return self.sys_len / self.ref_len if self.ref_len else 0

    def format(self, width: int = 2) -> str:
        """Render like sacreBLEU, e.g. ``BLEU = 20.80 54.4/26.6/14.9/8.7 (BP = 1.000 ...)``."""
        precisions = "/".join(f"{p:.1f}" for p in self.precisions)
        return (
            f"BLEU = {self.score:.{width}f} {precisions} (BP = {self.bp:.3f} "
            f"ratio = {self.ratio:.3f} hyp_len = {self.sys_len:d} "
            f"ref_len = {self.ref_len:d})"
        )


def my_log(value: float) -> float:
    """Natural log with ``log(0)`` replaced by ``-9999999999`` (sacreBLEU's ``my_log``)."""
    if value == 0.0:
        return LOG_ZERO
    return math.log(value)


def brevity_penalty(sys_len: int, ref_len: int) -> float:
    """``1`` if the hypothesis is not shorter, else ``exp(1 - r/c)``; ``0`` if empty."""
    if sys_len >= ref_len:
        return 1.0
    if sys_len == 0:
        return 0.0
    return math.exp(1 - ref_len / sys_len)


def compute_bleu(
    stats: Sequence[Number],
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    max_order: int = MAX_ORDER,
) -> BLEUScoreParts:
    """BLEU from (summed) sufficient statistics, exactly as sacreBLEU's ``compute_bleu``.

    Parameters
    ----------
    stats : sequence of numbers
        ``[sys_len, ref_len, correct_1..N, total_1..N]``; a single segment's row or the
        sum of many rows. Not modified.
    smooth_method : {"exp", "floor", "add-k", "none"}
        ``exp``: the k-th zero-match order gets precision ``100 / (2**k * total)``
        (mteval NIST smoothing). ``floor``: ``100 * value / total`` for zero matches.
        ``add-k``: ``value`` added to correct and total for orders >= 2. ``none``.
    smooth_value : float, optional
        The value for ``floor`` (default 0.1) and ``add-k`` (default 1).
    effective_order : bool
        Average over orders 1..eff only, eff being the highest order with at least one
        hypothesis n-gram (sentence-level BLEU).
    max_order : int
        N.

    Returns
    -------
    BLEUScoreParts
        The score and its components.
    """
    if smooth_method not in SMOOTH_DEFAULTS:
        raise ValueError(f"unknown smooth_method {smooth_method!r}")
    if smooth_value is None:
        smooth_value = SMOOTH_DEFAULTS[smooth_method]
    value: float = 0.0 if smooth_value is None else smooth_value  # exp and none use no value

    # Lists of the caller's elements (ints, floats or numpy scalars): add-k modifies them.
    correct = list(stats[2 : 2 + max_order])
    total = list(stats[2 + max_order : 2 + 2 * max_order])
    sys_len, ref_len = int(stats[0]), int(stats[1])

    bp = brevity_penalty(sys_len, ref_len)
    precisions = [0.0] * max_order

    # No match at any order: 0 whatever the smoothing (sacreBLEU #141). Counts unsmoothed.
    if not any(correct):
        return BLEUScoreParts(0.0, correct, total, precisions, bp, sys_len, ref_len)

    zero_match_factor = 1.0  # exp smoothing: doubles at every zero-match order
    eff_order = max_order
    for n in range(1, max_order + 1):
        i = n - 1
        if smooth_method == "add-k" and n > 1:
            correct[i] += value
            total[i] += value
        if total[i] == 0:
            break  # the hypothesis is shorter than n tokens: no higher order exists
        if effective_order:
            eff_order = n
        # Keep sacreBLEU's operation order (100. * c / t etc.): with float32 inputs the
        # rounding of every intermediate matters for bit-identical bootstrap scores.
        if correct[i] == 0:
            if smooth_method == "exp":
                zero_match_factor *= 2
                precisions[i] = 100.0 / (zero_match_factor * total[i])
            elif smooth_method == "floor":
                precisions[i] = 100.0 * value / total[i]
            # "none" and "add-k" leave the precision at 0.0
        else:
            precisions[i] = 100.0 * correct[i] / total[i]

    log_sum = sum([my_log(p) for p in precisions[:eff_order]])
    score = bp * math.exp(log_sum / eff_order)
    return BLEUScoreParts(score, correct, total, precisions, bp, sys_len, ref_len)


# --- chrF ------------------------------------------------------------------------------------

#: chrF's stand-in for a zero precision, recall or F (sacreBLEU's ``CHRF._EPS_SMOOTHING``'s epsilon).
EPS = 1e-16
CHAR_ORDER = 6
WORD_ORDER = 0
BETA = 2


def chrf_score(
    stats: Sequence[Number],
    char_order: int = CHAR_ORDER,
    word_order: int = WORD_ORDER,
    beta: float = BETA,
    eps_smoothing: bool = False,
) -> float:
    """chrF from (summed) statistics, on the 0-100 scale.

    Parameters
    ----------
    stats : sequence of numbers
        ``[hyp, ref, match]`` per order.
    char_order, word_order : int
        The orders the statistics were built with.
    beta : float
        Recall weight (chrF2 by default).
    eps_smoothing : bool
        ``False`` (sacreBLEU default): F-beta of the precision and recall averaged over
        the orders where both sides have n-grams; 0 if there is none.
        ``True`` (chrF++.py): mean over all orders of per-order F-beta, where an order with
        no hypothesis (reference) n-grams has precision (recall) 1e-16 and an order whose
        F is undefined scores 1e-16.

    Returns
    -------
    float
    """
    factor = beta**2
    n_orders = char_order + word_order
    # The arithmetic below mirrors sacreBLEU's statement for statement, so that numpy
    # float32 inputs (bootstrap resamples) round the same way.
    eps_sum = 0.0
    sum_precision, sum_recall = 0.0, 0.0
    effective_order = 0
    for i in range(n_orders):
        n_hyp, n_ref, n_match = stats[3 * i : 3 * i + 3]
        precision = n_match / n_hyp if n_hyp > 0 else EPS
        recall = n_match / n_ref if n_ref > 0 else EPS
        denominator = factor * precision + recall
        eps_sum += ((1 + factor) * precision * recall / denominator) if denominator > 0 else EPS
        if n_hyp > 0 and n_ref > 0:
            sum_precision += precision
            sum_recall += recall
            effective_order += 1

    if eps_smoothing:
        return 100 * eps_sum / n_orders

    if effective_order == 0:
        return 0.0
    avg_precision = sum_precision / effective_order
    avg_recall = sum_recall / effective_order
    if not avg_precision + avg_recall:
        return 0.0
    score = (1 + factor) * avg_precision * avg_recall
    score /= (factor * avg_precision) + avg_recall
    return 100 * score


# --- TER -------------------------------------------------------------------------------------


@dataclass
class TERScoreParts:
    """A TER score with its statistics.

    Attributes
    ----------
    score : float
        TER on the 0-100 scale (can exceed 100).
    num_edits : int
        Total edits (sacreBLEU truncates this with ``int()``).
    ref_length : float
        Total of the per-segment average reference lengths.
    """

    score: float
    num_edits: int
    ref_length: Number


def compute_ter(stats: Sequence[Number]) -> TERScoreParts:
    """TER from (summed) ``[edits, reference length]``.

    With a total reference length of 0 the score is 100 if there are edits, else 0.
    """
    total_edits, ref_length = stats[0], stats[1]
    if ref_length > 0:
        rate = total_edits / ref_length
    elif total_edits > 0:
        rate = 1.0  # empty references, non-empty hypotheses
    else:
        rate = 0.0  # nothing on either side
    return TERScoreParts(100 * rate, int(total_edits), ref_length)
