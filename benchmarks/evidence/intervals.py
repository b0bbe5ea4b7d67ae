"""95% intervals for the few seeds a benchmark affords: Student t for a mean, and for a fitted slope.

With 3 seeds t_{0.975, 2} = 4.30, so an interval is 4.3 standard errors wide on each side: honest about how
little three runs pin down. One value gives a zero-width interval, which callers report as one run.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats

LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """mean ± half_width (the 95% interval of the mean); n values behind it."""

    mean: float
    half_width: float
    n: int

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def format(self, scale: float = 1.0, digits: int = 3) -> str:
        if self.n < 2:
            return f"{scale * self.mean:.{digits}f} (1 run)"
        return f"{scale * self.mean:.{digits}f} ± {scale * self.half_width:.{digits}f}"


def mean_interval(values: Sequence[float]) -> Interval:
    """The mean and its Student-t 95% half-width over independent runs (seeds)."""
    if not values:
        raise ValueError("mean_interval needs at least one value (one per seed)")
    mean = statistics.fmean(values)
    if len(values) < 2:
        return Interval(mean, 0.0, 1)
    sem = statistics.stdev(values) / math.sqrt(len(values))
    return Interval(mean, float(stats.t.ppf((1 + LEVEL) / 2, len(values) - 1)) * sem, len(values))


@dataclass(frozen=True)
class Slope:
    """An ordinary-least-squares slope with its 95% interval (t with n − 2 degrees of freedom)."""

    slope: float
    half_width: float
    n: int

    @property
    def low(self) -> float:
        return self.slope - self.half_width

    @property
    def high(self) -> float:
        return self.slope + self.half_width


def slope_interval(xs: Sequence[float], ys: Sequence[float]) -> Slope:
    """The slope of ys on xs and its 95% interval; at least 3 points at 2 distinct xs."""
    if len(xs) != len(ys) or len(xs) < 3 or len(set(xs)) < 2:
        raise ValueError(
            f"slope_interval needs ≥ 3 (x, y) pairs at ≥ 2 distinct x, got {len(xs)} xs and {len(ys)} ys"
        )
    fit = stats.linregress(xs, ys)
    t = float(stats.t.ppf((1 + LEVEL) / 2, len(xs) - 2))
    return Slope(float(fit.slope), t * float(fit.stderr), len(xs))
