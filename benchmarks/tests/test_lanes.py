"""Lanes split a sweep's arms between processes: every arm in exactly one lane, bad specs named."""

from __future__ import annotations

import pytest

from benchmarks.evidence.arms import SWEEPS
from benchmarks.evidence.lanes import Lane
from benchmarks.evidence.learning_curves import _arms


def test_every_arm_runs_in_exactly_one_lane() -> None:
    arms = _arms(["text", "protein"], SWEEPS["standard"])
    lanes = [Lane.parse(f"{i}/3").share(arms) for i in range(3)]
    assert sorted(repr(arm) for lane in lanes for arm in lane) == sorted(map(repr, arms))
    assert sum(len(lane) for lane in lanes) == len(arms) and min(map(len, lanes)) >= len(arms) // 3
    assert Lane().share(arms) == arms and not Lane().shared and Lane(1, 2).shared
    # neighbouring fractions of one arm go to different lanes
    first, second = Lane(0, 2).share(arms), Lane(1, 2).share(arms)
    assert (first[0].arm, first[0].fraction) == ("small", 0.03)
    assert (second[0].arm, second[0].fraction) == ("small", 0.1)


@pytest.mark.parametrize("text", ["2/2", "-1/2", "1", "a/b", "0/0"])
def test_a_bad_lane_is_named_with_the_fix(text: str) -> None:
    with pytest.raises(ValueError, match=r"lane .*give INDEX/COUNT"):
        Lane.parse(text)
