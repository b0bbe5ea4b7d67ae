"""A 2-D residual CNN over the grid of patch (or frame) *embeddings*, not over pixels: the baseline that
convolves 3×3 over a ViT's token grid (Fashion-MNIST's 4×4 grid of 7×7-pixel patches, a spectrogram's
grid of patches or a 26×1 grid of frame stacks). Inside a patch it is a linear map like the transformer's,
so it has no pixel-level locality prior; PixelCNN and SpectrogramCNN convolve over pixels and
time × frequency cells. Behind the Encoder contract; it reads the grid from `Tokens.grid`."""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone.conv_blocks import ResidualConv2d, grid_maps, grid_tokens
from tabrasa.backbone.tokens import TokenGrid

HIDDEN_RATIO = 0.75  # hidden = 3/4 of dim: 96 at 128 and 48 at 64 keep it within 20% of the transformer


class PatchGridCNN(nn.Module):
    """dim: token width. blocks: residual blocks of two 3×3 convolutions over the token grid. hidden:
    channels inside each block (None: 3/4 of dim, which tracks the transformer's size at every width).

    Prefix tokens (a CLS token) are outside the grid; their outputs are set to the mean of the grid
    outputs, so CLS pooling and mean pooling both read what the convolutions computed.
    """

    def __init__(
        self, dim: int = 128, blocks: int = 2, hidden: int | None = None, dropout: float = 0.1
    ) -> None:
        super().__init__()
        self.dim = dim
        hidden = round(HIDDEN_RATIO * dim) if hidden is None else hidden
        self.blocks = nn.ModuleList(ResidualConv2d(dim, hidden, dropout) for _ in range(blocks))
        self.norm = nn.LayerNorm(dim)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, *, grid: TokenGrid | None = None
    ) -> torch.Tensor:
        tokenize = "image patches or spectrogram patches/frames"
        mask, h, keep = grid_maps(x, mask, grid, "PatchGridCNN", tokenize)  # h: (B, D, H, W)
        assert grid is not None
        for block in self.blocks:
            h = block(h, keep)
        return grid_tokens(h, keep, mask, grid, self.norm)
