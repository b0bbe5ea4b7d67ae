"""A 1-D residual CNN over the token sequence: the locality baseline for text and protein.

It sits behind the Encoder contract (x (B, N, D), mask (B, N) → (B, N, D)) so the tokenizer, head and
trainer stay identical and only the inductive bias changes: each layer sees `kernel_size` neighbours.
"""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone.tokens import TokenGrid


class ResidualConv1d(nn.Module):
    """x + Conv(GELU(LN(Conv(GELU(LN(x)))))), pre-activation (He et al. 2016, "Identity Mappings").

    The norm is per token (LayerNorm over channels), not over the sequence, so padding cannot shift
    the statistics of real tokens.
    """

    def __init__(self, dim: int, kernel_size: int, dropout: float) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.conv1 = nn.Conv1d(dim, dim, kernel_size, padding=kernel_size // 2)
        self.norm2 = nn.LayerNorm(dim)
        self.conv2 = nn.Conv1d(dim, dim, kernel_size, padding=kernel_size // 2)
        self.act = nn.GELU()
        self.drop = nn.Dropout(dropout)

    def _conv(self, conv: nn.Conv1d, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        return conv((x * keep).transpose(1, 2)).transpose(1, 2)  # (B, N, D) → (B, N, D)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        # keep: (B, N, 1), zero at padding: padded inputs are exactly 'same' zero padding
        h = self._conv(self.conv1, self.act(self.norm1(x)), keep)
        h = self._conv(self.conv2, self.drop(self.act(self.norm2(h))), keep)
        return (x + h) * keep


class SequenceCNN(nn.Module):
    """dim: token width. blocks: residual blocks of two convolutions. kernel_size: odd receptive width.

    Padded positions are zeroed before every convolution, which is exactly the zero 'same' padding an
    unpadded sequence gets at its end: outputs at real tokens do not depend on the batch's padding.
    """

    def __init__(self, dim: int = 128, blocks: int = 3, kernel_size: int = 5, dropout: float = 0.1) -> None:
        super().__init__()
        if kernel_size % 2 == 0:
            raise ValueError(f"SequenceCNN kernel_size={kernel_size} must be odd so outputs stay aligned")
        self.dim = dim
        self.blocks = nn.ModuleList(ResidualConv1d(dim, kernel_size, dropout) for _ in range(blocks))
        self.norm = nn.LayerNorm(dim)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, *, grid: TokenGrid | None = None
    ) -> torch.Tensor:
        if mask is None:
            mask = torch.ones(x.shape[:2], dtype=torch.bool, device=x.device)
        keep = mask[..., None].to(x.dtype)  # (B, N, 1)
        h = x * keep
        for block in self.blocks:
            h = block(h, keep)
        return self.norm(h) * keep
