"""Masked patch modelling for image patches and audio frames or patches.

Implemented: SimMIM (Xie et al. 2022). Chosen patch tokens are replaced, after the embedder, by one
learned mask token; the shared encoder sees every token (so its padding masks and attention kinds work
unchanged) and a linear decoder regresses each masked patch's values. MAE (He et al. 2022) and Audio-MAE
(Huang et al. 2022) instead drop the masked tokens from the encoder and add a separate decoder, which is
cheaper at a 75% ratio but needs a second transformer and per-example gather/scatter around padding; for
the small grids here (16 patches of Fashion-MNIST, 26 keyword patches) the saving is small, so we keep
their *targets* (per-patch normalised pixels / log-mel values, MSE on masked patches only) and SimMIM's
encoder. Masking: random (MAE) or blockwise (BEiT, Bao et al. 2022; SimMIM's large masked squares play the
same role), `mask_ratio` of the real patches (0.6, SimMIM's default). Padding patches (audio) and prefix
tokens (CLS) are never masked or scored.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from tabrasa.tasks.pretraining.base import PretrainingTask, StepOutput, mean_over
from tabrasa.tasks.pretraining.masking import MaskKind, check_ratio, choose
from tabrasa.tasks.pretraining.targets import (
    normalise_per_patch,
    reconstruction_target,
    require_reconstruction,
    target_size,
)
from tabrasa.tokenizers.base import Batch


class MaskedPatchModel(PretrainingTask):
    """mask_ratio: share of real patches hidden (0.6). masking: random or block. norm_target: per-patch
    normalised targets (True, MAE's norm_pix_loss) or raw values."""

    logged = ("loss",)

    def __init__(
        self,
        *args: Any,
        mask_ratio: float = 0.6,
        masking: MaskKind = "random",
        norm_target: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.mask_ratio = check_ratio(mask_ratio, "mask_ratio")
        if masking not in ("random", "block"):
            choose(torch.zeros(1, 1, dtype=torch.bool), mask_ratio, masking, None)  # raises the UserError
        self.masking = masking
        self.norm_target = norm_target
        require_reconstruction(self.embedder)
        dim = self.backbone.dim
        self.mask_token = nn.Parameter(torch.zeros(1, 1, dim))
        nn.init.trunc_normal_(self.mask_token, std=0.02)
        self.decoder = nn.Linear(dim, target_size(self.embedder))  # SimMIM's linear prediction head

    def no_weight_decay(self) -> set[str]:
        return {"mask_token"}

    def targets(self, batch: Batch) -> torch.Tensor:
        target = reconstruction_target(self.embedder, batch).float()  # (B, P, F)
        return normalise_per_patch(target) if self.norm_target else target

    def step(self, batch: Batch) -> StepOutput:
        tokens = self.embedder(batch)
        prefix = tokens.grid.prefix if tokens.grid is not None else 0
        grid = (tokens.grid.height, tokens.grid.width) if tokens.grid is not None else None
        target = self.targets(batch)  # (B, P, F)
        patches, real = tokens.x[:, prefix:], tokens.mask[:, prefix:]  # (B, P, D), (B, P)
        if patches.shape[1] != target.shape[1]:
            raise ValueError(f"{patches.shape[1]} patch tokens but {target.shape[1]} targets")
        hidden_mask = choose(real, self.mask_ratio, self.masking, grid)  # (B, P)
        patches = torch.where(hidden_mask[..., None], self.mask_token.to(patches.dtype), patches)
        x = torch.cat([tokens.x[:, :prefix], patches], dim=1)
        hidden = self.backbone(x, tokens.mask, grid=tokens.grid)[:, prefix:]  # (B, P, D)
        error = (self.decoder(hidden).float() - target).pow(2).mean(-1)  # (B, P)
        weight = hidden_mask.to(error.dtype)
        loss_sum = (error * weight).sum()
        count = hidden_mask.sum()
        return StepOutput(mean_over(loss_sum, count), loss_sum, torch.zeros((), device=x.device), count)
