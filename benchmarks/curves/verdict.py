"""From points to a verdict: accuracy intervals that stay inside [0, 1], the gap (transformer − the best
baseline chosen on validation) at each fraction, its slope per decade of data, and the data size at which
the gap would close, each with a 95% interval.

Accuracy: Wilson's score interval on the test predictions pooled over seeds (≥ 1,000 test examples per
run), which cannot leave [0, 1]. Gap and slope: a bootstrap that resamples seeds within each (arm, fraction)
and test examples through a binomial draw at each run's accuracy, so both the seed spread and the finite
test split widen the interval. The closing size is where the fitted line gap(log10 n) = a + b·log10 n
reaches zero; it exists only where b > 0 and the gap is still negative.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Z = 1.959964  # the two-sided 95% normal quantile
BOOTSTRAP = 4000


def wilson(correct: float, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval for a proportion `correct / n`."""
    if n <= 0:
        raise ValueError("wilson: n must be positive")
    p = correct / n
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2)) / (1 + Z**2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Point:
    """One (arm, fraction) over its seeds."""

    arm: str
    fraction: float
    n_train: int
    test: tuple[float, ...]
    n_test: tuple[int, ...]
    val: tuple[float, ...]

    @property
    def acc(self) -> float:
        return float(np.mean(self.test))

    @property
    def interval(self) -> tuple[float, float]:
        correct = sum(a * n for a, n in zip(self.test, self.n_test, strict=True))
        return wilson(correct, sum(self.n_test))

    def resample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """`size` bootstrap means: seeds drawn with replacement, each seed's test count drawn binomially."""
        seeds = rng.integers(0, len(self.test), size=(size, len(self.test)))
        acc = np.asarray(self.test)[seeds]
        n = np.asarray(self.n_test)[seeds]
        return (rng.binomial(n, acc) / n).mean(axis=1)


def points(
    rows: Sequence[dict[str, Any]], modality: str, permuted: bool = False
) -> dict[tuple[str, float], Point]:
    grouped: dict[tuple[str, float], list[dict[str, Any]]] = {}
    for row in rows:
        if row["modality"] == modality and bool(row.get("permuted", False)) == permuted:
            grouped.setdefault((row["arm"], float(row["fraction"])), []).append(row)
    return {
        key: Point(
            arm=key[0], fraction=key[1], n_train=int(group[0]["n_train"]),
            test=tuple(float(r["test_acc"]) for r in group), n_test=tuple(int(r["n_test"]) for r in group),
            val=tuple(float(r["val_acc"]) for r in group),
        )
        for key, group in grouped.items()
    }  # fmt: skip


@dataclass(frozen=True)
class Gap:
    fraction: float
    n_train: int
    baseline: str
    gap: float
    low: float
    high: float


@dataclass(frozen=True)
class Verdict:
    gaps: tuple[Gap, ...]
    slope: float
    slope_low: float
    slope_high: float
    closes_at: float | None  # training examples where the fitted gap reaches zero
    closes_low: float | None
    closes_high: float | None
    reading: str  # "closes", "does not close", "already closed" or "undetermined"
    missing: tuple[float, ...] = ()  # the transformer's fractions no baseline has run at yet (left out)


def best_baseline(table: dict[tuple[str, float], Point], fraction: float, baselines: Sequence[str]) -> str:
    """The baseline with the best mean validation accuracy at this fraction (test is never read)."""
    present = [b for b in baselines if (b, fraction) in table]
    if not present:
        raise LookupError(f"no baseline has run at fraction {fraction}")
    return max(present, key=lambda b: float(np.mean(table[(b, fraction)].val)))


def verdict(
    table: dict[tuple[str, float], Point], transformer: str, baselines: Sequence[str], seed: int = 0
) -> Verdict:
    rng = np.random.default_rng(seed)
    fractions = sorted(f for (arm, f) in table if arm == transformer)
    missing = tuple(f for f in fractions if not any((b, f) in table for b in baselines))
    fractions = [f for f in fractions if f not in missing]  # a partial sweep: the fractions both have
    gaps, draws, logs = [], [], []
    for fraction in fractions:
        baseline = best_baseline(table, fraction, baselines)
        mine, theirs = table[(transformer, fraction)], table[(baseline, fraction)]
        sample = mine.resample(rng, BOOTSTRAP) - theirs.resample(rng, BOOTSTRAP)
        low, high = np.percentile(sample, [2.5, 97.5])
        gaps.append(Gap(fraction, mine.n_train, baseline, mine.acc - theirs.acc, float(low), float(high)))
        draws.append(sample)
        logs.append(math.log10(mine.n_train))
    if len(gaps) < 2:
        raise LookupError("a slope needs the transformer and a baseline at two fractions or more")
    x = np.asarray(logs)
    y = np.stack(draws, axis=1)  # (BOOTSTRAP, fractions)
    slopes, intercepts = np.polyfit(x, y.T, 1)
    slope, intercept = np.polyfit(x, [g.gap for g in gaps], 1)
    s_low, s_high = np.percentile(slopes, [2.5, 97.5])
    last = gaps[-1]
    closes = closes_low = closes_high = None
    if last.low > 0:
        reading = "already closed"
    elif s_high <= 0:
        reading = "does not close"
    elif s_low > 0 and slope > 0:
        reading = "closes"
        crossing = 10 ** (-intercepts[slopes > 0] / slopes[slopes > 0])
        closes = float(10 ** (-intercept / slope))
        closes_low, closes_high = (float(v) for v in np.percentile(crossing, [2.5, 97.5]))
    else:
        reading = "undetermined"  # the slope's interval holds zero: the data cannot say
    return Verdict(
        tuple(gaps),
        float(slope),
        float(s_low),
        float(s_high),
        closes,
        closes_low,
        closes_high,
        reading,
        missing,
    )
