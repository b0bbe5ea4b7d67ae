"""Claim: removing multi-head attention (one head instead of eight at the same width) costs 15-20%.

Measured as the relative drop in held-out accuracy after equal training, on two-query associative recall
(the query asks for two keys, the label is the ordered pair of their values): the case multi-head
attention was introduced for, attending "to information from different representation subspaces at
different positions" where one head can only average them (Vaswani et al. 2017, §3.2.2). Measured at two
difficulties (pairs in context), since the gap depends on whether one head catches up within the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from tabrasa.evidence.models import Shape
from tabrasa.evidence.probe import ProbeModel
from tabrasa.evidence.report import ClaimResult, Spread, combine, judge
from tabrasa.evidence.synthetic_tasks import RecallTask
from tabrasa.evidence.synthetic_training import TrainConfig, train

CLAIM = "one attention head vs eight at equal width"
ARTICLE = "one head costs 15–20% (relative accuracy)"


@dataclass(frozen=True, kw_only=True)
class Settings:
    tasks: tuple[RecallTask, ...] = (
        RecallTask(pairs=8, keys=32, values=8, queries=2),
        RecallTask(pairs=16, keys=64, values=8, queries=2),
    )
    shape: Shape = field(default_factory=lambda: Shape(dim=64, depth=2, heads=8))
    single: int = 1  # heads of the ablated model
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=1200, batch=64, lr=2e-3))

    def __post_init__(self) -> None:
        if not self.tasks:
            raise ValueError("heads Settings.tasks is empty: give at least one RecallTask")
        if not 1 <= self.single < self.shape.heads:
            raise ValueError(
                f"heads Settings.single={self.single} must be at least 1 and fewer than shape.heads="
                f"{self.shape.heads}, or there is nothing to compare"
            )


def _accuracies(
    settings: Settings, task: RecallTask, seeds: Sequence[int], device: torch.device
) -> dict[int, list[float]]:
    accuracies: dict[int, list[float]] = {settings.shape.heads: [], settings.single: []}
    for seed in seeds:
        for heads in accuracies:
            torch.manual_seed(seed)
            backbone = settings.shape.encoder(task.length, heads=heads)
            model = ProbeModel(backbone, task.vocab_size, task.classes)
            accuracies[heads].append(train(model, task, settings.train, seed, device).final_accuracy)
    return accuracies


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    many_heads, one_head = settings.shape.heads, settings.single
    details, judgements, labels, parts = {}, [], [], []
    for task in settings.tasks:
        accuracies = _accuracies(settings, task, seeds, device)
        many, one = accuracies[many_heads], accuracies[one_head]
        cost = Spread.of([100 * (m - o) / max(m, 1e-9) for m, o in zip(many, one, strict=True)])
        judgements.append(judge(cost.mean, 15.0, 20.0, null=0.0, spread=cost.half_range))
        labels.append(f"{task.pairs} pairs")
        many_mean, one_mean = 100 * Spread.of(many).mean, 100 * Spread.of(one).mean
        parts.append(
            f"{cost.format(1, '%')} at {task.pairs} pairs ({many_heads} heads {many_mean:.1f}%, "
            f"{one_head} head {one_mean:.1f}%)"
        )
        details[f"{task.pairs}_pairs"] = {
            "accuracy": {str(h): a for h, a in accuracies.items()},
            "relative_cost_percent": cost.values,
        }
    verdict = combine(judgements, labels)
    measured = "; ".join(parts) + f"; dim {settings.shape.dim}, {settings.train.steps} steps"
    return ClaimResult("heads", CLAIM, ARTICLE, measured, verdict.verdict, verdict.reason, details=details)
