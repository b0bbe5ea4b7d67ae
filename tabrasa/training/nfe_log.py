"""The cost of a continuous-depth backbone, logged with every training step: how many times the ODE solver
evaluated its attention block (forward solve, adjoint backward solve, cumulative). Silent for backbones
without a solver, so it can sit in every run's callbacks."""

from __future__ import annotations

from typing import Any

import pytorch_lightning as pl

from tabrasa.backbone.ode_depth import ODEEncoder, nfe_metrics


class FunctionEvaluationLog(pl.Callback):
    def __init__(self) -> None:
        self.active = False

    def setup(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        # Looked up once: every run carries this callback, and a step should not walk the module tree.
        self.active = any(isinstance(m, ODEEncoder) for m in pl_module.modules())

    def on_train_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, *args: Any) -> None:
        if not self.active:
            return
        metrics = nfe_metrics(pl_module)
        if metrics and trainer.loggers:
            pl_module.log_dict({f"train/{k}": v for k, v in metrics.items()}, on_step=True, on_epoch=False)

    def on_validation_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, *args: Any) -> None:
        if not self.active:
            return
        metrics = nfe_metrics(pl_module)
        if metrics and trainer.loggers:
            nfe = {f"val/{k}": v for k, v in metrics.items() if k.endswith("nfe")}
            pl_module.log_dict(nfe, on_step=False, on_epoch=True)
