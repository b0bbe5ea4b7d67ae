"""Token-weighted running sums for masked objectives, synchronised across ranks by torchmetrics.

A per-step mean would weigh a batch with three masked tokens like one with three hundred; perplexity is
exp of the mean negative log-likelihood *per predicted token* over the whole epoch."""

from __future__ import annotations

import math

import torch
from torchmetrics import Metric


class MaskedStats(Metric):
    """update(loss_sum, correct, count) per batch → compute() {loss, acc, ppl} over the epoch."""

    full_state_update = False

    def __init__(self) -> None:
        super().__init__()
        for name in ("loss_sum", "correct", "count"):
            self.add_state(name, default=torch.tensor(0.0, dtype=torch.float64), dist_reduce_fx="sum")

    def update(self, loss_sum: torch.Tensor, correct: torch.Tensor, count: torch.Tensor) -> None:
        self.loss_sum += loss_sum.detach().double()
        self.correct += correct.detach().double()
        self.count += count.detach().double()

    def compute(self) -> dict[str, float]:
        n = max(float(self.count), 1.0)
        loss = float(self.loss_sum) / n
        return {"loss": loss, "acc": float(self.correct) / n, "ppl": math.exp(min(loss, 50.0))}
