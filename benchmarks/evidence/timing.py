"""Wall-clock timing that is honest on both CPU and GPU: warm-up calls, synchronised clocks, medians.

The one timing helper of the claims and the benchmark scripts. Systems under comparison run in one process,
interleaved round by round (the order rotates each round), after warm-up, and each is summarised by its
median: other work on a shared machine then slows every system alike instead of whichever ran at the time.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Timing:
    """Seconds per call over the timed calls after warm-up."""

    seconds: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def quartiles(self) -> tuple[float, float]:
        if len(self.seconds) < 2:
            return self.seconds[0], self.seconds[0]
        q = statistics.quantiles(self.seconds, n=4, method="inclusive")
        return q[0], q[2]


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def interleaved(
    cells: Mapping[str, Callable[[], object]], device: torch.device, repeats: int, warmup: int = 2
) -> dict[str, Timing]:
    """Each cell called `warmup` times untimed (allocator, kernel selection, oneDNN caches), then `repeats`
    timed rounds in which every cell runs once, starting one cell later each round."""
    if repeats < 1:
        raise ValueError(f"timing repeats={repeats} must be >= 1")
    names = list(cells)
    for _ in range(warmup):
        for name in names:
            cells[name]()
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            _synchronize(device)
            start = time.perf_counter()
            cells[name]()
            _synchronize(device)
            seconds[name].append(time.perf_counter() - start)
    return {name: Timing(tuple(values)) for name, values in seconds.items()}


def time_calls(fn: Callable[[], object], device: torch.device, repeats: int, warmup: int = 2) -> Timing:
    """One cell timed alone."""
    return interleaved({"call": fn}, device, repeats, warmup)["call"]


def ratio_spread(slow: Timing, fast: Timing) -> tuple[float, float]:
    """slow/fast from medians, and half the gap between its quartile-based extremes (timing noise)."""
    slow_lo, slow_hi = slow.quartiles
    fast_lo, fast_hi = fast.quartiles
    return slow.median / fast.median, (slow_hi / fast_lo - slow_lo / fast_hi) / 2
