"""Sequence classification: cross-entropy, accuracy and macro-F1; `predict` gives class probabilities."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torchmetrics import MetricCollection
from torchmetrics.classification import MulticlassAccuracy, MulticlassF1Score

from tabrasa.tasks.task import TokenTask


class Classifier(TokenTask):
    """label_smoothing: cross-entropy against (1 - ε) one-hot + ε uniform (Szegedy et al. 2016)."""

    def __init__(self, *args: Any, label_smoothing: float = 0.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"label_smoothing={label_smoothing} must be in [0, 1)")
        self.label_smoothing = label_smoothing

    def make_metrics(self, num_outputs: int) -> MetricCollection:
        if num_outputs < 2:
            raise ValueError(f"a classifier needs at least 2 classes, the data module reports {num_outputs}")
        return MetricCollection(
            {
                "acc": MulticlassAccuracy(num_classes=num_outputs, average="micro"),
                "f1": MulticlassF1Score(num_classes=num_outputs, average="macro"),
            }
        )

    def loss(self, outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(outputs.float(), target, label_smoothing=self.label_smoothing)

    def metric_inputs(self, outputs: torch.Tensor) -> torch.Tensor:
        return outputs.float().softmax(dim=-1)
