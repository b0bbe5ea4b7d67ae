"""One transformer block: attention then feed-forward, each wrapped in a residual and a norm."""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone.config import NormPlacement
from tabrasa.backbone.masking import AttentionMask


class Block(nn.Module):
    """pre-LN: x + f(LN(x)) (GPT-2, ViT; stable without warmup, Xiong et al. 2020).
    post-LN: LN(x + f(x)) (Vaswani et al. 2017, BERT)."""

    def __init__(
        self,
        attn: nn.Module,
        mlp: nn.Module,
        norm1: nn.Module,
        norm2: nn.Module,
        placement: NormPlacement,
        dropout: float,
    ) -> None:
        super().__init__()
        self.norm1 = norm1
        self.attn = attn
        self.norm2 = norm2
        self.mlp = mlp
        self.drop = nn.Dropout(dropout)
        self.pre_norm = placement == "pre"

    def forward(self, x: torch.Tensor, mask: AttentionMask) -> torch.Tensor:
        if self.pre_norm:
            x = x + self.drop(self.attn(self.norm1(x), mask))
            return x + self.drop(self.mlp(self.norm2(x)))
        x = self.norm1(x + self.drop(self.attn(x, mask)))
        return self.norm2(x + self.drop(self.mlp(x)))
