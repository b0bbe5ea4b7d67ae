"""Lightning's per-stage hooks, written once for the tasks whose stages differ only by name.

Lightning calls a separate hook for each stage (training_step, validation_step, test_step; the three
on_*_epoch_end); a task that does the same thing in each, named for the stage, mixes in these classes and
writes that one method. Put them before `pl.LightningModule` among the bases, so their hooks override its
empty defaults.
"""

from __future__ import annotations

from abc import abstractmethod

import torch

from tabrasa.tokenizers.base import Batch


class StageSteps:
    """training_step, validation_step and test_step, each handing its batch to `stage_step` with the
    stage's name ("train", "val", "test"); only the training step's loss goes back to the optimiser."""

    @abstractmethod
    def stage_step(self, batch: Batch, stage: str) -> torch.Tensor:
        """The loss of one batch, with whatever the stage logs and accumulates along the way."""

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        return self.stage_step(batch, "train")

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        self.stage_step(batch, "val")

    def test_step(self, batch: Batch, batch_idx: int) -> None:
        self.stage_step(batch, "test")


class StageEpochEnds:
    """on_train_epoch_end, on_validation_epoch_end and on_test_epoch_end, each calling `end_epoch` with the
    stage's name."""

    @abstractmethod
    def end_epoch(self, stage: str) -> None:
        """Log the stage's epoch metrics and reset them for the next epoch."""

    def on_train_epoch_end(self) -> None:
        self.end_epoch("train")

    def on_validation_epoch_end(self) -> None:
        self.end_epoch("val")

    def on_test_epoch_end(self) -> None:
        self.end_epoch("test")
