"""The speed ratio of two interleaved timings: the median of the per-round ratios and its 95% interval.

`timing.interleaved` runs the arms in alternating rounds (A B, B A, A B, …), so the two calls of one round
share the machine's load of that moment; their ratio cancels it, and the rounds are independent draws of
that ratio. The interval of the median is distribution-free (order statistics: the k-th smallest and k-th
largest ratio, k the largest with P(Binomial(n, 1/2) < k) ≤ 2.5%), since timing noise is skewed, not normal.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.evidence.timing import Timing

LEVEL = 0.95
MIN_ROUNDS = 6  # fewer rounds cannot give 95%: [min, max] of five covers the median with 93.75%


@dataclass(frozen=True)
class MedianInterval:
    """median, and the 95% interval [low, high] of the median, over n paired rounds."""

    median: float
    low: float
    high: float
    n: int

    def format(self, digits: int = 2, unit: str = "×") -> str:
        return f"{self.median:.{digits}f}{unit} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def median_interval(values: Sequence[float]) -> MedianInterval:
    """The median of `values` and the order-statistic 95% interval around it."""
    n = len(values)
    if n < MIN_ROUNDS:
        raise ValueError(f"median_interval needs at least {MIN_ROUNDS} values for a 95% interval, got {n}")
    tail = (1 - LEVEL) / 2

    def below(j: int) -> float:  # P(Binomial(n, 1/2) <= j): the j+1-th smallest value exceeds the median
        return sum(math.comb(n, i) for i in range(j + 1)) / 2**n

    k = 1  # valid for n >= MIN_ROUNDS: P(all n values above the median) = 2^-n <= 2.5%
    while k < n // 2 and below(k) <= tail:
        k += 1
    ordered = sorted(values)
    return MedianInterval(statistics.median(values), ordered[k - 1], ordered[n - k], n)


def ratio_interval(slow: Timing, fast: Timing) -> MedianInterval:
    """slow / fast per round (the two timings of one `interleaved` call, in round order)."""
    if len(slow.seconds) != len(fast.seconds):
        raise ValueError(
            f"ratio_interval pairs rounds: got {len(slow.seconds)} and {len(fast.seconds)} timed calls"
        )
    return median_interval([s / f for s, f in zip(slow.seconds, fast.seconds, strict=True)])
