"""Sequence regression: mean squared error on one or more targets; `predict` gives the values."""

from __future__ import annotations

from tabrasa.tasks.objectives import RegressionObjective
from tabrasa.tasks.task import TokenTask


class Regressor(TokenTask):
    """Mean squared error; the best checkpoint is the one with the lowest validation loss (the MSE)."""

    selection_metric = ("val/loss", "min")

    def make_objective(self, num_outputs: int) -> RegressionObjective:
        return RegressionObjective(num_outputs)
