"""A small ResNet over the pixels themselves: the image baseline that carries a CNN's real locality prior.

Not the autoregressive PixelCNN of van den Oord et al. 2016: a classifier CNN whose 3×3 convolutions run
over the pixel grid. It takes one token per pixel (`ImageTokenizer(patch_size=1)`, whose embedder maps
each pixel to `dim` with a 1×1 convolution), then follows the pre-activation ResNet of He et al. 2016
("Identity Mappings in Deep Residual Networks") at CIFAR scale:

    3×3 stem, dim → c_1                                28×28
    stage 1: residual blocks of two 3×3 convs, c_1     28×28
    stride-2 3×3 conv, c_1 → c_2; stage 2              14×14
    stride-2 3×3 conv, c_2 → c_3; stage 3               7×7
    BN → GELU (the pre-activation network's final norm), 1×1 conv c_3 → dim where c_3 ≠ dim

Outputs, one per token, each LayerNormed like every backbone's: the 7×7 map is upsampled back to 28×28 by
nearest neighbour (each final cell fills its 4×4 block of pixels), so mean pooling over the tokens is
exactly ResNet's global average pooling of the (normalised) final map when the strides divide the grid
(28 = 7·4), and an average weighted by the real pixels each cell covers when they do not. A CLS prefix
gets the normalised mean of the map, so `pooling: cls` reads global average pooling too.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from tabrasa.backbone.conv_blocks import Downsample2d, ResidualConv2d, UpsampledGridCNN

PIXEL_TOKENS = "one token per pixel: ImageTokenizer(patch_size=1)"


def stage_channels(dim: int, channels: Sequence[int] | None) -> tuple[int, ...]:
    """The channels of each stage: as given, or dim/4, dim/2, dim (ResNet's doubling at each downsampling,
    ending at the token width), which stays within 20% of the transformer's size at 64 and 128 wide."""
    chosen = (max(1, dim // 4), max(1, dim // 2), dim) if channels is None else tuple(channels)
    if not chosen or any(not isinstance(c, int) or c < 1 for c in chosen):
        raise ValueError(
            f"PixelCNN channels={channels!r} must be one positive int per stage, e.g. [16, 32, 64]"
        )
    return chosen


class PixelCNN(UpsampledGridCNN):
    """dim: token width in and out. channels: per stage (None: dim/4, dim/2, dim); every stage after the
    first halves each side with a stride-2 convolution. blocks: residual blocks per stage."""

    owner = "PixelCNN"
    tokenize = PIXEL_TOKENS

    def __init__(
        self, dim: int = 128, channels: Sequence[int] | None = None, blocks: int = 1, dropout: float = 0.1
    ) -> None:
        super().__init__()
        if blocks < 0:
            raise ValueError(f"PixelCNN blocks={blocks} must be >= 0 residual blocks per stage")
        self.dim = dim
        self.channels = stage_channels(dim, channels)
        self.stem = nn.Conv2d(dim, self.channels[0], 3, padding=1)
        self.stages = nn.ModuleList(
            nn.ModuleList(ResidualConv2d(c, c, dropout) for _ in range(blocks)) for c in self.channels
        )
        self.downsample = nn.ModuleList(
            Downsample2d(c_in, c_out) for c_in, c_out in zip(self.channels, self.channels[1:], strict=False)
        )
        last = self.channels[-1]
        self.final_norm = nn.BatchNorm2d(last)
        self.act = nn.GELU()
        self.proj = nn.Identity() if last == dim else nn.Conv2d(last, dim, 1)
        self.norm = nn.LayerNorm(dim)

    @property
    def stride(self) -> int:
        """How many pixels along each side one final feature cell covers."""
        return 2 ** (len(self.channels) - 1)

    @property
    def upsampling(self) -> tuple[int, int]:
        return self.stride, self.stride

    def forward_features(self, cells: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Pixel map (B, dim, H, W) and its keep (B, 1, H, W) → final features (B, dim, ⌈H/s⌉, ⌈W/s⌉) and
        their keep, s = `stride`, before upsampling."""
        h = self.stem(cells) * keep  # (B, c_1, H, W)
        for index, stage in enumerate(self.stages):
            if index:
                h, keep = self.downsample[index - 1](h, keep)  # (B, c_i, ⌈H/2^i⌉, ⌈W/2^i⌉)
            for block in stage:
                h = block(h, keep)
        return self.close(h, keep)
