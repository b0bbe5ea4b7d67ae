"""The checkpoint `fit` keeps as "best", monitored on the metric the task itself declares.

A classifier is selected on validation accuracy (what users compare and report), a regressor on
validation loss; a joint model on its stated aggregate. The task says which through `selection_metric`
(name, "min" | "max"), so a config never has to repeat it and a new task cannot be selected on a metric it
does not log. An explicit `--trainer.callbacks` ModelCheckpoint with its own `monitor` still wins.
"""

from __future__ import annotations

from typing import Any, Literal

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import ModelCheckpoint

from tabrasa.errors import UserError

Mode = Literal["min", "max"]


class BestCheckpoint(ModelCheckpoint):
    """`best-{epoch}-{step}.ckpt`, the single best checkpoint by the task's `selection_metric`."""

    def __init__(self, monitor: str | None = None, mode: Mode | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("filename", "best-{epoch}-{step}")
        kwargs.setdefault("save_top_k", 1)
        kwargs.setdefault("auto_insert_metric_name", False)
        super().__init__(monitor=monitor, mode=mode or "min", save_last=False, **kwargs)
        self._explicit = monitor is not None

    def setup(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        # Before any restore (Lightning restores callback state after `setup`), so `state_key`, which
        # contains the monitor, is the one a resumed run saved under.
        if not self._explicit:
            metric = getattr(pl_module, "selection_metric", None)
            if metric is None:
                raise UserError(
                    f"{type(pl_module).__name__} declares no `selection_metric`; pass "
                    "--trainer.callbacks with a ModelCheckpoint(monitor=...) or add the attribute"
                )
            self.monitor, self.mode = metric
            # ModelCheckpoint derives the starting k-th best value from `mode` in __init__.
            self.kth_value = torch.tensor(torch.inf if self.mode == "min" else -torch.inf)
        super().setup(trainer, pl_module, stage)


def best_checkpoint_callback(trainer: pl.Trainer) -> BestCheckpoint | ModelCheckpoint | None:
    """The monitored checkpoint callback of a run: not `trainer.checkpoint_callback`, which is the first
    ModelCheckpoint of any kind and may be the resume writer of `last.ckpt`."""
    monitored = [c for c in trainer.checkpoint_callbacks if isinstance(c, ModelCheckpoint) and c.monitor]
    return monitored[0] if monitored else None
