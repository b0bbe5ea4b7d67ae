"""Multi-head self-attention: one fused QKV projection, an injected token mixer, an output projection."""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone.masking import AttentionMask
from tabrasa.backbone.positions import RotaryPositions


class MultiHeadAttention(nn.Module):
    """Projects tokens to queries, keys and values, mixes them per head, projects back.

    The mixer (full, local, low-rank, axial) is passed in, so every kind shares these projection weights
    and a model trained with one kind loads into another. The three projections are one matmul (`qkv`):
    one (N, D)×(D, 3D) GEMM is faster than three (N, D)×(D, D) ones.
    """

    def __init__(
        self,
        dim: int,
        heads: int,
        mixer: nn.Module,
        bias: bool = True,
        rotary: RotaryPositions | None = None,
    ) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=bias)
        self.mixer = mixer
        self.proj = nn.Linear(dim, dim, bias=bias)
        # Shared across blocks: kept out of this module's children so it is not registered once per block.
        self._rotary = (rotary,)

    def forward(self, x: torch.Tensor, mask: AttentionMask) -> torch.Tensor:
        B, N, D = x.shape
        q, k, v = self.qkv(x).view(B, N, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        # q, k, v: (B, H, N, hd)
        rotary = self._rotary[0]
        if rotary is not None:
            q, k = rotary(q, k)
        out = self.mixer(q, k, v, mask)  # (B, H, N, hd)
        return self.proj(out.transpose(1, 2).reshape(B, N, D))
