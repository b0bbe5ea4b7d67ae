"""A plain training loop for the probe models, with the project's optimiser and schedule.

Written by hand rather than through Lightning: the claims run thousands of tiny steps on a synthetic
stream, where a Trainer's per-step hooks and logging would cost more than the model and blur timings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn

from tabrasa.evidence.tasks import Batch
from tabrasa.tasks.schedule import OptimConfig, param_groups, warmup_cosine

HELD_OUT_SEED = 1_000_003  # offsets evaluation streams far from the small training seeds


class Task(Protocol):
    def sample(self, batch_size: int, generator: torch.Generator) -> Batch: ...


@dataclass(frozen=True)
class TrainConfig:
    """steps: optimiser steps. batch: examples per step. lr: AdamW peak rate (5% warmup, cosine decay).
    eval_every: steps between held-out evaluations (0: only at the end). eval_batches: batches per eval."""

    steps: int
    batch: int
    lr: float = 1e-3
    eval_every: int = 0
    eval_batches: int = 4
    weight_decay: float = 0.0
    clip: float = 1.0

    def __post_init__(self) -> None:
        for name in ("steps", "batch", "eval_batches"):
            if getattr(self, name) < 1:
                raise ValueError(f"TrainConfig.{name}={getattr(self, name)} must be >= 1")


@dataclass
class History:
    """losses: training loss per step. evals: (step, held-out accuracy) pairs. diverged: a loss went NaN
    or infinite and training stopped there."""

    losses: list[float] = field(default_factory=list)
    evals: list[tuple[int, float]] = field(default_factory=list)
    diverged: bool = False

    @property
    def final_accuracy(self) -> float:
        return self.evals[-1][1] if self.evals else float("nan")


@torch.no_grad()
def accuracy(model: nn.Module, batches: list[Batch], device: torch.device) -> float:
    model.eval()
    correct = total = 0
    for batch in batches:
        batch = batch.to(device)
        correct += int((model(batch.ids).argmax(dim=-1) == batch.label).sum())
        total += batch.label.numel()
    model.train()
    return correct / total


def train(
    model: nn.Module,
    task: Task,
    config: TrainConfig,
    seed: int,
    device: torch.device,
    eval_set: list[Batch] | None = None,
) -> History:
    """Train on fresh batches from `task` (seeded by `seed`), evaluating on `eval_set` (by default
    `eval_batches` batches from a held-out stream of its own, never a training stream of another seed)."""
    model.to(device).train()
    stream = torch.Generator().manual_seed(seed)
    if eval_set is None:
        held_out = torch.Generator().manual_seed(HELD_OUT_SEED + seed)
        eval_set = [task.sample(config.batch, held_out) for _ in range(config.eval_batches)]
    optim = OptimConfig(lr=config.lr, weight_decay=config.weight_decay)
    optimizer = torch.optim.AdamW(param_groups(model, config.weight_decay), lr=config.lr)
    scheduler = warmup_cosine(optimizer, config.steps, optim)
    history = History()
    for step in range(1, config.steps + 1):
        batch = task.sample(config.batch, stream).to(device)
        loss = F.cross_entropy(model(batch.ids).float(), batch.label)
        if not torch.isfinite(loss):
            history.diverged = True
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        optimizer.step()
        scheduler.step()
        history.losses.append(loss.item())
        if config.eval_every and step % config.eval_every == 0:
            history.evals.append((step, accuracy(model, eval_set, device)))
    if not history.evals or history.evals[-1][0] != len(history.losses):
        history.evals.append((len(history.losses), accuracy(model, eval_set, device)))
    return history
