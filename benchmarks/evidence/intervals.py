"""95% intervals for the few seeds a benchmark affords: Student t for a mean and for a fitted slope; for
accuracies, the Wilson score interval of a proportion and a paired hierarchical bootstrap over seeds and
test examples.

With 3 seeds t_{0.975, 2} = 4.30, so an interval is 4.3 standard errors wide on each side: honest about how
little three runs pin down. One value gives a zero-width interval, which callers report as one run.

An accuracy is bounded, and a t-interval over 3 seeds of 64 examples ran past 100% (82.3% [42.5, 122.1]).
Accuracies and the differences between arms therefore come from `hierarchical_bootstrap`: each resample
draws seeds with replacement, then test examples with replacement within each drawn seed (the two sources
of variation, in the order they nest), and recomputes the statistic from the resampled accuracies, so the
interval cannot leave the statistic's feasible range. Arms are resampled together (the same seeds, the same
examples: every arm is scored on one fixed test stream), which pairs them. With 3 seeds the seed level
has only 10 distinct draws, so the between-seed spread is underestimated by a factor (n − 1)/n: the
intervals say how precisely these seeds and examples fix the statistic, not more.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
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


@dataclass(frozen=True)
class Proportion:
    """successes of n with its 95% Wilson score interval, inside [0, 1] at every count."""

    successes: int
    n: int
    low: float
    high: float

    @property
    def mean(self) -> float:
        return self.successes / self.n


def wilson_interval(successes: int, n: int) -> Proportion:
    """The Wilson score interval (Wilson 1927; Newcombe 1998 for its coverage against the Wald interval),
    which stays inside [0, 1] and is not zero-width at 0 or n successes."""
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"wilson_interval needs 0 <= successes <= n and n >= 1, got {successes} of {n}")
    z = float(stats.norm.ppf((1 + LEVEL) / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return Proportion(successes, n, max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class Bootstrap:
    """A statistic of the arms' accuracies (mean: its value on the data) and its 95% percentile interval
    from `hierarchical_bootstrap`; n seeds of `examples` test examples behind it."""

    mean: float
    low: float
    high: float
    n: int
    examples: int


Statistic = Callable[[Mapping[str, np.ndarray]], np.ndarray]
RESAMPLES = 2000


def hierarchical_bootstrap(
    correct: Mapping[str, np.ndarray],
    statistic: Statistic,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Bootstrap:
    """`correct[arm]`: (seeds, examples) 0/1 per test example, the same examples in the same order for
    every arm and seed. `statistic` maps each arm's accuracies (arrays of equal shape) to the statistic,
    elementwise, e.g. `lambda a: 100 * (a["transformer"] - a["LSTM"])`. Seeds are resampled, then examples
    within each drawn seed, the same indices for every arm (paired); the interval is the 2.5 and 97.5
    percentiles of the resampled statistic."""
    arrays = {arm: np.asarray(values, dtype=np.float64) for arm, values in correct.items()}
    shapes = {a.shape for a in arrays.values()}
    if not arrays or len(shapes) != 1 or len(next(iter(shapes))) != 2 or 0 in next(iter(shapes)):
        raise ValueError(
            f"hierarchical_bootstrap needs one (seeds, examples) array per arm, all one shape; got {shapes}"
        )
    seeds, examples = next(iter(shapes))
    rng = np.random.default_rng(seed)
    drawn_seeds = rng.integers(0, seeds, size=(resamples, seeds))  # (R, S)
    drawn_examples = rng.integers(0, examples, size=(resamples, seeds, examples), dtype=np.int32)  # (R, S, M)
    resampled = {
        arm: a[drawn_seeds[..., None], drawn_examples].mean(axis=(1, 2)) for arm, a in arrays.items()
    }  # (R,) per arm
    values = np.asarray(statistic(resampled), dtype=np.float64)
    observed = {arm: a.mean(keepdims=True).ravel() for arm, a in arrays.items()}  # (1,) per arm
    point = float(np.asarray(statistic(observed)).ravel()[0])
    low, high = np.percentile(values, [100 * (1 - LEVEL) / 2, 100 * (1 + LEVEL) / 2])
    return Bootstrap(point, float(low), float(high), seeds, examples)
