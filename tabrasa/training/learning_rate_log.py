"""Learning-rate logging that a run without a logger does not stop on."""

from __future__ import annotations

from typing import Any

from pytorch_lightning import Trainer
from pytorch_lightning.callbacks import LearningRateMonitor


class LearningRateLog(LearningRateMonitor):
    """Lightning's learning-rate logging, silent when the run has no logger (`--trainer.logger false`)
    instead of stopping the run."""

    def on_train_start(self, trainer: Trainer, *args: Any, **kwargs: Any) -> None:
        if trainer.loggers:
            super().on_train_start(trainer, *args, **kwargs)

    def on_train_batch_start(self, trainer: Trainer, *args: Any, **kwargs: Any) -> None:
        if trainer.loggers:
            super().on_train_batch_start(trainer, *args, **kwargs)

    def on_train_epoch_start(self, trainer: Trainer, *args: Any, **kwargs: Any) -> None:
        if trainer.loggers:
            super().on_train_epoch_start(trainer, *args, **kwargs)
