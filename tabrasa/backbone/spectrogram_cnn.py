"""A 2-D CNN over the log-mel spectrogram's time × frequency cells: the keyword-spotting baseline.

The shape is res8 of Tang & Lin 2018 ("Deep Residual Learning for Small-Footprint Keyword Spotting"):

    1×1 conv to stem_channels, 3×3 conv to channels     T × F   (101 frames × 64 mel bins)
    average pooling 4 × 3 (time × frequency)            ⌈T/4⌉ × ⌈F/3⌉
    3 residual blocks of two 3×3 convs, channels
    global average pooling → classifier

res8's first convolution reads one channel, the log-mel value. A cell token is an affine function of that
value (AudioEmbedder's 1×1 convolution), so two channels hold all a token carries; the 1×1 convolution to
`stem_channels` (4) recovers it, and the 3×3 convolution then costs what res8's does. A 3×3 convolution
straight from the token width did that work 16 times over at 64 wide, at full time-frequency resolution:
most of the network's time, for no function the narrow stem lacks on these tokens
(tests/backbone/test_spectrogram_stem.py builds one from the other).

res8 uses 45 channels; here `channels` defaults to 3/4 of dim (48 at 64 wide, 96 at 128), which keeps it
within 20% of the transformer's size at both widths. Two changes fit it to the backbone contract. The
blocks are pre-activation (BN → GELU → conv, He et al. 2016, like the other grid CNNs here; res8 puts BN
after each ReLU), closed by a final BN → GELU and a 1×1 conv to the token width. And instead of pooling,
the map is upsampled back to the token grid by nearest neighbour (each cell fills its 4×3 block of
cells), so mean pooling over real tokens is the global average pooling, each cell weighted by the real
tokens it covers.

It takes one token per (frame, mel bin) cell: `AudioTokenizer(patch_size=[1, 1])` (KeywordsDataModule
`patch_size: [1, 1]`), whose embedder maps each cell's value to `dim` with a 1×1 convolution, grid (T, F)
with rows along time. Padded frames (a batch of clips of different lengths) are masked at every layer and
in the pooling, so they never change real cells' outputs in eval mode (`conv_blocks`).
"""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone.conv_blocks import ResidualConv2d, UpsampledGridCNN, masked_avg_pool

CELL_TOKENS = "one token per time × mel cell: AudioTokenizer(patch_size=[1, 1])"
CHANNEL_RATIO = 3 / 4  # 48 channels at 64 wide (res8: 45), 96 at 128
STEM_CHANNELS = 4  # a cell token is affine in one log-mel value: 2 channels hold it, 4 leave room


class SpectrogramCNN(UpsampledGridCNN):
    """dim: token width in and out. channels: width of the convolutions (None: 3/4 of dim). stem_channels:
    what the 1×1 convolution narrows each cell token to before the first 3×3 convolution. blocks: residual
    blocks (res8: 3; res15's 6 add dilation and drop the pooling, not built here). pool: (time, frequency)
    average-pooling window after the first convolution (res8: 4 × 3)."""

    owner = "SpectrogramCNN"
    tokenize = CELL_TOKENS

    def __init__(
        self,
        dim: int = 128,
        channels: int | None = None,
        blocks: int = 3,
        stem_channels: int = STEM_CHANNELS,
        pool: tuple[int, int] = (4, 3),
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        self.dim = dim
        self.channels = round(CHANNEL_RATIO * dim) if channels is None else channels
        self.pool = (int(pool[0]), int(pool[1]))
        if self.channels < 1 or stem_channels < 1 or blocks < 0 or min(self.pool) < 1:
            raise ValueError(
                f"SpectrogramCNN channels={self.channels}, stem_channels={stem_channels}, blocks={blocks} "
                f"and pool={pool} must be >= 1, >= 1, >= 0 and a pair of sizes >= 1"
            )
        self.cell_proj = nn.Linear(dim, stem_channels)  # the 1×1 convolution, in the tokens' layout
        self.stem = nn.Conv2d(stem_channels, self.channels, 3, padding=1)
        self.blocks = nn.ModuleList(
            ResidualConv2d(self.channels, self.channels, dropout) for _ in range(blocks)
        )
        self.final_norm = nn.BatchNorm2d(self.channels)
        self.act = nn.GELU()
        self.proj = nn.Conv2d(self.channels, dim, 1)
        self.norm = nn.LayerNorm(dim)

    @property
    def upsampling(self) -> tuple[int, int]:
        return self.pool

    def project_tokens(self, x: torch.Tensor) -> torch.Tensor:
        return self.cell_proj(x)  # (B, N, stem_channels)

    def forward_features(self, cells: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Cell map (B, stem_channels, T, F) and its keep (B, 1, T, F) → pooled features
        (B, dim, ⌈T/p_t⌉, ⌈F/p_f⌉) and their keep, before upsampling."""
        h = self.stem(cells) * keep  # (B, C, T, F)
        h, keep = masked_avg_pool(h, keep, self.pool)  # (B, C, ⌈T/p_t⌉, ⌈F/p_f⌉)
        for block in self.blocks:
            h = block(h, keep)
        return self.close(h, keep)
