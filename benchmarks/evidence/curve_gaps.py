"""What a learning curve says about the claim: the gap between the transformer and the best inductive-bias
baseline at every fraction, whether that gap shrinks as data grows, and whether the curve clears its floor.

- The best baseline at a fraction is the one with the higher mean *validation* accuracy (test never picks).
- A gap is paired by seed: seed s of the transformer minus seed s of the baseline, in points; its 95%
  interval is Student t over the seeds.
- The trend is the least-squares slope of every paired gap on log10(training examples), in points per
  decade of data, with its 95% interval: a positive slope means the transformer catches up as data grows.
- A curve is evidence only when its best arm at full data clears the floor: 15 points above the majority
  class, or 10× chance where many balanced classes make the majority meaningless (35 keywords).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchmarks.evidence.arms import SELF_PRETRAINED, TRANSFORMER
from benchmarks.evidence.intervals import mean_interval, slope_interval
from benchmarks.evidence.learning_curves import Point

TRANSFORMER_ARMS = (TRANSFORMER, SELF_PRETRAINED)
MAJORITY_MARGIN = 0.15
CHANCE_FACTOR = 10.0


@dataclass(frozen=True, kw_only=True)
class Gap:
    modality: str
    fraction: float
    train_examples: int
    arm: str
    baseline: str
    points: tuple[float, ...]  # one per paired seed, in accuracy points
    mean: float
    low: float
    high: float


@dataclass(frozen=True, kw_only=True)
class GapTrend:
    modality: str
    arm: str
    slope: float  # points per decade of training examples
    low: float
    high: float
    n: int


@dataclass(frozen=True, kw_only=True)
class Floor:
    modality: str
    rule: str
    floor: float
    best_arm: str
    best_mean: float
    clears: bool


def best_baseline(points: Sequence[Point], modality: str, fraction: float) -> Point | None:
    rivals = [
        p
        for p in points
        if p.modality == modality and p.fraction == fraction and p.arm not in TRANSFORMER_ARMS
    ]
    return max(rivals, key=lambda p: p.val_mean, default=None)


def gaps(points: Sequence[Point]) -> list[Gap]:
    found = []
    for p in points:
        if p.arm not in TRANSFORMER_ARMS:
            continue
        rival = best_baseline(points, p.modality, p.fraction)
        if rival is None:
            continue
        paired = [100 * (a - b) for a, b in zip(p.test_values, rival.test_values, strict=False)]
        if not paired:
            continue
        interval = mean_interval(paired)
        found.append(
            Gap(
                modality=p.modality,
                fraction=p.fraction,
                train_examples=p.train_examples,
                arm=p.arm,
                baseline=rival.arm,
                points=tuple(paired),
                mean=interval.mean,
                low=interval.low,
                high=interval.high,
            )
        )
    return found


def gap_trends(found: Sequence[Gap]) -> list[GapTrend]:
    """One slope per (modality, transformer arm) over every paired gap; None where fewer than three gaps at
    two data sizes exist (the slope has no interval there)."""
    trends = []
    for key in dict.fromkeys((g.modality, g.arm) for g in found):
        mine = [g for g in found if (g.modality, g.arm) == key]
        xs = [math.log10(g.train_examples) for g in mine for _ in g.points]
        ys = [value for g in mine for value in g.points]
        if len(xs) < 3 or len(set(xs)) < 2:
            continue
        slope = slope_interval(xs, ys)
        trends.append(
            GapTrend(
                modality=key[0], arm=key[1], slope=slope.slope, low=slope.low, high=slope.high, n=slope.n
            )
        )
    return trends


def floors(points: Sequence[Point], rules: Mapping[str, str]) -> list[Floor]:
    """Per modality, the best arm at the largest fraction against its floor (`rules`: modality →
    "majority" or "chance")."""
    found = []
    for modality in dict.fromkeys(p.modality for p in points):
        mine = [p for p in points if p.modality == modality]
        top = max(p.fraction for p in mine)
        best = max((p for p in mine if p.fraction == top), key=lambda p: p.test_mean)
        rule = rules.get(modality, "majority")
        if rule == "chance":
            floor, text = CHANCE_FACTOR / max(best.classes, 1), f"10× chance (1/{best.classes})"
        else:
            floor, text = best.majority + MAJORITY_MARGIN, f"majority {100 * best.majority:.1f}% + 15 pts"
        found.append(
            Floor(
                modality=modality,
                rule=text,
                floor=floor,
                best_arm=best.arm,
                best_mean=best.test_mean,
                clears=best.test_mean >= floor,
            )
        )
    return found
