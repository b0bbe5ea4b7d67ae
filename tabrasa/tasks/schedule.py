"""AdamW with linear warmup then cosine decay, the schedule BERT and ViT were trained with."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class OptimConfig:
    """lr: peak learning rate. warmup: fraction of all steps (< 1) or a number of steps (>= 1).
    min_lr_ratio: the cosine ends at lr * min_lr_ratio. weight_decay skips biases, norms and embeddings."""

    lr: float = 1e-3
    weight_decay: float = 0.05
    betas: tuple[float, float] = (0.9, 0.999)
    warmup: float = 0.05
    min_lr_ratio: float = 0.0

    def __post_init__(self) -> None:
        if self.lr <= 0:
            raise ValueError(f"optimizer lr={self.lr} must be > 0")
        if self.warmup < 0:
            raise ValueError(f"optimizer warmup={self.warmup} must be >= 0")


def param_groups(model: nn.Module, weight_decay: float) -> list[dict[str, object]]:
    """Decay matrices only: decaying gains, biases and embedding rows hurts (Loshchilov & Hutter 2019)."""
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        is_table = "embed" in name or "positions" in name or "cls_token" in name
        (no_decay if param.ndim < 2 or is_table else decay).append(param)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def warmup_cosine(
    optimizer: torch.optim.Optimizer, total_steps: int, config: OptimConfig
) -> torch.optim.lr_scheduler.LambdaLR:
    warmup = int(config.warmup * total_steps) if config.warmup < 1 else int(config.warmup)
    warmup = min(warmup, max(total_steps - 1, 0))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, total_steps - warmup))
        return config.min_lr_ratio + (1 - config.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
