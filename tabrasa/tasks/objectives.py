"""What a task optimises and measures, apart from the model: the loss, the metrics, what `predict` returns
and the metric its best checkpoint is selected on. The single-task modules (Classifier, Regressor) and the
joint multi-task module use the same objectives, so a task scores alike in both."""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torchmetrics import MeanAbsoluteError, MeanSquaredError, MetricCollection, R2Score
from torchmetrics.classification import MulticlassAccuracy, MulticlassF1Score

from tabrasa.errors import UserError

ObjectiveKind = Literal["classification", "regression"]
Selection = tuple[str, Literal["min", "max"]]


class Objective:
    """Base: `loss(outputs, target)`, `metrics()`, `predictions(outputs)` and the selection metric."""

    kind: ObjectiveKind
    # (metric name without stage prefix, "min" | "max")
    selection: Selection

    def __init__(self, num_outputs: int) -> None:
        self.num_outputs = num_outputs

    def loss(self, outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def metrics(self) -> MetricCollection:
        raise NotImplementedError

    def predictions(self, outputs: torch.Tensor) -> torch.Tensor:
        """Outputs in the form the metrics take and `predict` returns."""
        raise NotImplementedError


class ClassificationObjective(Objective):
    """Cross-entropy (optionally label-smoothed, Szegedy et al. 2016); accuracy and macro-F1;
    probabilities. Selected on accuracy: the number users compare and report (validation loss also moves
    with the model's confidence, so the lowest-loss checkpoint is often not the most accurate)."""

    kind = "classification"
    selection = ("acc", "max")

    def __init__(self, num_outputs: int, label_smoothing: float = 0.0) -> None:
        if num_outputs < 2:
            raise UserError(
                f"a classifier needs at least 2 classes, the data module reports {num_outputs}; "
                "check the labels of your data (or use a regression head for a continuous target)"
            )
        if not 0.0 <= label_smoothing < 1.0:
            raise UserError(f"label_smoothing={label_smoothing} must be in [0, 1)")
        super().__init__(num_outputs)
        self.label_smoothing = label_smoothing

    def loss(self, outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(outputs.float(), target, label_smoothing=self.label_smoothing)

    def metrics(self) -> MetricCollection:
        return MetricCollection(
            {
                "acc": MulticlassAccuracy(num_classes=self.num_outputs, average="micro"),
                "f1": MulticlassF1Score(num_classes=self.num_outputs, average="macro"),
            }
        )

    def predictions(self, outputs: torch.Tensor) -> torch.Tensor:
        return outputs.float().softmax(dim=-1)


class RegressionObjective(Objective):
    """Mean squared error on one or more targets; MSE, MAE and R²; the values. Selected on loss."""

    kind = "regression"
    selection = ("loss", "min")

    def loss(self, outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        outputs = outputs.float()
        return F.mse_loss(outputs, target.to(outputs.dtype).reshape(outputs.shape))

    def metrics(self) -> MetricCollection:
        return MetricCollection(
            {
                "mse": MeanSquaredError(),
                "mae": MeanAbsoluteError(),
                "r2": R2Score(multioutput="uniform_average"),
            }
        )

    def predictions(self, outputs: torch.Tensor) -> torch.Tensor:
        return outputs.float().squeeze(-1) if outputs.shape[-1] == 1 else outputs.float()


def make_objective(kind: ObjectiveKind, num_outputs: int, label_smoothing: float = 0.0) -> Objective:
    if kind == "classification":
        return ClassificationObjective(num_outputs, label_smoothing)
    if kind == "regression":
        if label_smoothing:
            raise UserError("label_smoothing applies to classification only; remove it for regression")
        return RegressionObjective(num_outputs)
    raise UserError(f"objective kind={kind!r} is not known; choose classification or regression")
