"""sacreBLEU 2.6's score arithmetic restated for the oracles: BLEU, chrF and TER from
(summed) statistics.

Written from sacreBLEU's ``BLEU.compute_bleu``, ``CHRF._compute_f_score`` and
``TER._compute_score_from_stats``, operation for operation (so numpy float32 sums, as in
sacreBLEU's bootstrap, round the same way), and independent of respeval's
``metrics/sacrebleu_scores.py``: the tests compare the two, so neither may lean on the
other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

Number = Union[int, float]

# --- BLEU ------------------------------------------------------------------------------------

MAX_ORDER = 4
SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}
LOG_ZERO = -9999999999  # sacreBLEU's my_log(0)


@dataclass
class BLEUResult:
    score: float
    counts: list[Number]
    totals: list[Number]
    precisions: list[float]
    bp: float
    sys_len: int
    ref_len: int

    def format(self, width: int = 2) -> str:
        """sacreBLEU's ``str(BLEUScore)`` without its signature."""
        ratio = self.sys_len / self.ref_len if self.ref_len else 0
        return (
            f"BLEU = {self.score:.{width}f} {'/'.join(f'{p:.1f}' for p in self.precisions)} "
            f"(BP = {self.bp:.3f} ratio = {ratio:.3f} hyp_len = {self.sys_len:d} ref_len = {self.ref_len:d})"
        )


def my_log(value: float) -> float:
    return LOG_ZERO if value == 0.0 else math.log(value)


def compute_bleu(
    stats: Sequence[Number],
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    max_order: int = MAX_ORDER,
) -> BLEUResult:
    """BLEU of a row ``[sys_len, ref_len, correct_1..N, total_1..N]`` (one segment's, or a sum)."""
    if smooth_method not in SMOOTH_DEFAULTS:
        raise ValueError(f"unknown smooth_method {smooth_method!r}")
    k = SMOOTH_DEFAULTS[smooth_method] if smooth_value is None else smooth_value
    sys_len, ref_len = int(stats[0]), int(stats[1])
    correct = list(stats[2 : 2 + max_order])
    total = list(stats[2 + max_order : 2 + 2 * max_order])
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    else:
        bp = 1.0
    precisions = [0.0] * max_order
    if not any(correct):  # sacreBLEU #141: no match at any order is 0 whatever the smoothing
        return BLEUResult(0.0, correct, total, precisions, bp, sys_len, ref_len)
    doubling = 1.0
    orders = max_order
    for n in range(1, max_order + 1):
        if smooth_method == "add-k" and n > 1:
            assert k is not None
            correct[n - 1] += k
            total[n - 1] += k
        if total[n - 1] == 0:
            break
        if effective_order:
            orders = n
        if correct[n - 1] != 0:
            precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1]
        elif smooth_method == "exp":
            doubling *= 2
            precisions[n - 1] = 100.0 / (doubling * total[n - 1])
        elif smooth_method == "floor":
            assert k is not None
            precisions[n - 1] = 100.0 * k / total[n - 1]
    score = bp * math.exp(sum([my_log(p) for p in precisions[:orders]]) / orders)
    return BLEUResult(score, correct, total, precisions, bp, sys_len, ref_len)


# --- chrF ------------------------------------------------------------------------------------

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
    """chrF (0-100) of ``[hyp, ref, match]`` per order, character orders first."""
    factor = beta**2
    orders = char_order + word_order
    f_sum, p_sum, r_sum, both = 0.0, 0.0, 0.0, 0
    for i in range(orders):
        n_hyp, n_ref, n_match = stats[3 * i : 3 * i + 3]
        p = n_match / n_hyp if n_hyp > 0 else EPS
        r = n_match / n_ref if n_ref > 0 else EPS
        denominator = factor * p + r
        f_sum += ((1 + factor) * p * r / denominator) if denominator > 0 else EPS
        if n_hyp > 0 and n_ref > 0:
            p_sum += p
            r_sum += r
            both += 1
    if eps_smoothing:
        return 100 * f_sum / orders
    if both:
        p_sum /= both
        r_sum /= both
    else:
        p_sum = r_sum = 0.0
    if not p_sum + r_sum:
        return 0.0
    score = (1 + factor) * p_sum * r_sum
    score /= (factor * p_sum) + r_sum
    return 100 * score


# --- TER -------------------------------------------------------------------------------------


@dataclass
class TERResult:
    score: float
    num_edits: int
    ref_length: Number


def compute_ter(stats: Sequence[Number]) -> TERResult:
    """TER (0-100, may exceed 100) of ``[edits, reference length]``."""
    edits, ref_length = stats[0], stats[1]
    if ref_length > 0:
        rate = edits / ref_length
    else:
        rate = 1.0 if edits > 0 else 0.0
    return TERResult(100 * rate, int(edits), ref_length)
