"""Claim: removing multi-head attention (one head instead of eight at the same width) costs 15-20%.
Measured as the relative drop in held-out accuracy on associative recall after equal training."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from tabrasa.evidence.models import ProbeModel, Shape
from tabrasa.evidence.report import ClaimResult, Spread, judge
from tabrasa.evidence.tasks import RecallTask
from tabrasa.evidence.training import TrainConfig, train

CLAIM = "one attention head vs eight at equal width"
ARTICLE = "one head costs 15–20% (relative accuracy)"


@dataclass(frozen=True)
class Settings:
    task: RecallTask = field(default_factory=RecallTask)
    shape: Shape = field(default_factory=lambda: Shape(dim=64, depth=2, heads=8))
    single: int = 1  # heads of the ablated model
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=600, batch=64, lr=2e-3))


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    task, shape = settings.task, settings.shape
    accuracies: dict[int, list[float]] = {shape.heads: [], settings.single: []}
    for seed in seeds:
        for heads in accuracies:
            torch.manual_seed(seed)
            model = ProbeModel(shape.encoder(task.length, heads=heads), task.vocab_size, task.classes)
            accuracies[heads].append(train(model, task, settings.train, seed, device).final_accuracy)
    many, one = accuracies[shape.heads], accuracies[settings.single]
    cost = Spread.of([100 * (m - o) / max(m, 1e-9) for m, o in zip(many, one, strict=True)])
    verdict = judge(cost.mean, 15.0, 20.0, null=0.0, spread=cost.half_range)
    measured = (
        f"{cost.format(1, '%')} ({shape.heads} heads {100 * Spread.of(many).mean:.1f}%, "
        f"{settings.single} head {100 * Spread.of(one).mean:.1f}%; dim {shape.dim})"
    )
    return ClaimResult(
        "heads",
        CLAIM,
        ARTICLE,
        measured,
        verdict.verdict,
        verdict.reason,
        details={
            "accuracy": {str(h): a for h, a in accuracies.items()},
            "relative_cost_percent": cost.values,
        },
    )
