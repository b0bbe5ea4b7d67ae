"""The one timing helper: warm-up untimed, rounds interleaved in a rotating order, medians per cell."""

from __future__ import annotations

import pytest
import torch

from benchmarks.evidence.timing import Timing, interleaved, ratio_spread, time_calls

CPU = torch.device("cpu")


def test_interleaved_warms_up_then_rotates_the_order_each_round() -> None:
    calls: list[str] = []
    cells = {name: (lambda name=name: calls.append(name)) for name in "abc"}
    times = interleaved(cells, CPU, repeats=3, warmup=1)
    assert calls == list("abc") + list("abc") + list("bca") + list("cab")
    assert all(len(t.seconds) == 3 for t in times.values())


def test_time_calls_counts_only_the_timed_calls_and_refuses_zero() -> None:
    calls: list[int] = []
    timing = time_calls(lambda: calls.append(1), CPU, repeats=4, warmup=2)
    assert len(calls) == 6 and len(timing.seconds) == 4
    with pytest.raises(ValueError, match="repeats=0 must be >= 1"):
        time_calls(lambda: None, CPU, repeats=0)


def test_timing_median_quartiles_and_ratio_spread() -> None:
    slow, fast = Timing((4.0, 6.0, 8.0)), Timing((1.0, 2.0, 3.0))
    assert slow.median == 6.0 and slow.quartiles == (5.0, 7.0)
    ratio, spread = ratio_spread(slow, fast)
    assert ratio == 3.0 and spread == pytest.approx((7.0 / 1.5 - 5.0 / 2.5) / 2)
