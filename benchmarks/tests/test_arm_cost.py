"""The arm pricing: per-fraction epochs from a step and a validation time, the cap the protocol gives, the
modality's typical epochs from the log, and the plan's run count; a log without the sizes is refused."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.bench_arm_cost import measure, price, train_sizes
from benchmarks.bench_curves import SMOKE
from benchmarks.curves.plan import MODALITIES

AUDIO = MODALITIES["audio"]
SIZES = {0.03: 245, 0.1: 805, 0.3: 2380, 1.0: 7945}


def test_a_run_is_priced_at_its_cap_and_at_the_modality_s_typical_epochs() -> None:
    rows = [
        {"modality": "audio", "arm": "transformer", "fraction": 0.03, "n_train": 245, "epochs": 400},
        {"modality": "audio", "arm": "transformer", "fraction": 0.03, "n_train": 245, "epochs": 500},
        {"modality": "audio", "arm": "floor_logreg", "fraction": 0.03, "n_train": 245, "epochs": 0},
    ]
    timing = {"step_seconds": 2.0, "validation_seconds": 10.0}
    priced = price(AUDIO, "transformer", timing, SIZES, rows)
    small = priced["fractions"][0]
    assert small["steps_an_epoch"] == 4 and small["epoch_seconds"] == 18.0  # 4 steps of 2 s + 10 s
    assert small["epoch_cap"] == 500  # 2,000 steps at least: 500 epochs of 4
    assert small["typical_epochs"] == 450  # the floor's 0 epochs are not a network's
    assert small["run_hours_typical"] == round(450 * 18 / 3600, 2)
    full = priced["fractions"][-1]
    assert full["epoch_cap"] == 30 and full["typical_epochs"] == 30  # no run logged there: priced at its cap
    assert priced["plan_runs"] == 2 + 4 * 3 + 3  # the sweep's second rate at both ends, 3 curves, 3 permuted
    own = price(AUDIO, "self_pretrained", timing, SIZES, rows)  # its two fractions, no permutation test
    assert [f["fraction"] for f in own["fractions"]] == [0.03, 1.0] and own["plan_runs"] == 2 + 2 * 3
    text_sizes = {0.03: 150, 0.1: 500, 0.3: 1500, 1.0: 5000}
    student = price(MODALITIES["text"], "student", timing, text_sizes, [])  # no permutation test
    assert [f["fraction"] for f in student["fractions"]] == [0.1, 1.0] and student["plan_runs"] == 2 + 2 * 3


def test_sizes_come_from_the_log_and_a_missing_fraction_names_the_fix() -> None:
    rows = [
        {"modality": "audio", "arm": "floor_logreg", "fraction": f, "n_train": n} for f, n in SIZES.items()
    ]
    log = Path("results/curves/runs.jsonl")
    assert train_sizes(AUDIO, rows, log) == SIZES
    with pytest.raises(ValueError, match="--arms floor_logreg"):
        train_sizes(AUDIO, rows[:3], log)


@pytest.mark.slow
def test_the_timed_fit_runs_the_sweep_s_own_cli_run_and_refuses_too_few_steps() -> None:
    smoke = replace(SMOKE, fractions=(1.0,), batch_size=8)  # 64 images, 16 wide: 8 steps an epoch, seconds
    plan = replace(MODALITIES["image"], protocol=smoke)
    timing = measure(plan, "transformer", steps=4)
    assert timing["steps_timed"] == 2 and timing["step_seconds"] > 0 and timing["validation_seconds"] > 0
    width = plan.protocol.width
    assert timing["params"] < 20 * width * width * 12  # the protocol's width reached the backbone, not 128's
    with pytest.raises(RuntimeError, match="give --steps >= 3"):  # counter: two steps are all warm-up
        measure(plan, "transformer", steps=2)
