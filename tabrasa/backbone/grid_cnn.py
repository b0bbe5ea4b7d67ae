"""A 2-D residual CNN (ResNet-style) over the patch or frame grid: the locality baseline for images and
spectrograms. Behind the Encoder contract; it reads the grid from `Tokens.grid`."""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone.tokens import TokenGrid


class ResidualConv2d(nn.Module):
    """x + Conv3×3(GELU(BN(Conv3×3(GELU(BN(x)))))), pre-activation (He et al. 2016), bottlenecked to
    `hidden` channels so the parameter count can match the transformer it is compared with."""

    def __init__(self, dim: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.norm1 = nn.BatchNorm2d(dim)
        self.conv1 = nn.Conv2d(dim, hidden, 3, padding=1)
        self.norm2 = nn.BatchNorm2d(hidden)
        self.conv2 = nn.Conv2d(hidden, dim, 3, padding=1)
        self.act = nn.GELU()
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        # x: (B, D, H, W); keep: (B, 1, H, W), zero at padded grid cells
        h = self.conv1(self.act(self.norm1(x)) * keep)
        h = self.conv2(self.drop(self.act(self.norm2(h))) * keep)
        return (x + h) * keep


class GridCNN(nn.Module):
    """dim: token width. blocks: residual blocks. hidden: channels inside each block.

    Prefix tokens (a CLS token) are outside the grid; their outputs are set to the mean of the grid
    outputs, so CLS pooling and mean pooling both read what the convolutions computed.
    """

    def __init__(self, dim: int = 128, blocks: int = 2, hidden: int = 96, dropout: float = 0.1) -> None:
        super().__init__()
        self.dim = dim
        self.blocks = nn.ModuleList(ResidualConv2d(dim, hidden, dropout) for _ in range(blocks))
        self.norm = nn.LayerNorm(dim)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, *, grid: TokenGrid | None = None
    ) -> torch.Tensor:
        if grid is None:
            raise ValueError(
                "GridCNN needs tokens on a grid (image patches or spectrogram patches/frames); these tokens "
                "carry no grid. For text or protein sequences use SequenceCNN or SequenceLSTM"
            )
        B, N, D = x.shape
        if grid.prefix + grid.size != N:
            raise ValueError(
                f"GridCNN got {N} tokens but the grid says {grid.prefix} + {grid.height}×{grid.width}"
            )
        if mask is None:
            mask = torch.ones(B, N, dtype=torch.bool, device=x.device)
        cells = x[:, grid.prefix :].transpose(1, 2).reshape(B, D, grid.height, grid.width)  # (B, D, H, W)
        keep = mask[:, grid.prefix :].reshape(B, 1, grid.height, grid.width).to(x.dtype)
        h = cells * keep
        for block in self.blocks:
            h = block(h, keep)
        h = h.flatten(2).transpose(1, 2)  # (B, H·W, D)
        pooled = h.sum(1, keepdim=True) / keep.flatten(1).sum(1).clamp_min(1.0)[:, None, None]
        out = torch.cat([pooled.expand(B, grid.prefix, D), h], dim=1)
        return self.norm(out) * mask[..., None].to(out.dtype)
