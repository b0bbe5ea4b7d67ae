"""Shared query/key/value projection, built around the backbone instead of into it.

`MultiHeadAttention` computes q, k and v with one fused `qkv` Linear of width 3·D. Tying replaces that
Linear by one D→D projection whose output is repeated three times, so q = k = v for every token: the
ablation the "separate projections add capacity" claim compares against. The backbone stays untouched
(its fused layout and checkpoint names are the contract); only the evidence code swaps the module in.
"""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone import Encoder
from tabrasa.backbone.attention import MultiHeadAttention


class SharedQKV(nn.Module):
    """One D→D projection emitted three times: (B, N, D) → (B, N, 3·D), laid out as the fused qkv is."""

    def __init__(self, dim: int, bias: bool) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim, bias=bias)
        nn.init.trunc_normal_(self.proj.weight, std=0.02)  # the encoder's own init (BERT, GPT-2)
        if self.proj.bias is not None:
            nn.init.zeros_(self.proj.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.proj(x)
        return torch.cat([p, p, p], dim=-1)  # (B, N, 3·D): the q, k and v slots hold the same tensor


def tie_qkv(encoder: Encoder) -> Encoder:
    """Replace every block's fused qkv Linear by a SharedQKV, in place; returns the encoder."""
    attentions = [m for m in encoder.modules() if isinstance(m, MultiHeadAttention)]
    if not attentions:
        raise ValueError("tie_qkv found no MultiHeadAttention in the encoder; nothing would be tied")
    for attention in attentions:
        attention.qkv = SharedQKV(encoder.dim, bias=attention.qkv.bias is not None)
    return encoder
