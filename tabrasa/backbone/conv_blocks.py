"""2-D convolution pieces the grid CNN baselines share (PatchGridCNN, PixelCNN, SpectrogramCNN): tokens ↔
feature maps, the pre-activation residual block, strided downsampling, masked average pooling, nearest
upsampling back to the token grid, and the Backbone `forward` of the two whose maps shrink on the way.

Every piece carries `keep` (B, 1, H, W), 1 at real cells and 0 at padding, and zeroes padded cells before
each convolution, which is exactly the zero padding an unpadded map gets at its border. Downsampling keeps
a cell real by the same rule an unpadded map of the real size would give it, so in eval mode the outputs
at real cells never depend on how much padding the batch carries. In train mode BatchNorm's batch
statistics count padded cells as zeros (torch has no masked BatchNorm); equal-length inputs (28×28
images, 1-second keyword clips) have none.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from tabrasa.backbone.tokens import TokenGrid

NO_GRID_HINT = "For text or protein sequences use SequenceCNN or SequenceLSTM"


def grid_maps(
    x: torch.Tensor, mask: torch.Tensor | None, grid: TokenGrid | None, owner: str, tokenize: str
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Tokens (B, N, D) lying on `grid` → the mask (B, N), the grid cells as a map (B, D, H, W) zeroed at
    padding, and keep (B, 1, H, W). `owner` names the backbone and `tokenize` how to get such tokens, for
    the error a grid-less input gets."""
    if grid is None:
        raise ValueError(
            f"{owner} needs tokens on a grid ({tokenize}); these tokens carry no grid. {NO_GRID_HINT}"
        )
    B, N, D = x.shape
    if grid.prefix + grid.size != N:
        raise ValueError(
            f"{owner} got {N} tokens but the grid says {grid.prefix} + {grid.height}×{grid.width}"
        )
    if mask is None:
        mask = torch.ones(B, N, dtype=torch.bool, device=x.device)
    cells = x[:, grid.prefix :].transpose(1, 2).reshape(B, D, grid.height, grid.width)  # (B, D, H, W)
    keep = mask[:, grid.prefix :].reshape(B, 1, grid.height, grid.width).to(x.dtype)  # (B, 1, H, W)
    return mask, cells * keep, keep


def grid_tokens(
    cells: torch.Tensor, keep: torch.Tensor, mask: torch.Tensor, grid: TokenGrid, norm: nn.Module
) -> torch.Tensor:
    """Output map (B, D, H, W) on the token grid → tokens (B, prefix + H·W, D), zero at padding.

    Prefix tokens (a CLS token) sit outside the grid; their outputs are the mean of the real cells' outputs,
    so CLS pooling and mean pooling both read what the convolutions computed."""
    B, D = cells.shape[:2]
    h = (cells * keep).flatten(2).transpose(1, 2)  # (B, H·W, D)
    pooled = h.sum(1, keepdim=True) / keep.flatten(1).sum(1).clamp_min(1.0)[:, None, None]  # (B, 1, D)
    out = torch.cat([pooled.expand(B, grid.prefix, D), h], dim=1)  # (B, N, D)
    return norm(out) * mask[..., None].to(out.dtype)


def covering_cells(
    size: tuple[int, int], factor: tuple[int, int], coarse: tuple[int, int], device: torch.device
) -> torch.Tensor:
    """For each cell of an (H, W) token grid, row by row, the index of the cell covering it in the (h, w)
    coarse map, row by row. Cell (i, j) covers tokens [i·f_h, (i+1)·f_h) × [j·f_w, (j+1)·f_w) whatever the
    padding, so a real token reads the cell an unpadded map gives it; nearest interpolation to (H, W) would
    rescale by H / h instead, which moves that boundary with the padded size."""
    rows = torch.arange(size[0], device=device) // factor[0]
    cols = torch.arange(size[1], device=device) // factor[1]
    return (rows[:, None] * coarse[1] + cols[None, :]).flatten()  # (H·W,)


def upsampled_grid_tokens(
    h: torch.Tensor, mask: torch.Tensor, grid: TokenGrid, factor: tuple[int, int], norm: nn.Module
) -> torch.Tensor:
    """Coarse output map (B, D, h, w), each cell covering `factor` token cells → tokens (B, prefix + H·W, D),
    zero at padding: what `grid_tokens` gives for the map upsampled to the token grid by nearest neighbour.

    Computed at the coarse size: LayerNorm acts on each token alone, so normalising a cell before repeating
    it is the same, and the prefix (the mean of the real tokens' outputs) weights each coarse cell by the
    real tokens it covers. The tokens are then one gather from [prefix, cells, zero] rows, whose backward
    sums into the small table. On a 101 × 64 spectrogram, upsampling, normalising and masking the full map
    cost more than the convolutions."""
    B, D, rows, cols = h.shape
    H, W = grid.height, grid.width
    if h.requires_grad:
        # The gradient reaches h transposed (channels last), and oneDNN's convolution backward then takes
        # another path whose rounding leaks ~1e-8 into cells outside a receptive field. In h's own layout
        # it is the upsampled map's backward: exact zeros where nothing depends (and no slower).
        h.register_hook(torch.Tensor.contiguous)
    fh, fw = factor
    keep = mask[:, grid.prefix :].reshape(B, H, W).to(h.dtype)
    keep = F.pad(keep, (0, cols * fw - W, 0, rows * fh - H))  # (B, h·f_h, w·f_w), zero past the grid
    # real tokens under each coarse cell, summed by reshaping (avg_pool2d's divisor_override is lost in ONNX)
    covered = keep.view(B, rows, fh, cols, fw).sum((2, 4))  # (B, h, w)
    cells = h.flatten(2).transpose(1, 2)  # (B, h·w, D)
    weights = covered.reshape(B, rows * cols, 1)
    pooled = (cells * weights).sum(1) / weights.sum(1).clamp_min(1.0)  # (B, D)
    zero = cells.new_zeros(B, 1, D)
    table = torch.cat([norm(pooled)[:, None], norm(cells), zero], dim=1)  # (B, 1 + h·w + 1, D)
    cell_rows = 1 + covering_cells((H, W), factor, (rows, cols), h.device)  # (H·W,) into the table
    index = torch.cat([cell_rows.new_zeros(grid.prefix), cell_rows])  # (N,): every prefix token is row 0
    index = torch.where(mask.bool(), index, table.shape[1] - 1)  # (B, N): padding reads the zero row
    return torch.gather(table, 1, index[..., None].expand(B, index.shape[1], D))


def masked_avg_pool(
    x: torch.Tensor, keep: torch.Tensor, kernel: tuple[int, int]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Non-overlapping average pooling over real cells only: (B, C, H, W) → (B, C, ⌈H/k_h⌉, ⌈W/k_w⌉) and
    its keep. avg_pool2d counts zeros at padding, so the sum over real cells is divided by their count."""
    total = F.avg_pool2d(x * keep, kernel, ceil_mode=True)  # same divisor in both: it cancels
    count = F.avg_pool2d(keep, kernel, ceil_mode=True)
    pooled_keep = (count > 0).to(x.dtype)
    return total / count.clamp_min(torch.finfo(x.dtype).tiny) * pooled_keep, pooled_keep


class ResidualConv2d(nn.Module):
    """x + Conv3×3(GELU(BN(Conv3×3(GELU(BN(x)))))), pre-activation (He et al. 2016, "Identity Mappings"),
    with `hidden` channels between the two convolutions (a bottleneck where hidden < dim)."""

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


class Downsample2d(nn.Module):
    """BN → GELU → Conv3×3 with stride 2 from `dim` to `out` channels: halves each side (rounding up)
    between ResNet stages, the pre-activation form of ResNet's strided convolution (He et al. 2016).

    Output cell i is centred on input cell 2i, so it is real when that cell is: an unpadded map of the real
    size has exactly those output cells (⌈H/2⌉)."""

    def __init__(self, dim: int, out: int) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(dim)
        self.conv = nn.Conv2d(dim, out, 3, stride=2, padding=1)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.conv(self.act(self.norm(x)) * keep)  # (B, out, ⌈H/2⌉, ⌈W/2⌉)
        keep = keep[..., ::2, ::2]
        return h * keep, keep


class UpsampledGridCNN(nn.Module, ABC):
    """A grid CNN whose features come out coarser than the token grid (PixelCNN, SpectrogramCNN): tokens
    → a map → `forward_features` → upsampled back by `upsampling` → one output per token, normalised.

    Subclasses name themselves and the tokens they take (`owner`, `tokenize`, for the error a grid-less
    input gets) and build `final_norm`, `act`, `proj` and `norm`, in their own order of state-dict names.
    """

    owner: ClassVar[str]
    tokenize: ClassVar[str]
    dim: int
    final_norm: nn.Module
    act: nn.Module
    proj: nn.Module
    norm: nn.Module

    @property
    @abstractmethod
    def upsampling(self) -> tuple[int, int]:
        """How many token cells along (rows, columns) one final feature cell covers."""

    @abstractmethod
    def forward_features(self, cells: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Cell map (B, dim, H, W) and its keep (B, 1, H, W) → final features and their keep."""

    def project_tokens(self, x: torch.Tensor) -> torch.Tensor:
        """Tokens (B, N, D) → what `forward_features` takes per cell (B, N, C); the tokens themselves here.
        A 1×1 convolution is cheapest done here, in the tokens' own layout, before they become a map."""
        return x

    def close(self, h: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The pre-activation network's final BN → GELU, then `proj` to the token width, zero at padding."""
        return self.proj(self.act(self.final_norm(h)) * keep) * keep, keep

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, *, grid: TokenGrid | None = None
    ) -> torch.Tensor:
        mask, cells, keep = grid_maps(self.project_tokens(x), mask, grid, self.owner, self.tokenize)
        assert grid is not None
        h, _ = self.forward_features(cells, keep)  # (B, D, ⌈H/f_h⌉, ⌈W/f_w⌉)
        return upsampled_grid_tokens(h, mask, grid, self.upsampling, self.norm)
