"""Pricing a planned learning-curve sweep at idle costs: every logged run at its arm's timing with the
loop scaled to its steps, one pretraining per logged pretraining, and a refusal when a timing is missing."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.evidence.arms import SWEEPS
from benchmarks.evidence.standard_cost import PRETRAINING, jobs, markdown, project, run_seconds


def timing(arm: str, run: float, loop: float, steps: int) -> dict[str, Any]:
    return {"modality": "image", "arm": arm, "steps": steps, "run_seconds": run, "loop_seconds": loop}


TIMINGS = {
    ("image", "small"): timing("small", run=50.0, loop=30.0, steps=300),
    ("image", "grid_cnn"): timing("grid_cnn", run=20.0, loop=12.0, steps=300),
    ("image", PRETRAINING): timing(PRETRAINING, run=80.0, loop=75.0, steps=500),
}


def run(arm: str, seconds: float, **extra: Any) -> dict[str, Any]:
    return {"modality": "image", "arm": arm, "train_seconds": seconds, **extra}


def test_runs_are_priced_at_their_arms_timing_with_the_loop_scaled_to_their_steps() -> None:
    assert run_seconds(TIMINGS["image", "small"], 300) == pytest.approx(50.0)
    assert run_seconds(TIMINGS["image", "small"], 150) == pytest.approx(20.0 + 15.0)
    runs = [
        run("small", 40.0),  # no steps recorded: the plan's 300
        run("grid_cnn", 10.0, steps=150),
        run("self_pretrained", 45.0),  # the transformer's fine-tuning cost
    ]
    pretrainings = [{"task": "image", "loop_seconds": 70.0}, {"task": "text", "loop_seconds": 99.0}]
    (cost,) = project(SWEEPS["standard"], TIMINGS, runs, pretrainings)
    assert (cost.runs, cost.pretrainings) == (3, 1)
    assert cost.idle_seconds == round(50.0 + (8.0 + 6.0) + 50.0 + 80.0)
    assert cost.logged_seconds == round(40.0 + 10.0 + 45.0 + 70.0)
    assert cost.longest_run_seconds == 50.0
    table = markdown([cost], lanes=2)
    assert "| image | 3 | 1 | 165 | 194 | 0.03 |" in table and "| all | 3 | 1 | 165 | 194 | 0.03 |" in table


def test_a_logged_arm_without_a_timing_is_refused_by_name() -> None:
    with pytest.raises(
        KeyError, match=r"no idle timing for \('image', 'grid_cnn'\): run bench_standard_cost"
    ):
        project(
            SWEEPS["standard"],
            {k: v for k, v in TIMINGS.items() if k[1] != "grid_cnn"},
            [run("grid_cnn", 1.0)],
            [],
        )


def test_every_arm_of_the_plan_is_timed_once_and_the_self_pretrained_arm_as_its_pretraining() -> None:
    found = [(job.modality, job.arm) for job in jobs(["image", "protein"], SWEEPS["standard"])]
    assert sorted(found) == sorted(
        [("image", "small"), ("image", "grid_cnn"), ("image", PRETRAINING),
         ("protein", "small"), ("protein", "sequence_cnn"), ("protein", "sequence_lstm"),
         ("protein", PRETRAINING)]
    )  # fmt: skip
