"""AdamW with linear warmup then cosine decay, the schedule BERT and ViT were trained with."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pytorch_lightning as pl
import torch

from tabrasa.errors import UserError
from tabrasa.tasks.weight_decay import param_groups


@dataclass
class OptimConfig:
    """lr: peak learning rate. warmup_fraction: linear warmup over this fraction of all optimizer steps;
    warmup_steps: or over exactly this many steps (set one of the two; warmup_steps wins when set, and
    warmup_fraction must then be 0). min_lr_ratio: the cosine ends at lr * min_lr_ratio. weight_decay
    applies to matrices and kernels only (see tabrasa.tasks.weight_decay)."""

    lr: float = 1e-3
    weight_decay: float = 0.05
    betas: tuple[float, float] = (0.9, 0.999)
    warmup_fraction: float = 0.05
    warmup_steps: int | None = None
    min_lr_ratio: float = 0.0

    def __post_init__(self) -> None:
        if self.lr <= 0:
            raise UserError(f"optimizer lr={self.lr} must be > 0")
        if not 0.0 <= self.warmup_fraction < 1.0:
            raise UserError(
                f"optimizer warmup_fraction={self.warmup_fraction} must be in [0, 1); "
                "to warm up over a number of steps set warmup_steps instead"
            )
        if self.warmup_steps is not None:
            if self.warmup_steps < 0:
                raise UserError(f"optimizer warmup_steps={self.warmup_steps} must be >= 0")
            if self.warmup_fraction not in (0.0, OptimConfig.warmup_fraction):
                raise UserError(
                    f"optimizer sets both warmup_steps={self.warmup_steps} and "
                    f"warmup_fraction={self.warmup_fraction}; keep one of them"
                )
        if self.weight_decay < 0:
            raise UserError(f"optimizer weight_decay={self.weight_decay} must be >= 0")
        if not 0.0 <= self.min_lr_ratio <= 1.0:
            raise UserError(f"optimizer min_lr_ratio={self.min_lr_ratio} must be in [0, 1]")

    def warmup_for(self, total_steps: int) -> int:
        """Warmup steps for a run of `total_steps`, never the whole run."""
        steps = (
            self.warmup_steps if self.warmup_steps is not None else int(self.warmup_fraction * total_steps)
        )
        return min(steps, max(total_steps - 1, 0))


def warmup_cosine(
    optimizer: torch.optim.Optimizer, total_steps: int, config: OptimConfig
) -> torch.optim.lr_scheduler.LambdaLR:
    warmup = config.warmup_for(total_steps)

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, total_steps - warmup))
        return config.min_lr_ratio + (1 - config.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def adamw_warmup_cosine(module: pl.LightningModule, config: OptimConfig) -> dict[str, Any]:
    """What every tabrasa LightningModule's `configure_optimizers` returns: AdamW over the role-based
    weight-decay groups, stepped per optimizer step on warmup + cosine over the run's length."""
    optimizer = torch.optim.AdamW(param_groups(module, config.weight_decay), lr=config.lr, betas=config.betas)
    total = int(module.trainer.estimated_stepping_batches)
    scheduler = warmup_cosine(optimizer, max(total, 1), config)
    return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
