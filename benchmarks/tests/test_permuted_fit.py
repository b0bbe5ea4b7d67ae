"""The permuted-fit check records each epoch's training and validation accuracy and stops where it is told."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from benchmarks.curves.early_stopped_run import train_and_score
from benchmarks.curves.permuted_fit import EpochAccuracies, paired_keys
from benchmarks.tests.test_curve_resume import KEY, PLAN, PROTOCOL, ROOT


def epoch_end(callback: EpochAccuracies, epoch: int, metrics: dict[str, float]) -> Any:
    trainer = SimpleNamespace(
        current_epoch=epoch,
        should_stop=False,
        callback_metrics={k: torch.tensor(v) for k, v in metrics.items()},
    )
    callback.on_train_epoch_end(trainer, None)  # type: ignore[arg-type]
    return trainer


def test_each_epoch_is_recorded_and_the_run_stops_after_the_epochs_asked() -> None:
    callback = EpochAccuracies(2)
    first = epoch_end(callback, 0, {"train/acc": 0.25, "val/acc": 0.125})
    assert not first.should_stop
    second = epoch_end(callback, 1, {"train/acc": 0.5, "val/acc": 0.25})
    assert second.should_stop
    assert callback.rows == [
        {"epoch": 0, "train_acc": 0.25, "val_acc": 0.125},
        {"epoch": 1, "train_acc": 0.5, "val_acc": 0.25},
    ]


def test_a_task_that_logs_no_training_accuracy_is_refused_by_name() -> None:
    with pytest.raises(KeyError, match=r"train/acc"):
        epoch_end(EpochAccuracies(3), 0, {"val/acc": 0.5})
    with pytest.raises(ValueError, match="at least one epoch"):
        EpochAccuracies(0)


@pytest.mark.slow
def test_a_curve_run_stops_after_the_recorded_epochs_and_is_still_scored(tmp_path: Path) -> None:
    accuracies = EpochAccuracies(2)
    record = train_and_score(
        ROOT, PLAN.arm("transformer"), KEY, PROTOCOL, PLAN.permutation_flag,
        runs_folder=tmp_path, callbacks=[accuracies],
    )  # fmt: skip
    assert [row["epoch"] for row in accuracies.rows] == [0, 1]
    assert record["epochs"] == 2 < PROTOCOL.max_epochs  # the counter-case: without the stop it runs to 4
    assert all(0.0 <= row["train_acc"] <= 1.0 and 0.0 <= row["val_acc"] <= 1.0 for row in accuracies.rows)
    # the runner's best validation is one the callback saw: both read the same epochs
    assert max(row["val_acc"] for row in accuracies.rows) == pytest.approx(record["val_acc"], abs=1e-4)


def test_the_pair_differs_only_in_the_shuffle_and_an_unknown_arm_is_named() -> None:
    ordered, permuted = paired_keys("audio", "spectrogram_cnn", 1.0, 3e-3, 0)
    assert (ordered.permuted, permuted.permuted) == (False, True)
    assert {**ordered.__dict__, "permuted": True} == permuted.__dict__
    with pytest.raises(KeyError, match="spectrogram_cnn"):  # the message lists the modality's arms
        paired_keys("audio", "resnet", 1.0, 3e-3, 0)
