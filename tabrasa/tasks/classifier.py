"""Sequence classification: cross-entropy, accuracy and macro-F1; `predict` gives class probabilities."""

from __future__ import annotations

from typing import Any

from tabrasa.tasks.objectives import ClassificationObjective
from tabrasa.tasks.task import TokenTask


class Classifier(TokenTask):
    """label_smoothing: cross-entropy against (1 - ε) one-hot + ε uniform (Szegedy et al. 2016).
    The best checkpoint is the one with the highest validation accuracy (see ClassificationObjective)."""

    selection_metric = ("val/acc", "max")

    def __init__(self, *args: Any, label_smoothing: float = 0.0, **kwargs: Any) -> None:
        self.label_smoothing = label_smoothing
        super().__init__(*args, **kwargs)

    def make_objective(self, num_outputs: int) -> ClassificationObjective:
        return ClassificationObjective(num_outputs, self.label_smoothing)
