"""What a learning curve concludes: gaps paired by seed against the baseline validation picks, the gap's
slope over data with its interval, the floors, and the standard mode's runs (plan, self-pretrained arm)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchmarks.evidence.arms import MODALITIES, SELF_PRETRAINED, SWEEPS
from benchmarks.evidence.curve_gaps import floors, gap_trends, gaps
from benchmarks.evidence.intervals import mean_interval, slope_interval
from benchmarks.evidence.learning_curves import Point, RunKey, arms_of, cli_args, pretraining_of

ROOT = Path(__file__).resolve().parents[2]


def point(arm: str, fraction: float, tests: tuple[float, ...], val: float, **extra: float) -> Point:
    return Point(
        modality="m", arm=arm, fraction=fraction, train_examples=int(1000 * fraction), lr=1e-3,
        test_mean=sum(tests) / len(tests), test_std=0.0, seeds=len(tests), test_values=tests,
        val_mean=val, **extra,  # type: ignore[arg-type]
    )  # fmt: skip


def test_the_best_baseline_is_chosen_on_validation_and_gaps_pair_seeds() -> None:
    points = [
        point("small", 1.0, (0.80, 0.90, 0.70), 0.8),
        # lstm has the better *test* mean, cnn the better validation: cnn is the baseline.
        point("sequence_cnn", 1.0, (0.70, 0.70, 0.75), 0.9),
        point("sequence_lstm", 1.0, (0.95, 0.95, 0.95), 0.5),
    ]
    (gap,) = gaps(points)
    assert gap.baseline == "sequence_cnn"
    assert gap.points == pytest.approx((10.0, 20.0, -5.0))
    expected = mean_interval([10.0, 20.0, -5.0])
    assert (gap.mean, gap.low, gap.high) == pytest.approx((expected.mean, expected.low, expected.high))
    assert expected.half_width == pytest.approx(4.3027 * 12.583 / math.sqrt(3), rel=1e-3)


def test_a_gap_that_closes_with_data_has_a_positive_slope_and_a_flat_one_an_interval_across_zero() -> None:
    closing = [
        p
        for fraction, gap in ((0.01, -20.0), (0.1, -10.0), (1.0, 0.0))
        for p in (
            point("small", fraction, (0.5 + gap / 100, 0.51 + gap / 100, 0.49 + gap / 100), 0.5),
            point("grid_cnn", fraction, (0.5, 0.5, 0.5), 0.6),
        )
    ]
    (trend,) = gap_trends(gaps(closing))
    assert trend.slope == pytest.approx(10.0) and trend.low > 0 and trend.n == 9
    flat = [
        p
        for fraction in (0.01, 0.1, 1.0)
        for p in (
            point("small", fraction, (0.4, 0.6, 0.5), 0.5),
            point("grid_cnn", fraction, (0.5,) * 3, 0.6),
        )
    ]
    (trend,) = gap_trends(gaps(flat))
    assert trend.slope == pytest.approx(0.0, abs=1e-9) and trend.low < 0 < trend.high


def test_slope_interval_matches_a_hand_computed_regression() -> None:
    xs, ys = [0.0, 1.0, 2.0, 3.0], [1.0, 3.0, 2.0, 5.0]
    slope = slope_interval(xs, ys)
    # b = Sxy / Sxx = 5.5 / 5 = 1.1; residual SS = 2.7, se = sqrt(2.7 / 2 / 5); t(0.975, 2) = 4.3027
    assert slope.slope == pytest.approx(1.1)
    assert slope.half_width == pytest.approx(4.3027 * math.sqrt(2.7 / 2 / 5), rel=1e-4)
    with pytest.raises(ValueError, match="needs ≥ 3"):
        slope_interval([1.0, 1.0, 1.0], [0.0, 1.0, 2.0])


def test_floors_read_the_majority_or_ten_times_chance() -> None:
    points = [
        point("small", 1.0, (0.80,), 0.8, majority=0.691, classes=5),
        point("sequence_cnn", 1.0, (0.86,), 0.8, majority=0.691, classes=5),
    ]
    (floor,) = floors(points, {"m": "majority"})
    assert floor.best_arm == "sequence_cnn" and floor.floor == pytest.approx(0.841) and floor.clears
    (floor,) = floors(points, {"m": "chance"})
    assert floor.floor == pytest.approx(2.0) and not floor.clears, "10× chance of 5 classes cannot be met"


def test_standard_mode_runs_each_modality_at_its_plan_and_adds_the_self_pretrained_arm() -> None:
    sweep = SWEEPS["standard"]
    assert len(sweep.fractions) >= 4 and max(sweep.fractions) / min(sweep.fractions) >= 10**1.5
    assert len(sweep.seeds) >= 3 and sweep.bracket >= 1
    protein = MODALITIES["protein"]
    assert arms_of(protein, sweep) == ("small", "sequence_cnn", "sequence_lstm", SELF_PRETRAINED)
    key = RunKey(modality="protein", arm=SELF_PRETRAINED, fraction=0.1, lr=3e-3, seed=1)
    args = cli_args(ROOT, protein, key, sweep, export="/x/export")
    pairs = dict(zip(args[::2], args[1::2], strict=True))
    assert pairs["--model.init_args.backbone"].endswith("configs/backbone/small.yaml")
    assert json.loads(pairs["--model.init_args.pretrained"]) == {"family": "tabrasa", "path": "/x/export"}
    assert pairs["--trainer.max_steps"] == str(protein.standard.steps)  # type: ignore[union-attr]
    assert pairs["--data.init_args.tokenizer.class_path"].endswith("EsmProteinTokenizer")
    with pytest.raises(ValueError, match="needs its pretraining export"):
        cli_args(ROOT, protein, key, sweep)
    # The pretraining reads the same data overrides, so one alphabet serves pretraining and fine-tuning.
    task, budget = pretraining_of(protein, sweep)
    assert dict(task.data_overrides)["tokenizer.class_path"].endswith("EsmProteinTokenizer")
    assert budget.pretrain_steps == protein.standard.pretrain_steps  # type: ignore[union-attr]


@pytest.mark.slow
def test_a_self_pretrained_arm_pretrains_once_per_fraction_then_fine_tunes_from_it(
    cache_dir: Path, tmp_path: Path
) -> None:
    from dataclasses import replace

    from benchmarks.evidence.learning_curves import run_sweep
    from benchmarks.evidence.rate_sweep import RunLog

    sweep = replace(SWEEPS["smoke"], self_pretrained=True, fractions=(1.0,), seeds=(0, 1))
    log = RunLog(tmp_path / "runs.jsonl", ("modality", "arm", "fraction", "lr", "seed"))
    run_sweep(ROOT, ["image"], sweep, log, echo=False)
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    mine = [r for r in runs if r["arm"] == SELF_PRETRAINED]
    assert len(mine) == 2 and all(r["pretrain_seconds"] > 0 for r in mine)
    pretrainings = (tmp_path / "pretrained" / "pretraining.jsonl").read_text().splitlines()
    assert len(pretrainings) == 1, "both seeds fine-tune one pretraining run"
    assert (tmp_path / "pretrained" / "image-self-1").is_dir()
    assert all(0.0 <= r["test_majority"] <= 1.0 and r["classes"] == 10 for r in runs)
