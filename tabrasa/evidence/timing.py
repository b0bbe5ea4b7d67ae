"""Wall-clock timing that is honest on both CPU and GPU: warm-up calls, synchronised clocks, medians."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Timing:
    """Seconds per call over `repeats` timed calls after warm-up."""

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


def time_calls(fn: Callable[[], object], device: torch.device, repeats: int, warmup: int = 2) -> Timing:
    """Runs fn `warmup` times untimed (allocator, kernel selection, oneDNN caches), then `repeats` times."""
    if repeats < 1:
        raise ValueError(f"time_calls repeats={repeats} must be >= 1")
    for _ in range(warmup):
        fn()
    seconds = []
    for _ in range(repeats):
        _synchronize(device)
        start = time.perf_counter()
        fn()
        _synchronize(device)
        seconds.append(time.perf_counter() - start)
    return Timing(tuple(seconds))


def ratio_spread(slow: Timing, fast: Timing) -> tuple[float, float]:
    """slow/fast from medians, and half the gap between its quartile-based extremes (timing noise)."""
    slow_lo, slow_hi = slow.quartiles
    fast_lo, fast_hi = fast.quartiles
    return slow.median / fast.median, (slow_hi / fast_lo - slow_lo / fast_hi) / 2
