"""Claim: removing multi-head attention (one head instead of eight at the same width) costs 15-20%.

Measured as the relative drop in held-out accuracy after equal training, on two-query associative recall
(the query asks for two keys, the label is the ordered pair of their values): the case multi-head
attention was introduced for, attending "to information from different representation subspaces at
different positions" where one head can only average them (Vaswani et al. 2017, §3.2.2). Measured at two
difficulties (pairs in context), since the gap depends on whether one head catches up within the budget.
Each head count sweeps its own learning rate on validation (`arm_sweep`); test accuracy is compared, with
the same steps and batch in both arms. The cost is the relative drop of the mean accuracies, 100 · (many −
one) / many, with its paired hierarchical bootstrap interval over seeds and test examples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import torch

from benchmarks.evidence.claims.arm_sweep import RATES, ArmRuns, fit_arm
from benchmarks.evidence.intervals import hierarchical_bootstrap
from benchmarks.evidence.models import Shape, count_parameters
from benchmarks.evidence.probe import ProbeModel
from benchmarks.evidence.report import ClaimResult, bootstrap_basis, combine, judge, span, untrained
from benchmarks.evidence.synthetic_tasks import RecallTask
from benchmarks.evidence.synthetic_training import TrainConfig

CLAIM = "one attention head vs eight at equal width"
ARTICLE = "one head costs 15–20% (relative accuracy)"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """train: both arms' budget (its lr is replaced by each arm's chosen rate)."""

    tasks: tuple[RecallTask, ...] = (
        RecallTask(pairs=8, keys=32, values=8, queries=2),
        RecallTask(pairs=16, keys=64, values=8, queries=2),
    )
    shape: Shape = field(default_factory=lambda: Shape(dim=64, depth=2, heads=8))
    single: int = 1  # heads of the ablated model
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=1200, batch=64))
    rates: tuple[float, ...] = RATES

    def __post_init__(self) -> None:
        if not self.tasks:
            raise ValueError("heads Settings.tasks is empty: give at least one RecallTask")
        if not 1 <= self.single < self.shape.heads:
            raise ValueError(
                f"heads Settings.single={self.single} must be at least 1 and fewer than shape.heads="
                f"{self.shape.heads}, or there is nothing to compare"
            )


def _model(settings: Settings, task: RecallTask, heads: int) -> ProbeModel:
    return ProbeModel(settings.shape.encoder(task.length, heads=heads), task.vocab_size, task.classes)


def _arms(
    settings: Settings, task: RecallTask, seeds: Sequence[int], device: torch.device
) -> dict[int, ArmRuns]:
    """Each head count with its own rate sweep."""
    return {
        heads: fit_arm(
            partial(_model, settings, task, heads), task, settings.train, seeds, device, settings.rates
        )
        for heads in (settings.shape.heads, settings.single)
    }


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    many_heads, one_head = settings.shape.heads, settings.single
    names = {f"{many_heads} heads": many_heads, f"{one_head} head": one_head}
    many, one = names
    details, judgements, labels, parts = {}, [], [], []
    for task in settings.tasks:
        arms = _arms(settings, task, seeds, device)
        correct = {name: arms[h].correct for name, h in names.items()}
        cost = hierarchical_bootstrap(correct, lambda a: 100 * (a[many] - a[one]) / np.maximum(a[many], 1e-9))
        void = untrained({name: arms[h].test for name, h in names.items()}, chance=1 / task.classes)
        judgements.append(void or judge(cost, 15.0, 20.0, null=0.0))
        labels.append(f"{task.pairs} pairs")
        accuracy = ", ".join(
            f"{name} {span(hierarchical_bootstrap(correct, lambda a, k=name: a[k]), 1, '%', scale=100)} "
            f"(lr {arms[h].choice.lr:g})"
            for name, h in names.items()
        )
        parts.append(f"{span(cost, 1, '%')} at {task.pairs} pairs ({accuracy})")
        details[f"{task.pairs}_pairs"] = {
            "arms": {str(h): arm.details() for h, arm in arms.items()},
            "relative_cost_percent": [cost.mean, cost.low, cost.high],
        }
    verdict = combine(judgements, labels)
    task = settings.tasks[0]
    size = count_parameters(_model(settings, task, settings.shape.heads))  # heads split D, add nothing
    measured = "; ".join(parts) + (
        f"; dim {settings.shape.dim}, {settings.train.steps} steps of {settings.train.batch} in both arms, "
        f"{size:,} params in total in both arms at {task.pairs} pairs; "
        f"{bootstrap_basis(len(seeds), correct[many].shape[1])}"
    )
    return ClaimResult.of("heads", CLAIM, ARTICLE, measured, verdict, details)
