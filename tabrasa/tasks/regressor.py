"""Sequence regression: mean squared error on one or more targets; `predict` gives the values."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torchmetrics import MeanAbsoluteError, MeanSquaredError, MetricCollection, R2Score

from tabrasa.tasks.task import TokenTask


class Regressor(TokenTask):
    def make_metrics(self, num_outputs: int) -> MetricCollection:
        return MetricCollection(
            {
                "mse": MeanSquaredError(),
                "mae": MeanAbsoluteError(),
                "r2": R2Score(multioutput="uniform_average"),
            }
        )

    def _shape(self, target: torch.Tensor, outputs: torch.Tensor) -> torch.Tensor:
        target = target.to(outputs.dtype)
        return target.reshape(outputs.shape)

    def loss(self, outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(outputs.float(), self._shape(target, outputs.float()))

    def metric_inputs(self, outputs: torch.Tensor) -> torch.Tensor:
        return outputs.float().squeeze(-1) if outputs.shape[-1] == 1 else outputs.float()
