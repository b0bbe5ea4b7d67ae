"""Which tokens a masked-modelling objective hides: a random share of the maskable ones, or blocks of a
patch grid. Padding (and any token the caller marks unmaskable, such as [CLS]) is never chosen."""

from __future__ import annotations

import math
from typing import Literal

import torch

from tabrasa.errors import UserError

MaskKind = Literal["random", "block"]


def check_ratio(ratio: float, setting: str) -> float:
    """A mask ratio must leave something to see and something to predict."""
    if not 0.0 < ratio < 1.0:
        raise UserError(
            f"{setting}={ratio} must be in (0, 1): the share of tokens hidden per example "
            f"(BERT and ESM use 0.15, SimMIM 0.6, MAE 0.75)"
        )
    return ratio


def mask_counts(maskable: torch.Tensor, ratio: float) -> torch.Tensor:
    """Tokens to hide per row: round(ratio · maskable), at least one where any is maskable. (B,)"""
    n = maskable.sum(-1)
    return torch.where(n > 0, (n.float() * ratio).round().long().clamp(min=1), torch.zeros_like(n))


def random_mask(maskable: torch.Tensor, ratio: float) -> torch.Tensor:
    """(B, N) bool → (B, N) bool: exactly `mask_counts` maskable tokens per row, uniformly at random
    (MAE's per-sample random masking, He et al. 2022; BERT's 15% with a fixed count per sequence)."""
    return pick(maskable, mask_counts(maskable, ratio))


def pick(maskable: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """`counts[b]` maskable tokens of each row b, uniformly at random. (B, N) bool, (B,) → (B, N) bool."""
    scores = torch.rand(maskable.shape, device=maskable.device).masked_fill(~maskable, 2.0)
    ranks = scores.argsort(-1).argsort(-1)  # (B, N): 0 for the lowest score
    return ranks < counts[:, None]


def block_mask(maskable: torch.Tensor, ratio: float, rows: int, cols: int) -> torch.Tensor:
    """Blockwise masking on a rows × cols grid (BEiT, Bao et al. 2022, Algorithm 1): rectangles of random
    area and aspect ratio in [0.3, 1/0.3] until the count is reached; any shortfall (the last block rarely
    fits exactly) is filled at random among the still-visible maskable tokens. (B, rows·cols) bool."""
    if maskable.shape[-1] != rows * cols:
        raise ValueError(f"maskable has {maskable.shape[-1]} tokens but the grid is {rows}x{cols}")
    counts = mask_counts(maskable, ratio).tolist()
    out = torch.zeros_like(maskable)
    for b, target in enumerate(counts):
        grid = out[b].view(rows, cols)
        allowed = maskable[b].view(rows, cols)
        for _ in range(10 * rows * cols):
            left = target - int(grid.sum())
            if left <= 0:
                break
            area = float(torch.randint(1, left + 1, ()))
            aspect = math.exp(float(torch.empty(()).uniform_(math.log(0.3), math.log(1 / 0.3))))
            h = min(rows, max(1, round(math.sqrt(area * aspect))))
            w = min(cols, max(1, round(math.sqrt(area / aspect))))
            top, lft = int(torch.randint(rows - h + 1, ())), int(torch.randint(cols - w + 1, ()))
            block = torch.zeros_like(grid)
            block[top : top + h, lft : lft + w] = True
            block &= allowed
            if int((grid | block).sum()) <= target:
                grid |= block
        left = target - int(grid.sum())
        if left > 0:
            rest = allowed.flatten() & ~grid.flatten()
            grid.view(-1)[pick(rest[None], torch.tensor([left], device=rest.device))[0]] = True
    return out


def choose(
    maskable: torch.Tensor, ratio: float, kind: MaskKind, grid: tuple[int, int] | None
) -> torch.Tensor:
    """The masking `kind` asks for; block masking needs a grid (patch or frame tokens)."""
    if kind == "random":
        return random_mask(maskable, ratio)
    if kind == "block":
        if grid is None:
            raise UserError("masking: block needs grid tokens (image or audio patches); use masking: random")
        return block_mask(maskable, ratio, *grid)
    raise UserError(f"masking={kind!r} is not known; choose random or block")
