"""LayerScale (Touvron et al. 2021, "Going deeper with Image Transformers", CaiT): a learned per-channel
scale on each residual branch, initialised small so every block starts close to the identity, which lets
deep ViTs train; DeiT-III and DINOv2 use it too."""

from __future__ import annotations

import torch
from torch import nn


class LayerScale(nn.Module):
    """x · γ with γ of shape (dim,), named `gamma` as in timm, so timm checkpoints map one to one."""

    def __init__(self, dim: int, init: float) -> None:
        super().__init__()
        self.gamma = nn.Parameter(torch.full((dim,), float(init)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gamma  # (B, N, D) · (D,)
